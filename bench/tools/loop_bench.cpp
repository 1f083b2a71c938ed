// What a user's loop pays on the GPU (issue: device-resident products): per matrix, the planner's
// kernel time beside a loop of multiply() calls on device vectors and on host vectors, with the
// host loop's floor (the kernel plus x and y over the bus at the measured pinned bandwidth); then
// conjugate gradients on symmetric positive definite matrices larger than the L2 cache, on device
// vectors against the same solver on the CPU's cores: time per iteration, the products' share, and
// the iteration's floor (one product plus the solver's vector traffic at the measured device copy
// bandwidth).
//
//   loop_bench [--no-generated] [--cg-iterations N] [--threads T] [FILES...]
#include <spmv/bench/generate.hpp>
#include <spmv/formats/reorder.hpp>
#include <spmv/spmv.hpp>

#include <CLI/CLI.hpp>
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <random>

using namespace spmv;

namespace {

// An SPD matrix with the stencil's pattern: -1 off the diagonal, the row's off-diagonal count + 1
// on it (strictly diagonally dominant and symmetric).
Csr spd_stencil(index_t n, int points) {
  Csr a = gen::grid_stencil(3, n, points);
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < a.rows; ++r)
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      a.val[p] = a.col[p] == r ? static_cast<double>(a.row_length(r)) : -1.0;
  return a;
}

// P A P^T for a random permutation P (rows and columns renumbered alike: still SPD where A is):
// the shuffle gives each old index its new one.
Csr permuted(const Csr& a, std::uint64_t seed) {
  std::vector<index_t> to(static_cast<std::size_t>(a.rows));  // old -> new
  std::iota(to.begin(), to.end(), 0);
  std::shuffle(to.begin(), to.end(), std::mt19937_64(seed));
  Permutation p = permutation_from_order(std::move(to));
  std::swap(p.order, p.position);  // order: new -> old
  return permute(a, p);
}

struct Named {
  std::string name;
  Csr a;
  bool spd = false;
};

std::string us(double s) { return fmt::format("{:.1f}", s * 1e6); }

double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return v.empty() ? 0 : std::exp(s / static_cast<double>(v.size()));
}

// The files given, then (unless no_generated) the generated matrices: SPD stencils for CG, and
// shapes that pass the GPU's L2 cache.
std::vector<Named> load_matrices(const std::vector<std::string>& files, bool no_generated) {
  std::vector<Named> mats;
  for (const auto& f : files) {
    const std::string base = f.substr(f.find_last_of('/') + 1);
    mats.push_back({base.substr(0, base.find('.')), io::load_csr(f), false});
  }
  if (!no_generated) {
    const auto spec = [](gen::Kind k, index_t rows, double mean, double sd, index_t cols = 0) {
      gen::GenSpec s;
      s.kind = k;
      s.rows = rows;
      s.cols = cols;
      s.mean = mean;
      s.std = sd;
      return gen::generate(s);
    };
    mats.push_back({"poisson7_128^3", spd_stencil(128, 7), true});
    mats.push_back({"poisson27_100^3", spd_stencil(100, 27), true});
    mats.push_back({"poisson27_100^3_permuted", permuted(mats.back().a, 7), true});
    mats.push_back({"fem_1M", spec(gen::Kind::Fem, 1000000, 29, 6), false});
    mats.push_back({"powerlaw_3M", spec(gen::Kind::Powerlaw, 3000000, 10, 40), false});
    mats.push_back({"tall_8M_x_2000", spec(gen::Kind::Random, 8000000, 4, 0, 2000), false});
    mats.push_back({"random_20k", spec(gen::Kind::Random, 20000, 12, 2), false});
  }

  return mats;
}

// multiply() in a loop on device, host and pinned host vectors against the kernel and its floors.
void multiply_loops(const std::vector<Named>& mats, const device::HostLink& link, double sample_ms) {
  fmt::print("## multiply() in a loop, auto on cuda, double (us per product)\n\n");
  fmt::print(
      "Host floor: the kernel + one copy of x to the device and one of y back, measured between pinned memory and "
      "the device at their sizes; bw floor: the same copies at the bus's bandwidth alone.\n\n");
  fmt::print(
      "| matrix | rows | nnz | MB | plan | kernel | device loop | device / kernel | host floor | bw floor | host loop "
      "| host / floor | pinned loop | pinned / floor |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> dev_ratio, dev_big, host_floor, pinned_floor;
  for (const Named& m : mats) {
    const auto plan = make_plan(m.a, Backend::Cuda, "auto");
    const std::size_t nx = static_cast<std::size_t>(m.a.cols), ny = static_cast<std::size_t>(m.a.rows);
    {  // checked before it is timed
      const auto x = make_vector("random:1", nx);
      DeviceVector<double> dx(x), dy(ny);
      plan->multiply(dx, dy);
      const CheckResult c = check_product(m.a, reference_product(m.a, x), dy.to_host());
      if (!c.passed) throw Error(m.name + ": the device product fails its check: " + c.message);
    }
    const double kernel = time_products(*plan, sample_ms * 1e-3, 7).median_s;
    const LoopTiming loops = time_multiply_loops(*plan, nx, ny, sample_ms * 1e-3, 7);
    const double floor = kernel + loops.copies_s;
    const double bw_floor =
        kernel + 8.0 * static_cast<double>(nx) / link.to_device + 8.0 * static_cast<double>(ny) / link.to_host;
    const double d = loops.device.median_s / kernel;
    dev_ratio.push_back(d);
    if (m.a.nnz() > 1000000) dev_big.push_back(d);
    host_floor.push_back(loops.host.median_s / floor);
    pinned_floor.push_back(loops.pinned.median_s / floor);
    fmt::print("| {} | {} | {} | {:.1f} | {} | {} | {} | {:.3f} | {} | {} | {} | {:.2f} | {} | {:.2f} |\n", m.name,
               m.a.rows, m.a.nnz(), static_cast<double>(csr_product_bytes(m.a)) * 1e-6, plan->chosen, us(kernel),
               us(loops.device.median_s), d, us(floor), us(bw_floor), us(loops.host.median_s),
               loops.host.median_s / floor, us(loops.pinned.median_s), loops.pinned.median_s / floor);
  }
  const auto worst = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };
  fmt::print(
      "\ndevice loop / kernel: geomean {:.3f}, worst {:.3f}; above 1M nonzeros worst {:.3f} ({} matrices); "
      "host loop / floor: geomean {:.2f}, worst {:.2f}; pinned: geomean {:.2f}, worst {:.2f}\n\n",
      geomean(dev_ratio), worst(dev_ratio), worst(dev_big), dev_big.size(), geomean(host_floor), worst(host_floor),
      geomean(pinned_floor), worst(pinned_floor));
}

// CG with Jacobi on device vectors against host vectors (auto on omp), on the SPD matrices.
void cg_on_both(const std::vector<Named>& mats, int cg_iterations, int threads, double copy_bw, double sample_ms) {
  fmt::print(
      "## CG with Jacobi, {} iterations, device vectors (auto on cuda) against host vectors (auto on omp, {} "
      "threads)\n\n",
      cg_iterations, threads ? threads : omp_get_max_threads());
  fmt::print(
      "Floor: one product (the kernel's time) + 13 n doubles of vector traffic at the device copy bandwidth.\n\n");
  fmt::print(
      "| matrix | rows | nnz | GPU us/iteration | product us | product share | floor us | GPU / floor | CPU "
      "us/iteration | CPU / GPU |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Named& m : mats) {
    if (!m.spd) continue;
    const std::size_t n = static_cast<std::size_t>(m.a.rows);
    PlanOptions po;
    po.products = cg_iterations;
    po.threads = threads;
    const auto gpu = make_plan(m.a, Backend::Cuda, "auto", po);
    const auto cpu = make_plan(m.a, Backend::Omp, "auto", po);
    const std::vector<double> inv = inverse_diagonal(m.a);
    std::vector<double> b(n);
    gpu->multiply(std::vector<double>(n, 1.0), b);
    SolverOptions o;
    o.tolerance = 0;  // a fixed number of iterations
    o.max_iterations = cg_iterations;
    DeviceVector<double> db(b), dx(n), dm(inv);
    cg(*gpu, db, dx, o, dm);  // warm-up
    dx.fill(0.0);
    const SolverResult g = cg(*gpu, db, dx, o, dm);
    std::vector<double> x(n, 0.0);
    const SolverResult c = cg(*cpu, b, x, o, inv);
    const double kernel = time_products(*gpu, sample_ms * 1e-3, 7).median_s;
    const double floor = kernel + 13.0 * 8.0 * static_cast<double>(n) / copy_bw;
    const double gi = g.seconds / g.iterations, ci = c.seconds / c.iterations;
    fmt::print("| {} | {} | {} | {} | {} | {:.0f}% | {} | {:.2f} | {} | {:.1f} |\n", m.name, m.a.rows, m.a.nnz(),
               us(gi), us(g.product_seconds / g.products), 100 * g.product_seconds / g.seconds, us(floor), gi / floor,
               us(ci), ci / gi);
  }
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{
      "A user's loop on the GPU: multiply() on device and host vectors beside the kernel; CG on device vs CPU"};
  std::vector<std::string> files;
  bool no_generated = false;
  int cg_iterations = 200, threads = 0;
  double sample_ms = 20;
  app.add_option("FILES", files, "Matrix files (Matrix Market or binary cache)");
  app.add_flag("--no-generated", no_generated, "Leave out the generated matrices");
  app.add_option("--cg-iterations", cg_iterations, "CG iterations timed per matrix")->capture_default_str();
  app.add_option("--threads", threads, "CPU threads of the CPU CG (0: every core)")->capture_default_str();
  app.add_option("--sample-ms", sample_ms, "Each timing sample lasts at least this long")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (device::cuda_device_count() == 0)
    throw Error("loop_bench: no usable GPU (" + device::cuda_unavailable_reason() + ")");

  const std::vector<Named> mats = load_matrices(files, no_generated);
  const device::HostLink link = device::cuda_host_bandwidth();
  const double copy_bw = device::cuda_copy_bandwidth();
  fmt::print("device: {}; bus (pinned) {:.1f} GB/s to the device, {:.1f} GB/s back; device copy {:.0f} GB/s\n\n",
             device::cuda_device_name(), link.to_device * 1e-9, link.to_host * 1e-9, copy_bw * 1e-9);

  multiply_loops(mats, link, sample_ms);
  cg_on_both(mats, cg_iterations, threads, copy_bw, sample_ms);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "{}\n", e.what());
  return 1;
}
