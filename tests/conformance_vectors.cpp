// Conformance, the products' vectors and arithmetic: alpha and beta in every kernel's store on
// host and device vectors of either type, vectors in the wrong memory refused, single and mixed
// precision on every kernel that has them, the arithmetic being the one asked, the precision
// refusals. Compiled into both test binaries as conformance.cpp is (conformance.hpp).
#include <spmv/device.hpp>
#include <spmv/io.hpp>

#include <functional>

#include "conformance.hpp"

using namespace spmv;
using test::run_one;
using test::tested_kernels;

// y = alpha*A*x + beta*y on every kernel, precision, edge case and layout, in the kernel's store:
// against alpha times the reference plus beta times the y given; beta = 0 must not read y (NaN
// there is overwritten, as in BLAS). Vectors of the plan's own type (as they are), of the other
// type (converted by the plan), and on the GPU device vectors.
TEST(CONFORMANCE, AlphaBetaOnEveryKernel) {
  REQUIRE_BACKEND();
  const auto cases = test::edge_cases();
  enum Mode { kOwnType, kOtherType, kDevice };
  int runs = 0;
  for (const KernelSpec* spec : tested_kernels())
    for (const Precision p : {Precision::Double, Precision::Single, Precision::Mixed}) {
      if (!supports(*spec, p)) continue;
      for (const auto& [name, a] : cases)
        for (const auto& [k, lay] :
             {std::pair{1, Layout::RowMajor}, std::pair{3, Layout::RowMajor}, std::pair{3, Layout::ColMajor}}) {
          if (k > 1 && !spec->spmm) continue;
          PlanOptions opt;
          opt.threads = spec->backend == Backend::Omp ? 2 : 1;
          opt.k = k;
          opt.layout = lay;
          opt.precision = p;
          std::unique_ptr<Plan> plan;
          try {
            plan = make_plan(a, spec->backend, spec->name, opt);
          } catch (const Unsupported& e) {
            EXPECT_EQ(test::judge_refusal(*spec, a, opt.kernel.hack, e.what()), "")
                << test::describe(*spec, opt) << name;
            continue;
          }
          const std::size_t n = static_cast<std::size_t>(a.rows) * k;
          for (const auto& [alpha, beta] : {std::pair{2.5, -0.5}, std::pair{-1.0, 1.0}, std::pair{0.5, 0.0}})
            for (const Mode mode : {kOwnType, kOtherType, kDevice}) {
              if (mode == kDevice && !test::kDeviceVectors) continue;
              auto x = make_vector("random:3", static_cast<std::size_t>(a.cols) * k);
              std::vector<double> y(n);
              for (std::size_t i = 0; i < n; ++i)
                y[i] = beta == 0.0 ? std::nan("") : std::cos(0.11 * static_cast<double>(i));
              // The plan's vector type, or the other one; a single plan's x and y are float either way.
              const bool as_float = (p == Precision::Single) != (mode == kOtherType);
              if (p == Precision::Single || as_float)
                for (double* v : {x.data(), y.data()})
                  for (std::size_t i = 0; i < (v == x.data() ? x.size() : n); ++i) v[i] = static_cast<float>(v[i]);
              const std::vector<double> y0 = y;
              if (as_float)
                test::multiply_as<float>(*plan, x, y, alpha, beta, mode == kDevice);
              else
                test::multiply_as<double>(*plan, x, y, alpha, beta, mode == kDevice);
              Reference want = reference_product(a, x, k, lay);
              for (std::size_t i = 0; i < n; ++i) {
                const double by = beta == 0.0 ? 0.0 : beta * y0[i];
                want.y[i] = alpha * want.y[i] + by;
                want.bound[i] = std::abs(alpha) * want.bound[i] + std::abs(by);
                want.abs_x[i] *= std::abs(alpha);
              }
              // A double plan's y rounded to float on the way out: float's tolerance.
              const CheckResult c = check_product(a, want, y, k, lay, as_float ? Precision::Single : p);
              EXPECT_TRUE(c.passed) << test::describe(*spec, opt) << " " << name << " alpha=" << alpha
                                    << " beta=" << beta << " vectors="
                                    << (mode == kOwnType     ? "own"
                                        : mode == kOtherType ? "other"
                                                             : "device")
                                    << ": " << c.message;
              ++runs;
            }
        }
    }
  EXPECT_GT(runs, 500);
}

// Vectors in the wrong memory are refused with the argument named: device vectors on a CPU plan;
// on the GPU host memory given as a DeviceSpan (x, then y), and a size or type that does not match.
TEST(CONFORMANCE, VectorsInTheWrongMemoryAreRefused) {
  REQUIRE_BACKEND();
  const Csr a = test::edge_case(test::edge_cases(), "irregular_5000");
  std::vector<double> hx(static_cast<std::size_t>(a.cols), 1.0), hy(static_cast<std::size_t>(a.rows));
  const auto refused = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  int checked = 0;
  for (const KernelSpec* spec : tested_kernels()) {
    const auto plan = make_plan(a, spec->backend, spec->name);
    EXPECT_EQ(plan->on_device(), spec->backend == Backend::Cuda) << spec->name;
    const DeviceSpan<const double> fake_x(hx.data(), hx.size());  // host memory, said to be device memory
    const DeviceSpan<double> fake_y(hy.data(), hy.size());
    const std::string msg = refused([&] { plan->multiply(fake_x, fake_y); });
#if defined(SPMV_TEST_BACKEND_CUDA)
    EXPECT_NE(msg.find("multiply: x is host memory, not device memory"), std::string::npos)
        << spec->name << ": " << msg;
    DeviceVector<double> dx(hx), dy(hy.size());
    EXPECT_NE(refused([&] { plan->multiply(dx, fake_y); }).find("multiply: y is host memory"), std::string::npos);
    DeviceVector<double> short_y(hy.size() - 1);
    EXPECT_NE(refused([&] { plan->multiply(dx, short_y); }).find("y has room for 4999 values, expected 5000"),
              std::string::npos);
    DeviceVector<float> fx(hx.size()), fy(hy.size());
    EXPECT_NE(
        refused([&] { plan->multiply(fx, fy); }).find("a double precision plan takes double x and y on the device"),
        std::string::npos)
        << refused([&] { plan->multiply(fx, fy); });
    plan->multiply(dx, dy);  // and the right ones work
    EXPECT_TRUE(check_product(a, reference_product(a, hx), dy.to_host()).passed) << spec->name;
#else
    EXPECT_NE(msg.find("x and y are device memory (DeviceSpan), but this plan runs on the CPU"), std::string::npos)
        << spec->name << ": " << msg;
    EXPECT_NE(refused([&] {
                plan->multiply(std::span<const double>(hx).first(3), hy);
              }).find("x has 3 values, expected 5000"),
              std::string::npos);
#endif
    ++checked;
  }
  EXPECT_GT(checked, 5);
}

// Single and mixed precision on every kernel that lists them: the edge cases at k = 1 and 3 (both
// layouts) and real shared matrices (rectangular well1033, Journals with dense rows, skew plskz362)
// at k = 1, 4 and 33, each checked with its precision's tolerance (run_one).
TEST(CONFORMANCE, SingleAndMixedPrecision) {
  REQUIRE_BACKEND();
  std::vector<std::pair<std::string, Csr>> mats = test::edge_cases();
  const std::size_t n_edge = mats.size();
  for (const auto& [name, file] : test::shared_matrix_files())
    if (name == "well1033" || name == "Journals" || name == "plskz362") mats.emplace_back(name, io::load_csr(file));
  ASSERT_EQ(mats.size(), n_edge + 3) << "shared matrices missing from " << test::shared_matrices_dir();
  int runs = 0;
  for (const KernelSpec* spec : tested_kernels())
    for (const Precision p : {Precision::Single, Precision::Mixed}) {
      if (!supports(*spec, p)) continue;
      for (std::size_t m = 0; m < mats.size(); ++m)
        for (const int k : m < n_edge ? std::vector<int>{1, 3} : std::vector<int>{1, 4, 33})
          for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
            if ((k == 1 && lay == Layout::ColMajor) || (k > 1 && !spec->spmm)) continue;
            PlanOptions opt;
            opt.threads = spec->backend == Backend::Omp ? 2 : 1;
            opt.k = k;
            opt.layout = lay;
            opt.precision = p;
            EXPECT_EQ(run_one(*spec, mats[m].second, opt, mats[m].first), "");
            ++runs;
          }
    }
  EXPECT_GE(runs, 2 * 2 * static_cast<int>(mats.size()));  // csr and auto at least, in both precisions
}

// The arithmetic is the one asked for. Row 0 holds 1 and 2^-30 (both exact in float) at columns 0
// and 1, row 1 holds 1 + 2^-30 (not a float) at column 2; x = (1 + 2^-30, 1, 1). Double gives
// 1 + 2^-29 and 1 + 2^-30. Mixed (float values, double x and sums) gives 1 + 2^-29 and 1: a mixed
// kernel that rounded x or summed in float would give 1 + 2^-30 or 1 for row 0, one that kept double
// values 1 + 2^-30 for row 1. Single gives 1 and 1 - but its y is float, and a float sum of these
// rows equals a double sum rounded at the end, so for single this only shows float output.
TEST(CONFORMANCE, PrecisionIsTheOneAsked) {
  REQUIRE_BACKEND();
  const double tiny = std::ldexp(1.0, -30);
  Csr a;
  a.rows = 2;
  a.cols = 3;
  a.row_ptr = {0, 2, 3};
  a.col = {0, 1, 2};
  a.val = {1.0, tiny, 1.0 + tiny};
  int runs = 0;
  for (const KernelSpec* spec : tested_kernels())
    for (const Precision p : {Precision::Double, Precision::Single, Precision::Mixed}) {
      if (!supports(*spec, p)) continue;
      const double want0 = p == Precision::Single ? 1.0 : 1.0 + 2 * tiny;
      const double want1 = p == Precision::Double ? 1.0 + tiny : 1.0;
      for (const int k : {1, 3})
        for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
          if ((k == 1 && lay == Layout::ColMajor) || (k > 1 && !spec->spmm)) continue;
          PlanOptions opt;
          opt.threads = 1;
          opt.k = k;
          opt.layout = lay;
          opt.precision = p;
          const auto plan = make_plan(a, spec->backend, spec->name, opt);
          std::vector<double> x(static_cast<std::size_t>(a.cols) * k, 1.0), y(static_cast<std::size_t>(a.rows) * k);
          for (int c = 0; c < k; ++c)
            x[lay == Layout::RowMajor ? static_cast<std::size_t>(c) : static_cast<std::size_t>(c) * 3] =
                1.0 + tiny;  // X(0, c)
          plan->multiply(x, y);
          for (int c = 0; c < k; ++c) {
            const std::size_t o0 =
                lay == Layout::RowMajor ? static_cast<std::size_t>(c) : static_cast<std::size_t>(c) * 2;
            const std::size_t o1 =
                lay == Layout::RowMajor ? static_cast<std::size_t>(k + c) : static_cast<std::size_t>(c) * 2 + 1;
            EXPECT_EQ(y[o0], want0) << test::describe(*spec, opt) << " row 0, rhs " << c;
            EXPECT_EQ(y[o1], want1) << test::describe(*spec, opt) << " row 1, rhs " << c;
          }
          ++runs;
        }
    }
  EXPECT_GT(runs, 10);
}

// A kernel without a precision refuses it naming the kernels that have it; a value beyond float's
// range is refused (row, column and value named) before anything is stored in float.
TEST(CONFORMANCE, PrecisionRefusals) {
  REQUIRE_BACKEND();
  Csr a;
  a.rows = 2;
  a.cols = 2;
  a.row_ptr = {0, 1, 2};
  a.col = {0, 1};
  a.val = {1.0, 1e300};
  int refusals = 0;
  for (const KernelSpec* spec : tested_kernels())
    for (const Precision p : {Precision::Single, Precision::Mixed}) {
      PlanOptions opt;
      opt.precision = p;
      try {
        make_plan(a, spec->backend, spec->name, opt);
        ADD_FAILURE() << test::describe(*spec, opt) << ": 1e300 accepted in " << to_string(p);
      } catch (const Unsupported& e) {
        const std::string msg = e.what();
        if (supports(*spec, p))
          EXPECT_NE(msg.find("value 1.0000000000000001e+300 at row 2, column 2"), std::string::npos) << msg;
        else
          EXPECT_NE(msg.find(std::string("has no ") + to_string(p) + " precision"), std::string::npos) << msg;
        ++refusals;
      }
    }
  EXPECT_EQ(refusals, 2 * static_cast<int>(tested_kernels().size()));
  // x in double beyond float's range, given to a single plan: refused, not made infinite.
  a.val = {1.0, 2.0};
  int single_plans = 0;
  for (const KernelSpec* spec : tested_kernels()) {
    if (!supports(*spec, Precision::Single)) continue;
    PlanOptions opt;
    opt.precision = Precision::Single;
    const auto plan = make_plan(a, spec->backend, spec->name, opt);
    try {
      plan->set_x(std::vector<double>{1.0, -1e300});
      ADD_FAILURE() << test::describe(*spec, opt) << ": x = -1e300 accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("x[1] = -1.0000000000000001e+300 does not fit in single precision"),
                std::string::npos)
          << e.what();
    }
    ++single_plans;
  }
  EXPECT_GT(single_plans, 3);
}
