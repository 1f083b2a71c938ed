#pragma once
// SpMM on the padded formats (ELL, HLL): KL lanes per row along the right-hand sides, each keeping
// C consecutive columns of its Y row in registers, so a row's slots are read once per KL*C columns.
// X and Y row-major (X's rows read as double2, or float4 / float2, vectors), or column-major read
// and written in place (C loads at X's column stride) or transposed around the row-major kernel by
// CudaPlan, as PaddedSpmmPlan's trial finds faster. The lanes of a row load the same slot (one broadcast) and
// the rows of a warp are consecutive, so with column-major slots a warp's slot loads are one run.
// KL = 1, C = K is the report's thread per row; C = 1, KL = K its thread per element of Y.
#include <spmv/params.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <type_traits>

#include "cuda/csr_device.cuh"

namespace spmv::cuda {

// C consecutive values from p (p aligned to C values when C > 1, so that the vector loads are):
// doubles two at a time (double2), floats four (float4) or, with C = 2, two (float2).
template <int C, class T>
__device__ __forceinline__ void load_row(const T* __restrict__ p, T (&v)[C]) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>);
  if constexpr (C == 1) {
    v[0] = __ldg(p);
  } else if constexpr (std::is_same_v<T, double>) {
#pragma unroll
    for (int j = 0; j < C; j += 2) {
      const double2 t = __ldg(reinterpret_cast<const double2*>(p + j));
      v[j] = t.x;
      v[j + 1] = t.y;
    }
  } else if constexpr (C % 4 == 0) {
#pragma unroll
    for (int j = 0; j < C; j += 4) {
      const float4 t = __ldg(reinterpret_cast<const float4*>(p + j));
      v[j] = t.x, v[j + 1] = t.y, v[j + 2] = t.z, v[j + 3] = t.w;
    }
  } else {
#pragma unroll
    for (int j = 0; j < C; j += 2) {
      const float2 t = __ldg(reinterpret_cast<const float2*>(p + j));
      v[j] = t.x;
      v[j + 1] = t.y;
    }
  }
}

// C consecutive values to p (aligned as for load_row).
template <int C, class T>
__device__ __forceinline__ void store_row(T* __restrict__ p, const T (&v)[C]) {
  if constexpr (C == 1) {
    p[0] = v[0];
  } else if constexpr (std::is_same_v<T, double>) {
#pragma unroll
    for (int j = 0; j < C; j += 2) *reinterpret_cast<double2*>(p + j) = make_double2(v[j], v[j + 1]);
  } else if constexpr (C % 4 == 0) {
#pragma unroll
    for (int j = 0; j < C; j += 4) *reinterpret_cast<float4*>(p + j) = make_float4(v[j], v[j + 1], v[j + 2], v[j + 3]);
  } else {
#pragma unroll
    for (int j = 0; j < C; j += 2) *reinterpret_cast<float2*>(p + j) = make_float2(v[j], v[j + 1]);
  }
}

// C consecutive values of Y from p through the epilogue (old values read only where beta != 0).
template <int C, class T>
__device__ __forceinline__ void put_row(T* __restrict__ p, T (&v)[C], const Epilogue<T>& ep) {
#pragma unroll
  for (int i = 0; i < C; ++i) v[i] *= ep.alpha;
  if (ep.beta != T(0)) {
    T old[C];
    if constexpr (C == 1) {
      old[0] = p[0];
    } else {
#pragma unroll
      for (int i = 0; i < C; ++i) old[i] = p[i];
    }
#pragma unroll
    for (int i = 0; i < C; ++i) v[i] += ep.beta * old[i];
  }
  store_row<C>(p, v);
}

// A row's slots in a padded format: n of them, slot j at base + j * stride.
struct PaddedRow {
  long long base;
  index_t stride;
  index_t n;
};

// Entries a lane has in flight: 4 hide more of the loads' latency than 2 on every matrix measured
// (bench/results/README.md).
constexpr int kUnroll = 4;

// C elements of X's row ci from column c: row-major (C divides k, so the part is aligned to C
// values) load_row's vector loads; column-major (X of x_rows rows) C loads at that stride,
// coalesced across a warp where neighbouring rows of A touch neighbouring columns. (CSR5 SpMM uses
// it too.)
template <int C, bool Col, class T>
__device__ __forceinline__ void load_x(const T* __restrict__ x, long long ci, int c, int k, long long x_rows,
                                       T (&v)[C]) {
  if constexpr (Col) {
#pragma unroll
    for (int i = 0; i < C; ++i) v[i] = __ldg(x + (c + i) * x_rows + ci);
  } else {
    load_row<C>(x + ci * k + c, v);
  }
}

// Rows: a device-copyable description with `index_t rows` and `PaddedRow row(index_t r) const`.
// Col: X (x_rows rows) and Y column-major, read and written in place. MV: the matrix's value
// type, VV: X's, Y's and the sums'.
template <int C, bool Col, class MV, class VV, typename Rows>
__global__ void padded_spmm_kernel(Rows rows, int k, int kl, const index_t* __restrict__ col,
                                   const MV* __restrict__ val, const VV* __restrict__ x, long long x_rows,
                                   VV* __restrict__ y, Epilogue<VV> ep) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long r = t / kl;
  if (r >= rows.rows) return;
  const int lane = static_cast<int>(t - r * kl);
  const PaddedRow row = rows.row(static_cast<index_t>(r));
  for (int c = lane * C; c < k; c += kl * C) {
    VV acc[C] = {};
    index_t j = 0;
    for (; j + kUnroll - 1 < row.n; j += kUnroll) {  // kUnroll entries a step: their loads in flight together
      VV v[kUnroll], xs[kUnroll][C];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long p = row.base + static_cast<long long>(j + u) * row.stride;
        v[u] = static_cast<VV>(__ldg(val + p));
        load_x<C, Col>(x, __ldg(col + p), c, k, x_rows, xs[u]);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int i = 0; i < C; ++i) acc[i] += v[u] * xs[u][i];
    }
    for (; j < row.n; ++j) {
      const long long p = row.base + static_cast<long long>(j) * row.stride;
      const VV v = static_cast<VV>(__ldg(val + p));
      VV xr[C];
      load_x<C, Col>(x, __ldg(col + p), c, k, x_rows, xr);
#pragma unroll
      for (int i = 0; i < C; ++i) acc[i] += v * xr[i];
    }
    if constexpr (Col) {
#pragma unroll
      for (int i = 0; i < C; ++i) ep.put(y, (c + i) * static_cast<long long>(rows.rows) + r, acc[i]);
    } else {
      put_row<C>(y + r * k + c, acc, ep);
    }
  }
}

// C: 4, 2 or 1 (the widest dividing k), or 1 where per_element; KL: enough lanes for k / C columns, at most 32. x_rows: 0
// for row-major X and Y, else the rows of column-major X (read in place, Y written column-major).
// VV: the vectors' type (l's).
// per_element: C = 1, a thread per element of Y (K <= 32; past 32 a lane takes every 32nd column).
template <class VV, class MV, typename Rows>
void launch_padded_spmm(const Rows& rows, int k, int block, const index_t* col, const MV* val, const Launch& l,
                        long long x_rows = 0, bool per_element = false) {
  const int c = per_element ? 1 : k % 4 == 0 ? 4 : k % 2 == 0 ? 2 : 1;
  int kl = 1;
  while (kl < 32 && kl * c < k) kl *= 2;
  const unsigned grid = grid_for(static_cast<offset_t>(rows.rows) * kl, block);
  const bool cm = x_rows > 0;
  const auto kernel =
      c == 4   ? (cm ? padded_spmm_kernel<4, true, MV, VV, Rows> : padded_spmm_kernel<4, false, MV, VV, Rows>)
      : c == 2 ? (cm ? padded_spmm_kernel<2, true, MV, VV, Rows> : padded_spmm_kernel<2, false, MV, VV, Rows>)
               : (cm ? padded_spmm_kernel<1, true, MV, VV, Rows> : padded_spmm_kernel<1, false, MV, VV, Rows>);
  kernel<<<grid, block, 0, l.stream>>>(rows, k, kl, col, val, l.xv<VV>(), x_rows, l.yv<VV>(), l.ep<VV>());
}

// The padded formats' variant words.
inline const std::vector<VariantGroup>& padded_variants() {
  static const std::vector<VariantGroup> v = {
      {"column-major",
       {"native", "transpose"},
       "SpMM: X and Y read in place, or transposed around the row-major kernel"},
      {"spmm",
       {"lanes", "elements"},
       "SpMM: a lane keeps 4, 2 or 1 columns of its Y row (the widest dividing K), or a thread per element "
       "of Y (004's ELLPACK_kernel; K <= 32)"}};
  return v;
}

// A padded format's plan. Column-major X and Y (k > 1) are read in place ("native") or transposed
// on the device around the row-major kernel ("transpose": X's row of k in one sector, against k
// sectors an entry where the columns scatter); variant "auto" (or empty) times both (a warm-up,
// then three products each) and keeps the faster.
class PaddedSpmmPlan : public CudaPlan {
 public:
  using CudaPlan::CudaPlan;

 protected:
  // Once the format is built.
  // groups: the kernel's variant words (padded_variants() and any of its own).
  // Also reads the spmm word (per_element()).
  void choose_column_major(const PlanOptions& opt, const std::vector<VariantGroup>& groups = padded_variants()) {
    const VariantChoice words = parse_variant("ell and hll", groups, opt.kernel.variant);
    per_element_ = k_ > 1 && words["spmm"] == "elements";
    if (per_element_) detail += " spmm=elements";
    if (k_ == 1 || layout_ != Layout::ColMajor || rows_ == 0) return;
    const std::string_view v = words["column-major"];
    if (!v.empty()) {
      use(v == "native");
      detail += v == "native" ? " column-major native" : " column-major transposed";
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    double t[2];
    for (const bool native : {true, false}) {
      use(native);
      t[native ? 0 : 1] = trial_product_seconds();
    }
    use(t[0] <= t[1]);
    release_unused_transposes();
    setup_seconds += seconds_since(t0);
    char buf[96];
    std::snprintf(buf, sizeof buf, " column-major %s (trial us: native %.1f, transposed %.1f)",
                  native_ ? "native" : "transposed", t[0] * 1e6, t[1] * 1e6);
    detail += buf;
  }
  // launch_padded_spmm's x_rows and per_element.
  long long x_rows() const { return native_ ? cols_ : 0; }
  bool per_element() const { return per_element_; }

 private:
  void use(bool native) {
    native_ = native;
    device_transpose_ = !native;
  }
  bool native_ = false;
  bool per_element_ = false;
};

}  // namespace spmv::cuda
