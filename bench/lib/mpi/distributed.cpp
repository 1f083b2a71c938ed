// The distributed product measured on every rank (spmv/bench/distributed.hpp).
#include <spmv/bench/distributed.hpp>
#include <spmv/device.hpp>
#include <spmv/formats/transpose.hpp>
#include <spmv/io.hpp>
#include <spmv/reference.hpp>
#include <spmv/version.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

namespace spmv::bench {
namespace {

int rank_of(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_of(MPI_Comm c) {
  int n = 0;
  MPI_Comm_size(c, &n);
  return n;
}

// "random:N:D" -> (N, D); (0, 0) otherwise.
std::pair<index_t, int> random_of(const std::string& source) {
  if (source.rfind("random:", 0) != 0) return {0, 0};
  const std::string rest = source.substr(7);
  long long n = 0, d = 0;
  if (std::sscanf(rest.c_str(), "%lld:%lld", &n, &d) != 2 || rest != fmt::format("{}:{}", n, d) || n < 1 || d < 1 ||
      n > 2147483647LL || d > n)
    throw Error(fmt::format("{}: random:N:D, N rows with D entries each (1 <= D <= N < 2^31)", source));
  return {static_cast<index_t>(n), static_cast<int>(d)};
}

// "stencil7:100" -> {7, 100, 1}, "stencil27:60:3" -> {27, 60, 3} (3 dofs a node); {0, 0, 0}
// for anything else.
struct Stencil {
  int points = 0;
  index_t side = 0;
  int dofs = 0;
};
Stencil stencil_of(const std::string& source) {
  for (const int points : {7, 27}) {
    const std::string prefix = fmt::format("stencil{}:", points);
    if (source.rfind(prefix, 0) == 0) {
      const std::string rest = source.substr(prefix.size());
      long long n = 0, d = 1;
      const int got = std::sscanf(rest.c_str(), "%lld:%lld", &n, &d);
      const bool exact = got == 1 ? rest == std::to_string(n) : rest == fmt::format("{}:{}", n, d);
      if (got < 1 || !exact || n < 1 || n > 2000 || d < 1 || d > 8)
        throw Error(fmt::format("{}: stencil{}:N or stencil{}:N:D (an N^3 grid, D = 1..8 dofs a node)", source, points,
                                points));
      return {points, static_cast<index_t>(n), static_cast<int>(d)};
    }
  }
  return {};
}

// Uniform in [-1, 1) from the index alone (splitmix64).
double x_value(std::size_t i) {
  std::uint64_t z = i + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

double max_over(double v, MPI_Comm c) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, c);
  return out;
}
double sum_over(double v, MPI_Comm c) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, c);
  return out;
}

// Every rank's string, on rank 0.
std::vector<std::string> gather_strings(const std::string& s, MPI_Comm c) {
  const int n = size_of(c), len = static_cast<int>(s.size());
  std::vector<int> lens(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, c);
  int total = 0;
  for (int r = 0; r < n; ++r) displs[static_cast<std::size_t>(r)] = total, total += lens[static_cast<std::size_t>(r)];
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(s.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, c);
  std::vector<std::string> out;
  if (rank_of(c) == 0)
    for (int r = 0; r < n; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lens[static_cast<std::size_t>(r)])));
  return out;
}

// One product on the vectors the plan's backend takes as they are: host vectors for CPU blocks,
// device ones (allocated once) for GPU blocks, waited for.
struct Vectors {
  std::vector<double> x, y;
  std::unique_ptr<DeviceVector<double>> xd, yd;
  Vectors(DistributedPlan& p, std::vector<double> xb)
      : x(std::move(xb)), y(static_cast<std::size_t>(p.y_size()) * p.k()) {
    if (p.on_device()) {
      xd = std::make_unique<DeviceVector<double>>(x.size());
      yd = std::make_unique<DeviceVector<double>>(y.size());
      xd->upload(x);
    }
  }
  void product(DistributedPlan& p) {
    if (xd) {
      p.multiply(xd->span(), yd->span());
      device::synchronize();
    } else {
      p.multiply(x, y);
    }
  }
  void fetch_y() {
    if (yd) yd->download(y);
  }
  void exchange(DistributedPlan& p) {
    if (xd) {
      p.exchange(xd->span());
      device::synchronize();
    } else {
      p.exchange(x);
    }
  }
  // Conjugate gradients on A u = b, b the y of the last product, u from zero.
  SolverResult cg(DistributedPlan& p, const SolverOptions& so) {
    if (xd) {
      DeviceVector<double> u(y.size());
      u.fill(0.0);
      const SolverResult out = spmv::cg(p, DeviceSpan<const double>(yd->span()), u.span(), so);
      device::synchronize();
      return out;
    }
    std::vector<double> u(y.size(), 0.0);
    return spmv::cg(p, y, u, so);
  }
};

// Calls of the collective f a batch: from 1, grown until one batch between barriers lasts
// sample_seconds (rank 0's times decide, so every rank runs as many).
long long batch_size(MPI_Comm comm, const DistributedConfig& config, const std::function<void()>& f) {
  for (long long batch = 1;;) {
    MPI_Barrier(comm);
    const double t = MPI_Wtime();
    for (long long i = 0; i < batch; ++i) f();
    MPI_Barrier(comm);
    double dt = MPI_Wtime() - t;
    MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, comm);
    if (dt >= config.sample_seconds || batch >= (1LL << 24)) return batch;
    batch = std::max(batch * 2, static_cast<long long>(batch * config.sample_seconds / std::max(dt, 1e-9) * 1.2));
  }
}

// Seconds a call of f, in config.samples batches of `batch` calls between barriers (rank 0's).
std::vector<double> timed_batches(MPI_Comm comm, const DistributedConfig& config, const std::function<void()>& f,
                                  long long batch) {
  std::vector<double> samples;
  for (int s = 0; s < std::max(1, config.samples); ++s) {
    MPI_Barrier(comm);
    const double t = MPI_Wtime();
    for (long long i = 0; i < batch; ++i) f();
    MPI_Barrier(comm);
    double dt = (MPI_Wtime() - t) / static_cast<double>(batch);
    MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, comm);
    samples.push_back(dt);
  }
  return samples;
}

double median_of(std::vector<double> v) { return sample_stats(v).median_s; }

}  // namespace

DistributedResult run_distributed(MPI_Comm comm, const std::string& source, const DistributedConfig& config) {
  const int rank = rank_of(comm), size = size_of(comm);
  DistributedResult r;
  r.ranks = size;
  r.k = std::max(1, config.opt.k);
  r.backend = to_string(config.backend);
  const bool transpose = config.opt.operation == Operation::Transpose;
  r.operation = transpose ? "t" : "n";
  // The rows: made in place, or read by rank 0 (which keeps the whole matrix for A^T's check).
  MPI_Barrier(comm);
  double t = MPI_Wtime();
  const Stencil stencil = stencil_of(source);
  const int points = stencil.points;
  const auto [random_n, random_d] = random_of(source);
  RankRows rows;
  io::LoadedMatrix whole;
  if (points) {
    rows = stencil_rows(comm, stencil.side, points, stencil.dofs);
    r.matrix = source;
  } else if (random_n) {
    rows = random_rows(comm, random_n, random_d);
    r.matrix = source;
  } else {
    std::string failure;
    if (rank == 0) {
      try {
        whole = io::load(source);
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }
    int failed = !failure.empty();
    MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
    if (failed) {
      long long len = static_cast<long long>(failure.size());
      MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, comm);
      failure.resize(static_cast<std::size_t>(len));
      MPI_Bcast(failure.data(), static_cast<int>(len), MPI_CHAR, 0, comm);
      throw Error(failure);
    }
    rows = scatter_rows(comm, rank == 0 ? &whole.matrix : nullptr);
    r.matrix = std::filesystem::path(source).filename().string();
  }
  r.read_s = max_over(MPI_Wtime() - t, comm);
  r.rows = transpose ? rows.global_cols : rows.global_rows;
  r.cols = transpose ? rows.global_rows : rows.global_cols;
  r.nnz = static_cast<offset_t>(sum_over(static_cast<double>(rows.rows.nnz()), comm));

  auto plan = DistributedPlan::make(comm, rows, config.backend, config.kernel, config.opt);
  r.setup_s = max_over(plan->setup_seconds(), comm);
  // x: the same global vector on every rank (its block taken), so each rank can check its rows.
  const int k = r.k;
  // x: entry i a hash of i, so each rank makes its own block; for the check, the entries its rows
  // touch (the others' pages never allocated), all of them on rank 0 for A^T of a file.
  const auto xb = static_cast<std::size_t>(plan->x_begin()) * k, xn = static_cast<std::size_t>(plan->x_size()) * k;
  std::vector<double> block(xn);
  for (std::size_t i = 0; i < xn; ++i) block[i] = x_value(xb + i);
  Array<double> x(static_cast<std::size_t>(r.cols) * k);
  {
    std::size_t lo = 0, hi = x.size();
    if ((!transpose || points) && rows.rows.nnz() > 0) {
      const auto [mn, mx] = std::minmax_element(rows.rows.col.begin(), rows.rows.col.end());
      lo = static_cast<std::size_t>(*mn) * k;
      hi = (static_cast<std::size_t>(*mx) + 1) * k;
    } else if ((!transpose || points) || rank != 0) {
      hi = 0;
    }
#pragma omp parallel for schedule(static)
    for (std::size_t i = lo; i < hi; ++i) x[i] = x_value(i);
  }
  Vectors v(*plan, std::move(block));
  v.product(*plan);
  v.fetch_y();
  // The check: each rank its own rows (A x; A^T x of a stencil, which is symmetric); A^T x of a
  // file or a random graph on rank 0 against the transpose of the whole matrix (a random graph's
  // made there too).
  if (transpose && random_n && rank == 0) whole.matrix = random_rows(MPI_COMM_SELF, random_n, random_d).rows;
  std::string failure;
  if (!transpose || points) {
    const Reference ref = reference_product(rows.rows.view(), x, k, Layout::RowMajor);
    const CheckResult c = check_product(rows.rows.view(), ref, v.y, k, Layout::RowMajor, config.opt.precision);
    if (!c.passed) failure = fmt::format("rank {}: {}", rank, c.message);
  } else {
    std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
    const int mine = static_cast<int>(v.y.size());
    MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
    for (int q = 1; q < size; ++q)
      displs[static_cast<std::size_t>(q)] =
          displs[static_cast<std::size_t>(q) - 1] + counts[static_cast<std::size_t>(q) - 1];
    std::vector<double> y(rank == 0 ? static_cast<std::size_t>(r.rows) * k : 0);
    MPI_Gatherv(v.y.data(), mine, MPI_DOUBLE, y.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, comm);
    if (rank == 0) {
      const Csr at = spmv::transpose(whole.matrix.view());
      const CheckResult c = check_product(at.view(), reference_product(at.view(), x, k, Layout::RowMajor), y, k,
                                          Layout::RowMajor, config.opt.precision);
      if (!c.passed) failure = c.message;
    }
  }
  const std::vector<std::string> failures = gather_strings(failure, comm);
  int passed = 1;
  if (rank == 0) {
    r.check = "passed";
    for (const std::string& f : failures)
      if (!f.empty()) {
        r.check = f;
        passed = 0;
        break;
      }
  }
  MPI_Bcast(&passed, 1, MPI_INT, 0, comm);
  r.passed = passed != 0;

  // Timing: batches between barriers, grown until one lasts sample_seconds (rank 0 decides); the
  // per-rank timings count the sampled products alone.
  const auto product = [&] { v.product(*plan); };
  const long long batch = batch_size(comm, config, product);
  plan->reset_timings();
  const std::vector<double> samples = timed_batches(comm, config, product, batch);
  static_cast<SampleStats&>(r.time) = sample_stats(samples);
  r.time.products_per_sample = static_cast<int>(std::min<long long>(batch, 1 << 30));
  r.time.samples = static_cast<int>(samples.size());
  r.time.sample_times_s = samples;
  r.gflops = 2.0 * static_cast<double>(r.nnz) * k / r.time.median_s * 1e-9;
  const DistributedTimings tm = plan->timings();

  // The overlap: the exchange alone (timed like the products) and both blocks' kernels alone
  // (Plan::time_runs) on the slowest rank against the product: what the product takes beyond the
  // slowest rank's kernels is the exchange's exposed part.
  const auto exchange = [&] { v.exchange(*plan); };
  const double exchange_s = median_of(timed_batches(comm, config, exchange, batch_size(comm, config, exchange)));
  const auto kernel_seconds = [&](Plan* p) {
    if (!p) return 0.0;
    const int n = static_cast<int>(std::clamp<long long>(batch, 1, 1000));
    p->time_runs(1);
    std::vector<double> t;
    for (int i = 0; i < 3; ++i) t.push_back(p->time_runs(n) / n);
    return median_of(t);
  };
  const double compute_s = kernel_seconds(&plan->local_plan()) + kernel_seconds(plan->remote_plan());
  r.exchange_s = max_over(exchange_s, comm);
  r.compute_s = max_over(compute_s, comm);
  r.hidden =
      r.exchange_s > 0 ? std::clamp((r.exchange_s + r.compute_s - r.time.median_s) / r.exchange_s, 0.0, 1.0) : 1.0;

  if (config.cg_iterations > 0 && !transpose && k == 1 && r.rows == r.cols) {
    // b = A x of the vector above, x from 0, a fixed number of iterations (tolerance 0).
    SolverOptions so;
    so.tolerance = 0;
    so.max_iterations = config.cg_iterations;
    const SolverResult cg_result = v.cg(*plan, so);
    r.cg_iterations = cg_result.iterations;
    r.cg_iteration_s = max_over(cg_result.seconds, comm) / std::max(1, cg_result.iterations);
    r.cg_product_share = r.time.median_s / r.cg_iteration_s;  // the product's timed median over an iteration
    r.cg_residual = cg_result.residual;
  }

  // Each rank's share.
  const double n = static_cast<double>(std::max<long long>(1, tm.products));
  DistributedRank me;
  me.rank = rank;
  me.rows = plan->y_size();
  me.halo = plan->halo_size();
  me.sent = plan->send_size();
  me.local_nnz = plan->local_nnz();
  me.remote_nnz = plan->remote_nnz();
  me.neighbours = plan->neighbours();
  me.bytes_sent = static_cast<double>(plan->bytes_sent());
  me.pack_s = tm.pack / n;
  me.local_s = tm.local / n;
  me.wait_s = tm.wait / n;
  me.remote_s = tm.remote / n;
  me.total_s = tm.total / n;
  me.setup_s = plan->setup_seconds();
  me.exchange_s = exchange_s;
  me.compute_s = compute_s;
  r.bytes_exchanged = sum_over(me.bytes_sent, comm);
  r.halo_total = static_cast<index_t>(sum_over(me.halo, comm));
  r.halo_max = static_cast<index_t>(max_over(me.halo, comm));
  const auto kernel_of = [](const Plan* p) {
    return p ? (p->chosen.empty() ? std::string("-") : p->chosen) : std::string("-");
  };
  const std::vector<std::string> locals = gather_strings(kernel_of(&plan->local_plan()), comm);
  const std::vector<std::string> remotes = gather_strings(kernel_of(plan->remote_plan()), comm);
  std::vector<double> mine{static_cast<double>(me.rows),
                           static_cast<double>(me.halo),
                           static_cast<double>(me.sent),
                           static_cast<double>(me.local_nnz),
                           static_cast<double>(me.remote_nnz),
                           static_cast<double>(me.neighbours),
                           me.bytes_sent,
                           me.pack_s,
                           me.local_s,
                           me.wait_s,
                           me.remote_s,
                           me.total_s,
                           me.setup_s,
                           me.exchange_s,
                           me.compute_s};
  std::vector<double> all(rank == 0 ? mine.size() * static_cast<std::size_t>(size) : 0);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
             MPI_DOUBLE, 0, comm);
  if (rank == 0)
    for (int q = 0; q < size; ++q) {
      const double* a = all.data() + static_cast<std::size_t>(q) * mine.size();
      DistributedRank d;
      d.rank = q;
      d.rows = static_cast<index_t>(a[0]);
      d.halo = static_cast<index_t>(a[1]);
      d.sent = static_cast<index_t>(a[2]);
      d.local_nnz = static_cast<offset_t>(a[3]);
      d.remote_nnz = static_cast<offset_t>(a[4]);
      d.neighbours = static_cast<int>(a[5]);
      d.bytes_sent = a[6];
      d.pack_s = a[7], d.local_s = a[8], d.wait_s = a[9], d.remote_s = a[10], d.total_s = a[11], d.setup_s = a[12];
      d.exchange_s = a[13], d.compute_s = a[14];
      d.local_kernel = locals[static_cast<std::size_t>(q)];
      d.remote_kernel = remotes[static_cast<std::size_t>(q)];
      r.per_rank.push_back(d);
    }
  return r;
}

std::string distributed_text(const DistributedResult& r) {
  std::string s;
  s += fmt::format("matrix: {}\nrows: {}\ncols: {}\nnnz: {}\nranks: {}\nbackend: {}\noperation: {}\nk: {}\n", r.matrix,
                   r.rows, r.cols, r.nnz, r.ranks, r.backend, r.operation == "t" ? "A^T x" : "A x", r.k);
  s += fmt::format("check: {}\nread_s: {:.6f}\nsetup_s: {:.6f}\n", r.check, r.read_s, r.setup_s);
  s += fmt::format(
      "time_median_us: {:.2f}\ntime_min_us: {:.2f}\ntime_max_us: {:.2f}\ncv: {:.3f}\nsamples: {} x {} products\n",
      r.time.median_s * 1e6, r.time.min_s * 1e6, r.time.max_s * 1e6, r.time.cv, r.time.samples,
      r.time.products_per_sample);
  s += fmt::format(
      "gflops: {:.2f}\nbytes_exchanged_per_product: {:.0f}\nhalo_total: {}\nhalo_max: {}\ncomm_share: {:.3f}\n",
      r.gflops, r.bytes_exchanged, r.halo_total, r.halo_max, r.comm_share);
  s += fmt::format("exchange_alone_us: {:.2f}\nkernels_alone_us: {:.2f}\nexchange_hidden: {:.3f}\n", r.exchange_s * 1e6,
                   r.compute_s * 1e6, r.hidden);
  if (r.cg_iterations > 0)
    s += fmt::format("cg_iterations: {}\ncg_iteration_us: {:.2f}\ncg_product_share: {:.3f}\ncg_residual: {:.3e}\n",
                     r.cg_iterations, r.cg_iteration_s * 1e6, r.cg_product_share, r.cg_residual);
  s += "per rank (us per product): rank rows local_nnz remote_nnz halo sent neighbours pack local wait remote total | "
       "local kernel | remote kernel\n";
  for (const DistributedRank& d : r.per_rank)
    s += fmt::format(
        "  {:>4} {:>9} {:>10} {:>10} {:>8} {:>8} {:>3} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} | {} | {}\n",
        d.rank, d.rows, d.local_nnz, d.remote_nnz, d.halo, d.sent, d.neighbours, d.pack_s * 1e6, d.local_s * 1e6,
        d.wait_s * 1e6, d.remote_s * 1e6, d.total_s * 1e6, d.local_kernel, d.remote_kernel);
  return s;
}

void append_distributed_csv(const std::string& path, const DistributedResult& r) {
  const std::string header =
      "matrix,rows,cols,nnz,ranks,backend,operation,k,rank,rank_rows,local_nnz,remote_nnz,halo,sent,neighbours,"
      "bytes_sent,pack_s,local_s,wait_s,remote_s,total_s,setup_s,time_median_s,time_min_s,time_max_s,cv,gflops,"
      "bytes_exchanged,comm_share,read_s,exchange_s,compute_s,hidden,cg_iterations,cg_iteration_s,cg_product_share,"
      "check,local_kernel,remote_kernel,commit";
  const bool fresh = !std::filesystem::exists(path) || std::filesystem::file_size(path) == 0;
  if (!fresh) {  // appended to only where it is one of these CSVs
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    if (first != header)
      throw Error(path + ": holds another CSV (not the distributed bench's columns): give -o another file");
  }
  std::ofstream out(path, std::ios::app);
  if (!out) throw Error(path + ": cannot write");
  if (fresh) out << header << "\n";
  const auto row = [&](const std::string& rank, const DistributedRank& d) {
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.0f},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:"
        ".9g},"
        "{:.4f},{:.4f},{:.0f},{:.4f},{:.6f},{:.9g},{:.9g},{:.4f},{},{:.9g},{:.4f},{},\"{}\",\"{}\",{}\n",
        r.matrix, r.rows, r.cols, r.nnz, r.ranks, r.backend, r.operation, r.k, rank, d.rows, d.local_nnz, d.remote_nnz,
        d.halo, d.sent, d.neighbours, d.bytes_sent, d.pack_s, d.local_s, d.wait_s, d.remote_s, d.total_s, d.setup_s,
        r.time.median_s, r.time.min_s, r.time.max_s, r.time.cv, r.gflops, r.bytes_exchanged, r.comm_share, r.read_s,
        d.exchange_s, d.compute_s, r.hidden, r.cg_iterations, r.cg_iteration_s, r.cg_product_share,
        r.passed ? "passed" : "failed", d.local_kernel, d.remote_kernel, git_commit());
  };
  DistributedRank all;
  all.rows = r.rows;
  for (const DistributedRank& d : r.per_rank) {
    row(std::to_string(d.rank), d);
    all.local_nnz += d.local_nnz;
    all.remote_nnz += d.remote_nnz;
    all.halo += d.halo;
    all.sent += d.sent;
    all.bytes_sent += d.bytes_sent;
    all.pack_s = std::max(all.pack_s, d.pack_s);
    all.local_s = std::max(all.local_s, d.local_s);
    all.wait_s = std::max(all.wait_s, d.wait_s);
    all.remote_s = std::max(all.remote_s, d.remote_s);
    all.total_s = std::max(all.total_s, d.total_s);
    all.setup_s = std::max(all.setup_s, d.setup_s);
    all.exchange_s = std::max(all.exchange_s, d.exchange_s);
    all.compute_s = std::max(all.compute_s, d.compute_s);
  }
  all.local_kernel = all.remote_kernel = "";
  row("all", all);
}

}  // namespace spmv::bench
