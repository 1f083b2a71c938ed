#pragma once
// SpMM on the padded formats (ELL, HLL): KL lanes per row along the right-hand sides, each keeping
// C consecutive columns of its Y row in registers, so a row's slots are read once per KL*C columns.
// X and Y row-major (X's rows read as double2, or float4 / float2, vectors), or column-major read
// and written in place (C loads at X's column stride) or transposed around the row-major kernel by
// CudaPlan, as PaddedSpmmPlan's trial finds faster. The lanes of a row load the same slot (one broadcast) and
// the rows of a warp are consecutive, so with column-major slots a warp's slot loads are one run.
// KL = 1, C = K is the report's thread per row; C = 1, KL = K its thread per element of Y; two
// lanes per element, each taking every other slot of the row, its ELLPACK_Sub_warp.
#include <spmv/params.hpp>

#include <algorithm>
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

// How a padded SpMM maps threads to Y: lanes keeping 4, 2 or 1 columns of a row (C the widest
// dividing K), a thread per element of Y (004's ELLPACK_kernel), or two threads per element
// splitting the row's slots (004's ELLPACK_Sub_warp).
enum class SpmmMapping { Lanes, Elements, Subwarp };

// Rows: a device-copyable description with `index_t rows` and `PaddedRow row(index_t r) const`.
// kl lanes along K times sl (1, 2, 4, ...) along the row's slots, joined by shuffles, so kl * sl
// divides 32. Col: X (x_rows rows) and Y column-major, read and written in place. MV: the
// matrix's value type, VV: X's, Y's and the sums'.
template <int C, bool Col, class MV, class VV, typename Rows>
__global__ void padded_spmm_kernel(Rows rows, int k, int kl, int sl, const index_t* __restrict__ col,
                                   const MV* __restrict__ val, const VV* __restrict__ x, long long x_rows,
                                   VV* __restrict__ y, Epilogue<VV> ep) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int group = kl * sl;
  const long long r = t / group;
  const bool live = r < rows.rows;
  if (!live && sl == 1) return;  // no shuffles to join
  const int lane = static_cast<int>(t - r * group), kpos = lane / sl, s = lane % sl;
  const PaddedRow row = live ? rows.row(static_cast<index_t>(r)) : PaddedRow{0, 0, 0};
  for (int c0 = 0; c0 < k; c0 += kl * C) {  // the same trip count on every lane of a warp
    const int c = c0 + kpos * C;
    VV acc[C] = {};
    if (c < k) {
      index_t j = s;
      for (; j + (kUnroll - 1) * sl < row.n; j += kUnroll * sl) {  // kUnroll entries a step: loads in flight together
        VV v[kUnroll], xs[kUnroll][C];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const long long p = row.base + static_cast<long long>(j + u * sl) * row.stride;
          v[u] = static_cast<VV>(__ldg(val + p));
          load_x<C, Col>(x, __ldg(col + p), c, k, x_rows, xs[u]);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int i = 0; i < C; ++i) acc[i] += v[u] * xs[u][i];
      }
      for (; j < row.n; j += sl) {
        const long long p = row.base + static_cast<long long>(j) * row.stride;
        const VV v = static_cast<VV>(__ldg(val + p));
        VV xr[C];
        load_x<C, Col>(x, __ldg(col + p), c, k, x_rows, xr);
#pragma unroll
        for (int i = 0; i < C; ++i) acc[i] += v * xr[i];
      }
    }
    for (int off = 1; off < sl; off *= 2)
#pragma unroll
      for (int i = 0; i < C; ++i) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], off);
    if (!live || s != 0 || c >= k) continue;
    if constexpr (Col) {
#pragma unroll
      for (int i = 0; i < C; ++i) ep.put(y, (c + i) * static_cast<long long>(rows.rows) + r, acc[i]);
    } else {
      put_row<C>(y + r * k + c, acc, ep);
    }
  }
}

// C: 4, 2 or 1 (the widest dividing k) for Lanes, else 1; lanes along K: enough for k / C columns,
// at most 32 / sl (past them a lane takes every kl-th block of columns). x_rows: 0 for row-major X
// and Y, else the rows of column-major X (read in place, Y written column-major). VV: the
// vectors' type (l's).
template <class VV, class MV, typename Rows>
void launch_padded_spmm(const Rows& rows, int k, int block, const index_t* col, const MV* val, const Launch& l,
                        long long x_rows = 0, SpmmMapping mapping = SpmmMapping::Lanes) {
  const int c = mapping != SpmmMapping::Lanes ? 1 : k % 4 == 0 ? 4 : k % 2 == 0 ? 2 : 1;
  const int sl = mapping == SpmmMapping::Subwarp ? 2 : 1;
  int kl = 1;
  while (kl * sl < 32 && kl * c < k) kl *= 2;
  const unsigned grid = grid_for(static_cast<offset_t>(rows.rows) * kl * sl, block);
  const bool cm = x_rows > 0;
  const auto kernel =
      c == 4   ? (cm ? padded_spmm_kernel<4, true, MV, VV, Rows> : padded_spmm_kernel<4, false, MV, VV, Rows>)
      : c == 2 ? (cm ? padded_spmm_kernel<2, true, MV, VV, Rows> : padded_spmm_kernel<2, false, MV, VV, Rows>)
               : (cm ? padded_spmm_kernel<1, true, MV, VV, Rows> : padded_spmm_kernel<1, false, MV, VV, Rows>);
  kernel<<<grid, block, 0, l.stream>>>(rows, k, kl, sl, col, val, l.xv<VV>(), x_rows, l.yv<VV>(), l.ep<VV>());
}

// The padded formats' variant words.
inline const std::vector<VariantGroup>& padded_variants() {
  static const std::vector<VariantGroup> v = {
      {"column-major",
       {"native", "transpose"},
       "SpMM: X and Y read in place, or transposed around the row-major kernel",
       true},
      {"spmm",
       {"lanes", "elements", "subwarp"},
       "SpMM: a lane keeps 4, 2 or 1 columns of its Y row (the widest dividing K), a thread per element of Y "
       "(004's ELLPACK_kernel), or two threads per element splitting the row's slots (004's ELLPACK_Sub_warp); "
       "without the word a trial picks",
       true}};
  return v;
}

// A padded format's plan, for SpMM (k > 1). Column-major X and Y are read in place ("native") or
// transposed on the device around the row-major kernel ("transpose": X's row of k in one sector,
// against k sectors an entry where the columns scatter); then the mapping (SpmmMapping). Where the
// variant names neither, a trial (a warm-up, then three products each) keeps the fastest: the
// lanes lead where a row holds many slots (its C columns share a vector load, A read once a row),
// two threads an element on small matrices (bench/results/README.md, issue 52).
class PaddedSpmmPlan : public CudaPlan {
 public:
  using CudaPlan::CudaPlan;

 protected:
  // Once the format is built. groups: the kernel's variant words (padded_variants() and any of
  // its own).
  void choose_column_major(const PlanOptions& opt, const std::vector<VariantGroup>& groups = padded_variants()) {
    const VariantChoice words = parse_variant("ell and hll", groups, opt.kernel.variant);
    if (k_ == 1) return;
    const std::string_view mapping = words["spmm"];
    if (!mapping.empty()) choose_mapping(mapping);  // named: the path's trial times it
    if (layout_ == Layout::ColMajor && rows_ > 0) choose_path(words["column-major"]);
    if (mapping.empty()) choose_mapping(mapping);  // the trial, on the path kept
  }
  // launch_padded_spmm's x_rows and mapping.
  long long x_rows() const { return native_ ? cols_ : 0; }
  SpmmMapping mapping() const { return mapping_; }

 private:
  static constexpr const char* kMappingWords[] = {"lanes", "elements", "subwarp"};
  void choose_path(std::string_view v) {
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
  void choose_mapping(std::string_view v) {
    if (!v.empty()) {
      mapping_ = static_cast<SpmmMapping>(std::find(std::begin(kMappingWords), std::end(kMappingWords), v) -
                                          std::begin(kMappingWords));
      detail += std::string(" spmm=") + kMappingWords[static_cast<int>(mapping_)];
      return;
    }
    if (rows_ == 0) return;
    const auto t0 = std::chrono::steady_clock::now();
    double t[3];
    for (int m = 0; m < 3; ++m) {
      mapping_ = static_cast<SpmmMapping>(m);
      t[m] = trial_product_seconds();
    }
    mapping_ = static_cast<SpmmMapping>(std::min_element(t, t + 3) - t);
    setup_seconds += seconds_since(t0);
    char buf[128];
    std::snprintf(buf, sizeof buf, " spmm=%s (trial us: lanes %.1f, elements %.1f, subwarp %.1f)",
                  kMappingWords[static_cast<int>(mapping_)], t[0] * 1e6, t[1] * 1e6, t[2] * 1e6);
    detail += buf;
  }
  void use(bool native) {
    native_ = native;
    device_transpose_ = !native;
  }
  bool native_ = false;
  SpmmMapping mapping_ = SpmmMapping::Lanes;
};

}  // namespace spmv::cuda
