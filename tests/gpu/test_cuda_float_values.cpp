// A matrix kept in float (CsrF32: CsrView::val_f32, val empty) on CUDA: every CUDA kernel (auto,
// whose candidates share one upload of the float values, included) in single and mixed precision
// gives bit for bit the product of the same plan made from the double matrix (the cuSPARSE
// algorithms that differ run to run: against the reference); double plans refuse it; CSR5's device
// conversion from it equals the host's. float_values_cases.hpp holds the comparison.
#include <spmv/device.hpp>
#include <spmv/formats/csr5.hpp>
#include "cuda/csr5_convert.hpp"

#include "float_values_cases.hpp"

using namespace spmv;

namespace {

void require_gpu() {
  ASSERT_TRUE(device::cuda_built()) << "built without the CUDA backend";
  ASSERT_GT(device::cuda_device_count(), 0) << "no usable CUDA device: the gpu tests must run on a machine with a GPU";
  ASSERT_FALSE(test::tested_kernels().empty()) << "the CUDA backend registered no kernels";
}

}  // namespace

TEST(CudaFloatValues, EveryCudaKernelBitwiseAsFromDouble) {
  require_gpu();
  // The conformance suite's edge cases (not 0 x 0, which it does not give CUDA kernels) and two
  // shared matrices.
  const auto mats = test::float_value_cases();
  ASSERT_EQ(mats.size(), test::edge_cases().size() + 2)
      << "shared matrices missing from " << test::shared_matrices_dir();
  test::FloatValueCounts counts;
  test::every_kernel_from_float_values(mats, 1, counts);
  EXPECT_GT(counts.bitwise, 10 * static_cast<int>(test::tested_kernels().size()));
  std::printf(
      "[ info ] %d products bitwise, %d against the reference (cuSPARSE's nondeterministic algorithms, "
      "trials that never agreed), %d refused alike\n",
      counts.bitwise, counts.by_reference, counts.refused);
  for (const std::string& u : counts.unlike) std::printf("[ info ]   against the reference: %s\n", u.c_str());
}

TEST(CudaFloatValues, DoublePlansRefuseFloatValues) {
  require_gpu();
  const CsrF32 f = to_float(test::csr_from_lengths({2, 0, 3}, 4, 1));
  ASSERT_TRUE(f.view().values_in_float());
  EXPECT_EQ(test::double_plans_refuse_float_values(f), static_cast<int>(test::tested_kernels().size()));
}

// CSR5's device conversion uploads the float values as they are: the same tiles as the host
// conversion of the double matrix rounded, bit for bit.
TEST(CudaFloatValues, Csr5DeviceConversionFromFloatValues) {
  require_gpu();
  for (const auto& [name, a] : test::edge_cases()) {
    const CsrF32 f = to_float(a);
    for (const int sigma : {1, 4, 17}) {
      const Csr5Float h = csr_to_csr5<float>(a, 32, sigma);
      const Csr5Float d = cuda::csr_to_csr5_on_device<float>(f, sigma);
      ASSERT_EQ(h.val.size(), d.val.size()) << name << " sigma=" << sigma;
      EXPECT_EQ(0, h.val.empty() ? 0 : std::memcmp(h.val.data(), d.val.data(), h.val.size() * sizeof(float)))
          << name << " sigma=" << sigma;
      EXPECT_EQ(h.col, d.col) << name << " sigma=" << sigma;
      EXPECT_EQ(h.tile_desc, d.tile_desc) << name << " sigma=" << sigma;
      // In double, the float values widened exactly.
      const Csr5 hw = csr_to_csr5<double>(to_double(f), 32, sigma);
      const Csr5 dw = cuda::csr_to_csr5_on_device<double>(f, sigma);
      ASSERT_EQ(hw.val.size(), dw.val.size());
      EXPECT_EQ(0, hw.val.empty() ? 0 : std::memcmp(hw.val.data(), dw.val.data(), hw.val.size() * sizeof(double)))
          << name << " sigma=" << sigma << " (double)";
    }
  }
}
