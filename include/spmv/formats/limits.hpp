#pragma once
/// @file
/// What a format conversion may use: threads and memory, checked before anything is allocated.
#include <spmv/matrix.hpp>

#include <string>

namespace spmv {

struct ConvertOptions {
  int threads = 0;                 ///< 0: OpenMP's default (all cores)
  double memory_budget_bytes = 0;  ///< the most one format may take; 0: half of physical memory, at least 16 GiB
  double max_ratio_to_csr = 0;     ///< the most it may take against CSR (above 64 MiB); 0: 20
};

/// Checks the bytes a format would need *before* allocating it. Throws Unsupported with
/// "<FORMAT> would need X GiB, N times CSR; limit is Y GiB (and M times CSR)" when over budget.
void check_format_memory(const std::string& format, double bytes_needed, const CsrView& a, const ConvertOptions& opt);
double csr_storage_bytes(const CsrView& a);
/// The bytes one format may take: opt.memory_budget_bytes, or when it is 0 half of physical memory
/// (at least 16 GiB).
double format_memory_budget(const ConvertOptions& opt);
/// Threads a conversion runs on: opt.threads, or all.
int conversion_threads(const ConvertOptions& opt);

/// The most that allocations whose sizes come from the input (a header's sizes, --k, a vector file)
/// may take together: `requested` when positive (--memory-budget), else half of the machine's
/// physical memory.
double input_memory_budget(double requested = 0);
/// Checks such an allocation before it is made. Throws Error "<what> would need X GiB; the memory
/// budget is Y GiB" when over (sizes as memory_size_text writes them).
void check_input_memory(const std::string& what, double bytes_needed, double requested_budget = 0);
/// What a checked product holds beside the matrix, for a memory budget counted at the file's size
/// line (`run` and the benchmark count it): per row and right-hand side, y, the plan's y and the
/// reference's sums, bounds and |a||x| terms (40 bytes); per row, the plan's own arrays (a 32-bit
/// copy of the row pointers, row lengths, ELL's padding at width one: 20); per column and
/// right-hand side, x, the plan's x and one more copy (the planner's next candidate, or single
/// precision's float x: 24). Upper bounds of what the CPU plans were measured to take.
struct CheckedProductMemory {
  double per_row = 0, per_col = 0;
};
CheckedProductMemory checked_product_memory(int k);

/// A size in the memory-budget messages: GiB from 0.1 GiB on (one decimal), else MiB, KiB or bytes,
/// so that small sizes and budgets do not read "0.0 GiB".
std::string memory_size_text(double bytes);

}  // namespace spmv
