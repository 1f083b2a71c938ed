// A matrix kept in float (CsrF32: CsrView::val_f32, val empty) on the host backends: every serial
// and OpenMP kernel (auto included) in single and mixed precision gives bit for bit the product of
// the same plan made from the double matrix (float_values_cases.hpp), double plans refuse it, the
// conversions read it without a double copy, and the reference and the check read it as the double
// matrix it stands for. The CUDA half is gpu/test_cuda_float_values.cpp.
#include <spmv/formats/csr5.hpp>
#include <spmv/formats/ell.hpp>
#include <spmv/formats/hll.hpp>

#include "float_values_cases.hpp"

using namespace spmv;

namespace {

// The edge cases (empty rows, one dominant row, 0 rows, nnz = 0, ...) and a 0 x 0 matrix.
std::vector<std::pair<std::string, Csr>> cases() {
  auto v = test::edge_cases();
  Csr z;
  z.row_ptr = {0};
  v.emplace_back("zero_by_zero", z);
  return v;
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
}

}  // namespace

TEST(FloatValues, EveryHostKernelBitwiseAsFromDouble) {
  ASSERT_FALSE(test::tested_kernels().empty());
  auto mats = test::float_value_cases();
  ASSERT_EQ(mats.size(), test::edge_cases().size() + 2)
      << "shared matrices missing from " << test::shared_matrices_dir();
  mats.emplace_back("zero_by_zero", cases().back().second);
  test::FloatValueCounts counts;
  // One thread on every case (where the CI's two cores are shared with another test, every parallel
  // region of two threads may wait for a core), two on the cases whose rows split unevenly across
  // threads (CSR5's carries between threads' tiles, balanced partitions), variants pinned.
  test::every_kernel_from_float_values(mats, 1, counts);
  std::vector<std::pair<std::string, Csr>> uneven;
  for (const auto& m : mats)
    if (m.first == "one_dominant_row" || m.first == "irregular_5000" || m.first == "Journals") uneven.push_back(m);
  ASSERT_EQ(uneven.size(), 3u);
  test::every_kernel_from_float_values(uneven, 2, counts, false);
  // Not vacuous: most products are compared bit for bit (all but where two makings' trials never
  // agreed), and every kernel ran.
  EXPECT_GT(counts.bitwise, 10 * static_cast<int>(test::tested_kernels().size()));
  EXPECT_LE(counts.by_reference, counts.bitwise / 20) << counts.bitwise << " bitwise";
  std::printf("[ info ] %d products bitwise, %d against the reference, %d refused alike\n", counts.bitwise,
              counts.by_reference, counts.refused);
  for (const std::string& u : counts.unlike) std::printf("[ info ]   against the reference: %s\n", u.c_str());
}

TEST(FloatValues, DoublePlansRefuseFloatValues) {
  const Csr a = test::csr_from_lengths({2, 0, 3}, 4, 1);
  const CsrF32 f = to_float(a);
  ASSERT_TRUE(f.view().values_in_float());
  ASSERT_TRUE(f.view().val.empty());
  EXPECT_EQ(test::double_plans_refuse_float_values(f), static_cast<int>(test::tested_kernels().size()));
  // make_plan without a kernel (auto on the default backend) too.
  EXPECT_NE(test::error_of([&] { make_plan(f); }).find("the matrix's values are in float"), std::string::npos);
  // And in float the same matrix plans.
  PlanOptions single;
  single.precision = Precision::Single;
  EXPECT_NO_THROW(make_plan(f, single));
}

// The conversions read float values in their type: the same format as from the double matrix
// (values rounded), and in double the float values widened exactly.
TEST(FloatValues, ConversionsFromFloatValues) {
  const ConvertOptions any{.max_ratio_to_csr = 1e6};  // one_dominant_row pads 800x: 70 MB in ELL
  for (const auto& [name, a] : cases()) {
    SCOPED_TRACE(name);
    const CsrF32 f = to_float(a);
    const Csr w = to_double(f);
    for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
      const EllFloat e = csr_to_ell<float>(f, lay, any), e_d = csr_to_ell<float>(a, lay, any);
      EXPECT_TRUE(same_bits(e.val, e_d.val));
      EXPECT_TRUE(same_bits(e.col, e_d.col));
      EXPECT_TRUE(same_bits(csr_to_ell<double>(f, lay, any).val, csr_to_ell<double>(w, lay, any).val));
    }
    for (const int hack : {1, 32}) {
      const HllFloat h = csr_to_hll<float>(f, hack, any), h_d = csr_to_hll<float>(a, hack, any);
      EXPECT_TRUE(same_bits(h.val, h_d.val));
      EXPECT_TRUE(same_bits(h.col, h_d.col));
      EXPECT_TRUE(same_bits(csr_to_hll<double>(f, hack, any).val, csr_to_hll<double>(w, hack, any).val));
    }
    for (const int sigma : {1, 4, 16}) {  // full tiles and the tail
      const Csr5Float c = csr_to_csr5<float>(f, 4, sigma), c_d = csr_to_csr5<float>(a, 4, sigma);
      EXPECT_TRUE(same_bits(c.val, c_d.val));
      EXPECT_TRUE(same_bits(c.col, c_d.col));
      EXPECT_TRUE(same_bits(c.tile_desc, c_d.tile_desc));
      EXPECT_TRUE(same_bits(csr_to_csr5<double>(f, 4, sigma).val, csr_to_csr5<double>(w, 4, sigma).val));
    }
  }
}

// The reference over a float matrix is the reference over its values widened (bit for bit), and the
// check gives the same verdict given either, for a right product and a wrong one.
TEST(FloatValues, ReferenceAndCheckReadFloatValues) {
  const auto all = cases();
  for (const auto& [name, a] : all) {
    SCOPED_TRACE(name);
    const CsrF32 f = to_float(a);
    const Csr w = to_double(f);
    for (const int k : {1, 3})
      for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
        const auto x = make_vector("random:5", static_cast<std::size_t>(a.cols) * k);
        const Reference rf = reference_product(f, x, k, lay), rw = reference_product(w, x, k, lay);
        EXPECT_TRUE(same_bits(rf.y, rw.y));
        EXPECT_TRUE(same_bits(rf.bound, rw.bound));
        EXPECT_TRUE(same_bits(rf.abs_x, rw.abs_x));
        for (const Precision p : {Precision::Single, Precision::Mixed}) {
          PlanOptions opt;
          opt.threads = 1;
          opt.k = k;
          opt.layout = lay;
          opt.precision = p;
          const auto plan = make_plan(f, Backend::Serial, "csr", opt);
          std::vector<double> y(static_cast<std::size_t>(a.rows) * k), xs = x;
          test::product_in_precision(*plan, p, xs, y);
          const Reference rfs = reference_product(f, xs, k, lay), rds = reference_product(a, xs, k, lay);
          const CheckResult cf = check_product(f, rfs, y, k, lay, p), cd = check_product(a, rds, y, k, lay, p);
          EXPECT_TRUE(cf.passed) << cf.message;
          EXPECT_EQ(cf.passed, cd.passed) << cd.message;
          if (y.empty()) continue;
          y[y.size() / 2] += 1.0;  // far beyond any tolerance of these rows (|a_ij x_j| <= 1)
          const CheckResult bf = check_product(f, rfs, y, k, lay, p), bd = check_product(a, rds, y, k, lay, p);
          EXPECT_FALSE(bf.passed);
          EXPECT_EQ(bf.passed, bd.passed);
          EXPECT_EQ(bf.worst_index, bd.worst_index);
        }
      }
  }
}

// A view carrying float values on a user's arrays (val never set): planned in float on every
// kernel of the default host backend, through the planner.
TEST(FloatValues, UserFloatArraysThroughThePlanner) {
  const auto all = test::edge_cases();
  const auto it = std::find_if(all.begin(), all.end(), [](const auto& c) { return c.first == "irregular_5000"; });
  ASSERT_NE(it, all.end());
  const Csr& a = it->second;
  const CsrF32 f = to_float(a);
  CsrView v{.rows = f.rows, .cols = f.cols, .row_ptr = f.row_ptr, .col = f.col, .val_f32 = f.val};
  ASSERT_TRUE(v.val.empty());
  for (const Precision p : {Precision::Single, Precision::Mixed}) {
    PlanOptions opt;
    opt.precision = p;
    opt.threads = 2;
    const auto pf = make_plan(v, Backend::Omp, opt);
    std::vector<double> x = make_vector("random:3", static_cast<std::size_t>(a.cols)),
                        y(static_cast<std::size_t>(a.rows));
    test::product_in_precision(*pf, p, x, y);
    const CheckResult c = check_product(v, reference_product(v, x), y, 1, Layout::RowMajor, p);
    EXPECT_TRUE(c.passed) << pf->describe() << ": " << c.message;
  }
}
