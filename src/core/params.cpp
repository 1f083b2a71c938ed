// The kernels' settings, each described once (spmv/params.hpp).
#include <spmv/params.hpp>

#include <algorithm>
#include <bit>
#include <type_traits>
#include <fmt/format.h>

namespace spmv {

namespace {

// A setting's description with its accessors: `field` names the PlanOptions member.
#define SPMV_PARAM_ACCESS(field)                                                            \
  .get = [](const PlanOptions& o) -> long long { return static_cast<long long>(o.field); }, \
  .set = [](PlanOptions& o, long long v) { o.field = static_cast<std::remove_reference_t<decltype(o.field)>>(v); }

std::vector<ParamSpec> make_params() {
  using K = ParamSpec::Kind;
  const std::string own = "the kernel's own";
  std::vector<ParamSpec> v;
  const auto add = [&v](ParamSpec p) { v.push_back(std::move(p)); };
  add({.name = "threads",
       .help = "OpenMP threads",
       .max = max_threads(),
       .zero_means = "every core OpenMP offers",
       .test_values = {1, 2, 3, 7, 16},
       SPMV_PARAM_ACCESS(threads)});
  add({.name = "block_size",
       .help = "CUDA threads per block",
       .min = 32,
       .max = 1024,
       .multiple_of = 32,
       .zero_means = own,
       .sweep = {128, 256, 384, 512, 640, 768, 896, 1024},
       .test_values = {128, 256, 1024},
       SPMV_PARAM_ACCESS(kernel.block_size)});
  add({.name = "hack",
       .help = "HLL rows per hack",
       .max = 1LL << 30,
       .sweep = {16, 32, 64},
       .test_values = {1, 7, 16, 32, 64, 4096},
       SPMV_PARAM_ACCESS(kernel.hack)});
  add({.name = "subwarp",
       .help = "CUDA threads per row, a power of two (32: a warp per row, as the course reports)",
       .max = 32,
       .power_of_two = true,
       .zero_means = "from the mean row length",
       .test_values = {1, 2, 4, 8, 16, 32},
       SPMV_PARAM_ACCESS(kernel.subwarp)});
  add({.name = "nz_per_block",
       .help = "CUDA csr-adaptive: nonzeros per row block",
       .max = 6144,
       .zero_means = own,
       .sweep = {8, 16, 32, 64, 128, 256, 512, 1024, 2048},
       .test_values = {1, 7, 64, 1000},
       SPMV_PARAM_ACCESS(kernel.nz_per_block)});
  add({.name = "nz_per_chunk",
       .help = "OpenMP csr-dynamic: nonzeros per scheduled chunk of rows",
       .zero_means = own,
       .test_values = {1, 7, 64, 1000},
       SPMV_PARAM_ACCESS(kernel.nz_per_chunk)});
  add({.name = "chunk_rows",
       .help = "OpenMP csr-dynamic: rows per scheduled chunk, over nz_per_chunk; OpenMP ell and ell-rowlen: a "
               "dynamic schedule of chunks of this many rows (002's 3) instead of equal blocks",
       .max = 1LL << 31,
       .zero_means = "from the nonzeros; ell: equal blocks",
       .test_values = {1, 3, 1000},
       SPMV_PARAM_ACCESS(kernel.chunk_rows)});
  add({.name = "chunk_multiple",
       .help = "OpenMP csr-dynamic: the SpMM report's chunk (004): rows / threads (or chunk_rows) rounded down to "
               "a multiple of this many rows (its 16), at least one, under a static schedule",
       .max = 1LL << 31,
       .zero_means = "none",
       SPMV_PARAM_ACCESS(kernel.chunk_multiple)});
  add({.name = "csr5_omega",
       .help = "CSR5 on the CPU: tile width (CUDA's is a warp, 32)",
       .max = 32,
       .power_of_two = true,
       .zero_means = "the SIMD or warp width",
       SPMV_PARAM_ACCESS(kernel.csr5_omega)});
  add({.name = "csr5_sigma",
       .help = "CSR5 tile height",
       .max = 64,
       .zero_means = "from the nonzeros per row",
       SPMV_PARAM_ACCESS(kernel.csr5_sigma)});
  add({.name = "variant",
       .kind = K::Text,
       .help = "The kernel's own choices as words (`spmv kernels` lists each kernel's)"});
  add({.name = "deterministic",
       .kind = K::Flag,
       .help = "Kernels with atomics use their deterministic variant (the same bits every run)",
       .min = 0,
       .max = 1,
       SPMV_PARAM_ACCESS(kernel.deterministic)});
  return v;
}

#undef SPMV_PARAM_ACCESS

}  // namespace

std::string ParamSpec::range() const {
  const std::string what = power_of_two      ? "a power of two"
                           : multiple_of > 1 ? fmt::format("a multiple of {}", multiple_of)
                                             : "an integer";
  return fmt::format("{} in [{}, {}]{}", what, min, max, zero_means.empty() ? "" : ", or 0 (" + zero_means + ")");
}

std::string ParamSpec::invalid(long long v) const {
  if (kind != Kind::Integer || (v == 0 && !zero_means.empty())) return "";
  const bool ok = v >= min && v <= max && v % multiple_of == 0 &&
                  (!power_of_two || std::has_single_bit(static_cast<unsigned long long>(v)));
  return ok ? "" : "must be " + range();
}

std::string ParamSpec::full_help() const {
  return zero_means.empty() ? help : fmt::format("{} (0: {})", help, zero_means);
}

std::string ParamSpec::flag() const {
  std::string f = "--" + name;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

const std::vector<ParamSpec>& kernel_params() {
  static const std::vector<ParamSpec> params = make_params();
  return params;
}

const ParamSpec* find_param(std::string_view name) {
  for (const ParamSpec& p : kernel_params())
    if (p.name == name) return &p;
  return nullptr;
}

bool takes(const KernelSpec& spec, std::string_view param) {
  return std::find(spec.params.begin(), spec.params.end(), param) != spec.params.end();
}

std::string_view VariantChoice::operator[](std::string_view group) const {
  for (const auto& [g, w] : words_)
    if (g == group) return w;
  return {};
}

std::string VariantChoice::text() const {
  std::string out;
  for (const auto& [g, w] : words_) out += (out.empty() ? "" : ":") + w;
  return out.empty() ? "auto" : out;
}

std::string variant_words(const std::vector<VariantGroup>& groups) {
  std::string out;
  for (const VariantGroup& g : groups)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", g.name, fmt::join(g.words, "|"));
  return out;
}

VariantChoice parse_variant(std::string_view kernel, const std::vector<VariantGroup>& groups, std::string_view text) {
  std::vector<std::string> given(groups.size());
  for (std::size_t b = 0; b <= text.size();) {
    const std::size_t e = std::min(text.find(':', b), text.size());
    const std::string_view word = text.substr(b, e - b);
    b = e + 1;
    if (word.empty() || word == "auto") continue;
    const auto in = [&](const VariantGroup& g) {
      return std::find(g.words.begin(), g.words.end(), word) != g.words.end();
    };
    const auto g = std::find_if(groups.begin(), groups.end(), in);
    const std::string words = groups.empty() ? "none" : variant_words(groups) + ", joined by ':'";
    if (g == groups.end())
      throw Unsupported(
          fmt::format("kernel '{}': no variant word '{}' in '{}' (its words: {})", kernel, word, text, words));
    std::string& slot = given[static_cast<std::size_t>(g - groups.begin())];
    if (!slot.empty())
      throw Unsupported(fmt::format("kernel '{}': variant '{}' gives {} twice ({} and {}; its words: {})", kernel, text,
                                    g->name, slot, word, words));
    slot = word;
  }
  VariantChoice v;
  for (std::size_t i = 0; i < groups.size(); ++i)
    if (!given[i].empty()) v.words_.emplace_back(groups[i].name, given[i]);
  return v;
}

std::string kernels_taking(std::string_view param) {
  std::string out;
  for (const Backend b : {Backend::Serial, Backend::Omp, Backend::Cuda}) {
    std::string names;
    for (const KernelSpec& k : kernels())
      if (k.backend == b && takes(k, param)) names += (names.empty() ? "" : ", ") + k.name;
    if (!names.empty()) out += fmt::format("{}{} ({})", out.empty() ? "" : "; ", names, to_string(b));
  }
  return out;
}

}  // namespace spmv
