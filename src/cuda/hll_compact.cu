// Compact sliced ELL on the GPU: fewer bytes a nonzero than ELL's 12 (8 in single precision) where
// the matrix allows. Slices of 32 rows (a warp), each column-major and padded to its longest row
// (padding points at a column its row reads, or the slice's first for an empty row, with value 0:
// an Inf or NaN of x there reaches the row as NaN, as in ELL); where that pads much, each row keeps
// its length and stops there. Columns: a slice whose columns span less than 65536 keeps 2-byte
// offsets from its smallest column, other slices 4-byte columns. Values: where the matrix has at
// most 65536 distinct values, a 1- or 2-byte index into their table (read through the cache: a
// stencil has two, FEM matrices of repeated element matrices a few hundred). A stencil's nonzero
// then moves 3 bytes. Each is a variant word (index narrow|wide, values shared|plain), chosen from
// the matrix where not given. One thread per row. Built on the host (the distinct values by
// hashing their bits), uploaded once.
#include <spmv/params.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/register.hpp"
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "formats/compact.hpp"

namespace spmv::cuda {

namespace {

constexpr index_t kSlice = 32;
// Past this many slots a nonzero, rows keep their lengths and stop there (a 4-byte read a row
// against the padding's slots).
constexpr double kKeepLengths = 1.1;

// A slice: its first slot (values, and columns of a wide slice), its columns' first slot in the
// narrow or the wide array, its smallest column (narrow) or -1 (wide), its width.
struct Slice {
  long long slot;
  long long col;
  index_t base;
  index_t width;
};

// An entry's value from what its slot holds: itself (IT = MV) or its index into the table.
template <class IT, class MV>
__device__ __forceinline__ MV compact_value(IT held, const MV* __restrict__ table) {
  if constexpr (std::is_same_v<IT, MV>)
    return held;
  else
    return __ldg(table + held);
}

// A row's sum over its first n slots, U at a time: the U columns and held values loaded together
// (clamped to the row's last slot, so no branch), then the table's and x's loads: an entry at a
// time would leave chains of dependent loads, bound by latency. U = 8 for 4-byte entries (2-byte
// columns and indices: 300 values of a FEM-like matrix, 1.06-1.3x over 4 on the H200), else 4 (3
// bytes: a stencil's, 1.17x over 8 in double). CT: the columns' type (2-byte offsets from x's start
// given, or 4-byte columns).
template <class IT, class MV, class VV, class CT>
__device__ __forceinline__ VV compact_row(long long v0, long long c0, index_t stride, index_t n,
                                          const CT* __restrict__ col, const IT* __restrict__ v,
                                          const MV* __restrict__ table, const VV* __restrict__ x) {
  constexpr int U = sizeof(CT) + sizeof(IT) == 4 ? 8 : 4;
  VV sum = 0;
  for (index_t j0 = 0; j0 < n; j0 += U) {
    CT c[U];
    IT held[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long o = static_cast<long long>(min(j0 + u, n - 1)) * stride;
      c[u] = __ldlu(col + c0 + o);
      held[u] = __ldlu(v + v0 + o);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {  // a lane past the row's end adds nothing (not 0 x an Inf of x)
      const VV p = static_cast<VV>(compact_value(held[u], table)) * __ldg(x + c[u]);
      sum += j0 + u < n ? p : VV(0);
    }
  }
  return sum;
}

// A thread per row; a warp's rows are one slice, so the narrow/wide branch is the warp's. A row
// stops at its own length where lengths are kept (slices padded much), else at the slice's width.
template <class IT, class MV, class VV>
__global__ void hll_compact_kernel(index_t rows, const Slice* __restrict__ slices, const index_t* __restrict__ len,
                                   const std::uint16_t* __restrict__ c16, const index_t* __restrict__ c32,
                                   const IT* __restrict__ v, const MV* __restrict__ table, const VV* __restrict__ x,
                                   VV* __restrict__ y, Epilogue<VV> ep) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const index_t si = r / kSlice, lr = r - si * kSlice, stride = min(kSlice, rows - si * kSlice);
  const Slice s = slices[si];
  const index_t n = len ? __ldlu(len + r) : s.width;
  ep.put(y, r,
         s.base >= 0 ? compact_row(s.slot + lr, s.col + lr, stride, n, c16, v, table, x + s.base)
                     : compact_row(s.slot + lr, s.col + lr, stride, n, c32, v, table, x));
}

class HllCompactPlan final : public CudaPlan {
 public:
  HllCompactPlan(const CsrView& a, const PlanOptions& opt)
      : CudaPlan(a.rows, a.cols, opt), block_(checked_block_size(opt)) {
    const auto t0 = std::chrono::steady_clock::now();
    const detail::CompactChoice want =
        detail::compact_choice(parse_variant("hll-compact", detail::compact_variants(), opt.kernel.variant));
    const ConvertOptions copt = convert_options(opt);
    layout(a, want.narrow != 0, conversion_threads(copt));
    // At most: 4-byte columns and values in place in every slot, and the slices.
    check_format_memory("HLL-compact",
                        (4.0 + value_bytes(prec_)) * static_cast<double>(slots_) + 24.0 * slices_.size() + 4.0 * rows_,
                        a, copt);
    with_types(prec_, [&]<class MV, class VV>() { fill<MV>(a, want.shared, copt); });
    convert_seconds = seconds_since(t0);
    stored_entries = slots_;
    // The slots read: every one, or with row lengths kept each row's own entries.
    const offset_t read = keep_lengths_ ? a.nnz() : slots_,
                   read_narrow = keep_lengths_ ? narrow_entries_ : narrow_slots_;
    bytes_per_product = 2 * read_narrow + 4 * (read - read_narrow) + value_bytes_ * read +
                        24 * static_cast<offset_t>(slices_.size()) + (keep_lengths_ ? 4 * offset_t{rows_} : 0) +
                        vector_bytes(prec_) * (static_cast<offset_t>(a.cols) + a.rows);
    detail = std::string("index=") + (want.narrow != 0 ? "narrow" : "wide") + " (" + std::to_string(narrow_slices_) +
             " of " + std::to_string(slices_.size()) + " slices in 2-byte offsets) values=" +
             (index_values_ ? "shared (" + std::to_string(distinct_) + " distinct, " + std::to_string(value_bytes_) +
                                  "-byte indices)"
                            : "plain (" + values_why_ + ")") +
             (keep_lengths_ ? ", row lengths kept" : "");
  }

 protected:
  void launch(const Launch& l) override {
    if (rows_ == 0) return;
    if (slots_ == 0) return zero_y(l);
    with_types(prec_, [&]<class MV, class VV>() {
      const MV* table = table_.data<MV>();
      const auto go = [&]<class IT>(const IT* v) {
        hll_compact_kernel<IT, MV, VV><<<grid_for(rows_, block_), block_, 0, l.stream>>>(
            rows_, dslices_.data(), len_.data(), c16_.data(), c32_.data(), v, table, l.xv<VV>(), l.yv<VV>(),
            l.ep<VV>());
      };
      if (!index_values_)
        go(reinterpret_cast<const MV*>(v_.data()));
      else if (value_bytes_ == 1)
        go(reinterpret_cast<const std::uint8_t*>(v_.data()));
      else
        go(reinterpret_cast<const std::uint16_t*>(v_.data()));
    });
    SPMV_CUDA_CHECK_LAUNCH();
  }

 private:
  index_t stride(std::size_t s) const { return std::min<index_t>(kSlice, rows_ - static_cast<index_t>(s) * kSlice); }
  index_t first(std::size_t s) const { return static_cast<index_t>(s) * kSlice; }

  // Each slice's width, smallest column and whether its columns fit 2 bytes (where narrow may be
  // used), then the slots' and columns' offsets.
  void layout(const CsrView& a, bool narrow, int threads) {
    slices_.resize((static_cast<std::size_t>(a.rows) + kSlice - 1) / kSlice);
    std::vector<offset_t> narrow_nnz(slices_.size(), 0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::size_t s = 0; s < slices_.size(); ++s) {
      index_t w = 0, lo = a.cols, hi = -1;
      for (index_t r = first(s); r < first(s) + stride(s); ++r) {
        w = std::max<index_t>(w, static_cast<index_t>(a.row_length(r)));
        for (offset_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q)
          lo = std::min(lo, a.col[q]), hi = std::max(hi, a.col[q]);
      }
      const bool fits = hi < 0 || hi - lo < detail::kNarrowSpan;
      slices_[s] = {0, 0, narrow && fits ? (hi < 0 ? 0 : lo) : -1, w};
      if (slices_[s].base >= 0) narrow_nnz[s] = a.row_ptr[first(s) + stride(s)] - a.row_ptr[first(s)];
    }
    for (const offset_t e : narrow_nnz) narrow_entries_ += e;
    offset_t slot = 0, n16 = 0, n32 = 0;
    for (std::size_t s = 0; s < slices_.size(); ++s) {
      Slice& c = slices_[s];
      const offset_t n = static_cast<offset_t>(c.width) * stride(s);
      c.slot = slot;
      slot += n;
      if (c.base >= 0) {
        c.col = n16, n16 += n, ++narrow_slices_;
      } else {
        c.col = n32, n32 += n;
      }
    }
    slots_ = slot;
    narrow_slots_ = n16;
    keep_lengths_ = static_cast<double>(slots_) > kKeepLengths * static_cast<double>(a.nnz());
  }

  // The slots: columns (2-byte offsets or 4-byte), values in place or indices into the distinct
  // values (shared -1: where there are at most kMaxSharedValues, 0 the padding's among them).
  template <class MV>
  void fill(const CsrView& a, int shared, const ConvertOptions& copt) {
    detail::DistinctValues<MV> d;
    if (shared != 0) {
      d = detail::distinct_values<MV>(a, detail::kMaxSharedValues, conversion_threads(copt));
      distinct_ = d.table.size();  // the matrix's own; the padding's 0 may add one
      if (!d.over) d.add(MV(0));
      if (d.over || d.table.size() > detail::kMaxSharedValues)
        values_why_ = "over " + std::to_string(detail::kMaxSharedValues) + " distinct values";
      else
        index_values_ = true;
    } else {
      values_why_ = "as asked";
    }
    value_bytes_ = index_values_ ? (d.table.size() <= 256 ? 1 : 2) : static_cast<int>(sizeof(MV));
    const std::uint32_t zero = index_values_ ? d.index_of(MV(0)) : 0;
    std::vector<std::uint16_t> c16(static_cast<std::size_t>(narrow_slots_));
    std::vector<index_t> c32(static_cast<std::size_t>(slots_ - narrow_slots_));
    std::vector<unsigned char> v(static_cast<std::size_t>(slots_) * static_cast<std::size_t>(value_bytes_));
#pragma omp parallel for schedule(static) num_threads(conversion_threads(copt))
    for (std::size_t s = 0; s < slices_.size(); ++s) {
      const Slice& c = slices_[s];
      const index_t n = stride(s);
      for (index_t lr = 0; lr < n; ++lr) {
        const index_t r = first(s) + lr;
        const offset_t b = a.row_ptr[r];
        const index_t len = static_cast<index_t>(a.row_ptr[r + 1] - b);
        const index_t pad = len > 0 ? a.col[b + len - 1] : std::max<index_t>(c.base, 0);
        for (index_t j = 0; j < c.width; ++j) {
          const std::size_t o = static_cast<std::size_t>(j) * static_cast<std::size_t>(n) + lr;
          const index_t col = j < len ? a.col[b + j] : pad;
          if (c.base >= 0)
            c16[static_cast<std::size_t>(c.col) + o] = static_cast<std::uint16_t>(col - c.base);
          else
            c32[static_cast<std::size_t>(c.col) + o] = col;
          unsigned char* dst = v.data() + (static_cast<std::size_t>(c.slot) + o) * value_bytes_;
          const MV value = j < len ? detail::entry_value<MV>(a, b + j) : MV(0);
          if (!index_values_) {
            std::memcpy(dst, &value, sizeof value);
          } else {
            const auto i = static_cast<std::uint16_t>(j < len ? d.index_of(value) : zero);
            if (value_bytes_ == 1)
              *dst = static_cast<unsigned char>(i);
            else
              std::memcpy(dst, &i, 2);
          }
        }
      }
    }
    dslices_.upload(slices_.data(), slices_.size());
    if (keep_lengths_) {
      std::vector<index_t> len(static_cast<std::size_t>(rows_));
      for (index_t r = 0; r < rows_; ++r) len[static_cast<std::size_t>(r)] = static_cast<index_t>(a.row_length(r));
      len_.upload(len.data(), len.size());
    }
    c16_.upload(c16.data(), c16.size());
    c32_.upload(c32.data(), c32.size());
    v_.upload(v.data(), v.size());
    const std::vector<MV> table = index_values_ ? d.table : std::vector<MV>{MV(0)};
    table_.get<MV>().upload(table.data(), table.size());
  }

  int block_;
  std::vector<Slice> slices_;
  offset_t slots_ = 0, narrow_slots_ = 0, narrow_entries_ = 0;
  std::size_t narrow_slices_ = 0;
  bool index_values_ = false, keep_lengths_ = false;
  int value_bytes_ = 8;  // 1 or 2 (an index), else the value's own
  std::size_t distinct_ = 0;
  std::string values_why_;
  DeviceBuffer<Slice> dslices_;
  DeviceBuffer<index_t> len_;  // kept where the slices pad much (keep_lengths_)
  DeviceBuffer<std::uint16_t> c16_;
  DeviceBuffer<index_t> c32_;
  DeviceBuffer<unsigned char> v_;
  DeviceValues table_;  // the distinct values, in the plan's value type
};

}  // namespace

void register_hll_compact() {
  add_kernel({.name = "hll-compact",
              .backend = Backend::Cuda,
              .format = "hll-compact",
              .description = "compact sliced ELL (slices of 32 rows): 2-byte column offsets in slices spanning "
                             "under 65536 columns, values as a 1- or 2-byte index into the matrix's distinct "
                             "values where there are at most 65536; one thread per row",
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size"},
              .variants = detail::compact_variants(),
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<HllCompactPlan>(a, o);
              }});
}

}  // namespace spmv::cuda
