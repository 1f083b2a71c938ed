// Reordered CUDA plans (PlanOptions::reorder): every CUDA kernel of ours through an RCM plan, on
// host vectors and on device vectors (the permutations on the GPU), SpMV and SpMM in both layouts,
// double and single, A and A^T, against the reference in A's numbering.
#include <gtest/gtest.h>
#include <spmv/spmv.hpp>

#include "test_util.hpp"

namespace spmv {
namespace {
using namespace test;

TEST(CudaReorder, HostAndDeviceVectorsInTheUsersNumbering) {
  const Csr a = shared_matrix("cage9");
  for (const KernelSpec& spec : kernels()) {
    if (spec.backend != Backend::Cuda || spec.baseline) continue;
    for (const int k : {1, 4})
      for (const Layout layout : {Layout::RowMajor, Layout::ColMajor})
        for (const Operation op : {Operation::NoTranspose, Operation::Transpose})
          for (const Precision prec : {Precision::Double, Precision::Single}) {
            if ((k > 1 && !spec.spmm) || (k == 1 && layout == Layout::ColMajor) || !supports(spec, prec)) continue;
            SCOPED_TRACE(spec.name + " k=" + std::to_string(k) + (layout == Layout::ColMajor ? " col" : " row") +
                         (op == Operation::Transpose ? " A^T " : " A ") + to_string(prec));
            PlanOptions opt;
            opt.k = k;
            opt.layout = layout;
            opt.operation = op;
            opt.precision = prec;
            opt.reorder = Reorder::Rcm;
            opt.products = 10;
            const auto plan = make_plan(a, Backend::Cuda, spec.name, opt);
            const Csr at = op == Operation::Transpose ? transpose(a.view()) : Csr{};
            const CsrView m = op == Operation::Transpose ? at.view() : a.view();
            std::vector<double> x = make_vector("random:3", static_cast<std::size_t>(m.cols) * k);
            const CheckedProduct host = checked_product(*plan, m, x, k, layout);  // host vectors
            EXPECT_TRUE(host.check.passed) << host.check.message;
            if (prec == Precision::Single) {  // float device vectors: the host path's result, within float's rounding
              std::vector<float> xf(x.begin(), x.end());
              DeviceVector<float> xd(xf), yd(host.y.size());
              plan->multiply(xd.span(), yd.span());
              const std::vector<float> got = yd.to_host();
              for (std::size_t i = 0; i < got.size(); ++i)
                ASSERT_NEAR(got[i], host.y[i], 1e-5 * (std::abs(host.y[i]) + 1)) << i;
              continue;
            }
            DeviceVector<double> xd(x), yd(host.y.size());
            plan->multiply(xd.span(), yd.span());
            const CheckResult c = check_product(m, reference_product(m, x, k, layout), yd.to_host(), k, layout);
            EXPECT_TRUE(c.passed) << c.message;
            // beta != 0 on device vectors (y gathered too): alpha A x + beta y0.
            const std::vector<double> y0 = make_vector("random:9", host.y.size());
            DeviceVector<double> yb(y0);
            plan->multiply(xd.span(), yb.span(), 2.0, -0.5);
            const std::vector<double> got = yb.to_host();
            for (std::size_t i = 0; i < got.size(); ++i)
              ASSERT_NEAR(got[i], 2.0 * host.y[i] - 0.5 * y0[i], 1e-12 * (2 * std::abs(host.y[i]) + 1)) << i;
          }
  }
}

}  // namespace
}  // namespace spmv
