// CSR5 on CUDA, the single-pass product (the default, deterministic): a warp per full tile, its
// segment sums through shared memory into y, rows across tiles finished by the tile they start in
// (shorter than a tile) or collected by their last tile (csr5_long_rows.cuh); then the tail.
// Templates on the values' type MV and the vectors' and sums' VV (double, single, mixed).
#include "cuda/csr5_device.cuh"
#include "cuda/csr5_long_rows.cuh"
#include "cuda/tuning.hpp"

namespace spmv::cuda::csr5 {

namespace {

constexpr int kEoRounds = tuning::csr5_eo_rounds;    // segment rows of a hinted tile loaded early: 32 a round
constexpr int kPartLoads = tuning::csr5_part_loads;  // a long row's parts loaded per lane per round

// A full tile's segment sums into seg_sum (its warp's shared buffer), at the segments' numbers:
// a lane's closed segments by a predicated store (no divergent branch per step), its last one
// completed by the segmented scan over the warp. nseg: the tile's segments (warp-uniform);
// begins: the tile's first entry starts a row.
struct TileSegments {
  int nseg;
  bool begins;
};
template <int kBatch, int kSigma = 0, class MV, class VV>
__device__ __forceinline__ TileSegments tile_segments(const DevCsr5<MV>& m, const VV* __restrict__ x, long long base,
                                                      unsigned long long d, VV* seg_sum, int lane) {
  const unsigned long long raw = d >> (m.y_bits + m.seg_bits);
  const unsigned long long flags = raw | (lane == 0 ? 1ull : 0ull);  // segment 0 opens at entry 0
  const int first_flag = flags ? __ffsll(static_cast<long long>(flags)) - 1 : 64;
  int seg = static_cast<int>(d & ((1ull << m.y_bits) - 1)) - 1;
  VV sum = 0, red = 0;
  const MV* v = m.val + base + lane;
  const index_t* ci = m.col + base + lane;
  const int sigma = kSigma > 0 ? kSigma : m.sigma;
#pragma unroll
  for (int i0 = 0; i0 < sigma; i0 += kBatch) {
    VV pr[kBatch];
    batch_products<kBatch>(v, ci, x, i0, sigma, pr);
    const unsigned batch_flags = static_cast<unsigned>(flags >> i0);  // one 64-bit shift per batch
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = i0 + j;
      const bool flag = i < sigma && ((batch_flags >> j) & 1) != 0;
      // At the column's first flag the running sum is the end of a segment opened to the left
      // ("red"); at later flags it is a whole segment of this column.
      if (flag && i != first_flag) seg_sum[seg] = sum;
      if (i == first_flag) red = sum;
      seg += flag;
      sum = flag ? pr[j] : sum + pr[j];
    }
  }
  const bool has_flag = first_flag != 64;
  if (!has_flag) red = sum;
  const VV right = right_of_column(red, has_flag, lane);
  if (has_flag) seg_sum[seg] = sum + right;
  const int nseg = __shfl_sync(kFull, seg, 31) + 1;  // lane 31's last segment is the tile's last
  const bool begins = __shfl_sync(kFull, static_cast<unsigned>(raw & 1), 0) != 0;
  __syncwarp();
  return {nseg, begins};
}

// Rows starting at or after the tail (trailing empty rows too): warp i takes rows rb + 4i ..
// rb + 4i + 3, 8 lanes each.
template <class MV, class VV>
__device__ __forceinline__ void tail_rows(const DevCsr5<MV>& m, const VV* __restrict__ x, VV* __restrict__ y,
                                          long long i, int lane, const Epilogue<VV>& ep) {
  const long long r = m.rb + i * 4 + lane / 8;
  VV s = 0;
  if (r < m.rows)
    for (long long q = m.rp[r] + (lane & 7); q < m.rp[r + 1]; q += 8) s += entry_product(m, x, q);
  s = group_sum(s, 8);
  if ((lane & 7) == 0 && r < m.rows) ep.put(y, r, s);
}

// The tail's part of row rb - 1, the row that starts in a full tile and goes on into the tail
// (callers check that it does), summed by the warp.
template <class MV, class VV>
__device__ __forceinline__ VV tail_straddle(const DevCsr5<MV>& m, const VV* __restrict__ x, int lane) {
  VV s = 0;
  for (long long q = m.tb + lane; q < m.rp[m.rb]; q += 32) s += entry_product(m, x, q);
  return group_sum(s, 32);
}

// The tail's part of the row straddling its start, when that row is long (past a tile before the
// tail): lane 0 holds it as a part of row0, whose tiles run from a0 to b0 (the tail's number).
template <class MV, class VV>
__device__ __forceinline__ void tail_head(const DevCsr5<MV>& m, const VV* __restrict__ x, long long te, int lane,
                                          bool& head_ev, VV& head_s, index_t& row0, long long& a0, long long& b0) {
  if (m.rb == 0 || m.rp[m.rb] <= m.tb || m.rp[m.rb - 1] >= m.tb - te) return;
  head_s = tail_straddle(m, x, lane);
  head_ev = lane == 0;
  row0 = m.rb - 1;
  a0 = m.rp[row0] / te;
  b0 = m.tiles;
}

// A hinted tile's empty_offset entries (the rows of its segments) for its first 32 * kEoRounds
// segments, into eo_pre (lane j of round i: entry 32 i + j); returns where the tile's entries begin.
template <class MV>
__device__ __forceinline__ long long preload_empty_offsets(const DevCsr5<MV>& m, long long t, int lane,
                                                           index_t (&eo_pre)[kEoRounds]) {
  const long long eo_begin = m.eo_ptr[t], eo_end = m.eo_ptr[t + 1];
#pragma unroll
  for (int i = 0; i < kEoRounds; ++i) {
    const long long q = eo_begin + 32 * i + lane;
    eo_pre[i] = q < eo_end ? m.eo[q] : 0;
  }
  return eo_begin;
}

// Stores the segments that begin and end in the tile (segment 0 only where its row begins here;
// up to last_inner), consecutive lanes on consecutive segments; a hinted tile's first rounds take
// their rows from eo_pre (segment k - 1's row from the lane before, or from the last lane of the
// round before), later ones from the empty offsets.
template <class MV, class VV>
__device__ __forceinline__ void store_inner_segments(const DevCsr5<MV>& m, VV* __restrict__ y, const Epilogue<VV>& ep,
                                                     const VV* seg_sum, int nseg, bool begins, int last_inner,
                                                     bool hinted, const index_t (&eo_pre)[kEoRounds],
                                                     long long eo_begin, index_t row0, int lane) {
  const auto store = [&](int k, index_t row) {
    if ((k > 0 || begins) && k <= last_inner) ep.put(y, row, seg_sum[k]);
  };
  int k_rest = lane;  // the segments left for the loop below
  if (hinted) {
#pragma unroll
    for (int i = 0; i < kEoRounds; ++i) {
      if (32 * i >= nseg) break;  // warp-uniform
      const index_t before = __shfl_up_sync(kFull, eo_pre[i], 1);
      const index_t round_before = __shfl_sync(kFull, eo_pre[i > 0 ? i - 1 : 0], 31);
      const int k = 32 * i + lane;
      if (k < nseg)
        store(k, k > 0 ? row_after_empties(row0, lane > 0 ? before : round_before, eo_pre[i], y, ep) : row0);
    }
    k_rest = 32 * kEoRounds + lane;
  }
  const index_t* eo = hinted ? m.eo + eo_begin : nullptr;
  for (int k = k_rest; k < nseg; k += 32) store(k, k > 0 ? segment_row(eo, row0, k, y, ep) : row0);
}

// The part in the next tile of a short row crossing into it: its n entries from CSR entry `end`,
// transposed in a full tile, in CSR order in the tail; lane j takes the j-th (one round of loads,
// not a loop per column: in a full tile CSR entry j sits at column j / sigma, step j % sigma).
// Summed by the warp.
template <class MV, class VV>
__device__ __forceinline__ VV next_tile_part(const DevCsr5<MV>& m, const VV* __restrict__ x, long long end, int n,
                                             bool full, int sigma, int lane) {
  VV s = 0;
  for (int j = lane; j < n; j += 32) {
    const int c = full ? j / sigma : 0;
    s += entry_product(m, x, full ? end + static_cast<long long>(j - c * sigma) * 32 + c : end + j);
  }
  return group_sum(s, 32);
}

// Lanes own the segments that open in their column; instead of storing into y at every row start
// (a divergent branch per step, and scattered 8-byte stores), a lane writes the closed sums into
// its warp's shared buffer at the segment's number (a predicated store), and the warp then copies
// the buffer to y with consecutive lanes on consecutive rows. The buffer holds a tile's segments:
// at most omega * sigma sums (VV) per warp (the plan falls back to two-pass when that does not fit).
// Registers: the compiled tile heights are capped at tuning::csr5_max_registers (36 warps per SM
// instead of 32 at 64, any block size launches, no spills); the generic instance (other heights,
// other load batches) keeps 64 (launch bounds), where it spills least.
template <int kBatch, int kSigma, class MV, class VV>
__device__ __forceinline__ void single_tile(const DevCsr5<MV>& m, const VV* __restrict__ x, VV* __restrict__ y,
                                            const Parts& parts, const Epilogue<VV>& ep) {
  VV* const smem = dynamic_shared<VV>();
  // Tile heights of the sigma rule are compiled in (constant tile size, unrolled steps).
  const int sigma = kSigma > 0 ? kSigma : m.sigma;
  const long long te = 32ll * sigma;
  const long long t = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t > m.tiles) {
    tail_rows(m, x, y, t - m.tiles - 1, lane, ep);
    return;
  }
  bool head_ev = false;  // lane 0 holds a part of the long row row0
  VV head_s = 0;
  index_t row0 = 0;
  long long a0 = 0, b0 = 0;  // first and last tile of row0
  if (t == m.tiles) {
    tail_head(m, x, te, lane, head_ev, head_s, row0, a0, b0);
  } else {
    VV* seg_sum = smem + static_cast<long long>(threadIdx.x / 32) * te;
    const long long base = t * te, end = base + te;
    const unsigned long long tp = m.tile_ptr[t];
    row0 = static_cast<index_t>(tp & ~kHint);
    const bool hinted = (tp & kHint) != 0;
    // The boundary rows' extents, loaded before the tile's entries so that their latency overlaps:
    // row0 (segment 0), and rn, the row holding the next tile's first entry.
    const index_t rn = static_cast<index_t>(m.tile_ptr[t + 1] & ~kHint);
    const long long r0s = m.rp[row0], r0e = m.rp[row0 + 1];
    const long long rn_s = rn < m.rows ? m.rp[rn] : end, rn_e = rn < m.rows ? m.rp[rn + 1] : end;
    // A hinted tile's empty_offset entries (the rows of its segments) for its first 32 * kEoRounds
    // segments, loaded with the tile's own entries instead of after them (their latency overlaps).
    // (Not under `if (hinted)`: that branch kept the tile's loads from starting early.)
    index_t eo_pre[kEoRounds];
    const long long eo_begin = preload_empty_offsets(m, t, lane, eo_pre);
    const TileSegments ts = tile_segments<kBatch, kSigma>(m, x, base, load_desc(m, t, lane), seg_sum, lane);
    const int nseg = ts.nseg;
    // Boundary rows: row0 (segment 0) when it began in an earlier tile, and the row of the last
    // segment when it goes on into the next tile.
    const bool begins = ts.begins;
    const bool crosses_end = rn_s < end;
    const long long rn_end = crosses_end ? rn_e : end;
    // Comparisons instead of 64-bit divisions by te (a software routine of ~70 instructions each):
    // a row "short" across a boundary ends in the tile after the one it starts in.
    const bool short_cross = crosses_end && (nseg > 1 || begins) && rn_end <= end + te;
    bool long_head = false;
    if (!begins) {
      long_head = r0s < base - te || r0e > end;
      if (long_head) {
        a0 = r0s / te;
        b0 = (r0e - 1) / te;
      }
    }
    // Parts of long rows (short ones are done by their first tile), published before the tile's
    // own stores so that the row's last tile sees them as early as possible.
    if (lane == 0) {
      head_ev = long_head;
      head_s = seg_sum[0];
      if (head_ev && t != b0) publish(parts.head + t, head_s, parts.launch);
      if (crosses_end && (nseg > 1 || begins) && !short_cross) publish(parts.tail + t, seg_sum[nseg - 1], parts.launch);
    }
    if (lane == 0 && begins && hinted) zero_empty_before(m, row0, base, y, ep);
    // Segments that begin and end in this tile, consecutive lanes on consecutive segments; a
    // hinted tile's first rounds take their rows from eo_pre (segment k - 1's row from the lane
    // before, or from the last lane of the round before).
    store_inner_segments(m, y, ep, seg_sum, nseg, begins, crosses_end ? nseg - 2 : nseg - 1, hinted, eo_pre, eo_begin,
                         row0, lane);
    // The rest of a short row crossing into the next tile: its CSR entries end .. rn_end-1,
    // transposed in a full tile, in CSR order in the tail.
    if (short_cross) {
      const VV s = next_tile_part(m, x, end, static_cast<int>(rn_end - end), t + 1 < m.tiles, sigma, lane);
      if (lane == 0) ep.put(y, rn, seg_sum[nseg - 1] + s);
    }
  }
  // Tile b0 of a long row0 collects its parts (lane 0 holds its own).
  const bool collect = __shfl_sync(kFull, head_ev && t == b0, 0);
  if (collect) {
    const VV s = collect_row<kPartLoads>(parts, __shfl_sync(kFull, a0, 0), t, head_s, lane);
    if (lane == 0) ep.put(y, row0, s);
  }
}

template <int kBatch, int kSigma, class MV, class VV>
__global__ void __maxnreg__(tuning::csr5_max_registers)
    csr5_single(DevCsr5<MV> m, const VV* __restrict__ x, VV* __restrict__ y, Parts parts, Epilogue<VV> ep) {
  single_tile<kBatch, kSigma>(m, x, y, parts, ep);
}
template <int kBatch, class MV, class VV>
__global__ void __launch_bounds__(1024, 1)
    csr5_single_generic(DevCsr5<MV> m, const VV* __restrict__ x, VV* __restrict__ y, Parts parts, Epilogue<VV> ep) {
  single_tile<kBatch, 0>(m, x, y, parts, ep);
}

}  // namespace

// The single-pass instance for a load batch and tile height: the sigma rule's heights (8, 16, 24,
// 32) are compiled in for the default batch; anything else runs the generic instance.
template <class MV, class VV>
SingleKernel<MV, VV> single_kernel(int batch, int sigma) {
  if (batch == 4) return csr5_single_generic<4, MV, VV>;
  if (batch == 16) return csr5_single_generic<16, MV, VV>;
  switch (sigma) {
    case 8: return csr5_single<8, 8, MV, VV>;
    case 16: return csr5_single<8, 16, MV, VV>;
    case 24: return csr5_single<8, 24, MV, VV>;
    case 32: return csr5_single<8, 32, MV, VV>;
    default: return csr5_single_generic<8, MV, VV>;
  }
}
// Double, single and mixed.
template SingleKernel<double, double> single_kernel<double, double>(int, int);
template SingleKernel<float, float> single_kernel<float, float>(int, int);
template SingleKernel<float, double> single_kernel<float, double>(int, int);

}  // namespace spmv::cuda::csr5
