#include <spmv/formats/limits.hpp>
#include <spmv/plan.hpp>

#include <unistd.h>

#include <algorithm>
#include <fmt/format.h>

namespace spmv {

int conversion_threads(const ConvertOptions& opt) { return resolve_threads(opt.threads); }

double csr_storage_bytes(const CsrView& a) {
  return 12.0 * static_cast<double>(a.nnz()) + 8.0 * (static_cast<double>(a.rows) + 1);
}

double format_memory_budget(const ConvertOptions& opt) {
  return opt.memory_budget_bytes > 0 ? opt.memory_budget_bytes
                                     : std::max(16.0 * 1024 * 1024 * 1024, input_memory_budget(0));
}

void check_format_memory(const std::string& format, double bytes_needed, const CsrView& a, const ConvertOptions& opt) {
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  const double budget = format_memory_budget(opt);
  const double max_ratio = opt.max_ratio_to_csr > 0 ? opt.max_ratio_to_csr : 20.0;
  const double csr = std::max(csr_storage_bytes(a), 1.0);
  const double ratio = bytes_needed / csr;
  // Small matrices never hit the ratio limit: padding a 10 KB matrix 50x is harmless.
  const bool too_big = bytes_needed > budget || (ratio > max_ratio && bytes_needed > 64.0 * 1024 * 1024);
  if (too_big)
    throw Unsupported(
        fmt::format("{} would need {:.2f} GiB, {:.1f} times CSR; limit is {:.2f} GiB and {:.0f} times CSR", format,
                    bytes_needed / GiB, ratio, budget / GiB, max_ratio));
}

double input_memory_budget(double requested) {
  if (requested > 0) return requested;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 16.0 * 1024 * 1024 * 1024;  // unknown: the formats' default
  return 0.5 * static_cast<double>(pages) * static_cast<double>(page);
}

void check_input_memory(const std::string& what, double bytes_needed, double requested_budget) {
  const double budget = input_memory_budget(requested_budget);
  if (bytes_needed > budget)
    throw Error(fmt::format("{} would need {}; the memory budget is {}", what, memory_size_text(bytes_needed),
                            memory_size_text(budget)));
}

CheckedProductMemory checked_product_memory(int k) { return {40.0 * k + 20.0, 24.0 * k}; }

std::string memory_size_text(double bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  if (bytes >= 0.1 * kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
  if (bytes >= 0.1 * kMiB) return fmt::format("{:.1f} MiB", bytes / kMiB);
  if (bytes >= kKiB) return fmt::format("{:.1f} KiB", bytes / kKiB);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace spmv
