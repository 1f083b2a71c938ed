// Products on device vectors and CUDA streams (the conformance test checks every kernel's product
// on device vectors against the reference): several plans at once on several streams, one plan's
// products across streams in call order, no host synchronisation inside multiply(), a plan
// destroyed with a product in flight, host vectors through the staging buffers or pinned.
#include <gtest/gtest.h>
#include <spmv/bench/generate.hpp>
#include <spmv/spmv.hpp>

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_util.hpp"

using namespace spmv;

namespace {

#define REQUIRE_GPU() \
  ASSERT_GT(device::cuda_device_count(), 0) << "no usable CUDA device: the gpu tests must run on a machine with a GPU"

struct Stream {
  Stream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
  cudaStream_t s{};
};

// A matrix large enough that a product takes tens of microseconds (products on two streams overlap).
Csr big_matrix(std::uint64_t seed) { return gen::random_rows(400000, 12, gen::Spread::HalfDiagonal, seed); }

std::string mismatch(const Csr& a, const std::vector<double>& x, const std::vector<double>& y, double times = 1.0) {
  Reference ref = reference_product(a, x);
  for (std::size_t i = 0; i < ref.y.size(); ++i) ref.y[i] *= times, ref.bound[i] *= times;
  const CheckResult c = check_product(a, ref, y);
  return c.passed ? "" : c.message;
}

// Two plans of different kernels, each on its own stream, their products queued alternately and run
// at the same time: both right.
TEST(CudaStreams, TwoPlansOnTwoStreamsAtOnce) {
  REQUIRE_GPU();
  const Csr a = big_matrix(1), b = big_matrix(2);
  const auto pa = make_plan(a, Backend::Cuda, "csr5");
  const auto pb = make_plan(b, Backend::Cuda, "auto");
  const auto xa = make_vector("random:1", static_cast<std::size_t>(a.cols));
  const auto xb = make_vector("random:2", static_cast<std::size_t>(b.cols));
  DeviceVector<double> dxa(xa), dxb(xb), dya(static_cast<std::size_t>(a.rows)), dyb(static_cast<std::size_t>(b.rows));
  Stream s1, s2;
  for (int i = 0; i < 20; ++i) {
    pa->multiply(dxa, dya, 1.0, 0.0, s1.s);
    pb->multiply(dxb, dyb, 1.0, 0.0, s2.s);
  }
  device::synchronize(s1.s);
  device::synchronize(s2.s);
  EXPECT_EQ(mismatch(a, xa, dya.to_host()), "");
  EXPECT_EQ(mismatch(b, xb, dyb.to_host()), "");
}

// One plan's products on alternating streams (and the default one) accumulate into y with beta = 1:
// each waits for the one before, so y ends as 12 products' sum, and the plan's scratch (CSR5's
// carries, CSR-adaptive's counters) is never used by two products at once.
TEST(CudaStreams, OnePlanAcrossStreamsRunsInCallOrder) {
  REQUIRE_GPU();
  const Csr a = big_matrix(3);
  const auto x = make_vector("random:3", static_cast<std::size_t>(a.cols));
  Stream s1, s2;
  for (const char* kernel : {"csr5", "csr-adaptive", "csr-merge", "cusparse"}) {
    const auto plan = make_plan(a, Backend::Cuda, kernel);
    DeviceVector<double> dx(x), dy(static_cast<std::size_t>(a.rows));
    const cudaStream_t order[] = {s1.s, s2.s, nullptr, s2.s, s1.s, s1.s, nullptr, nullptr, s2.s, s1.s, s2.s, nullptr};
    for (const cudaStream_t s : order) plan->multiply(dx, dy, 1.0, 1.0, s);
    device::synchronize(nullptr);
    device::synchronize(s1.s);
    device::synchronize(s2.s);
    EXPECT_EQ(mismatch(a, x, dy.to_host(), 12.0), "") << kernel;
  }
}

// multiply() on device vectors queues the product and returns: with the stream held by a host
// function until a flag is set, it returns long before the flag (it would wait for the flag if it
// synchronised); the product then runs once the stream is released. Destroying the plan waits for
// its product, which must not read freed memory.
TEST(CudaStreams, MultiplyDoesNotWaitForTheStream) {
  REQUIRE_GPU();
  const Csr a = big_matrix(4);
  const auto x = make_vector("random:4", static_cast<std::size_t>(a.cols));
  DeviceVector<double> dx(x), dy(static_cast<std::size_t>(a.rows));
  Stream s;
  std::atomic<bool> release{false};
  auto plan = make_plan(a, Backend::Cuda, "auto");
  ASSERT_EQ(cudaLaunchHostFunc(
                s.s,
                [](void* flag) {
                  while (!static_cast<std::atomic<bool>*>(flag)->load())
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                },
                &release),
            cudaSuccess);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    release = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) plan->multiply(dx, dy, 1.0, 0.0, s.s);
  const double queued = seconds_since(t0);
  EXPECT_FALSE(release.load()) << "multiply waited for the stream";
  EXPECT_LT(queued, 0.25);
  plan.reset();  // waits for the products, then frees the plan's arrays
  releaser.join();
  EXPECT_EQ(mismatch(a, x, dy.to_host()), "");
}

// A y of several staging chunks (12 MB): the matrix, x, and y filled with NaN.
struct LargeY {
  explicit LargeY(std::uint64_t seed)
      : a(gen::random_rows(1500000, 4, gen::Spread::Uniform, seed)),
        x(make_vector("random:" + std::to_string(seed), static_cast<std::size_t>(a.cols))),
        y(static_cast<std::size_t>(a.rows), std::nan("")) {}
  Csr a;
  std::vector<double> x, y;
};

// Host vectors on a CUDA plan go through pinned staging buffers in chunks: a y of several chunks
// (12 MB) comes back whole, with alpha and beta applied, call after call, in both vector types.
TEST(CudaStreams, HostVectorsThroughStaging) {
  REQUIRE_GPU();
  LargeY big(5);
  auto& [a, x, y] = big;
  const auto plan = make_plan(a, Backend::Cuda, "csr-vector");
  plan->multiply(x, y);
  EXPECT_EQ(mismatch(a, x, y), "");
  plan->multiply(x, y, 2.0, 1.0);  // y = 3 A x
  EXPECT_EQ(mismatch(a, x, y, 3.0), "");
  std::vector<float> xf(x.begin(), x.end()), yf(y.size(), std::nanf(""));
  plan->multiply(xf, yf);  // converted: a double plan computes in double, y rounded to float
  const std::vector<double> xw(xf.begin(), xf.end()), yw(yf.begin(), yf.end());
  const CheckResult c = check_product(a, reference_product(a, xw), yw, 1, Layout::RowMajor, Precision::Single);
  EXPECT_TRUE(c.passed) << c.message;
}

// Host vectors in pinned memory (PinnedHost) go straight over the bus: the same results, with
// beta reading y and a y of several staging chunks.
TEST(CudaStreams, PinnedHostVectors) {
  REQUIRE_GPU();
  LargeY big(6);
  auto& [a, x, y] = big;
  const auto plan = make_plan(a, Backend::Cuda, "auto");
  {
    const PinnedHost px(x), py(y);
    plan->multiply(x, y);
    EXPECT_EQ(mismatch(a, x, y), "");
    plan->multiply(x, y, -1.0, 3.0);  // y = 2 A x
    EXPECT_EQ(mismatch(a, x, y, 2.0), "");
  }
  plan->multiply(x, y, 1.0, 1.0);  // unpinned again: staged; y = 3 A x
  EXPECT_EQ(mismatch(a, x, y, 3.0), "");
}

// DeviceVector: sizes, zeros when made, copies both ways, fill, moves; a wrong size refused.
TEST(CudaStreams, DeviceVectorBasics) {
  REQUIRE_GPU();
  DeviceVector<float> v(1000);
  EXPECT_EQ(v.size(), 1000u);
  for (const float f : v.to_host()) ASSERT_EQ(f, 0.0f);
  std::vector<float> h(1000);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i) * 0.5f;
  v.upload(h);
  EXPECT_EQ(v.to_host(), h);
  v.fill(7.0f);
  for (const float f : v.to_host()) ASSERT_EQ(f, 7.0f);
  DeviceVector<float> w = std::move(v);
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(w.size(), 1000u);
  h.resize(999);
  EXPECT_THROW(w.upload(h), Error);
}

}  // namespace
