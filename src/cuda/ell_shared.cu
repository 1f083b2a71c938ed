// ELLPACK with shared values on the GPU: each slot holds its column and a 1- or 2-byte index into
// the matrix's table of distinct values (a stencil has two, a pattern matrix one, FEM matrices of
// repeated element matrices a few hundred), so a nonzero moves 5 or 6 bytes instead of 12 (8 in
// single precision). Column-major slots as ELL, one thread per row; padding points at the table's
// 0. A matrix with more than 65536 distinct values keeps them in the slots (plain ELL; detail says
// so). Built on the host (the distinct values by hashing their bits), uploaded once.
#include <spmv/formats/ell.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/register.hpp"
#include "formats/shared_values.hpp"
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

constexpr std::size_t kMaxShared = 65536;

// IT: the index's type (uint8_t, uint16_t), or MV itself for values kept in the slots.
template <class IT, class MV, class VV>
__global__ void ell_shared_kernel(index_t rows, index_t width, const index_t* __restrict__ col,
                                  const IT* __restrict__ slot, const MV* __restrict__ table, const VV* __restrict__ x,
                                  VV* __restrict__ y, Epilogue<VV> ep) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  VV s = 0;
#pragma unroll 4
  for (index_t j = 0; j < width; ++j) {
    const long long p = static_cast<long long>(j) * rows + r;
    MV v;
    if constexpr (std::is_same_v<IT, MV>)
      v = __ldlu(slot + p);
    else
      v = __ldg(table + __ldlu(slot + p));
    s += static_cast<VV>(v) * __ldg(x + __ldlu(col + p));
  }
  ep.put(y, r, s);
}

class EllSharedPlan final : public CudaPlan {
 public:
  EllSharedPlan(const CsrView& a, const PlanOptions& opt)
      : CudaPlan(a.rows, a.cols, opt), block_(checked_block_size(opt)) {
    const auto t0 = std::chrono::steady_clock::now();
    for (index_t r = 0; r < a.rows; ++r) width_ = std::max<index_t>(width_, static_cast<index_t>(a.row_length(r)));
    const offset_t slots = static_cast<offset_t>(a.rows) * width_;
    check_format_memory("ELL", ell_bytes(a.rows, width_, 2), a, convert_options(opt));
    with_types(prec_, [&]<class MV, class VV>() { build<MV>(a, slots, convert_options(opt)); });
    convert_seconds = seconds_since(t0);
    stored_entries = slots;
    const offset_t slot_bytes = index_bytes_ ? index_bytes_ : value_bytes(prec_);
    bytes_per_product = (4 + slot_bytes) * slots + vector_bytes(prec_) * (static_cast<offset_t>(a.cols) + a.rows);
    detail =
        "width=" + std::to_string(width_) + " " + std::to_string(distinct_) + " distinct values" +
        (index_bytes_ ? ", " + std::to_string(index_bytes_) + "-byte indices" : ": kept in the slots (over 65536)");
  }

 protected:
  void launch(const Launch& l) override {
    if (rows_ == 0) return;
    if (width_ == 0) return zero_y(l);
    with_types(prec_, [&]<class MV, class VV>() {
      const unsigned grid = grid_for(rows_, block_);
      const MV* table = table_.get<MV>();
      if (index_bytes_ == 1)
        ell_shared_kernel<std::uint8_t, MV, VV><<<grid, block_, 0, l.stream>>>(
            rows_, width_, col_.data(), reinterpret_cast<const std::uint8_t*>(slot_.data()), table, l.xv<VV>(),
            l.yv<VV>(), l.ep<VV>());
      else if (index_bytes_ == 2)
        ell_shared_kernel<std::uint16_t, MV, VV><<<grid, block_, 0, l.stream>>>(
            rows_, width_, col_.data(), reinterpret_cast<const std::uint16_t*>(slot_.data()), table, l.xv<VV>(),
            l.yv<VV>(), l.ep<VV>());
      else
        ell_shared_kernel<MV, MV, VV><<<grid, block_, 0, l.stream>>>(rows_, width_, col_.data(),
                                                                     reinterpret_cast<const MV*>(slot_.data()), table,
                                                                     l.xv<VV>(), l.yv<VV>(), l.ep<VV>());
    });
    SPMV_CUDA_CHECK_LAUNCH();
  }

 private:
  // The distinct values and 0 (detail::distinct_values), then the column-major slots.
  template <class MV>
  void build(const CsrView& a, offset_t slots, const ConvertOptions& copt) {
    // The matrix's distinct values, then 0 for the padding (past kMaxShared together: kept in the slots).
    detail::DistinctValues<MV> d = detail::distinct_values<MV>(a, kMaxShared, conversion_threads(copt));
    distinct_ = d.table.size();
    const std::uint32_t zero = d.over ? 0 : d.add(MV(0));
    const bool over = d.over || d.table.size() > kMaxShared;
    if (over)  // the values kept in the slots: ELL's own size
      check_format_memory("ELL", ell_bytes(a.rows, width_, sizeof(MV)), a, copt);
    index_bytes_ = over ? 0 : d.table.size() <= 256 ? 1 : 2;
    if (over) distinct_ = 0;
    const std::vector<MV>& table = d.table;
    const std::size_t sb = index_bytes_ ? index_bytes_ : sizeof(MV);
    std::vector<index_t> col(static_cast<std::size_t>(slots));
    std::vector<unsigned char> slot(static_cast<std::size_t>(slots) * sb);
#pragma omp parallel for schedule(static)
    for (index_t r = 0; r < a.rows; ++r) {
      const offset_t b = a.row_ptr[r];
      const index_t len = static_cast<index_t>(a.row_ptr[r + 1] - b);
      const index_t pad = len > 0 ? a.col[b + len - 1] : 0;
      for (index_t j = 0; j < width_; ++j) {
        const std::size_t p =
            static_cast<std::size_t>(j) * static_cast<std::size_t>(a.rows) + static_cast<std::size_t>(r);
        col[p] = j < len ? a.col[b + j] : pad;
        unsigned char* s = slot.data() + p * sb;
        if (over) {
          const MV v = j < len ? detail::entry_value<MV>(a, b + j) : MV(0);
          std::memcpy(s, &v, sizeof v);
        } else {
          const auto i = static_cast<std::uint16_t>(j < len ? d.index_of(detail::entry_value<MV>(a, b + j)) : zero);
          if (index_bytes_ == 1)
            *s = static_cast<unsigned char>(i);
          else
            std::memcpy(s, &i, 2);
        }
      }
    }
    col_.upload(col);
    slot_.upload(slot);
    table_.set(over ? std::vector<MV>{MV(0)} : table);
  }

  // The table in the plan's value type (double or float).
  struct Table {
    DeviceBuffer<double> d;
    DeviceBuffer<float> f;
    template <class MV>
    void set(const std::vector<MV>& t) {
      if constexpr (std::is_same_v<MV, double>)
        d.upload(t);
      else
        f.upload(t);
    }
    template <class MV>
    const MV* get() const {
      if constexpr (std::is_same_v<MV, double>)
        return d.data();
      else
        return f.data();
    }
  };

  int block_;
  index_t width_ = 0;
  std::size_t distinct_ = 0;
  int index_bytes_ = 0;  // 1, 2, or 0: values in the slots
  DeviceBuffer<index_t> col_;
  DeviceBuffer<unsigned char> slot_;
  Table table_;
};

}  // namespace

void register_ell_shared() {
  add_kernel({.name = "ell-shared",
              .backend = Backend::Cuda,
              .format = "ell-shared",
              .description = "ELLPACK with shared values: each slot a column and a 1- or 2-byte index into the "
                             "matrix's distinct values (values kept in the slots past 65536 of them); one thread "
                             "per row",
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size"},
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<EllSharedPlan>(a, o);
              }});
}

}  // namespace spmv::cuda
