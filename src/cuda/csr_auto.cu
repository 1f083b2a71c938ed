// "csr" on CUDA: picks the CSR kernel for the matrix from its row statistics, and the CSR SpMM
// kernel for k > 1. Irregular rows (a row far longer than the mean: tuning::csr_prefers_adaptive) go
// to CSR-adaptive, which batches short rows and cuts long ones into pieces of a block each; regular
// ones to CSR-vector with its sub-warp chosen from the mean row length. SpMM on irregular rows: the
// faster of the CSR SpMM kernel and CSR-adaptive's (spmm_on_irregular_rows).
#include <spmv/stats.hpp>

#include <chrono>
#include <cstdio>

#include "cuda/csr_device.cuh"
#include "cuda/tuning.hpp"
#include "cuda/cuda_kernels.hpp"
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

// SpMM on irregular rows: the CSR SpMM kernel or CSR-adaptive's block per row block and column
// (004's CSR-Adaptive SpMM), whichever a trial (trial_seconds) finds faster: where a few rows are
// far longer than the rest, either may lead (bench/results/README.md, issue 52). Variant words
// are the CSR SpMM kernel's: given, no trial.
// The two share one upload of the matrix; where CSR-adaptive cannot be made or run (a grid past
// 2^31 blocks, its buffers past the device's memory), the CSR SpMM kernel stays.
std::unique_ptr<Plan> spmm_on_irregular_rows(const CsrView& a, const PlanOptions& opt) {
  if (!opt.trial || (!opt.kernel.variant.empty() && opt.kernel.variant != "auto") || a.nnz() == 0)
    return make_csr_spmm(a, opt);
  const auto t0 = std::chrono::steady_clock::now();
  SharedDeviceCsr dev;
  auto spmm = make_sharing_upload(a, "csr", opt, dev, nullptr);
  std::unique_ptr<Plan> adaptive;
  double t[2];
  try {
    adaptive = make_sharing_upload(a, "csr-adaptive", opt, dev, nullptr);
    t[0] = trial_seconds(*spmm);
    t[1] = trial_seconds(*adaptive);
  } catch (const std::exception&) {
    adaptive.reset();
    spmm->setup_seconds = seconds_since(t0) - spmm->convert_seconds;
    return spmm;
  }
  auto kept = t[1] < t[0] ? std::move(adaptive) : std::move(spmm);
  char trial[80];
  std::snprintf(trial, sizeof trial, " (trial us: csr-spmm %.1f, csr-adaptive %.1f)", t[0] * 1e6, t[1] * 1e6);
  kept->detail = std::string(t[1] < t[0] ? "kernel=csr-adaptive " : "") + kept->detail + trial;
  kept->setup_seconds = seconds_since(t0) - kept->convert_seconds;
  return kept;
}

std::unique_ptr<Plan> make_auto(const CsrView& a, const PlanOptions& opt) {
  offset_t max_len = 0;
  for (index_t r = 0; r < a.rows; ++r) max_len = std::max(max_len, a.row_length(r));
  const double mean = a.rows ? static_cast<double>(a.nnz()) / a.rows : 0.0;
  const bool irregular = tuning::csr_prefers_adaptive(max_len, mean);
  if (opt.k > 1) return irregular ? spmm_on_irregular_rows(a, opt) : make_csr_spmm(a, opt);
  auto plan = irregular ? make_csr_adaptive(a, opt) : make_csr_vector(a, opt);
  plan->detail = std::string("kernel=") + (irregular ? "csr-adaptive " : "csr-vector ") + plan->detail;
  return plan;
}

}  // namespace

void register_csr_auto() {
  add_kernel({.name = "csr",
              .backend = Backend::Cuda,
              .format = "csr",
              .description = "CSR, kernel chosen from the row lengths (vector or adaptive); SpMM for k > 1",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size"},
              .variants = csr_spmm_variants(),
              .make = make_auto});
}

}  // namespace spmv::cuda
