// What the run was measured on, the bandwidth ceilings, and where the report script lives.
#include <spmv/bench/bench.hpp>
#include <spmv/bench/ceiling.hpp>
#include <spmv/device.hpp>
#include <spmv/timing.hpp>
#include <spmv/version.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <omp.h>
#include <unistd.h>

#include "meminfo.hpp"

namespace spmv::bench {

MachineInfo machine_info() {
  MachineInfo m;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  // The vector extensions, named as /proc/cpuinfo's flags name them.
  const auto append = [](std::string& list, const std::string& word) { list += (list.empty() ? "" : " ") + word; };
  std::string cpu_simd;
  {
    std::ifstream f("/proc/cpuinfo");
    bool model = false, flags = false;
    for (std::string line; (!model || !flags) && std::getline(f, line);) {
      const auto p = line.find(':');
      if (p == std::string::npos) continue;
      if (!model && line.rfind("model name", 0) == 0) {
        m.cpu_model = line.substr(line.find_first_not_of(" \t", p + 1));
        model = true;
      } else if (!flags && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) {
        std::istringstream words(line.substr(p + 1));
        std::set<std::string> have;
        for (std::string w; words >> w;) have.insert(w);
        for (const char* ext : {"avx512f", "avx2", "avx", "fma", "sse4_2", "sve", "asimd"})
          if (have.count(ext)) append(cpu_simd, ext);
        flags = true;
      }
    }
  }
  std::string build_simd;
#if defined(__AVX512F__)
  append(build_simd, "avx512f");
#endif
#if defined(__AVX2__)
  append(build_simd, "avx2");
#endif
#if defined(__AVX__)
  append(build_simd, "avx");
#endif
#if defined(__FMA__)
  append(build_simd, "fma");
#endif
#if defined(__SSE4_2__)
  append(build_simd, "sse4_2");
#endif
#if defined(__ARM_FEATURE_SVE)
  append(build_simd, "sve");
#endif
#if defined(__ARM_NEON)
  append(build_simd, "asimd");
#endif
  m.simd = fmt::format("cpu {}, build {}", cpu_simd.empty() ? "(none listed)" : cpu_simd,
                       build_simd.empty() ? "(baseline)" : build_simd);
  m.cores = std::max(1, omp_get_num_procs());
  m.memory_bytes = meminfo_bytes("MemTotal:");
#if defined(__clang__)
  m.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  m.compiler = std::string("g++ ") + __VERSION__;
#else
  m.compiler = "unknown";
#endif
  m.git_commit = git_commit();
  const auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  m.omp_proc_bind = env("OMP_PROC_BIND");
  m.omp_places = env("OMP_PLACES");
  m.omp_num_threads = env("OMP_NUM_THREADS");
  try {
    m.gpus = device::cuda_device_count();
    if (m.gpus > 0) m.device = device::cuda_device_name();
  } catch (const std::exception&) {
    m.gpus = 0;  // a broken driver means CPU only, not a failed benchmark
  }
  return m;
}

bool is_small_machine(const MachineInfo& m) {
  return m.cores <= 4 || (m.memory_bytes > 0 && m.memory_bytes < 32.0 * (1ull << 30));
}

Ceilings measure_ceilings(const SweepConfig& cfg, const MachineInfo& m) {
  Ceilings c;
  const bool cpu = std::any_of(cfg.backends.begin(), cfg.backends.end(), [](Backend b) { return b != Backend::Cuda; });
  if (cpu) {
    const auto threads = cfg.sweep.find("threads");
    const long long most = threads == cfg.sweep.end() || threads->second.empty()
                               ? 1
                               : *std::max_element(threads->second.begin(), threads->second.end());
    c.cpu_triad_threads = static_cast<int>(std::max(1LL, most));
    c.cpu_triad_threads = std::min(c.cpu_triad_threads, m.cores);  // oversubscription lowers it
    const std::vector<double> runs = cpu_triad_bandwidths(c.cpu_triad_threads, std::max(1, cfg.ceiling_runs));
    const SampleStats st = sample_stats(runs);
    c.cpu_triad = st.median_s;  // bytes/s here, not seconds: the same statistics
    c.cpu_triad_min = st.min_s;
    c.cpu_triad_max = st.max_s;
    c.cpu_triad_runs = static_cast<int>(runs.size());
  }
  const bool gpu = std::find(cfg.backends.begin(), cfg.backends.end(), Backend::Cuda) != cfg.backends.end();
  if (gpu && m.gpus > 0) {
    try {
      std::vector<double> runs;
      for (int i = 0; i < std::max(1, cfg.ceiling_runs); ++i) runs.push_back(device::cuda_copy_bandwidth());
      const SampleStats st = sample_stats(runs);
      c.gpu_copy = st.median_s;  // bytes/s
      c.gpu_copy_min = st.min_s;
      c.gpu_copy_max = st.max_s;
      c.gpu_copy_runs = static_cast<int>(runs.size());
    } catch (const std::exception&) {
      c.gpu_copy = c.gpu_copy_min = c.gpu_copy_max = 0;
      c.gpu_copy_runs = 0;
    }
    try {  // a failed attribute query costs the peak only, not the measured copy
      c.gpu_peak = device::cuda_peak_bandwidth();
    } catch (const std::exception&) {
      c.gpu_peak = 0;
    }
    try {
      const device::HostLink link = device::cuda_host_bandwidth();
      c.gpu_h2d = link.to_device;
      c.gpu_d2h = link.to_host;
    } catch (const std::exception&) {
      c.gpu_h2d = c.gpu_d2h = 0;
    }
  }
  return c;
}

std::string find_report_script(const std::string& exe_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char* e = std::getenv("SPMV_REPORT_SCRIPT"); e && *e) return e;
  std::vector<fs::path> cand;
  if (!exe_path.empty()) {
    fs::path exe = fs::weakly_canonical(fs::path(exe_path), ec);
    if (ec) exe = fs::path(exe_path);
    cand.push_back(exe.parent_path() / "scripts" / "report.py");
    cand.push_back(exe.parent_path().parent_path() / "scripts" / "report.py");
  }
#ifdef SPMV_SOURCE_DIR
  cand.push_back(fs::path(SPMV_SOURCE_DIR) / "scripts" / "report.py");
#endif
  cand.push_back(fs::path("scripts") / "report.py");
  for (const auto& p : cand)
    if (fs::exists(p, ec)) return p.string();
  return {};
}

std::string find_python() {
  if (const char* e = std::getenv("SPMV_PYTHON"); e && *e) return e;
  // Debian's interpreter has python3-matplotlib; a pyenv/venv python3 first on PATH may not.
  std::error_code ec;
  if (std::filesystem::exists("/usr/bin/python3", ec)) return "/usr/bin/python3";
  return "python3";
}

}  // namespace spmv::bench
