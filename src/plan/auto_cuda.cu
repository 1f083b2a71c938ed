// Kernel "auto" on CUDA, the planner's CUDA half: the candidates share one device copy of the CSR
// matrix, uploaded once for the analysis, which runs on the device (features_cuda.cu); ELL, HLL and
// CSR5 convert from it on the device; the trial's rounds are queued on the device. In single and
// mixed precision the copy holds float values (the candidates of one plan share its precision).
#include <algorithm>

#include "core/register.hpp"
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "cuda/cuda_plan.cuh"
#include "plan/auto_plan.hpp"
#include "plan/features.hpp"

namespace spmv::cuda {

namespace {

// Holds the stream for `ns` nanoseconds of the device's clock: no shorter than a release by the host
// through a mapped flag, and without its pinned allocation in a fresh process's planning.
__global__ void hold_kernel(long long ns) {
  auto now = [] {
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
  };
  const long long t0 = now();
  while (now() - t0 < ns) {}
}

// The planner's rounds queued on the default stream, one event between consecutive batches and
// one synchronisation at the end: no host round trip per batch (on a matrix of a few microseconds
// a product, those cost more than the products). The queue starts behind a kernel that holds the
// stream while the host queues the rest: a product shorter than the host's launch and event calls
// would otherwise be timed at the host's pace.
std::vector<std::vector<double>> time_queued(std::span<Plan* const> plans, std::span<const int> batch, int rounds) {
  std::vector<CudaPlan*> cuda;
  for (Plan* p : plans) {
    auto* c = dynamic_cast<CudaPlan*>(p);
    if (!c) throw Unsupported("queued rounds need CUDA plans");
    cuda.push_back(c);
  }
  const std::size_t n = plans.size() * static_cast<std::size_t>(rounds);
  struct Events {
    std::vector<cudaEvent_t> e;
    ~Events() {
      for (cudaEvent_t x : e) cudaEventDestroy(x);
    }
  } ev;
  for (std::size_t j = 0; j <= n; ++j) {
    cudaEvent_t x{};
    SPMV_CUDA_CHECK(cudaEventCreate(&x));
    ev.e.push_back(x);
  }
  long long launches = 0;
  for (const int b : batch) launches += b;
  launches *= rounds;
  hold_kernel<<<1, 1>>>(std::min(20'000 + 8'000 * launches, 4'000'000LL));  // per launch queued, capped
  SPMV_CUDA_CHECK_LAUNCH();
  cuda[0]->enqueue(1);  // untimed: the first timed product does not start cold behind the hold
  SPMV_CUDA_CHECK(cudaEventRecord(ev.e[0]));
  for (int r = 0, j = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < cuda.size(); ++i) {
      cuda[i]->enqueue(batch[i]);
      SPMV_CUDA_CHECK(cudaEventRecord(ev.e[++j]));
    }
  SPMV_CUDA_CHECK(cudaEventSynchronize(ev.e[n]));
  std::vector<std::vector<double>> t(plans.size());
  for (int r = 0, j = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < cuda.size(); ++i, ++j) {
      float ms = 0;
      SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.e[j], ev.e[j + 1]));
      t[i].push_back(ms * 1e-3 / batch[i]);
    }
  return t;
}

std::unique_ptr<Plan> make_auto(const CsrView& a, const PlanOptions& opt) {
  SharedDeviceCsr dev;
  return detail::plan_auto(
      a, Backend::Cuda, opt,
      [&](const Candidate& c, double& shared) -> std::unique_ptr<Plan> {
        auto p = make_sharing_upload(a, c.kernel, c.opt, dev, &shared);
        return p ? std::move(p) : make_plan(a, Backend::Cuda, c.kernel, c.opt);
      },
      time_queued,
      [&](double& shared) {
        shared_upload(a, dev, opt.precision, &shared);  // values of the plan's precision, for every candidate
        return analyze_on_device(a, dev, &shared);
      });
}

}  // namespace

}  // namespace spmv::cuda

namespace spmv::detail {

void register_cuda_auto_kernel() {
  add_kernel({.name = "auto",
              .backend = Backend::Cuda,
              .format = "auto",
              .description = "the planner: format, kernel and settings chosen for the matrix by a model and a short "
                             "timed trial (the default)",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {},
              .make = cuda::make_auto});
}

}  // namespace spmv::detail
