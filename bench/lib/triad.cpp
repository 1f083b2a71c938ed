#include <spmv/bench/ceiling.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <omp.h>
#include <unistd.h>

#include <spmv/timing.hpp>

namespace spmv {

namespace {

// The largest last-level cache size the system reports, in bytes. sysfs and sysconf disagree on
// some VMs (one gives the slice, the other the socket), so take the larger.
double last_level_cache_bytes() {
  double best = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  best = std::max(best, static_cast<double>(sysconf(_SC_LEVEL3_CACHE_SIZE)));
#endif
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index3/size");
  double v = 0;
  char unit = 0;
  if (in >> v >> unit) best = std::max(best, v * (unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : 1.0));
  return best;
}

}  // namespace

std::vector<double> cpu_triad_bandwidths(int threads, int runs) {
  // Each array at least twice the last-level cache (64 MiB .. 1 GiB), so the triad measures
  // memory, not cache, even on CPUs with hundreds of MiB of L3.
  const double array_bytes = std::clamp(2.0 * last_level_cache_bytes(), 64.0 * 1048576, 1024.0 * 1048576);
  const std::size_t n = static_cast<std::size_t>(array_bytes / 8);
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  // First touch by the same static schedule, so pages land near the threads that use them.
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  std::vector<double> out;
  for (int run = 0; run < std::max(1, runs); ++run) {
    double best = 1e300;
    for (int rep = 0; rep < 4; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      const double s = 3.0 + rep;
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
      best = std::min(best, seconds_since(t0));
    }
    out.push_back(3.0 * 8.0 * static_cast<double>(n) / best);
  }
  volatile double sink = a[n / 2];  // keep the stores observable
  (void)sink;
  return out;
}

double cpu_triad_bandwidth(int threads) {
  const std::vector<double> v = cpu_triad_bandwidths(threads, 2);
  return *std::max_element(v.begin(), v.end());
}

}  // namespace spmv
