#pragma once
#include <spmv/plan.hpp>

namespace spmv {

// Checks the bytes a format would need *before* allocating it. Throws Unsupported with
// "<FORMAT> would need X GiB, N times CSR; limit is Y GiB (and M times CSR)" when over budget.
void check_format_memory(const std::string& format, double bytes_needed, const Csr& a,
                         const PlanOptions& opt);
double csr_storage_bytes(const Csr& a);
// The bytes one format may take: opt.memory_budget_bytes, or 16 GiB when it is 0.
double format_memory_budget(const PlanOptions& opt);

// Threads a format conversion may use: the plan's own (PlanOptions::threads), so that a conversion
// is timed with the resources of the products it must pay back. Plans of the CUDA backend convert on
// the host with every core (host_conversion_options).
int conversion_threads(const PlanOptions& opt);
PlanOptions host_conversion_options(const PlanOptions& opt);

}  // namespace spmv
