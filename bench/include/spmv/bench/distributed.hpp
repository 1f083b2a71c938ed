#pragma once
// The distributed product measured (spmv run --distributed, spmv bench --distributed): built where
// MPI is (SPMV_HAVE_MPI). Every rank runs it; rank 0 holds the per-rank table.
#include <spmv/distributed.hpp>
#include <spmv/timing.hpp>

#include <string>
#include <vector>

namespace spmv::bench {

/// A source: a matrix file, "stencil7:N" / "stencil27:N" (an N^3 grid's stencil) or "random:N:D"
/// (an N-row random graph, D entries a row): each rank's rows made in place, no file.
struct DistributedConfig {
  Backend backend = Backend::Omp;
  std::string kernel = "auto";
  PlanOptions opt;
  int samples = 10;
  double sample_seconds = 0.05;
  /// Iterations of conjugate gradients (spmv::cg over the ranks) timed after the products, on a
  /// square matrix's A x with k = 1 (0: none).
  int cg_iterations = 0;
};

/// One rank's share, per product (seconds averaged over the timed products).
struct DistributedRank {
  int rank = 0;
  index_t rows = 0, halo = 0, sent = 0;
  offset_t local_nnz = 0, remote_nnz = 0;
  int neighbours = 0;
  double bytes_sent = 0;
  double pack_s = 0, local_s = 0, wait_s = 0, remote_s = 0, total_s = 0;
  double setup_s = 0;
  double exchange_s = 0;  ///< the halo's exchange alone (DistributedPlan::exchange)
  double compute_s = 0;   ///< both blocks' kernels alone (Plan::time_runs)
  std::string local_kernel, remote_kernel;
};

struct DistributedResult {
  std::string matrix, backend, operation;
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  int ranks = 1, k = 1;
  double read_s = 0;   ///< reading (rank 0) and scattering, or making the stencil's rows
  double setup_s = 0;  ///< the plan's making, slowest rank
  ProductTiming time;  ///< per product, between barriers (the slowest rank's)
  double gflops = 0;
  double bytes_exchanged = 0;  ///< per product, all ranks
  index_t halo_total = 0, halo_max = 0;
  /// The product's time beyond the slowest rank's kernels alone (compute_s: the exchange's exposed
  /// part, packing and imbalance), over the product's time.
  double comm_share = 0;
  /// The overlap: the exchange alone and both blocks' kernels alone (the slowest rank's), and the
  /// share of the exchange the product hides, (exchange + kernels - product) / exchange clipped to
  /// [0, 1] (the product's time beyond the slowest rank's kernels counted as the exchange's).
  double exchange_s = 0, compute_s = 0, hidden = 0;
  /// Conjugate gradients (cg_iterations > 0): iterations run, seconds an iteration (the dot
  /// products' allreduce included), the product's share of it (its timed median over an
  /// iteration), ||r|| / ||b|| at the end.
  int cg_iterations = 0;
  double cg_iteration_s = 0, cg_product_share = 0, cg_residual = 0;
  bool passed = false;
  std::string check;                      ///< "passed", or the first failure
  std::vector<DistributedRank> per_rank;  ///< rank 0 only
};

/// Collective over comm.
DistributedResult run_distributed(MPI_Comm comm, const std::string& source, const DistributedConfig& config);
/// The result as key: value lines and a per-rank table (what spmv run --distributed prints).
std::string distributed_text(const DistributedResult& r);
/// One CSV row per rank and one for all ("all"), appended to `path` (a header first where new).
void append_distributed_csv(const std::string& path, const DistributedResult& r);

}  // namespace spmv::bench
