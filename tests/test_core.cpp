#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <spmv/spmv.hpp>

#include "core/convert.hpp"
#include "cuda/tuning.hpp"
#include "test_util.hpp"

using namespace spmv;

namespace {
// A COO in row order (what a row-sorted file gives): the CSR expanded back, every fifth entry
// repeated right after itself with the value 1.
Coo coo_to_csr_copy_as_coo(const Coo& c) {
  const Coo r = csr_to_coo(coo_to_csr(c));
  Coo out = r;
  out.row.clear();
  out.col.clear();
  out.val.clear();
  for (offset_t e = 0; e < r.nnz(); ++e) {
    out.row.push_back(r.row[e]);
    out.col.push_back(r.col[e]);
    out.val.push_back(r.val[e]);
    if (e % 5 == 0) {
      out.row.push_back(r.row[e]);
      out.col.push_back(r.col[e]);
      out.val.push_back(1.0);
    }
  }
  return out;
}
}  // namespace

// spmv::Array is std::vector in what it promises: what resize() and Array(n) add is zero even where
// the memory held other values (the allocator itself leaves elements unwritten); only
// resize_for_overwrite skips the zeros.
TEST(Array, ValueInitialisesLikeStdVectorExceptResizeForOverwrite) {
  spmv::Array<double> a(1000, 7.0);
  const double* held = a.data();
  a.resize(0);
  a.resize(1000);  // the same memory, which still holds the 7s
  ASSERT_EQ(a.data(), held);
  for (double v : a) ASSERT_EQ(v, 0.0);
  a.assign(1000, 7.0);
  a.resize(10);
  a.emplace_back();
  EXPECT_EQ(a.back(), 0.0);
  a.pop_back();
  a.pop_back();  // the end is position 9, whose memory still holds a 7
  a.emplace(a.end());
  EXPECT_EQ(a.back(), 0.0);
  {
    const spmv::Array<std::int64_t> sevens(100, 7);
  }  // freed: the next allocation of this size reuses it, sevens and all (past malloc's own words)
  const spmv::Array<std::int64_t> z(100);
  for (std::int64_t v : z) ASSERT_EQ(v, 0);
  { const spmv::Array<std::int64_t> sevens(100, 7); }
  const spmv::Array<std::int64_t> za(100, spmv::Array<std::int64_t>::allocator_type{});
  for (std::int64_t v : za) ASSERT_EQ(v, 0);
  a.resize_for_overwrite(1000);
  EXPECT_EQ(a.size(), 1000u);
  EXPECT_EQ(a.data(), held);
  a[999] = 2.5;
  const std::vector<double> copy(a);
  EXPECT_EQ(copy.size(), 1000u);
  EXPECT_EQ(copy[999], 2.5);
  EXPECT_EQ(spmv::Array<double>(copy), copy);
  spmv::Array<int> b = {1, 2, 3};
  b = {4, 5};
  EXPECT_EQ(b, (std::vector<int>{4, 5}));
  EXPECT_FALSE(b == (std::vector<int>{4, 5, 6}));
}

TEST(CooToCsr, RandomWithDuplicatesMatchesDense) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const index_t rows = 1 + seed * 13 % 97, cols = 1 + seed * 29 % 83;
    const Coo coo = test::random_coo(rows, cols, 0.08, seed);
    const Csr csr = coo_to_csr(coo);
    ASSERT_EQ(csr.rows, rows);
    ASSERT_EQ(csr.row_ptr.size(), static_cast<std::size_t>(rows) + 1);
    const auto d = test::dense(coo);
    std::vector<double> got(d.size(), 0.0);
    offset_t stored = 0;
    for (index_t r = 0; r < rows; ++r)
      for (offset_t p = csr.row_ptr[r]; p < csr.row_ptr[r + 1]; ++p) {
        if (p > csr.row_ptr[r]) ASSERT_LT(csr.col[p - 1], csr.col[p]) << "columns sorted, unique";
        got[static_cast<std::size_t>(r) * cols + csr.col[p]] = csr.val[p];
        ++stored;
      }
    for (std::size_t i = 0; i < d.size(); ++i) ASSERT_NEAR(got[i], d[i], 1e-12) << "seed " << seed;
    // Distinct coordinates of the COO = stored entries of the CSR.
    std::set<std::pair<index_t, index_t>> distinct;
    for (offset_t e = 0; e < coo.nnz(); ++e) distinct.insert({coo.row[e], coo.col[e]});
    EXPECT_EQ(stored, static_cast<offset_t>(distinct.size()));
  }
}

// The reader's conversion in the COO's own arrays gives the copying conversion's CSR: unsorted,
// row-sorted (nothing to move), empty, one-row, complex and large (parallel, every row bucket)
// inputs with duplicates. Values are small integers, so that sums do not depend on their order.
TEST(CooToCsr, InPlaceMatchesTheCopy) {
  std::vector<std::pair<std::string, Coo>> cases;
  for (const auto& [rows, cols, density] :
       {std::tuple{97, 83, 0.08}, std::tuple{3000, 2000, 0.2}, std::tuple{1, 500, 0.9}, std::tuple{0, 0, 0.0},
        std::tuple{40, 0, 0.0}, std::tuple{500, 1, 0.5}}) {
    Coo c = test::random_coo(rows, cols, density, 7 + rows);
    for (double& v : c.val) v = std::round(v * 4);
    cases.emplace_back(fmt::format("random {}x{}", rows, cols), c);
  }
  Coo sorted = coo_to_csr_copy_as_coo(cases[1].second);
  cases.emplace_back("row-sorted", sorted);
  Coo cplx = cases[0].second;
  cplx.field = Field::Complex;
  for (double v : cplx.val) cplx.imag.push_back(-v);
  cases.emplace_back("complex", cplx);
  for (const auto& [name, coo] : cases) {
    SCOPED_TRACE(name);
    const Csr want = coo_to_csr(coo);
    Coo moved = coo, placed = coo;
    const bool in_order = std::is_sorted(coo.row.begin(), coo.row.end());
    // The public overload (which copies these small inputs unless they are in row order) and its
    // in-place half by itself, with and without the in-order shortcut.
    for (const Csr& got : {coo_to_csr(std::move(moved)), detail::coo_to_csr_in_place(std::move(placed), in_order)}) {
      EXPECT_EQ(got.rows, want.rows);
      EXPECT_EQ(got.cols, want.cols);
      EXPECT_EQ(got.field, want.field);
      EXPECT_EQ(got.row_ptr, want.row_ptr);
      EXPECT_EQ(got.col, want.col);
      EXPECT_EQ(got.val, want.val);
      EXPECT_EQ(got.imag, want.imag);
      EXPECT_EQ(csr_structure_error(got), "");
    }
    Coo again = coo;
    EXPECT_EQ(detail::coo_to_csr_in_place(std::move(again), false).col, want.col);
  }
}

TEST(CooToCsr, ExplicitZeroIsKept) {
  Coo c;
  c.rows = c.cols = 2;
  c.row = {0, 1};
  c.col = {1, 0};
  c.val = {0.0, 3.0};
  const Csr a = coo_to_csr(c);
  EXPECT_EQ(a.nnz(), 2);
  EXPECT_EQ(a.col[0], 1);
  EXPECT_EQ(a.val[0], 0.0);
}

TEST(CooToCsr, RoundTripThroughCoo) {
  const Csr a = coo_to_csr(test::random_coo(50, 40, 0.1, 9));
  const Csr b = coo_to_csr(csr_to_coo(a));
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col, b.col);
  EXPECT_EQ(a.val, b.val);
}

TEST(Reference, MatchesDenseProduct) {
  const Coo coo = test::random_coo(60, 70, 0.1, 3);
  const Csr a = coo_to_csr(coo);
  const auto x = make_vector("random:5", a.cols);
  const Reference ref = reference_product(a, x);
  const auto want = test::dense_product(test::dense(coo), a.rows, a.cols, x);
  for (index_t r = 0; r < a.rows; ++r) EXPECT_NEAR(ref.y[r], want[r], 1e-13 * (1 + std::fabs(want[r])));
}

TEST(Reference, CheckCatchesAWrongComponentAndAcceptsRounding) {
  const Csr a = coo_to_csr(test::random_coo(100, 100, 0.2, 4));
  const auto x = make_vector("random:1", a.cols);
  const Reference ref = reference_product(a, x);
  std::vector<double> y = ref.y;
  // A last-bit change on every component is within tolerance.
  for (auto& v : y) v = std::nextafter(v, 1e300);
  EXPECT_TRUE(check_product(a, ref, y).passed);
  y[17] += 1e-6 * (1 + std::fabs(y[17]));
  const CheckResult bad = check_product(a, ref, y);
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.worst_index, 17);
  EXPECT_EQ(bad.failures, 1);
  EXPECT_GT(bad.max_rel_error, 1e-7);
}

TEST(Reference, NanMustStayNan) {
  Coo c;
  c.rows = c.cols = 1;
  c.row = {0};
  c.col = {0};
  c.val = {std::nan("")};
  const Csr a = coo_to_csr(c);
  const std::vector<double> x{1.0};
  const Reference ref = reference_product(a, x);
  EXPECT_TRUE(std::isnan(ref.y[0]));
  EXPECT_FALSE(check_product(a, ref, std::vector<double>{0.0}).passed);
  EXPECT_TRUE(check_product(a, ref, std::vector<double>{std::nan("")}).passed);
}

// Infinities in the matrix (once: the compensation's inf - inf made the reference NaN and every
// correct +-inf result failed), both signs in a row (NaN), and a row whose terms overflow the double
// range while the exact sum does not (1e308 + 1e308 - 1e308: inf in double, 1e308 exactly).
TEST(Reference, InfinitiesAndOverflow) {
  Coo c;
  c.rows = 4;
  c.cols = 3;
  const double inf = std::numeric_limits<double>::infinity();
  c.row = {0, 0, 1, 1, 2, 2, 2, 3};
  c.col = {0, 1, 0, 1, 0, 1, 2, 0};
  c.val = {inf, 2.0, inf, -inf, 1e308, 1e308, -1e308, 3.0};
  const Csr a = coo_to_csr(c);
  const std::vector<double> x{1.0, 1.0, 1.0};
  const Reference ref = reference_product(a, x);
  EXPECT_EQ(ref.y[0], inf);
  EXPECT_TRUE(std::isnan(ref.y[1]));
  EXPECT_EQ(ref.y[2], 1e308);
  EXPECT_EQ(ref.y[3], 3.0);
  // What a double kernel computes in file order: inf, NaN, inf (overflowed), 3.
  const CheckResult in_order = check_product(a, ref, std::vector<double>{inf, std::nan(""), inf, 3.0});
  EXPECT_TRUE(in_order.passed) << in_order.message;
  EXPECT_EQ(in_order.overflows, 1);
  EXPECT_EQ(in_order.message, "1 component overflow the double range in their partial sums: not compared");
  EXPECT_TRUE(check_product(a, ref, std::vector<double>{inf, std::nan(""), 1e308, 3.0}).passed);
  EXPECT_FALSE(check_product(a, ref, std::vector<double>{-inf, std::nan(""), 1e308, 3.0}).passed);  // wrong sign
  EXPECT_FALSE(check_product(a, ref, std::vector<double>{inf, inf, 1e308, 3.0}).passed);            // not NaN
  EXPECT_FALSE(check_product(a, ref, std::vector<double>{inf, std::nan(""), std::nan(""), 3.0}).passed);
  EXPECT_FALSE(check_product(a, ref, std::vector<double>{inf, std::nan(""), 1e308, 3.5}).passed);
}

// The check in single and mixed precision: float's rounding of a row is accepted and a wrong
// value is not; a value below float's normal range, rounded to a float denormal, is accepted (its
// error is absolute, beyond u times the value); a float row whose terms pass float's range may come out inf or NaN (partial
// sums of both signs), counted as overflows; double's bound stays double's.
TEST(Reference, CheckInSingleAndMixedPrecision) {
  Coo c;
  c.rows = 3;
  c.cols = 4;
  c.row = {0, 0, 1, 2, 2, 2, 2};
  c.col = {0, 1, 2, 0, 1, 2, 3};
  c.val = {0.1, 0.2, 1e-40, 3e38, -3e38, 3e38, -3e38};
  const Csr a = coo_to_csr(c);
  const std::vector<double> x{1.0, 1.0, 1.0, 1.0};
  const Reference ref = reference_product(a, x);
  const double row0_float = static_cast<double>(0.1f + 0.2f);                // float's values and sum
  const double row1_float = static_cast<double>(static_cast<float>(1e-40));  // a denormal in float
  for (const Precision p : {Precision::Single, Precision::Mixed}) {
    const CheckResult ok =
        check_product(a, ref, std::vector<double>{row0_float, row1_float, 0.0}, 1, Layout::RowMajor, p);
    EXPECT_TRUE(ok.passed) << to_string(p) << ": " << ok.message;
    // 1e-40 is a denormal in float (9.99995e-41), not 0: in mixed (double sums) flushing it to zero
    // is an error; single's floor allows float's smallest normal per term (a flushed product).
    EXPECT_EQ(check_product(a, ref, std::vector<double>{row0_float, 0.0, 0.0}, 1, Layout::RowMajor, p).passed,
              p == Precision::Single)
        << to_string(p) << ": 1e-40 flushed to 0";
    EXPECT_FALSE(
        check_product(a, ref, std::vector<double>{row0_float * (1 + 1e-5), row1_float, 0.0}, 1, Layout::RowMajor, p)
            .passed)
        << to_string(p) << ": a relative error of 1e-5 must fail";
  }
  // Row 2 in float: 3e38 + 3e38 overflows; a tree reduction may meet +inf and -inf.
  const CheckResult nan_row = check_product(a, ref, std::vector<double>{row0_float, row1_float, std::nan("")}, 1,
                                            Layout::RowMajor, Precision::Single);
  EXPECT_TRUE(nan_row.passed) << nan_row.message;
  EXPECT_EQ(nan_row.overflows, 1);
  EXPECT_EQ(nan_row.message, "1 component overflow the float range in their partial sums: not compared");
  // Double: float's rounding of row 0 is far outside double's bound, and row 2 is compared.
  EXPECT_FALSE(check_product(a, ref, std::vector<double>{row0_float, 1e-40, 0.0}).passed);
  EXPECT_TRUE(check_product(a, ref, std::vector<double>{0.1 + 0.2, 1e-40, 0.0}).passed);
  EXPECT_FALSE(check_product(a, ref, std::vector<double>{0.1 + 0.2, 1e-40, std::nan("")}).passed);
}

TEST(Reference, ComplexIsRefusedClearly) {
  Csr a;
  a.rows = a.cols = 1;
  a.field = Field::Complex;
  a.row_ptr = {0, 1};
  a.col = {0};
  a.val = {1.0};
  a.imag = {2.0};
  try {
    make_plan(a, Backend::Serial, "csr");
    FAIL() << "complex matrix accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("complex"), std::string::npos);
  }
}

TEST(Stats, KnownSmallMatrix) {
  // rows: [2 entries], [], [3 entries]; 3x4
  Csr a;
  a.rows = 3;
  a.cols = 4;
  a.row_ptr = {0, 2, 2, 5};
  a.col = {0, 3, 0, 1, 2};
  a.val = {1, 1, 1, 1, 1};
  const MatrixStats s = compute_stats(a);
  EXPECT_EQ(s.nnz, 5);
  EXPECT_EQ(s.row_nnz_min, 0);
  EXPECT_EQ(s.row_nnz_max, 3);
  EXPECT_EQ(s.empty_rows, 1);
  EXPECT_DOUBLE_EQ(s.row_nnz_mean, 5.0 / 3);
  EXPECT_NEAR(s.row_nnz_std, std::sqrt((4.0 + 0 + 9) / 3 - 25.0 / 9), 1e-12);
  EXPECT_EQ(s.bandwidth, 3);  // (0,3)
  EXPECT_FALSE(s.pattern_symmetric);
  EXPECT_DOUBLE_EQ(s.padding("ell"), 9.0 / 5);
  EXPECT_DOUBLE_EQ(s.padding("hll16"), 9.0 / 5);  // one hack of 3 rows, width 3
  EXPECT_DOUBLE_EQ(s.padding("csr"), 1);
  EXPECT_EQ(s.padding("coo"), 0);  // no such format described
}

TEST(Stats, CudaCsrChoiceFollowsTheLongestRow) {
  // Regular rows, however long: CSR-vector (its sub-warp fits the mean).
  EXPECT_FALSE(cuda::tuning::csr_prefers_adaptive(27, 26.1));    // 27-point stencil
  EXPECT_FALSE(cuda::tuning::csr_prefers_adaptive(7, 6.9));      // thermal
  EXPECT_FALSE(cuda::tuning::csr_prefers_adaptive(500, 400.0));  // dense-ish rows
  // Short rows with a few long ones under 64: still vector (a sub-warp walks them quickly).
  EXPECT_FALSE(cuda::tuning::csr_prefers_adaptive(63, 2.0));
  // A row over 6 times the mean and at least 64 long: adaptive (internet: 138 vs 1.66;
  // Chem97Zt: 969 vs 24.4, where vector took 3.8x as long on the H200).
  EXPECT_TRUE(cuda::tuning::csr_prefers_adaptive(64, 2.0));
  EXPECT_TRUE(cuda::tuning::csr_prefers_adaptive(138, 1.66));
  EXPECT_TRUE(cuda::tuning::csr_prefers_adaptive(969, 24.42));
  EXPECT_FALSE(cuda::tuning::csr_prefers_adaptive(600, 100.0));  // 6x exactly is not over 6x
  EXPECT_TRUE(cuda::tuning::csr_prefers_adaptive(83418, 5.99));  // dc1-like
}

TEST(Formats, EllAndHllHoldTheMatrix) {
  for (const auto& [name, a] : test::edge_cases()) {
    ConvertOptions roomy;  // the dominant-row case pads 1200x: allowed here on purpose
    roomy.max_ratio_to_csr = 1e9;
    for (Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
      const Ell e = csr_to_ell(a, lay, roomy);
      for (index_t r = 0; r < a.rows; ++r) {
        ASSERT_EQ(e.row_len[r], a.row_length(r)) << name;
        for (index_t j = 0; j < e.width; ++j) {
          const offset_t s = e.at(r, j);
          if (j < e.row_len[r]) {
            ASSERT_EQ(e.col[s], a.col[a.row_ptr[r] + j]) << name;
            ASSERT_EQ(e.val[s], a.val[a.row_ptr[r] + j]) << name;
          } else {
            ASSERT_EQ(e.val[s], 0.0) << name;
          }
        }
      }
    }
    for (int hack : {1, 16, 32, 64}) {
      const Hll h = csr_to_hll(a, hack);
      ASSERT_EQ(h.slots(), hll_slots(a, hack));
      for (index_t k = 0; k < h.n_hacks(); ++k)
        for (index_t lr = 0; lr < h.hack_rows(k); ++lr) {
          const index_t r = k * hack + lr;
          for (offset_t j = 0; j < a.row_length(r); ++j) {
            const offset_t s = h.hack_offset[k] + j * h.hack_rows(k) + lr;
            ASSERT_EQ(h.col[s], a.col[a.row_ptr[r] + j]) << name << " hack " << hack;
            ASSERT_EQ(h.val[s], a.val[a.row_ptr[r] + j]) << name << " hack " << hack;
          }
        }
    }
  }
}

TEST(Formats, EllRefusesAHugePaddingWithAClearMessage) {
  // 2M rows, one row of 100k entries: ELL would need 2M*100k*12 bytes = 2.2 TiB.
  std::vector<offset_t> l(2'000'000, 1);
  l[5] = 100'000;
  const Csr a = test::csr_from_lengths(l, 200'000, 1);
  try {
    csr_to_ell(a, Layout::RowMajor);
    FAIL() << "ELL accepted";
  } catch (const Unsupported& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ELL would need"), std::string::npos) << m;
    EXPECT_NE(m.find("times CSR"), std::string::npos) << m;
    EXPECT_NE(m.find("limit is"), std::string::npos) << m;
  }
}

TEST(SerialCsr, SpmvAndSpmmMatchTheReference) {
  for (const auto& [name, a] : test::edge_cases()) {
    for (int k : {1, 3}) {
      for (Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
        PlanOptions o;
        o.k = k;
        o.layout = lay;
        auto plan = make_plan(a, Backend::Serial, "csr", o);
        const auto x = make_vector("random:7", static_cast<std::size_t>(a.cols) * k);
        std::vector<double> y(static_cast<std::size_t>(a.rows) * k, std::nan(""));
        plan->multiply(x, y);
        const auto res = check_product(a, reference_product(a, x, k, lay), y, k, lay);
        EXPECT_TRUE(res.passed) << name << " k=" << k << ": " << res.message;
      }
    }
  }
}

// A plan whose products take a known (fake) time: what the shared timing makes of it.
class FixedTimePlan final : public Plan {
 public:
  // Products take `per` seconds; every `slow_every`-th batch (0: none) takes ten times longer.
  FixedTimePlan(double per, int slow_every) : per_(per), slow_every_(slow_every) {}
  void set_x(std::span<const double>) override {}
  void run(int times) override { products += times; }
  void get_y(std::span<double>) override {}
  double time_runs(int times) override {
    run(times);
    ++batches;
    const bool slow = slow_every_ > 0 && batches % slow_every_ == 0;
    return per_ * times * (slow ? 10.0 : 1.0);
  }
  long long products = 0;
  int batches = 0;

 private:
  double per_;
  int slow_every_;
};

TEST(Timing, SamplesLastTheAskedTimeAndTheMedianIgnoresAnOutlier) {
  FixedTimePlan plan(1e-6, 4);
  const ProductTiming t = time_products(plan, 1e-3, 7);
  EXPECT_EQ(t.samples, 7);
  // A sample lasts about the asked 1 ms: 800 .. 1200 products of 1 us.
  EXPECT_GE(t.products_per_sample, 800);
  EXPECT_LE(t.products_per_sample, 1200);
  // One in four batches is 10x slower: the median and the minimum still see 1 us.
  EXPECT_DOUBLE_EQ(t.median_s, 1e-6);
  EXPECT_DOUBLE_EQ(t.min_s, 1e-6);
  EXPECT_GT(plan.products, 7LL * t.products_per_sample);  // warm-up and calibration ran too
}

TEST(Timing, TheCapLimitsTheSamplesButKeepsThreeForAMedian) {
  FixedTimePlan plan(1e-6, 0);
  const ProductTiming capped = time_products(plan, 1e-3, 100, 0.01);
  EXPECT_GE(capped.samples, 3);
  EXPECT_LT(capped.samples, 100);
  EXPECT_LE(capped.samples * capped.products_per_sample * 1e-6, 0.01 + 1e-9);
  FixedTimePlan slow(1e-3, 0);  // a product of 1 ms: even 3 samples exceed the cap
  EXPECT_EQ(time_products(slow, 1e-3, 100, 1e-3).samples, 3);
  EXPECT_EQ(products_per_sample(slow, 1e-3), 1);
}

TEST(Timing, SampleStatsByHand) {
  // 1, 2, 3, 4, 10: mean 4, median 3; deviations -3 -2 -1 0 6, squares 50, variance 50 / 4.
  const std::vector<double> v{1, 2, 3, 4, 10};
  const SampleStats s = sample_stats(v);
  EXPECT_DOUBLE_EQ(s.mean_s, 4.0);
  EXPECT_DOUBLE_EQ(s.median_s, 3.0);
  EXPECT_DOUBLE_EQ(s.min_s, 1.0);
  EXPECT_DOUBLE_EQ(s.max_s, 10.0);
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(12.5) / 4.0);
  // First half {1, 2} (median 1.5) against the last {4, 10} (median 7), the middle 3 left out.
  EXPECT_DOUBLE_EQ(s.drift, 5.5 / 3.0);
  EXPECT_TRUE(s.noisy(0.05));

  // A step: three samples of 1 then three of 1.2. Each half is steady; the drift sees the step.
  const std::vector<double> step{1, 1, 1, 1.2, 1.2, 1.2};
  const SampleStats t = sample_stats(step);
  EXPECT_DOUBLE_EQ(t.median_s, 1.1);
  EXPECT_NEAR(t.mean_s, 1.1, 1e-15);
  EXPECT_NEAR(t.cv, std::sqrt(6 * 0.01 / 5) / 1.1, 1e-12);
  EXPECT_NEAR(t.drift, 0.2 / 1.1, 1e-12);
  EXPECT_TRUE(t.noisy(0.05));
  EXPECT_FALSE(t.noisy(0.2));  // cv 10%, drift 18%: both under 20%
  EXPECT_TRUE(t.noisy(0.15));  // the drift alone
  EXPECT_FALSE(t.noisy(0));    // 0: never noisy

  const std::vector<double> flat{2, 2, 2, 2};
  const SampleStats f = sample_stats(flat);
  EXPECT_EQ(f.cv, 0.0);  // 2 + 2 + 2 + 2 and / 4 are exact
  EXPECT_EQ(f.drift, 0.0);
  EXPECT_FALSE(f.noisy(0.05));

  const std::vector<double> one{5};
  const SampleStats o = sample_stats(one);
  EXPECT_EQ(o.mean_s, 5.0);
  EXPECT_EQ(o.median_s, 5.0);
  EXPECT_EQ(o.min_s, 5.0);
  EXPECT_EQ(o.max_s, 5.0);
  EXPECT_EQ(o.cv, 0.0);
  EXPECT_EQ(o.drift, 0.0);
  EXPECT_EQ(sample_stats({}).mean_s, 0.0);
}

TEST(Timing, ProductTimingCarriesTheSamplesAndTheirSpread) {
  FixedTimePlan plan(1e-6, 4);  // every fourth batch ten times slower
  const ProductTiming t = time_products(plan, 1e-3, 8);
  ASSERT_EQ(t.sample_times_s.size(), 8u);
  EXPECT_EQ(t.samples, 8);
  const SampleStats s = sample_stats(t.sample_times_s);
  EXPECT_EQ(t.mean_s, s.mean_s);
  EXPECT_EQ(t.cv, s.cv);
  EXPECT_EQ(t.drift, s.drift);
  EXPECT_DOUBLE_EQ(t.min_s, 1e-6);
  EXPECT_DOUBLE_EQ(t.max_s, 1e-5);  // the slow batches show in the max, the mean and the cv
  EXPECT_GT(t.mean_s, t.median_s);
  EXPECT_GT(t.cv, 0.5);
  EXPECT_TRUE(t.noisy(0.05));
  FixedTimePlan steady(1e-6, 0);
  const ProductTiming u = time_products(steady, 1e-3, 8);
  EXPECT_LT(u.cv, 1e-12);  // equal samples (up to the mean's rounding)
  EXPECT_FALSE(u.noisy(0.05));
}

// Its first `slow` batches take ten times longer (cold caches, a preempted thread), the rest `per`.
class SlowStartPlan final : public Plan {
 public:
  SlowStartPlan(double per, int slow) : per_(per), slow_(slow) {}
  void set_x(std::span<const double>) override {}
  void run(int) override {}
  void get_y(std::span<double>) override {}
  double time_runs(int times) override { return per_ * times * (batches_++ < slow_ ? 10.0 : 1.0); }

 private:
  double per_;
  int slow_, batches_ = 0;
};

TEST(Timing, SamplesLastAtLeastTheAskedTimeEvenAfterASlowCalibration) {
  // The calibration's batches are slow: it settles on ~110 products for 1 ms, which then last only
  // 0.11 ms. The samples are taken again with a batch grown from their own median.
  SlowStartPlan plan(1e-6, 3);
  const ProductTiming t = time_products(plan, 1e-3, 7);
  EXPECT_DOUBLE_EQ(t.median_s, 1e-6);
  EXPECT_GE(t.products_per_sample * t.median_s, 1e-3);
  EXPECT_LE(t.products_per_sample, 1200);
  EXPECT_EQ(t.samples, 7);
  EXPECT_LT(t.cv, 1e-12);  // the samples kept are the second set, all at 1 us
}

// The structure check the binary cache and the Python bindings apply to outside data.
TEST(Core, CsrStructureErrorNamesTheFirstBadRow) {
  const spmv::Csr good = spmv::test::csr_from_lengths({2, 0, 3}, 5, 1);
  EXPECT_EQ(spmv::csr_structure_error(good), "");
  spmv::Csr a = good;
  a.col[3] = a.col[2];  // row 2 repeats a column
  EXPECT_EQ(spmv::csr_structure_error(a), "row 2: column indices must be in [0, cols), sorted and without duplicates");
  a = good;
  a.col[1] = 5;  // row 0: beyond cols
  EXPECT_EQ(spmv::csr_structure_error(a), "row 0: column indices must be in [0, cols), sorted and without duplicates");
  a = good;
  a.row_ptr[2] = 1;  // row 1 would end before it starts
  EXPECT_EQ(spmv::csr_structure_error(a), "row_ptr decreases or leaves 0..nnz at row 1");
  a = good;
  a.row_ptr.pop_back();
  EXPECT_EQ(spmv::csr_structure_error(a), "row_ptr has 3 entries, rows + 1 = 4");
  a = good;
  a.val.pop_back();
  EXPECT_NE(spmv::csr_structure_error(a).find("row_ptr must span 0..nnz"), std::string::npos);
}
