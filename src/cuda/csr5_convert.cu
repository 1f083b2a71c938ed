// CSR5 on CUDA, the conversion from a device CSR: a warp per tile computes tile_ptr (binary
// search of row_ptr), each lane its column's bit_flag (the rows starting in its sigma entries),
// y_offset (warp prefix sum), seg_offset (ballot) and the in-tile transposition; the empty-row
// offsets of hinted tiles follow after a device prefix sum (CUB) of their counts, with no round
// trip to the host. Bit-identical to csr_to_csr5 (tested). Values are moved, never computed on: in
// float for single and mixed plans (the device CSR's, rounded on the host as csr_to_csr5<float>
// rounds), in double for double ones.
#include "cuda/csr5_convert.hpp"

#include <chrono>
#include <cub/device/device_scan.cuh>
#include <string>
#include <type_traits>

#include "cuda/csr5_device.cuh"

namespace spmv::cuda {

namespace csr5 {

namespace {

__device__ __forceinline__ long long lower_bound_dev(const long long* a, long long n, long long v) {
  long long lo = 0, hi = n;  // first i with a[i] >= v
  while (lo < hi) {
    const long long mid = (lo + hi) / 2;
    if (a[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
__device__ __forceinline__ long long upper_bound_dev(const long long* a, long long n, long long v) {
  long long lo = 0, hi = n;  // first i with a[i] > v
  while (lo < hi) {
    const long long mid = (lo + hi) / 2;
    if (a[mid] <= v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class MV>
struct ConvArgs {
  int sigma, y_bits, seg_bits, desc_words;
  long long tiles, te, nnz;
  index_t rows;
  const long long* rp;
  const index_t* col_in;
  const MV* val_in;
  unsigned long long* tile_ptr;
  unsigned* desc;
  long long* eo_count;
  index_t* col;
  MV* val;
};

// Warp w in [0, tiles]: tile w's tile_ptr, descriptors, empty-offset count and transposition
// (warp `tiles` writes only tile_ptr[tiles]).
template <class MV>
__global__ void csr5_convert_tiles(ConvArgs<MV> c) {
  const long long w = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (w > c.tiles) return;
  const long long base = w * c.te;
  const long long n = static_cast<long long>(c.rows) + 1;
  unsigned long long tp = 0;
  if (lane == 0) {
    const long long r0 = upper_bound_dev(c.rp, n, base) - 1;
    tp = static_cast<unsigned long long>(r0 > 0 ? r0 : 0);
    if (w == c.tiles && base >= c.nnz) tp = static_cast<unsigned long long>(c.rows);
  }
  if (w == c.tiles) {
    if (lane == 0) c.tile_ptr[w] = tp;
    return;
  }
  const long long cb = base + static_cast<long long>(lane) * c.sigma, ce = cb + c.sigma;
  unsigned long long flags = 0;
  bool empty = false;
  for (long long r = lower_bound_dev(c.rp, n, cb); r < c.rows && c.rp[r] < ce; ++r) {
    if (c.rp[r] == c.rp[r + 1])
      empty = true;
    else
      flags |= 1ull << (c.rp[r] - cb);
  }
  const bool any_empty = __any_sync(kFull, empty);
  const unsigned opened = __popcll(flags | (lane == 0 ? 1ull : 0ull));
  unsigned incl = opened;
  for (int off = 1; off < 32; off *= 2) {
    const unsigned o = __shfl_up_sync(kFull, incl, off);
    if (lane >= off) incl += o;
  }
  const unsigned total = __shfl_sync(kFull, incl, 31);
  const unsigned any = __ballot_sync(kFull, flags != 0 || lane == 0);
  const unsigned above = lane == 31 ? 0u : any >> (lane + 1);
  const unsigned seg = above ? static_cast<unsigned>(__ffs(above) - 1) : static_cast<unsigned>(31 - lane);
  const unsigned long long d = static_cast<unsigned long long>(incl - opened) |
                               (static_cast<unsigned long long>(seg) << c.y_bits) | (flags << (c.y_bits + c.seg_bits));
  c.desc[(w * c.desc_words) * 32 + lane] = static_cast<unsigned>(d);
  if (c.desc_words == 2) c.desc[(w * c.desc_words + 1) * 32 + lane] = static_cast<unsigned>(d >> 32);
  if (lane == 0) {
    c.tile_ptr[w] = tp | (any_empty ? kHint : 0ull);
    c.eo_count[w] = any_empty ? total : 0;
  }
  for (int i = 0; i < c.sigma; ++i) {  // CSR entry base + lane*sigma + i -> base + i*32 + lane
    const long long dst = base + static_cast<long long>(i) * 32 + lane, src = cb + i;
    c.col[dst] = c.col_in[src];
    c.val[dst] = c.val_in[src];
  }
}

// Thread per hinted tile: segment 0 -> 0, segment k >= 1 -> the k-th non-empty row starting
// strictly after the tile's base, minus the tile's first row.
template <class MV>
__global__ void csr5_convert_empty_offsets(ConvArgs<MV> c, const long long* eo_ptr, index_t* eo) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= c.tiles) return;
  const unsigned long long tp = c.tile_ptr[t];
  if (!(tp & kHint)) return;
  const index_t row0 = static_cast<index_t>(tp & ~kHint);
  const long long base = t * c.te, end = base + c.te;
  index_t* out = eo + eo_ptr[t];
  long long k = 0;
  out[k++] = 0;
  for (long long r = lower_bound_dev(c.rp, static_cast<long long>(c.rows) + 1, base + 1); r < c.rows && c.rp[r] < end;
       ++r)
    if (c.rp[r] != c.rp[r + 1]) out[k++] = static_cast<index_t>(r - row0);
}

int ceil_log2(long long v) {
  int b = 0;
  while ((1ll << b) < v) ++b;
  return b;
}

__global__ void widen_row_ptr(long long n, const int* __restrict__ in, long long* __restrict__ out) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

}  // namespace

DeviceCsr5::DeviceCsr5(const CsrView& a, int sigma, const ConvertOptions& opt, Precision p, const DeviceCsr* shared)
    : prec(p) {
  constexpr int omega = 32;
  if (shared && !shared->serves(p))
    throw Error(std::string("CUDA csr5: the shared device matrix has no ") + to_string(p) + " values");
  if (sigma < 1) throw Unsupported("CSR5 tile 32x" + std::to_string(sigma) + ": sigma must be at least 1");
  const int bits = csr5_descriptor_bits(omega, sigma);
  if (bits > 64)
    throw Unsupported("CSR5 tile 32x" + std::to_string(sigma) + ": a column descriptor would need " +
                      std::to_string(bits) + " bits (max 64)");
  // + the CSR input, + the bound on the empty-row lists
  const int vb = value_bytes(p);
  check_format_memory(
      "CSR5", csr5_bytes(a, omega, sigma, vb) + (4.0 + vb) * a.nnz() + 4.0 * (a.rows + a.nnz() / (32.0 * sigma) + 1), a,
      opt);
  Csr5& f = meta;
  f.omega = omega;
  f.sigma = sigma;
  f.rows = a.rows;
  f.cols = a.cols;
  f.nnz = a.nnz();
  f.y_bits = ceil_log2(static_cast<long long>(omega) * sigma);
  f.seg_bits = ceil_log2(omega);
  f.desc_words = bits <= 32 ? 1 : 2;
  f.tiles = f.nnz / f.tile_entries();
  with_types(p, [&]<class MV, class>() { convert<MV>(a, shared); });
}

template <class MV>
void DeviceCsr5::convert(const CsrView& a, const DeviceCsr* shared) {
  constexpr int omega = 32;
  Csr5& f = meta;
  const int sigma = f.sigma;
  auto t0 = std::chrono::steady_clock::now();
  DeviceBuffer<index_t> own_col;
  DeviceBuffer<MV> own_val;
  const index_t* col_in = shared ? shared->col.data() : nullptr;
  const MV* val_in = shared ? shared->val.data<MV>() : nullptr;
  if (!shared) {
    std::vector<long long> hrp(a.row_ptr.begin(), a.row_ptr.end());
    if (hrp.empty()) hrp.assign(1, 0);
    rp.upload(hrp);
    own_col.upload(a.col);
    upload_values(a, own_val);  // float for single and mixed: a float matrix's, or rounded on the host
    col_in = own_col.data(), val_in = own_val.data();
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    upload_seconds = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
  } else {  // the kernels take 64-bit row offsets (a copy: the shared CSR is freed after planning)
    const auto n = static_cast<long long>(a.rows) + 1;
    rp.resize(static_cast<std::size_t>(n));
    if (a.row_ptr.empty())
      SPMV_CUDA_CHECK(cudaMemsetAsync(rp.data(), 0, sizeof(long long)));
    else if (shared->wide)
      SPMV_CUDA_CHECK(cudaMemcpyAsync(rp.data(), shared->rp64.data(), n * sizeof(long long), cudaMemcpyDeviceToDevice));
    else
      widen_row_ptr<<<grid_for(n, 256), 256>>>(n, shared->rp32.data(), rp.data());
    SPMV_CUDA_CHECK_LAUNCH();
  }
  const auto tiles = static_cast<std::size_t>(f.tiles);
  tile_ptr.resize(tiles + 1);
  desc.resize(tiles * f.desc_words * omega);
  col.resize(static_cast<std::size_t>(f.nnz));
  val.resize(static_cast<std::size_t>(f.nnz), float_values(prec));
  // The empty-row lists are sized by a bound (hinted tiles have at most tiles + rows segments in
  // all), so the conversion never waits for the device: no count comes back to the host.
  eo_ptr.resize(tiles + 1);
  eo.resize(tiles + static_cast<std::size_t>(f.rows) + 1);
  const ConvArgs<MV> c{sigma,       f.y_bits,
                       f.seg_bits,  f.desc_words,
                       f.tiles,     f.tile_entries(),
                       f.nnz,       f.rows,
                       rp.data(),   col_in,
                       val_in,      tile_ptr.data(),
                       desc.data(), eo_ptr.data() + 1,
                       col.data(),  val.get<MV>().data()};
  constexpr int block = 256;
  csr5_convert_tiles<<<grid_for((f.tiles + 1) * 32, block), block>>>(c);
  SPMV_CUDA_CHECK_LAUNCH();
  const offset_t tb = f.tail_begin();
  if (f.nnz > tb) {
    SPMV_CUDA_CHECK(
        cudaMemcpyAsync(col.data() + tb, col_in + tb, (f.nnz - tb) * sizeof(index_t), cudaMemcpyDeviceToDevice));
    SPMV_CUDA_CHECK(
        cudaMemcpyAsync(val.get<MV>().data() + tb, val_in + tb, (f.nnz - tb) * sizeof(MV), cudaMemcpyDeviceToDevice));
  }
  // Offsets of the empty-row lists: eo_ptr[0] = 0, then an in-place prefix sum of the per-tile
  // counts that the tile kernel wrote to eo_ptr[1..tiles] (CUB's device scan).
  SPMV_CUDA_CHECK(cudaMemsetAsync(eo_ptr.data(), 0, sizeof(long long)));
  if (tiles > 0) {
    std::size_t temp_bytes = 0;
    SPMV_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, eo_ptr.data() + 1, eo_ptr.data() + 1,
                                                  static_cast<long long>(tiles)));
    DeviceBuffer<unsigned char> temp(temp_bytes);
    SPMV_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data(), temp_bytes, eo_ptr.data() + 1, eo_ptr.data() + 1,
                                                  static_cast<long long>(tiles)));
    csr5_convert_empty_offsets<<<grid_for(f.tiles, block), block>>>(c, eo_ptr.data(), eo.data());
    SPMV_CUDA_CHECK_LAUNCH();
  }
  SPMV_CUDA_CHECK(cudaDeviceSynchronize());
  convert_seconds = seconds_since(t0);
}

}  // namespace csr5

template <class V>
BasicCsr5<V> csr_to_csr5_on_device(const CsrView& a, int sigma, const ConvertOptions& opt) {
  csr5::DeviceCsr5 d(a, sigma, opt, std::is_same_v<V, float> ? Precision::Single : Precision::Double);
  const Csr5& m = d.meta;
  BasicCsr5<V> f;
  f.omega = m.omega, f.sigma = m.sigma, f.rows = m.rows, f.cols = m.cols, f.nnz = m.nnz, f.tiles = m.tiles;
  f.y_bits = m.y_bits, f.seg_bits = m.seg_bits, f.desc_words = m.desc_words;
  f.tile_ptr.resize(d.tile_ptr.size());
  d.tile_ptr.download(reinterpret_cast<unsigned long long*>(f.tile_ptr.data()), f.tile_ptr.size());
  f.tile_desc = d.desc.download();
  f.empty_offset_ptr.resize(d.eo_ptr.size());
  d.eo_ptr.download(reinterpret_cast<long long*>(f.empty_offset_ptr.data()), f.empty_offset_ptr.size());
  f.empty_offset.resize(static_cast<std::size_t>(f.empty_offset_ptr.back()));  // eo is allocated by a bound
  d.eo.download(f.empty_offset.data(), f.empty_offset.size());
  f.row_ptr.assign(a.row_ptr.begin(), a.row_ptr.end());
  if (f.row_ptr.empty()) f.row_ptr.assign(1, 0);
  const auto col = d.col.download();
  const auto val = d.val.get<V>().download();
  f.col.assign(col.begin(), col.end());
  f.val.assign(val.begin(), val.end());
  return f;
}
template Csr5 csr_to_csr5_on_device<double>(const CsrView&, int, const ConvertOptions&);
template Csr5Float csr_to_csr5_on_device<float>(const CsrView&, int, const ConvertOptions&);

}  // namespace spmv::cuda
