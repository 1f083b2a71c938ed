// CSR SpMM, Y = A*X with K right-hand sides, in the layout the user gives (no transposition):
//
// Row-major X and Y: a group of W lanes per row (W | 32), KL lanes along the right-hand sides times
// W/KL groups along the row's entries; each lane keeps C consecutive columns of its Y row in
// registers (C = 1, 2 or 4: X's row read as double2, float4 or float2 vectors), so A is read once
// per block of KL*C columns, and the entry groups are joined by shuffles. The corners of this family are the
// SpMM report's mappings: a thread per element of Y (C = 1, W = KL), a warp per row with lanes
// across K (W = 32, C = 1), the register-blocked kernel for large K (C = 4).
// Column-major X and Y: a group of W lanes per row along its entries (CSR-vector), each lane
// accumulating C columns at once, so A's row is read once per block of C columns; or X transposed
// on the device, the row-major kernel, Y transposed back, all within the product (variant word
// "transpose"): on rows whose columns scatter, reading X's rows whole (one sector an entry at K = 4, not
// K) more than repays the two passes; or X alone transposed and the row-major kernel writing
// column-major Y itself ("transpose-x": a warp's rows are consecutive, so its stores still fill
// sectors, and Y's two extra passes are saved; with "sorted" the rows are permuted and the stores
// scatter, which the trial weighs).
// Rows longer than long_row go to a block-per-piece kernel (both layouts), queued first on a side
// stream so that it runs beside the row kernel rather than after it. Where row lengths vary much,
// both kernels can take the rows longest first (within windows of rows) through a permutation
// ("sorted"), so that the rows of a warp have about the same length. The shape is chosen per
// matrix, K and layout by a short timed trial among a few candidates near the model's
// (tuning::csr_spmm_*), or narrowed by the variant's words (csr_spmm_variants: c<C>:w<W> names one
// shape, k<N> its lanes along K, so 004's CSR_Vector_by_row is c1:w32:k8; "blocks" sends every row
// to the block-per-piece kernel, 004's CSR_Adaptive_sub_blocks). K = 1 never comes here: the
// "csr" kernel runs its SpMV choice instead, so one right-hand side costs what SpMV costs.
#include <algorithm>
#include <cstdio>
#include <string>

#include <spmv/params.hpp>
#include <spmv/planner.hpp>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "cuda/padded_spmm.cuh"

namespace spmv::cuda {

namespace {

// One shape of the row-major or column-major kernel.
struct Shape {
  Shape(int rhs = 1, int lanes = 32, bool transposed = false, bool sorted = false, bool x_only = false, int k_lanes = 0)
      : c(rhs), w(lanes), t(transposed), s(sorted), x(x_only), kl(k_lanes) {}
  int c;   // right-hand sides per lane
  int w;   // lanes per row (a power of two <= 32)
  bool t;  // column-major X and Y through device transposes and the row-major kernel
  bool s;  // rows taken longest first (order_), so that a warp's rows have about the same length
  bool x;  // column-major X through a device transpose, the row-major kernel writing column-major Y
  int kl;  // row-major kernel: lanes along K (a power of two <= w); 0: enough for K / c, at most w
  double seconds = 0;
};

// A lane group's row: its slot's row (through `order` where the rows are sorted), its entries
// [b, e), and whether the group computes it (mine): not past the slots, and not a row over
// long_row, which spmm_long_kernel does (its entries left empty: the lanes still join the shuffles).
template <typename OffT>
struct SlotRow {
  long long row = 0;
  OffT b = 0, e = 0;
  bool mine = false;
};
template <typename OffT>
__device__ __forceinline__ SlotRow<OffT> slot_row(long long slot, index_t slots, const index_t* __restrict__ order,
                                                  const OffT* __restrict__ rp, int long_row) {
  SlotRow<OffT> s;
  if (slot >= slots) return s;
  s.row = order ? __ldg(order + slot) : slot;
  s.b = rp[s.row];
  s.e = rp[s.row + 1];
  s.mine = s.e - s.b <= long_row;
  if (!s.mine) s.e = s.b;
  return s;
}

// Row-major: lanes_k lanes (a power of two) along K, w / lanes_k along the entries.
// y_rows: 0 for row-major Y, else Y is column-major with this many rows. MV: the matrix's value
// type, VV: X's, Y's and the sums' (every kernel here).
template <class MV, class VV, typename OffT, int C, int U>
__global__ void spmm_row_kernel(index_t slots, const index_t* __restrict__ order, int k, int w, int lanes_k,
                                int long_row, const OffT* __restrict__ rp, const index_t* __restrict__ col,
                                const MV* __restrict__ val, const VV* __restrict__ x, VV* __restrict__ y,
                                long long y_rows, Epilogue<VV> ep) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long slot = t / w;
  const int lane = static_cast<int>(t & (w - 1)), kl = lane & (lanes_k - 1), g = lane / lanes_k, ng = w / lanes_k;
  const auto [row, b, e, mine] = slot_row(slot, slots, order, rp, long_row);
  for (int c0 = 0; c0 < k; c0 += lanes_k * C) {  // the same trip count on every lane of the warp
    const int c = c0 + kl * C;
    VV acc[C] = {};
    if (c < k) {
      // U entries a step: their column, value and X loads issued together (one dependent chain of
      // loads per entry would leave the lane waiting on latency). U = 4 where a group's share of a
      // row is long, 2 on short rows (most of a row would fall to the one-at-a-time tail).
      OffT p = b + g;
      if constexpr (U == 2) {
        for (; p + ng < e; p += 2 * ng) {
          const VV v0 = static_cast<VV>(__ldg(val + p)), v1 = static_cast<VV>(__ldg(val + p + ng));
          const long long i0 = __ldg(col + p), i1 = __ldg(col + p + ng);
          VV x0[C], x1[C];
          load_row<C>(x + i0 * k + c, x0);
          load_row<C>(x + i1 * k + c, x1);
#pragma unroll
          for (int j = 0; j < C; ++j) acc[j] += v0 * x0[j] + v1 * x1[j];
        }
      } else {
        for (; p + (U - 1) * ng < e; p += U * ng) {
          VV v[U], xs[U][C];
#pragma unroll
          for (int u = 0; u < U; ++u) {
            v[u] = static_cast<VV>(__ldg(val + p + u * ng));
            load_row<C>(x + static_cast<long long>(__ldg(col + p + u * ng)) * k + c, xs[u]);
          }
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int j = 0; j < C; ++j) acc[j] += v[u] * xs[u][j];
        }
      }
      for (; p < e; p += ng) {
        const VV v = static_cast<VV>(__ldg(val + p));
        VV xr[C];
        load_row<C>(x + static_cast<long long>(__ldg(col + p)) * k + c, xr);
#pragma unroll
        for (int j = 0; j < C; ++j) acc[j] += v * xr[j];
      }
    }
    for (int off = lanes_k; off < w; off *= 2)
#pragma unroll
      for (int j = 0; j < C; ++j) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
    if (g == 0 && c < k && mine) {
      if (y_rows == 0) {
        put_row<C>(y + row * k + c, acc, ep);
      } else {
#pragma unroll
        for (int j = 0; j < C; ++j) ep.put(y, (c + j) * y_rows + row, acc[j]);
      }
    }
  }
}

// Column-major: w lanes per row along its entries, C columns at a time.
template <class MV, class VV, typename OffT, int C>
__global__ void spmm_col_kernel(index_t rows, index_t cols, index_t slots, const index_t* __restrict__ order, int k,
                                int w, int long_row, const OffT* __restrict__ rp, const index_t* __restrict__ col,
                                const MV* __restrict__ val, const VV* __restrict__ x, VV* __restrict__ y,
                                Epilogue<VV> ep) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long slot = t / w;
  const int lane = static_cast<int>(t & (w - 1));
  const auto [row, b, e, mine] = slot_row(slot, slots, order, rp, long_row);
  for (int c0 = 0; c0 < k; c0 += C) {
    VV acc[C] = {};
    for (OffT p = b + lane; p < e; p += w) {
      const VV v = static_cast<VV>(__ldg(val + p));
      const long long ci = __ldg(col + p);
#pragma unroll
      for (int j = 0; j < C; ++j)
        if (c0 + j < k) acc[j] += v * __ldg(x + static_cast<long long>(c0 + j) * cols + ci);
    }
#pragma unroll
    for (int j = 0; j < C; ++j) acc[j] = group_sum(acc[j], w);
    // Every lane of the group holds the sums; lane l writes columns l, l + w, ... of the block.
    if (mine)
#pragma unroll
      for (int j = 0; j < C; ++j)
        if ((j & (w - 1)) == lane && c0 + j < k) ep.put(y, static_cast<long long>(c0 + j) * rows + row, acc[j]);
  }
}

// Long rows are cut into pieces, a block per piece: KT lanes along the right-hand sides (C each)
// times blockDim/KT groups along the entries; warps reduce by shuffles, then warp partials are
// added in warp order. Two launches of this kernel: rows up to tuning::csr_spmm_short_rows entries
// in short pieces and small blocks (tuning::csr_spmm_short_groups groups: a 1024-thread block on a
// row of a hundred entries leaves most threads idle), longer rows in long pieces and 1024 threads.
// A row of several pieces: each piece writes its partial row, and the last piece to finish adds
// them in piece order (deterministic, one launch). X and Y are addressed by strides, so both
// layouts use it: element (i, c) of X is x[i*xr + c*xc], of Y y[i*yr + c*yc].
template <class MV, class VV, typename OffT, int C>
__global__ void spmm_long_kernel(const int4* __restrict__ desc, int piece, int k, int kt, const OffT* __restrict__ rp,
                                 const index_t* __restrict__ col, const MV* __restrict__ val, const VV* __restrict__ x,
                                 long long xr, long long xc, VV* __restrict__ y, long long yr, long long yc,
                                 VV* __restrict__ partial, int* __restrict__ arrived, Epilogue<VV> ep) {
  __shared__ VV red[32 * 32 * C];
  __shared__ bool last;
  const int4 d = desc[blockIdx.x];  // row, piece, pieces
  const index_t row = d.x;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
  const int kl = lane % kt, g = tid / kt, ng = blockDim.x / kt;
  const OffT e0 = rp[row + 1];
  const OffT b = rp[row] + static_cast<OffT>(d.y) * piece;
  const OffT e = min(e0, static_cast<OffT>(b + piece));
  VV* part = partial + static_cast<long long>(blockIdx.x) * k;
  for (int c0 = 0; c0 < k; c0 += kt * C) {
    const int c = c0 + kl * C;  // C > 1: row-major X (xc = 1), k a multiple of C
    VV acc[C] = {};
    if (c < k)
#pragma unroll 4
      for (OffT p = b + g; p < e; p += ng) {
        const VV v = static_cast<VV>(__ldg(val + p));
        VV xs[C];
        load_row<C>(x + __ldg(col + p) * xr + c * xc, xs);
#pragma unroll
        for (int j = 0; j < C; ++j) acc[j] += v * xs[j];
      }
#pragma unroll
    for (int j = 0; j < C; ++j) {
      for (int off = kt; off < 32; off *= 2) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
      if (lane < kt) red[(warp * 32 + lane) * C + j] = acc[j];
    }
    __syncthreads();
    if (tid < kt * C && c0 + tid < k) {
      VV s = 0;
      for (int w = 0; w < nw; ++w) s += red[w * 32 * C + tid];
      if (d.z == 1)
        ep.put(y, row * yr + (c0 + tid) * yc, s);
      else
        part[c0 + tid] = s;
    }
    __syncthreads();
  }
  if (d.z == 1) return;
  const unsigned first = blockIdx.x - d.y;
  // The partial row's writers passed the __syncthreads above; thread 0's acquire-release count
  // publishes their writes (release is cumulative) and, in the last piece, makes the other pieces'
  // visible to the block after the next __syncthreads (the pattern of a grid barrier, without a
  // sequentially consistent fence per thread).
  if (tid == 0) last = count_arrival(arrived[first]) == d.z - 1;
  __syncthreads();
  if (!last) return;
  for (int c = tid; c < k; c += blockDim.x) {
    VV s = 0;
    for (int j = 0; j < d.z; ++j) s += __ldcg(partial + static_cast<long long>(first + j) * k + c);
    ep.put(y, row * yr + c * yc, s);
  }
  if (tid == 0) arrived[first] = 0;  // ready for the next product
}

// A non-blocking stream (its kernels run beside the product's stream's) and the events that fork
// it from that stream and join it back.
struct SideStream {
  SideStream() {
    SPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  }
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  ~SideStream() {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    cudaEventDestroy(fork);
    cudaEventDestroy(join);
  }
  cudaStream_t stream{};
  cudaEvent_t fork{}, join{};
};

int pow2_at_least(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

class CsrSpmm final : public CsrDevicePlan {
 public:
  CsrSpmm(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr)
      : CsrDevicePlan(a, opt, std::move(dev)), row_major_(opt.layout == Layout::RowMajor) {
    device_transpose_ = false;  // set per shape (use()): the native kernels read both layouts as they are
    const auto t0 = std::chrono::steady_clock::now();
    mean_ = a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0;
    std::vector<Shape> cands = candidates(mean_, opt.kernel.variant);
    const VariantChoice words = parse_variant("csr", csr_spmm_variants(), opt.kernel.variant);
    // Every row to the block-per-piece kernel (004's CSR_Adaptive_sub_blocks): the row kernel is
    // left the empty rows, so its shape is not tried.
    const bool block_rows = words.given("block-rows");
    if (block_rows) cands.resize(1);
    // Long rows: from the shape the model prefers (the candidates' first), for all of them.
    long_row_ = block_rows ? 0 : tuning::csr_spmm_long_row(entry_groups(cands.front()), a.rows, mean_);
    // Pieces of the rows past long_row: the short class first, then the long one (one descriptor
    // list, two launches).
    std::vector<int> desc;
    int n_rows = 0;
    for (const bool short_class : {true, false}) {
      const offset_t piece = short_class ? tuning::csr_spmm_short_piece : tuning::csr_spmm_piece;
      for (index_t r = 0; r < a.rows; ++r) {
        const offset_t len = a.row_length(r);
        if (len <= long_row_ || (len <= tuning::csr_spmm_short_rows) != short_class) continue;
        const int pieces = static_cast<int>((len + piece - 1) / piece);
        for (int p = 0; p < pieces; ++p) desc.insert(desc.end(), {r, p, pieces, 0});
        ++n_rows;
      }
      if (short_class) n_short_ = static_cast<unsigned>(desc.size() / 4);
    }
    n_long_ = static_cast<unsigned>(desc.size() / 4) - n_short_;
    desc_.upload(desc);
    partial_.resize(static_cast<std::size_t>(n_short_ + n_long_) * k_);
    arrived_.resize(n_short_ + n_long_);
    if (n_short_ + n_long_) SPMV_CUDA_CHECK(cudaMemset(arrived_.data(), 0, (n_short_ + n_long_) * sizeof(int)));
    // Rows of very different lengths: the two best shapes are tried again on the rows longest first.
    const bool one_shape = block_rows || (words.given("columns") && words.given("lanes"));
    const bool try_sorted = !one_shape && !words.given("order") && tuning::csr_spmm_sorts_rows(analyze(a).cv());
    if (try_sorted || std::any_of(cands.begin(), cands.end(), [](const Shape& s) { return s.s; })) sort_rows(a);
    std::string trial;
    auto time_shapes = [&](std::vector<Shape>::iterator first, std::vector<Shape>::iterator last) {
      for (auto it = first; it != last; ++it) {
        Shape& s = *it;
        use(s);
        s.seconds = trial_product_seconds();
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%s %.1f", trial.empty() ? "" : ", ", name(s).c_str(), s.seconds * 1e6);
        trial += buf;
      }
    };
    const auto faster = [](const Shape& l, const Shape& r) { return l.seconds < r.seconds; };
    if ((cands.size() > 1 || try_sorted) && !trivial()) {
      time_shapes(cands.begin(), cands.end());
      if (try_sorted) {
        std::sort(cands.begin(), cands.end(), faster);
        const std::size_t n = std::min<std::size_t>(2, cands.size());
        for (std::size_t i = 0; i < n; ++i)
          cands.push_back(Shape{cands[i].c, cands[i].w, cands[i].t, true, cands[i].x, cands[i].kl});
        time_shapes(cands.end() - static_cast<std::ptrdiff_t>(n), cands.end());
      }
    }
    use(*std::min_element(cands.begin(), cands.end(), faster));
    release_unused_transposes();
    setup_seconds += seconds_since(t0);
    detail = std::string("kernel=csr-spmm layout=") + (row_major_ ? "row" : "col") +
             " rhs_per_lane=" + std::to_string(shape_.c) + " lanes_per_row=" + std::to_string(shape_.w) +
             (shape_.kl ? " lanes_along_k=" + std::to_string(shape_.kl) : "") + (block_rows ? " rows=blocks" : "") +
             (shape_.t ? " transposed" : "") + (shape_.x ? " x_transposed" : "") +
             (shape_.s ? " longest_rows_first" : "") + " long_rows=" + std::to_string(n_rows) + " (over " +
             std::to_string(long_row_) + ")" + " pieces=" + std::to_string(n_short_) + "+" + std::to_string(n_long_);
    if (!trial.empty()) detail += " (trial us: " + trial + ")";
  }

 protected:
  void launch(const Launch& l) override {
    if (trivial()) return zero_y(l);
    with_types(prec_, [&]<class MV, class VV>() {
      if (m_.wide)
        launch_with<MV, VV>(m_.rp64.data(), l);
      else
        launch_with<MV, VV>(m_.rp32.data(), l);
    });
  }

 private:
  // The shape in the variant's words.
  static std::string name(const Shape& s) {
    return "c" + std::to_string(s.c) + ":w" + std::to_string(s.w) + (s.kl ? ":k" + std::to_string(s.kl) : "") +
           (s.t ? ":transpose" : "") + (s.x ? ":transpose-x" : "") + (s.s ? ":sorted" : "");
  }
  // order_: the rows up to long_row_ entries, longest first within each window of
  // tuning::csr_spmm_sort_window rows (stable within a length), so that rows near each other in the
  // matrix, which share columns of X and lines of Y, still run at about the same time.
  void sort_rows(const CsrView& a) {
    std::vector<index_t> order;
    order.reserve(static_cast<std::size_t>(a.rows));
    for (index_t w0 = 0; w0 < a.rows; w0 += tuning::csr_spmm_sort_window) {
      const std::size_t first = order.size();
      for (index_t r = w0; r < std::min<index_t>(a.rows, w0 + tuning::csr_spmm_sort_window); ++r)
        if (a.row_length(r) <= long_row_) order.push_back(r);
      std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(first), order.end(),
                       [&](index_t l, index_t r) { return a.row_length(l) > a.row_length(r); });
    }
    order_.upload(order);
  }
  void use(const Shape& s) {
    shape_ = s;
    device_transpose_ = s.t || s.x;
    transpose_y_ = s.t;
  }
  // Whether a shape runs the row-major kernel (on the user's X and Y, or on transposed copies).
  bool rows_kernel(const Shape& s) const { return row_major_ || s.t || s.x; }
  // Entry groups of a shape: lanes working along a row's entries.
  int entry_groups(const Shape& s) const { return rows_kernel(s) ? s.w / lanes_k(s) : s.w; }
  int lanes_k(const Shape& s) const { return s.kl ? s.kl : std::min(s.w, pow2_at_least((k_ + s.c - 1) / s.c)); }

  // The model's shape first, then its neighbours for the trial: those the variant's words allow, or
  // the one shape it names (columns and lanes both given).
  std::vector<Shape> candidates(double mean, const std::string& variant) const {
    const VariantChoice v = parse_variant("csr", csr_spmm_variants(), variant);
    const auto number = [&](std::string_view group) { return std::stoi(std::string(v[group].substr(1))); };
    const std::string_view via = v["column-major"];
    const bool sorted = v.given("order");
    if (v.given("columns") && v.given("lanes")) {
      const Shape s{number("columns"),    number("lanes"),
                    via == "transpose",   sorted,
                    via == "transpose-x", v.given("k-lanes") ? number("k-lanes") : 0};
      if (!valid(s))
        throw Unsupported("csr variant '" + variant + "': no such shape for k = " + std::to_string(k_) + " " +
                          (row_major_ ? "row-major" : "column-major") +
                          " (c1, c2, c4 dividing k for the row-major kernel, c8 too for the column-major one; "
                          "transpose and transpose-x for column-major X and Y only; k<N> lanes along K, at most "
                          "w, for the row-major kernel)");
      return {s};
    }
    if (v.given("k-lanes"))
      throw Unsupported("csr variant '" + variant + "': lanes along K (k<N>) need the shape's c<C>:w<W> too");
    std::vector<Shape> kept;
    for (Shape s : model_candidates(mean)) {
      if ((v.given("columns") && s.c != number("columns")) || (v.given("lanes") && s.w != number("lanes")) ||
          (!via.empty() && via != (s.t   ? "transpose"
                                   : s.x ? "transpose-x"
                                         : "native")))
        continue;
      s.s = sorted;
      kept.push_back(s);
    }
    if (kept.empty())
      throw Unsupported("csr variant '" + variant + "': none of the model's shapes for k = " + std::to_string(k_) +
                        " has those words; give both columns and lanes (c<C>:w<W>) to name one");
    return kept;
  }
  std::vector<Shape> model_candidates(double mean) const {
    std::vector<Shape> v;
    auto add = [&](int c, int w, bool t, bool x = false) {
      const Shape s{c, w, t, false, x};
      if (valid(s) && std::none_of(v.begin(), v.end(),
                                   [&](const Shape& o) { return o.c == c && o.w == w && o.t == t && o.x == x; }))
        v.push_back(s);
    };
    // Lanes along the entries: about a quarter of the mean row length (as CSR-vector), at most 32.
    const int eg = std::clamp(pow2_at_least(static_cast<int>(mean / 4)), 1, 32);
    if (!row_major_)
      for (const int c : {std::min(8, pow2_at_least(k_)), 4})
        for (const int w : {eg, eg * 2, std::max(1, eg / 2)}) add(c, std::min(w, 32), false);
    for (const int c : {k_ % 4 == 0 ? 4 : 0, k_ % 2 == 0 ? 2 : 0, 1}) {
      if (c == 0) continue;
      const int kl = std::min(32, pow2_at_least((k_ + c - 1) / c));
      for (const int w : {kl * eg, kl * std::max(1, eg / 2), kl * eg * 2}) {
        add(c, std::min(32, w), !row_major_);
        // X alone transposed where a warp has at least 4 rows (a column's stores fill a sector).
        if (!row_major_ && w <= 8) add(c, w, false, true);
      }
      if (!row_major_) break;  // transposed: the widest C only
    }
    return v;
  }
  bool valid(const Shape& s) const {
    const bool w_ok = s.w >= 1 && s.w <= 32 && (s.w & (s.w - 1)) == 0;
    if ((s.t || s.x) && row_major_) return false;
    if (s.kl && (!rows_kernel(s) || s.kl > s.w || (s.kl & (s.kl - 1)) != 0)) return false;
    if (s.t && s.x) return false;
    if (!rows_kernel(s)) return w_ok && (s.c == 1 || s.c == 2 || s.c == 4 || s.c == 8);
    return w_ok && (s.c == 1 || s.c == 2 || s.c == 4) && k_ % s.c == 0;
  }

  template <class MV, class VV, typename OffT, int C>
  void row_kernel(bool u4, unsigned grid, int kl, const OffT* rp, const Launch& l) {
    const auto kernel = u4 ? spmm_row_kernel<MV, VV, OffT, C, 4> : spmm_row_kernel<MV, VV, OffT, C, 2>;
    kernel<<<grid, block_, 0, l.stream>>>(slots(), order(), k_, shape_.w, kl, long_row_, rp, m_.col.data(),
                                          m_.val.data<MV>(), l.xv<VV>(), l.yv<VV>(), shape_.x ? rows_ : 0, l.ep<VV>());
  }

  template <class MV, class VV, typename OffT>
  void launch_with(const OffT* rp, const Launch& l) {
    const Shape s = shape_;
    const bool rm = rows_kernel(s);  // X and Y as the kernels see them (transposed copies: row-major)
    // The long rows' pieces first, on the side stream, beside the row kernel: they write other rows
    // of Y, and run alone after it they would leave most SMs idle (a few dozen blocks of long
    // pieces).
    const bool side = n_short_ + n_long_ > 0;
    if (side) {
      SPMV_CUDA_CHECK(cudaEventRecord(side_.fork, l.stream));
      SPMV_CUDA_CHECK(cudaStreamWaitEvent(side_.stream, side_.fork, 0));
      long_rows<MV, VV>(rp, rm, rm && !s.x, l);
      SPMV_CUDA_CHECK(cudaEventRecord(side_.join, side_.stream));
    }
    const unsigned grid = grid_for(static_cast<offset_t>(slots()) * s.w, block_);
    const index_t* col = m_.col.data();
    const MV* val = m_.val.data<MV>();
    const VV* x = l.xv<VV>();
    VV* y = l.yv<VV>();
    const Epilogue<VV> ep = l.ep<VV>();
    if (rm) {
      const int kl = lanes_k(s);
      const bool u4 = mean_ / entry_groups(s) >= tuning::csr_spmm_unroll4_entries;
      if (s.c == 4)
        row_kernel<MV, VV, OffT, 4>(u4, grid, kl, rp, l);
      else if (s.c == 2)
        row_kernel<MV, VV, OffT, 2>(u4, grid, kl, rp, l);
      else
        row_kernel<MV, VV, OffT, 1>(u4, grid, kl, rp, l);
    } else {
      const auto kernel = s.c == 8   ? spmm_col_kernel<MV, VV, OffT, 8>
                          : s.c == 4 ? spmm_col_kernel<MV, VV, OffT, 4>
                          : s.c == 2 ? spmm_col_kernel<MV, VV, OffT, 2>
                                     : spmm_col_kernel<MV, VV, OffT, 1>;
      kernel<<<grid, block_, 0, l.stream>>>(rows_, cols_, slots(), order(), k_, s.w, long_row_, rp, col, val, x, y, ep);
    }
    SPMV_CUDA_CHECK_LAUNCH();
    if (side) SPMV_CUDA_CHECK(cudaStreamWaitEvent(l.stream, side_.join, 0));
  }

  // The block-per-piece kernel on side_: the short class's pieces, then the long class's (X and Y
  // as the kernels see them: row-major or not).
  template <class MV, class VV, typename OffT>
  void long_rows(const OffT* rp, bool x_rm, bool y_rm, const Launch& l) {
    const long long xr = x_rm ? k_ : 1, xc = x_rm ? 1 : cols_;
    const long long yr = y_rm ? k_ : 1, yc = y_rm ? 1 : rows_;
    // Two right-hand sides a lane (double2 loads) where row-major X has more than 32 of them: A's
    // piece is then read once up to K = 64, not once per 32 columns.
    const int c = x_rm && k_ % 2 == 0 && k_ > 32 ? 2 : 1;
    const int kt = std::min(32, pow2_at_least((k_ + c - 1) / c));
    const auto kernel = c == 2 ? spmm_long_kernel<MV, VV, OffT, 2> : spmm_long_kernel<MV, VV, OffT, 1>;
    const int4* desc = reinterpret_cast<const int4*>(desc_.data());
    const index_t* col = m_.col.data();
    const MV* val = m_.val.data<MV>();
    const VV* x = l.xv<VV>();
    VV* y = l.yv<VV>();
    const Epilogue<VV> ep = l.ep<VV>();
    VV* partial = reinterpret_cast<VV*>(partial_.data());  // a double array holds as many floats
    if (n_short_) {
      const int block = std::clamp(tuning::csr_spmm_short_groups * kt, 128, 1024);
      kernel<<<n_short_, block, 0, side_.stream>>>(desc, tuning::csr_spmm_short_piece, k_, kt, rp, col, val, x, xr, xc,
                                                   y, yr, yc, partial, arrived_.data(), ep);
      SPMV_CUDA_CHECK_LAUNCH();
    }
    if (n_long_) {
      kernel<<<n_long_, 1024, 0, side_.stream>>>(desc + n_short_, tuning::csr_spmm_piece, k_, kt, rp, col, val, x, xr,
                                                 xc, y, yr, yc, partial + static_cast<std::size_t>(n_short_) * k_,
                                                 arrived_.data() + n_short_, ep);
      SPMV_CUDA_CHECK_LAUNCH();
    }
  }

  // The rows the row or column kernel walks: all of them, or order_'s.
  index_t slots() const { return shape_.s ? static_cast<index_t>(order_.size()) : rows_; }
  const index_t* order() const { return shape_.s ? order_.data() : nullptr; }

  bool row_major_;
  double mean_ = 0;  // entries per row
  Shape shape_;
  int long_row_ = 1024;
  unsigned n_short_ = 0, n_long_ = 0;  // blocks of the long-row kernel (pieces): short, long class
  DeviceBuffer<int> desc_;             // 4 ints per piece: row, piece, pieces, unused (int4 loads)
  DeviceBuffer<double> partial_;       // pieces' partial rows, in the plan's vector type
  DeviceBuffer<int> arrived_;
  DeviceBuffer<index_t> order_;  // rows up to long_row_ entries, longest first (sorted shapes)
  SideStream side_;
};

}  // namespace

const std::vector<VariantGroup>& csr_spmm_variants() {
  static const std::vector<VariantGroup> v = {
      {"columns", {"c1", "c2", "c4", "c8"}, "SpMM: right-hand sides a lane keeps", true},
      {"lanes", {"w1", "w2", "w4", "w8", "w16", "w32"}, "SpMM: lanes per row", true},
      {"column-major",
       {"native", "transpose", "transpose-x"},
       "SpMM: X and Y in place, both transposed, or X alone",
       true},
      {"order", {"sorted"}, "SpMM: rows longest first", true},
      {"k-lanes",
       {"k1", "k2", "k4", "k8", "k16", "k32"},
       "SpMM, row-major kernel: lanes along K of a row's w (the rest along its entries; 004's CSR_Vector_by_row "
       "is c1:w32:k8)",
       true},
      {"block-rows",
       {"blocks"},
       "SpMM: every row to the block-per-row kernel, lanes along K times groups along the row (004's "
       "CSR_Adaptive_sub_blocks)",
       true}};
  return v;
}

std::unique_ptr<Plan> make_csr_spmm(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<CsrSpmm>(a, opt, std::move(dev));
}

}  // namespace spmv::cuda
