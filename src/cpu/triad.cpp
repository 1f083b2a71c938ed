#include <spmv/ceiling.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <omp.h>

namespace spmv {

double cpu_triad_bandwidth(int threads) {
  // 3 x 64 MiB: several times any current last-level cache, small enough for a laptop.
  const std::size_t n = std::size_t{1} << 23;
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  // First touch by the same static schedule, so pages land near the threads that use them.
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  double best = 1e300;
  for (int rep = 0; rep < 8; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    const double s = 3.0 + rep;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  volatile double sink = a[n / 2];  // keep the stores observable
  (void)sink;
  return 3.0 * 8.0 * static_cast<double>(n) / best;
}

}  // namespace spmv
