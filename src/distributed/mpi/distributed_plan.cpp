// A product distributed over MPI ranks (include/spmv/distributed.hpp): each rank's diagonal and
// off-diagonal blocks (src/distributed/partition.hpp) as plans of the library, the halo exchanged
// by non-blocking point-to-point messages while the diagonal block multiplies.
#include <spmv/distributed.hpp>
#include <spmv/spmv.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "distributed/mpi/mpi_util.hpp"
#include "distributed/partition.hpp"
#if SPMV_HAVE_CUDA
#include "cuda/halo_staging.hpp"
#endif

namespace spmv {

struct DistributedPlan::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  index_t grows = 0, gcols = 0;
  index_t row_begin = 0, nrows = 0, col_begin = 0, ncols = 0;
  bool transpose = false;
  int k = 1;
  int threads = 1;       // the packing loop's, the blocks' (CPU plans)
  dist::LocalPart part;  // the blocks (CPU plans of CSR kernels borrow them)
  std::unique_ptr<Plan> local, remote;
  // Neighbours: to send_to[q] go x's local entries send_idx[send_seg[q] .. send_seg[q + 1]); from
  // recv_from[q] come the halo's entries recv_seg[q] .. recv_seg[q + 1]. A^T reverses both.
  std::vector<int> send_to, recv_from;
  std::vector<std::size_t> send_seg{0}, recv_seg{0};
  std::vector<index_t> send_idx;
  std::vector<double> send_buf, halo_buf;
  // The off-diagonal block keeps only its non-empty rows where they are few (most rows of a block
  // touch no other rank's columns): kept[i] is its row i's, rows_buf its vector (k values a row).
  std::vector<index_t> kept;
  std::vector<double> rows_buf;
  std::vector<MPI_Request> requests;
  DistributedTimings timings;
  double setup = 0;
#if SPMV_HAVE_CUDA
  std::unique_ptr<cuda::HaloStaging> staging;
  std::unique_ptr<DeviceVector<double>> xd, yd;  // for host vectors given to a GPU plan
#endif

  ~Impl() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }

  // Posts the receives into `into` (segments `into_seg` from `from`) and the sends from `out`
  // (segments `out_seg` to `to`), k values per entry.
  void post(double* into, const std::vector<int>& from, const std::vector<std::size_t>& into_seg, const double* out,
            const std::vector<int>& to, const std::vector<std::size_t>& out_seg) {
    requests.clear();
    for (std::size_t q = 0; q < from.size(); ++q)
      mpi::irecv(into + into_seg[q] * k, (into_seg[q + 1] - into_seg[q]) * k, from[q], comm, requests);
    for (std::size_t q = 0; q < to.size(); ++q)
      mpi::isend(out + out_seg[q] * k, (out_seg[q + 1] - out_seg[q]) * k, to[q], comm, requests);
  }
  // A x: the halo received into `halo` from the ranks owning it, x's entries they need sent from
  // `out`. A^T x: the reverse, the contributions in `halo` sent back to their owners, theirs to
  // this rank's rows received into `back`.
  void post_halo(double* halo, const double* out) { post(halo, recv_from, recv_seg, out, send_to, send_seg); }
  void post_back(double* back, const double* halo) { post(back, send_to, send_seg, halo, recv_from, recv_seg); }
  void wait() {
    if (!requests.empty())
      mpi::check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    requests.clear();
  }

  std::size_t x_values() const { return static_cast<std::size_t>(transpose ? nrows : ncols) * k; }
  std::size_t y_values() const { return static_cast<std::size_t>(transpose ? ncols : nrows) * k; }

  void check_sizes(std::size_t nx, std::size_t ny) const {
    if (nx != x_values())
      throw Error(
          fmt::format("DistributedPlan::multiply: x has {} values on rank {}, expected {}", nx, rank, x_values()));
    if (ny != y_values())
      throw Error(
          fmt::format("DistributedPlan::multiply: y has {} values on rank {}, expected {}", ny, rank, y_values()));
  }

  // Host seconds since the last lap, added to one of the timings.
  struct Stopwatch {
    double start = MPI_Wtime(), t = start;
    void lap(double& into) {
      const double now = MPI_Wtime();
      into += now - t;
      t = now;
    }
  };

  // x's entries the other ranks need into send_buf (A).
  void gather_send(const double* x) {
    const std::size_t n = send_idx.size();
#pragma omp parallel for schedule(static) num_threads(threads) if (n * k > 65536)
    for (std::size_t i = 0; i < n; ++i)
      for (int j = 0; j < k; ++j) send_buf[i * k + j] = x[static_cast<std::size_t>(send_idx[i]) * k + j];
  }

  void host_product(const double* x, double* y, double alpha, double beta) {
    const std::size_t nx = x_values(), ny = y_values();
    Stopwatch watch;
    const auto lap = [&watch](double& into) { watch.lap(into); };
    if (!transpose) {
      gather_send(x);
      post_halo(halo_buf.data(), send_buf.data());
      lap(timings.pack);
      local->multiply(std::span<const double>(x, nx), std::span<double>(y, ny), alpha, beta);
      lap(timings.local);
      wait();
      lap(timings.wait);
      if (remote && kept.empty())
        remote->multiply(std::span<const double>(halo_buf), std::span<double>(y, ny), alpha, 1.0);
      if (remote && !kept.empty()) {
        remote->multiply(std::span<const double>(halo_buf), std::span<double>(rows_buf), alpha, 0.0);
        for (std::size_t i = 0; i < kept.size(); ++i)
          for (int j = 0; j < k; ++j) y[static_cast<std::size_t>(kept[i]) * k + j] += rows_buf[i * k + j];
      }
      lap(timings.remote);
    } else {  // the off-diagonal block's contributions go back to their owners, who add them
      if (remote && kept.empty())
        remote->multiply(std::span<const double>(x, nx), std::span<double>(halo_buf), alpha, 0.0);
      if (remote && !kept.empty()) {
        for (std::size_t i = 0; i < kept.size(); ++i)
          for (int j = 0; j < k; ++j) rows_buf[i * k + j] = x[static_cast<std::size_t>(kept[i]) * k + j];
        remote->multiply(std::span<const double>(rows_buf), std::span<double>(halo_buf), alpha, 0.0);
      }
      lap(timings.remote);
      post_back(send_buf.data(), halo_buf.data());
      lap(timings.pack);
      local->multiply(std::span<const double>(x, nx), std::span<double>(y, ny), alpha, beta);
      lap(timings.local);
      wait();
      lap(timings.wait);
      for (std::size_t q = 0; q + 1 < send_seg.size(); ++q)  // in neighbour order: the same bits every run
        for (std::size_t i = send_seg[q]; i < send_seg[q + 1]; ++i)
          for (int j = 0; j < k; ++j) y[static_cast<std::size_t>(send_idx[i]) * k + j] += send_buf[i * k + j];
      lap(timings.remote);  // A^T's off-diagonal part: its product above and the contributions added
    }
    timings.total += MPI_Wtime() - watch.start;
    ++timings.products;
  }

  // The halo's exchange alone, as a product makes it (the entries gathered, the messages, on the
  // GPU the staging copies), without either block's product: what the overlap has to hide.
  void host_exchange(const double* x) {
    if (!transpose) {
      gather_send(x);
      post_halo(halo_buf.data(), send_buf.data());
    } else {
      post_back(send_buf.data(), halo_buf.data());
    }
    wait();
  }

#if SPMV_HAVE_CUDA
  // The halo's staging runs on a stream of its own beside the diagonal block's product on s: the
  // entries to send are gathered and copied to the host while that product runs, the messages
  // complete under it, the received halo is copied back before the off-diagonal block runs.
  void device_product(const double* x, double* y, double alpha, double beta, CudaStream s) {
    const std::size_t nx = x_values(), ny = y_values();
    const DeviceSpan<const double> xs(x, nx);
    const DeviceSpan<double> ys(y, ny);
    if (!send_idx.empty() || !part.halo.empty()) staging->wait_previous();  // its host buffers free again
    Stopwatch watch;
    const auto lap = [&watch](double& into) { watch.lap(into); };
    staging->begin(s);
    if (!transpose) {
      staging->gather(x);
      local->multiply(xs, ys, alpha, beta, s);
      lap(timings.local);
      staging->finish_host();
      post_halo(staging->halo_host(), staging->send_host());
      lap(timings.pack);
      wait();
      lap(timings.wait);
      if (remote) {
        staging->halo_to_device(s);
        const DeviceSpan<const double> halo(staging->halo_device(), halo_buf.size());
        if (kept.empty()) {
          remote->multiply(halo, ys, alpha, 1.0, s);
        } else {
          remote->multiply(halo, DeviceSpan<double>(staging->rows_device(), rows_buf.size()), alpha, 0.0, s);
          staging->add_rows(y, s);
        }
      }
      lap(timings.remote);
    } else {
      if (remote) {  // the off-diagonal block's contributions, on the staging stream
        const CudaStream side = staging->side();
        const DeviceSpan<double> halo(staging->halo_device(), halo_buf.size());
        if (kept.empty()) {
          remote->multiply(xs, halo, alpha, 0.0, side);
        } else {
          staging->gather_rows(x, side);
          remote->multiply(DeviceSpan<const double>(staging->rows_device(), rows_buf.size()), halo, alpha, 0.0, side);
        }
        staging->halo_to_host();
      }
      lap(timings.remote);
      local->multiply(xs, ys, alpha, beta, s);
      lap(timings.local);
      staging->finish_host();
      post_back(staging->send_host(), staging->halo_host());
      lap(timings.pack);
      wait();
      lap(timings.wait);
      staging->scatter_add(y, s);
      lap(timings.remote);
    }
    staging->mark(s);
    timings.total += MPI_Wtime() - watch.start;
    ++timings.products;
  }

  // Host x of a GPU plan on the plan's own device vectors (made at the first call): its device copy.
  const double* upload_x(std::span<const double> x) {
    if (!xd) {
      xd = std::make_unique<DeviceVector<double>>(x_values());
      yd = std::make_unique<DeviceVector<double>>(y_values());
    }
    xd->upload(x);
    return xd->data();
  }

  void device_exchange(const double* x, CudaStream s) {
    if (!send_idx.empty() || !part.halo.empty()) staging->wait_previous();
    staging->begin(s);
    if (!transpose) {
      staging->gather(x);
      staging->finish_host();
      post_halo(staging->halo_host(), staging->send_host());
      wait();
      if (remote) staging->halo_to_device(s);
    } else {
      if (remote) staging->halo_to_host();
      staging->finish_host();
      post_back(staging->send_host(), staging->halo_host());
      wait();
    }
    staging->mark(s);
  }
#endif
};

namespace {

// The block's non-empty rows alone, where they are under half of its rows: `kept` lists them (else
// it stays empty and the block keeps every row).
void compress_rows(Csr& b, std::vector<index_t>& kept) {
  kept.clear();
  for (index_t r = 0; r < b.rows; ++r)
    if (b.row_ptr[r + 1] > b.row_ptr[r]) kept.push_back(r);
  if (kept.size() * 2 >= static_cast<std::size_t>(b.rows)) {
    kept.clear();
    return;
  }
  Array<offset_t> ptr(kept.size() + 1);
  ptr[0] = 0;
  for (std::size_t i = 0; i < kept.size(); ++i) ptr[i + 1] = b.row_ptr[kept[i] + 1];
  b.row_ptr = std::move(ptr);
  b.rows = static_cast<index_t>(kept.size());
}

}  // namespace

DistributedPlan::DistributedPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DistributedPlan::~DistributedPlan() = default;

std::unique_ptr<DistributedPlan> DistributedPlan::make(MPI_Comm comm_in, const RankRows& rows, Backend backend,
                                                       std::string_view kernel, const PlanOptions& opt,
                                                       bool select_device) {
  const double t0 = MPI_Wtime();
  auto m = std::make_unique<Impl>();
  mpi::check(MPI_Comm_dup(comm_in, &m->comm), "MPI_Comm_dup");
  MPI_Comm comm = m->comm;
  MPI_Comm_rank(comm, &m->rank);
  MPI_Comm_size(comm, &m->size);
  if (opt.k > 1 && opt.layout != Layout::RowMajor)
    throw Unsupported("DistributedPlan: k > 1 takes row-major X and Y (Layout::RowMajor)");
  if (opt.reorder == Reorder::Rcm)
    throw Unsupported("DistributedPlan: reorder is not distributed (a rank's off-diagonal block is rectangular)");
  if (opt.precision == Precision::Single)
    throw Unsupported("DistributedPlan: precision double or mixed (double vectors); single is not distributed");
  m->k = std::max(1, opt.k);
  m->threads = plan_threads(opt);
  m->transpose = opt.operation == Operation::Transpose;

  // Every rank's block of rows, checked to tile the global rows in rank order.
  // This rank's rows checked before the first collective step, any rank's failure thrown on all.
  const Csr& mine = rows.rows;
  std::string failure;
  if (mine.cols != rows.global_cols)
    failure = fmt::format("rank {}'s rows have {} columns, the matrix {}", m->rank, mine.cols, rows.global_cols);
  else if (mine.is_complex() || mine.val.size() != mine.col.size())
    failure = fmt::format("rank {}'s rows: a real matrix with double values", m->rank);
  else if (const std::string e = csr_structure_error(mine.view()); !e.empty())
    failure = fmt::format("rank {}'s rows: {}", m->rank, e);
  mpi::throw_if_any(failure, comm, "DistributedPlan");
  const std::vector<long long> firsts = mpi::allgather<long long>(rows.row_begin, comm);
  const std::vector<long long> counts = mpi::allgather<long long>(mine.rows, comm);
  const std::vector<long long> shapes =
      mpi::allgather<long long>(static_cast<long long>(rows.global_rows) * (1LL << 31) + rows.global_cols, comm);
  dist::Ownership row_owner;
  row_owner.bounds.push_back(0);
  for (int r = 0; r < m->size; ++r) {
    if (firsts[static_cast<std::size_t>(r)] != row_owner.bounds.back() ||
        shapes[static_cast<std::size_t>(r)] != shapes[0])
      throw Error(fmt::format(
          "DistributedPlan: rank {} holds rows from {} (the ranks before end at {}) of a {}x{} "
          "matrix: the ranks' rows must be contiguous blocks, in rank order, of one matrix",
          r, firsts[static_cast<std::size_t>(r)], row_owner.bounds.back(), shapes[static_cast<std::size_t>(r)] >> 31,
          shapes[static_cast<std::size_t>(r)] & ((1LL << 31) - 1)));
    row_owner.bounds.push_back(
        static_cast<index_t>(firsts[static_cast<std::size_t>(r)] + counts[static_cast<std::size_t>(r)]));
  }
  if (row_owner.bounds.back() != rows.global_rows)
    throw Error(
        fmt::format("DistributedPlan: the ranks hold {} rows of {}", row_owner.bounds.back(), rows.global_rows));
  m->grows = rows.global_rows;
  m->gcols = rows.global_cols;
  // x's blocks: the rows' for a square matrix, even blocks otherwise (as partition_columns).
  dist::Ownership col_owner = row_owner;
  if (m->grows != m->gcols)
    for (int r = 0; r <= m->size; ++r)
      col_owner.bounds[static_cast<std::size_t>(r)] =
          static_cast<index_t>(static_cast<offset_t>(m->gcols) * r / m->size);
  m->row_begin = rows.row_begin;
  m->nrows = mine.rows;
  m->col_begin = col_owner.begin(m->rank);
  m->ncols = col_owner.size(m->rank);

  // The blocks and the halo; the pattern: each rank tells the owners which entries it needs.
  m->part = dist::split_local(mine.view(), col_owner.begin(m->rank), col_owner.end(m->rank), col_owner);
  compress_rows(m->part.offd, m->kept);
  m->rows_buf.resize(m->kept.size() * static_cast<std::size_t>(m->k));
  const dist::LocalPart& p = m->part;
  std::vector<long long> need(static_cast<std::size_t>(m->size), 0);
  for (const int o : p.halo_owner) ++need[static_cast<std::size_t>(o)];
  const std::vector<long long> give = mpi::alltoall(need, comm);
  std::vector<index_t> asked = mpi::alltoallv(p.halo, need, give, comm);  // global columns, owner's order
  for (int q = 0; q < m->size; ++q) {
    if (need[static_cast<std::size_t>(q)]) {
      m->recv_from.push_back(q);
      m->recv_seg.push_back(m->recv_seg.back() + static_cast<std::size_t>(need[static_cast<std::size_t>(q)]));
    }
    if (give[static_cast<std::size_t>(q)]) {
      m->send_to.push_back(q);
      m->send_seg.push_back(m->send_seg.back() + static_cast<std::size_t>(give[static_cast<std::size_t>(q)]));
    }
  }
  for (index_t& c : asked) c -= m->col_begin;
  m->send_idx = std::move(asked);
  m->send_buf.resize(m->send_idx.size() * static_cast<std::size_t>(m->k));
  m->halo_buf.resize(p.halo.size() * static_cast<std::size_t>(m->k));

  // One GPU per rank: rank-local index modulo the GPUs.
  if (backend == Backend::Cuda && select_device) {
#if SPMV_HAVE_CUDA
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &node);
    int local_rank = 0;
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    cuda::select_device(local_rank);
#endif
  }
  // The blocks' plans and a GPU rank's staging: made on every rank (a rank's error thrown on all).
  try {
    m->local = make_plan(p.diag.view(), backend, kernel, opt);
    if (!p.halo.empty()) m->remote = make_plan(p.offd.view(), backend, kernel, opt);
#if SPMV_HAVE_CUDA
    if (m->local->on_device())
      m->staging = std::make_unique<cuda::HaloStaging>(m->send_idx, m->send_seg, p.halo.size(), m->k, m->kept);
#endif
  } catch (const std::exception& e) {
    failure = e.what();
  }
  mpi::throw_if_any(failure, comm, "DistributedPlan");
  m->setup = MPI_Wtime() - t0;
  return std::unique_ptr<DistributedPlan>(new DistributedPlan(std::move(m)));
}

void DistributedPlan::multiply(std::span<const double> x, std::span<double> y, double alpha, double beta) {
  Impl& m = *impl_;
  m.check_sizes(x.size(), y.size());
#if SPMV_HAVE_CUDA
  if (m.staging) {  // host vectors on a GPU plan: through device vectors of its own
    const double* xd = m.upload_x(x);
    if (beta != 0) m.yd->upload(y);
    m.device_product(xd, m.yd->data(), alpha, beta, nullptr);
    m.yd->download(y);
    return;
  }
#endif
  m.host_product(x.data(), y.data(), alpha, beta);
}

void DistributedPlan::multiply(DeviceSpan<const double> x, DeviceSpan<double> y, double alpha, double beta,
                               CudaStream stream) {
  Impl& m = *impl_;
  if (!on_device())
    throw Error("DistributedPlan::multiply: device vectors given to a plan whose blocks run on the CPU");
  m.check_sizes(x.size(), y.size());
#if SPMV_HAVE_CUDA
  m.device_product(x.data(), y.data(), alpha, beta, stream);
#else
  (void)alpha, (void)beta, (void)stream;
#endif
}

void DistributedPlan::exchange(std::span<const double> x) {
  Impl& m = *impl_;
  m.check_sizes(x.size(), m.y_values());
#if SPMV_HAVE_CUDA
  if (m.staging) {
    m.device_exchange(m.upload_x(x), nullptr);
    return;
  }
#endif
  m.host_exchange(x.data());
}

void DistributedPlan::exchange(DeviceSpan<const double> x, CudaStream stream) {
  Impl& m = *impl_;
  if (!on_device())
    throw Error("DistributedPlan::exchange: device vectors given to a plan whose blocks run on the CPU");
  m.check_sizes(x.size(), m.y_values());
#if SPMV_HAVE_CUDA
  m.device_exchange(x.data(), stream);
#else
  (void)stream;
#endif
}

int DistributedPlan::rank() const { return impl_->rank; }
int DistributedPlan::ranks() const { return impl_->size; }
MPI_Comm DistributedPlan::communicator() const { return impl_->comm; }
index_t DistributedPlan::x_begin() const { return impl_->transpose ? impl_->row_begin : impl_->col_begin; }
index_t DistributedPlan::x_size() const { return impl_->transpose ? impl_->nrows : impl_->ncols; }
index_t DistributedPlan::y_begin() const { return impl_->transpose ? impl_->col_begin : impl_->row_begin; }
index_t DistributedPlan::y_size() const { return impl_->transpose ? impl_->ncols : impl_->nrows; }
index_t DistributedPlan::global_rows() const { return impl_->transpose ? impl_->gcols : impl_->grows; }
index_t DistributedPlan::global_cols() const { return impl_->transpose ? impl_->grows : impl_->gcols; }
int DistributedPlan::k() const { return impl_->k; }
bool DistributedPlan::on_device() const { return impl_->local->on_device(); }
index_t DistributedPlan::halo_size() const { return static_cast<index_t>(impl_->part.halo.size()); }
index_t DistributedPlan::send_size() const { return static_cast<index_t>(impl_->send_idx.size()); }
int DistributedPlan::neighbours() const {
  std::vector<int> all(impl_->send_to);
  all.insert(all.end(), impl_->recv_from.begin(), impl_->recv_from.end());
  std::sort(all.begin(), all.end());
  return static_cast<int>(std::unique(all.begin(), all.end()) - all.begin());
}
std::size_t DistributedPlan::bytes_sent() const {
  const std::size_t entries = impl_->transpose ? impl_->part.halo.size() : impl_->send_idx.size();
  return entries * static_cast<std::size_t>(impl_->k) * sizeof(double);
}
offset_t DistributedPlan::local_nnz() const { return impl_->part.diag.nnz(); }
offset_t DistributedPlan::remote_nnz() const { return impl_->part.offd.nnz(); }
const Plan& DistributedPlan::local_plan() const { return *impl_->local; }
const Plan* DistributedPlan::remote_plan() const { return impl_->remote.get(); }
Plan& DistributedPlan::local_plan() { return *impl_->local; }
Plan* DistributedPlan::remote_plan() { return impl_->remote.get(); }
double DistributedPlan::setup_seconds() const { return impl_->setup; }
const DistributedTimings& DistributedPlan::timings() const { return impl_->timings; }
void DistributedPlan::reset_timings() { impl_->timings = {}; }

std::string DistributedPlan::describe() const {
  const Impl& m = *impl_;
  std::string s = fmt::format(
      "rank {}/{}: rows {}..{} ({} nonzeros local, {} remote), halo {} from {} ranks, sends {} "
      "to {} ranks; local {}",
      m.rank, m.size, m.row_begin, m.row_begin + m.nrows, local_nnz(), remote_nnz(), m.part.halo.size(),
      m.recv_from.size(), m.send_idx.size(), m.send_to.size(), m.local->describe());
  if (m.remote) s += "; remote " + m.remote->describe();
  return s;
}

}  // namespace spmv
