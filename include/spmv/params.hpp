#pragma once
/// @file
/// The kernels' own settings, each described once: its name (the PlanOptions field, the CLI's
/// --dashed-name, Python's keyword), what it means, its valid values, and the values the benchmark
/// and the conformance test try. A kernel names the settings it takes (KernelSpec::params);
/// validate_plan refuses a value outside a setting's range for a kernel that takes it (a setting a
/// kernel does not take is ignored); the CLI's flags, the benchmark's sweeps and the conformance
/// test's sweeps are made from these descriptions.
#include <spmv/plan.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace spmv {

struct ParamSpec {
  enum class Kind { Integer, Text, Flag };
  std::string name;  ///< "block_size"
  Kind kind = Kind::Integer;
  std::string help = {};
  /// Integer: the valid values, [min, max], a multiple of `multiple_of`, a power of two where
  /// `power_of_two`; and 0 where `zero_means` says what it asks for ("every core").
  long long min = 1, max = 1LL << 40;
  long long multiple_of = 1;
  bool power_of_two = false;
  std::string zero_means = {};
  /// The values the benchmark sweeps by default (empty: the default value alone), and those the
  /// conformance test runs every edge case under (valid ones and the awkward ones).
  std::vector<long long> sweep = {}, test_values = {};
  /// Reading and writing it in PlanOptions (Text: variant; Flag: 0 or 1).
  long long (*get)(const PlanOptions&) = nullptr;
  void (*set)(PlanOptions&, long long) = nullptr;

  /// The valid values in words: "a multiple of 32 in [32, 1024], or 0 (the kernel's own)".
  std::string range() const;
  /// "" where `v` is valid, else "must be " + range().
  std::string invalid(long long v) const;
  /// The help with what 0 asks for.
  std::string full_help() const;
  /// The CLI's spelling: --block-size.
  std::string flag() const;
};

/// PlanOptions::kernel.variant read against a kernel's groups: the word given for each group.
class VariantChoice {
 public:
  /// The word given for `group`; "" where the kernel chooses.
  std::string_view operator[](std::string_view group) const;
  bool given(std::string_view group) const { return !(*this)[group].empty(); }
  /// The words given, joined by ':' in the groups' order ("auto" where none).
  std::string text() const;

 private:
  friend VariantChoice parse_variant(std::string_view, const std::vector<VariantGroup>&, std::string_view);
  std::vector<std::pair<std::string, std::string>> words_;  // (group, word) in the groups' order
};
/// Reads `text` ("auto", "", or words joined by ':' in any order, at most one of each group; "auto"
/// among them means nothing). An unknown word, or two of one group: Unsupported naming `kernel` and
/// listing the groups' words.
VariantChoice parse_variant(std::string_view kernel, const std::vector<VariantGroup>& groups, std::string_view text);
/// The groups in words, for help texts and errors: "schedule dynamic|balanced, inner simd|scalar".
std::string variant_words(const std::vector<VariantGroup>& groups);

/// Every setting a kernel may take, in the order `spmv kernels` and the help list them: threads,
/// block_size, hack, subwarp, nz_per_block, nz_per_chunk, chunk_rows, chunk_multiple, csr5_omega,
/// csr5_sigma (integers), variant (text, the kernel's own grammar), deterministic (a flag).
const std::vector<ParamSpec>& kernel_params();
/// The setting of that name; nullptr where there is none.
const ParamSpec* find_param(std::string_view name);
/// Whether kernel `spec` takes the setting.
bool takes(const KernelSpec& spec, std::string_view param);
/// The kernels of the registry that take the setting, "csr-vector, hll (cuda)" style, for help texts.
std::string kernels_taking(std::string_view param);

}  // namespace spmv
