#pragma once
/// @file
/// Products of a matrix distributed over the ranks of an MPI communicator (library spmv::mpi,
/// built where MPI is found).
///
/// Each rank holds a contiguous block of rows and the same block of x's entries (for a square
/// matrix; a rectangular one's x is split in even blocks), PETSc's MPIAIJ layout: its rows split
/// into a diagonal block (the columns it owns) and an off-diagonal block over a compact halo (the
/// other columns its rows touch), each an ordinary Plan of this library (the planner chooses its
/// kernel; OpenMP, serial or CUDA, one GPU per rank). A product posts the halo's exchange, runs the
/// diagonal block, completes the exchange and adds the off-diagonal block: communication overlapped
/// with the local product. Who sends which entries to whom is worked out once, when the plan is made.
#include <mpi.h>
#include <spmv/plan.hpp>
#include <spmv/solvers.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spmv {

/// One rank's rows of a distributed matrix: rows [row_begin, row_begin + rows.rows) of a
/// global_rows x global_cols matrix, in CSR with global column numbers (rows.cols == global_cols).
struct RankRows {
  index_t global_rows = 0;
  index_t global_cols = 0;
  index_t row_begin = 0;
  Csr rows;
};

/// `a` (significant on `root` only; other ranks pass nullptr) split into contiguous row blocks
/// balanced by nonzeros plus rows, each sent to its rank. Collective over comm.
RankRows scatter_rows(MPI_Comm comm, const Csr* a, int root = 0);
/// The rows of a file. A binary cache (spmv convert A.mtx A.spmvbin; not gzipped): `root` reads
/// its row offsets and splits the rows, every rank reads its own rows from the file in parallel
/// (each part's structure checked; the file's checksum, which covers all of it, is not). Anything
/// else (Matrix Market, .gz): `root` reads it (spmv::load) and scatters its rows. A read error is
/// thrown on every rank (the failing rank's message). Collective.
RankRows read_rows(MPI_Comm comm, const std::string& path, int root = 0);
/// Each rank's rows of a matrix made in place (in parallel), without any file: the negative
/// Laplacian of an n x n x n grid of nodes with a 7-point (points = 7) or 27-point (points = 27)
/// stencil, nodes numbered x fastest, in even row blocks. With `dofs` > 1 (1..8) each node has
/// that many rows, each coupled to every dof of the node's neighbours (a FEM-like matrix of
/// points * dofs entries a row): diagonal points * dofs - 1, every other entry -1 (symmetric,
/// diagonally dominant). Collective.
RankRows stencil_rows(MPI_Comm comm, index_t n, int points, int dofs = 1);
/// Each rank's rows of an n x n random graph made in place: every row `per_row` distinct columns
/// drawn uniformly (its own among them), values uniform in [-1, 1); row r's entries depend on
/// (seed, r) alone, so the matrix is the same on any number of ranks. Even row blocks. Collective.
RankRows random_rows(MPI_Comm comm, index_t n, int per_row, std::uint64_t seed = 42);

/// Where a distributed product's time went on this rank, summed over the products since the
/// plan was made or reset_timings() (host seconds, MPI_Wtime).
struct DistributedTimings {
  long long products = 0;
  double pack = 0;    ///< the entries to send gathered and posted (on the GPU: the wait for their copy to the host)
  double local = 0;   ///< the diagonal block's product called (on the GPU: queued)
  double wait = 0;    ///< waiting for the exchange to complete after the local product
  double remote = 0;  ///< the off-diagonal block (and, on the GPU, the halo copied to the device)
  double total = 0;   ///< whole calls of multiply()
};

/// A distributed product's plan: made once (collectively), applied many times.
class DistributedPlan {
 public:
  /// Collective over comm (which the plan duplicates and keeps). opt as for make_plan, applied to
  /// both blocks: opt.operation Transpose makes y = alpha A^T x + beta y (x in row blocks, y in
  /// column blocks; the off-diagonal block's contributions sent back to their owners); opt.k > 1
  /// the SpMM, X and Y row-major (Layout::RowMajor only). Precision double or mixed (double
  /// vectors). A CUDA backend puts each rank on one GPU: device (cuda_device_count()) rank-local
  /// index modulo the GPUs, set by the caller (cudaSetDevice) or by make() when `select_device`.
  static std::unique_ptr<DistributedPlan> make(MPI_Comm comm, const RankRows& rows, Backend backend,
                                               std::string_view kernel = "auto", const PlanOptions& opt = {},
                                               bool select_device = true);
  /// Collective (it frees the plan's communicator): every rank destroys its plan, before MPI_Finalize.
  ~DistributedPlan();
  DistributedPlan(const DistributedPlan&) = delete;
  DistributedPlan& operator=(const DistributedPlan&) = delete;

  /// y = alpha A x + beta y over this rank's blocks: x holds x_size()*k values, y y_size()*k, host
  /// memory (for a CUDA plan copied to and from the device within the call). Collective: every
  /// rank calls it for every product.
  void multiply(std::span<const double> x, std::span<double> y, double alpha = 1.0, double beta = 0.0);
  /// The same on device memory (CUDA plans), queued on `stream`; the halo staged through pinned
  /// host memory for MPI (the call returns once its messages are done; y is ready when the
  /// stream's work is).
  void multiply(DeviceSpan<const double> x, DeviceSpan<double> y, double alpha = 1.0, double beta = 0.0,
                CudaStream stream = nullptr);

  /// The halo's exchange alone, as multiply() makes it (the entries gathered and sent, the
  /// messages completed, on the GPU the staging copies both ways, waited for) without either
  /// block's product: timed beside the products, it says how much of the exchange the local
  /// product hides. x as for multiply(); y is not touched. Collective.
  void exchange(std::span<const double> x);
  void exchange(DeviceSpan<const double> x, CudaStream stream = nullptr);
  int rank() const;
  int ranks() const;
  /// The plan's own communicator (a duplicate of the one it was made on).
  MPI_Comm communicator() const;
  /// This rank's entries of x and of y: [x_begin, x_begin + x_size), [y_begin, y_begin + y_size).
  index_t x_begin() const;
  index_t x_size() const;
  index_t y_begin() const;
  index_t y_size() const;
  index_t global_rows() const;
  index_t global_cols() const;
  int k() const;
  bool on_device() const;
  /// Halo entries this rank receives per product (A) or sends back to their owners (A^T); and the
  /// entries of its x block the other ranks need: sent (A), or received back and added (A^T).
  index_t halo_size() const;
  index_t send_size() const;
  /// Ranks it exchanges with.
  int neighbours() const;
  /// Bytes this rank sends per product (entries * k * 8).
  std::size_t bytes_sent() const;
  offset_t local_nnz() const;   ///< nonzeros of the diagonal block
  offset_t remote_nnz() const;  ///< nonzeros of the off-diagonal block
  /// The blocks' plans (remote: nullptr where this rank has no halo).
  const Plan& local_plan() const;
  const Plan* remote_plan() const;
  Plan& local_plan();
  Plan* remote_plan();
  /// Seconds the plan's making took on this rank (split, halo pattern, both blocks' plans).
  double setup_seconds() const;
  const DistributedTimings& timings() const;
  void reset_timings();
  /// One line: this rank's rows, blocks, halo and the blocks' kernels.
  std::string describe() const;

 private:
  struct Impl;
  explicit DistributedPlan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Conjugate gradients on A x = b over the ranks (A square, symmetric positive definite; k = 1):
/// b and x are this rank's blocks (x_size() values; x holds the initial guess and receives the
/// solution); every dot product is summed over the ranks (MPI_Allreduce, two an iteration), the
/// vector updates stay on the rank: OpenMP loops on host vectors, kernels on device vectors (a
/// CUDA plan; the dot products' sums come to the host for the allreduce). Stops as spmv::cg does
/// (||r|| <= tolerance ||b||, max_iterations). Collective.
SolverResult cg(DistributedPlan& a, std::span<const double> b, std::span<double> x, const SolverOptions& opt = {});
SolverResult cg(DistributedPlan& a, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt = {},
                CudaStream stream = nullptr);

}  // namespace spmv
