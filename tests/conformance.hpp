#pragma once
// The conformance harness: one product of one registered kernel under one PlanOptions, checked
// against the accurate reference, with the plan's stored_entries and bytes_per_product, and a
// memory refusal judged by one rule. conformance.cpp compiles it once per test binary, for the
// backends named at compile time:
//   SPMV_TEST_BACKEND_CPU   the host backends (Serial and Omp)   -> spmv_tests
//   SPMV_TEST_BACKEND_CUDA  the CUDA backend                     -> spmv_gpu_tests
#include <gtest/gtest.h>
#include <spmv/formats/transpose.hpp>
#include <spmv/spmv.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "test_util.hpp"

#if defined(SPMV_TEST_BACKEND_CUDA) == defined(SPMV_TEST_BACKEND_CPU)
#error "define exactly one of SPMV_TEST_BACKEND_CPU and SPMV_TEST_BACKEND_CUDA"
#endif

// The test suite's name and the check every test starts with: on CUDA a device must be there (a GPU
// test that cannot run has not passed).
#if defined(SPMV_TEST_BACKEND_CUDA)
#define CONFORMANCE CudaConformance
#define REQUIRE_BACKEND()                                                         \
  ASSERT_GT(device::cuda_device_count(), 0)                                       \
      << "no usable CUDA device: the gpu tests must run on a machine with a GPU"; \
  ASSERT_FALSE(spmv::test::tested_kernels().empty()) << "the CUDA backend registered no kernels"
#else
#define CONFORMANCE CpuConformance
#define REQUIRE_BACKEND() ASSERT_FALSE(spmv::test::tested_kernels().empty()) << "no CPU kernels registered"
#endif

namespace spmv::test {

#if defined(SPMV_TEST_BACKEND_CUDA)
inline const std::vector<Backend> tested_backends = {Backend::Cuda};
#else
inline const std::vector<Backend> tested_backends = {Backend::Serial, Backend::Omp};
#endif

// The edge case of that name (test::edge_cases()).
inline const Csr& edge_case(const std::vector<std::pair<std::string, Csr>>& cases, const std::string& name) {
  const auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.first == name; });
  if (it == cases.end()) throw std::runtime_error("no edge case " + name);
  return it->second;
}

// Every registered kernel of the backends under test.
inline std::vector<const KernelSpec*> tested_kernels() {
  std::vector<const KernelSpec*> v;
  for (const auto& k : kernels())
    if (std::find(tested_backends.begin(), tested_backends.end(), k.backend) != tested_backends.end()) v.push_back(&k);
  return v;
}

// Kernels whose storage holds padding slots: ELL (every row as long as the longest), ELL-rowlen
// (the same slots; its kernels only skip the padding when reading, see formats/ell.hpp), HLL (each
// hack as long as its longest row), and cuSPARSE's sliced ELL, registered with format "csr"
// because it converts from CSR but storing 32-row slices padded like HLL. Only these may refuse a
// matrix for memory.
// ELL's slots; sliced: HLL's, and the compact sliced ELL's (slices of 32 rows).
inline bool ell_slots(const KernelSpec& k) { return k.format == "ell"; }
inline bool sliced(const KernelSpec& k) { return k.format == "hll" || k.format == "hll-compact"; }
inline bool pads(const KernelSpec& k) { return ell_slots(k) || sliced(k) || k.name == "cusparse-sell"; }

// Slots of cuSPARSE's sliced ELL: slices of 32 rows, the last one padded to 32 rows too.
inline offset_t sell32_slots(const Csr& a) {
  offset_t slots = 0;
  for (index_t first = 0; first < a.rows; first += 32) {
    offset_t w = 0;
    for (index_t r = first; r < std::min<index_t>(a.rows, first + 32); ++r) w = std::max(w, a.row_length(r));
    slots += 32 * w;
  }
  return slots;
}

// The slots a plan of this kernel must store (its stored_entries), padding included.
// variant: the plan's words ("unpadded": ELL stored without padding, its nonzeros only).
inline offset_t expected_stored_entries(const KernelSpec& k, const Csr& a, int hack, const std::string& variant = "") {
  if (k.format == "hll") return hll_slots(a, hack);
  if (k.format == "hll-compact") return hll_slots(a, 32);
  if (k.name == "cusparse-sell") return sell32_slots(a);
  if (ell_slots(k) && variant.find("unpadded") == std::string::npos) {
    offset_t max_len = 0;
    for (index_t r = 0; r < a.rows; ++r) max_len = std::max(max_len, a.row_length(r));
    return static_cast<offset_t>(a.rows) * max_len;
  }
  return a.nnz();
}

// Padded slots / nonzeros of the format the kernel uses (ELL counts its row lengths too).
inline double padding_ratio(const KernelSpec& k, const Csr& a, int hack) {
  const double nnz = std::max<double>(1.0, static_cast<double>(a.nnz()));
  if (ell_slots(k)) return ell_bytes(a) / 12.0 / nnz;
  return static_cast<double>(expected_stored_entries(k, a, hack)) / nnz;
}

// A refusal is a result, never a pass: accepted only from a cuSPARSE SpMM algorithm for a layout it
// lacks, or from a padded kernel with the "would need" message on a matrix whose padding ratio is
// really large (the default budget allows 20x CSR).
// Returns "" when the refusal is the expected one, else what is wrong with it.
inline std::string judge_refusal(const KernelSpec& k, const Csr& a, int hack, const std::string& msg) {
  // cuSPARSE's SpMM algorithms each take the dense layouts NVIDIA implemented for them.
  if (k.for_spmm && k.baseline && msg.find("does not support") != std::string::npos) return "";
  if (!pads(k) || msg.find("would need") == std::string::npos) return "unexpected refusal: " + msg;
  if (const double r = padding_ratio(k, a, hack); r < 10)
    return fmt::format("refused with padding ratio only {:.2f}: {}", r, msg);
  return "";
}

// The kernel a plan of "auto" chose, from Plan::chosen ("omp/hll hack=16 threads=2",
// "cuda/ell bs=256"); sets hack to the chosen one.
inline const KernelSpec& chosen_spec(Backend b, const std::string& chosen, int& hack) {
  const std::string name = chosen_kernel(chosen);
  if (const auto h = chosen.find("hack="); h != std::string::npos) hack = std::stoi(chosen.substr(h + 5));
  return get_kernel(b, name);
}

// A second product on the same plan must be bit-identical to the first (no state left from it),
// except for the cuSPARSE algorithms that are not deterministic run to run (all but SpMV's
// CSR_ALG2 and COO_ALG2; the SpMM algorithms differ between runs on the H200 on irregular rows):
// there the second product is checked against the reference.
inline bool repeats_bit_identical(const KernelSpec& k) {
  if (!k.repeatable) return false;  // ours that add with atomics say so
  if (k.backend != Backend::Cuda || !k.baseline) return true;
  return k.name == "cusparse-alg2" || k.name == "cusparse-coo-alg2";
}

inline std::string describe(const KernelSpec& k, const PlanOptions& o) {
  return fmt::format(
      "[{} {} threads={} block={} k={} layout={} hack={} subwarp={} nz_per_block={} variant={} precision={}]",
      to_string(k.backend), k.name, o.threads, o.kernel.block_size, o.k, o.layout == Layout::RowMajor ? "row" : "col",
      o.kernel.hack, o.kernel.subwarp, o.kernel.nz_per_block, o.kernel.variant, to_string(o.precision));
}

// y = alpha * A*x + beta * y through multiply() with vectors of type T (float or double): x and the
// incoming y are rounded to T first (and set to the rounded values, so that a reference sees what
// the plan saw), the result widened back into y. On device vectors (DeviceVector) where `device`.
template <class T>
void multiply_as(Plan& plan, std::vector<double>& x, std::vector<double>& y, double alpha = 1.0, double beta = 0.0,
                 bool device = false) {
  std::vector<T> xt(x.begin(), x.end()), yt(y.begin(), y.end());
  x.assign(xt.begin(), xt.end());
  if (device) {
    DeviceVector<T> dx(xt), dy(yt);
    plan.multiply(dx, dy, static_cast<T>(alpha), static_cast<T>(beta));
    dy.download(yt);  // behind the product: both on the default stream
  } else {
    plan.multiply(std::span<const T>(xt), std::span<T>(yt), static_cast<T>(alpha), static_cast<T>(beta));
  }
  y.assign(yt.begin(), yt.end());
}

// The same in the plan's own vector type: float for a single plan, double otherwise.
inline void product_in_precision(Plan& plan, Precision p, std::vector<double>& x, std::vector<double>& y,
                                 bool device = false) {
  if (p == Precision::Single)
    multiply_as<float>(plan, x, y, 1.0, 0.0, device);
  else
    multiply_as<double>(plan, x, y, 1.0, 0.0, device);
}

// Whether this test binary runs products on device vectors too (the CUDA one).
#if defined(SPMV_TEST_BACKEND_CUDA)
inline constexpr bool kDeviceVectors = true;
#else
inline constexpr bool kDeviceVectors = false;
#endif

inline std::string check_plan(const KernelSpec& spec, const Csr& a, Plan& plan, PlanOptions opt,
                              const std::string& where, const std::string& detail_has);

// Runs one configuration; returns "" on success (a correct product, or an expected refusal: see
// refused), else what went wrong. `detail_has`: a string the plan's detail must contain.
// opt.precision: the product in that precision, checked with its tolerance.
inline std::string run_one(const KernelSpec& spec, const Csr& a, PlanOptions opt, const std::string& what,
                           bool* refused = nullptr, const std::string& detail_has = "") {
  const std::string where = what + " " + describe(spec, opt);
  if (refused) *refused = false;
  std::unique_ptr<Plan> plan;
  // The matrix the product is by: A, or A^T for a transposed plan (made here for the reference).
  const bool transposed = opt.operation == Operation::Transpose;
  const Csr at = transposed ? transpose(a) : Csr{};
  const Csr& m = transposed ? at : a;
  try {
    plan = make_plan(a, spec.backend, spec.name, opt);
  } catch (const Unsupported& e) {
    if (refused) *refused = true;
    const std::string bad = judge_refusal(spec, m, opt.kernel.hack, e.what());
    return bad.empty() ? "" : where + ": " + bad;
  }
  return check_plan(spec, m, *plan, opt, where, detail_has);
}

// The checks of run_one on a plan made of m's product (m: A, or A^T for a transposed plan).
inline std::string check_plan(const KernelSpec& spec, const Csr& a, Plan& plan_ref, PlanOptions opt,
                              const std::string& where, const std::string& detail_has) {
  Plan* plan = &plan_ref;
  const std::size_t nx = static_cast<std::size_t>(a.cols) * opt.k, ny = static_cast<std::size_t>(a.rows) * opt.k;
  auto x = make_vector("random:11", nx);
  std::vector<double> y(ny, std::nan("")), y2(ny, std::nan(""));  // garbage that must be overwritten
  product_in_precision(*plan, opt.precision, x, y);
  plan->set_x(x);  // the plan's own x (a single plan's rounded: x is float already)
  plan->run(1);
  plan->get_y(y2);  // in double: a single plan widens its float y
  const Reference ref = reference_product(a, x, opt.k, opt.layout);
  if (const CheckResult c = check_product(a, ref, y, opt.k, opt.layout, opt.precision); !c.passed)
    return where + ": " + c.message;
  // The resident product (run, get_y), and on the GPU the product on device vectors, give the same.
  std::vector<std::pair<const char*, std::vector<double>>> again{{"second run", std::move(y2)}};
  if (kDeviceVectors) {
    std::vector<double> yd(ny, std::nan("")), xd = x;
    product_in_precision(*plan, opt.precision, xd, yd, true);
    again.emplace_back("device vectors", std::move(yd));
  }
  for (const auto& [name, y2] : again) {
    // cuSPARSE's transposed product adds with atomics whatever the algorithm: no repeat bit for bit.
    const bool library_transpose = spec.transposes && opt.operation == Operation::Transpose;
    if (repeats_bit_identical(spec) && !library_transpose) {
      for (std::size_t i = 0; i < ny; ++i)
        if (!(y[i] == y2[i])) return where + fmt::format(": {} differs at {}", name, i);
    } else if (const CheckResult c = check_product(a, ref, y2, opt.k, opt.layout, opt.precision); !c.passed) {
      return where + ": " + name + ": " + c.message;
    }
  }
  if (!detail_has.empty() && plan->detail.find(detail_has) == std::string::npos)
    return where + ": detail '" + plan->detail + "' lacks '" + detail_has + "'";
  // The planner stores what its choice stores ("omp/hll hack=16 threads=2": HLL with hack 16).
  const KernelSpec& stored = spec.name == "auto" ? chosen_spec(spec.backend, plan->chosen, opt.kernel.hack) : spec;
  if (const offset_t want = expected_stored_entries(stored, a, opt.kernel.hack, opt.kernel.variant);
      plan->stored_entries != want)
    return where + fmt::format(": stored_entries {} != {} ({})", plan->stored_entries, want, stored.name);
  // A nonzero's column and value (compact formats: at least a 2-byte column offset and a 1-byte
  // index into the distinct values).
  const bool compact = stored.format.ends_with("-compact");
  const offset_t per_entry = compact ? 3 : 4 + value_bytes(opt.precision);
  const offset_t least = per_entry * a.nnz() + vector_bytes(opt.precision) * static_cast<offset_t>(a.rows) * opt.k;
  if (plan->bytes_per_product < least) return where + ": bytes_per_product below the data the product must read";
  if (plan->precision != opt.precision) return where + ": the plan says precision " + to_string(plan->precision);
  return "";
}

}  // namespace spmv::test
