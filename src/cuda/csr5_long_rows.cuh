#pragma once
// CSR5 on CUDA, single pass: rows longer than a tile, whose parts the row's last tile collects.
#include "cuda/csr5_device.cuh"

namespace spmv::cuda::csr5 {

// A row crossing tile boundaries spans tiles a..b (a: where it starts, b: where it ends; the tail
// counts as tile `tiles`).
//  - b == a + 1 (a row shorter than a tile, the usual case): tile a computes it whole, reading the
//    row's first entries in tile b (transposed, or CSR order in the tail) with the whole warp;
//    tile b drops its segment 0.
//  - b >= a + 2 (a row longer than a tile): tiles a .. b-1 publish their parts (tile a its last
//    segment, later ones their segment 0, a whole tile for those in between) with one 16-byte store
//    of {part, launch number}; tile b waits until the launch's number shows on all of them and sums
//    them in a fixed order, so the same bits whichever tile finishes first. Only tile b waits, and
//    only on lower tiles, which run in blocks of lower index: blocks start in index order, so those
//    are running or done (the forward-progress assumption of CUB's decoupled look-back). It also
//    takes a 16-byte access of one thread to be seen whole, as CUB's tile status words of {status,
//    value} do (PTX's memory model promises it per 8-byte element only). Only the row's last tile
//    waits: no fence or atomic in the others, which keeps long rows cheap.
// In single precision a part is a float held in `value` as a double (exact both ways), so Part,
// its 16-byte accesses and the arrays stay one type for every precision.
struct alignas(16) Part {
  double value;
  unsigned long long launch;  // number of the launch that stored `value`
};
struct Parts {
  Part* head;                 // tiles + 1: a tile's segment 0 (or whole tile)
  Part* tail;                 // tiles: a tile's last segment
  unsigned long long launch;  // this launch's number: never 0, never repeated by a plan
};

// One 16-byte relaxed store / load at device scope. Volatile asm: the intrinsics (__ldcv) are
// plain asm, which the compiler may hoist out of a polling loop.
template <class VV>
__device__ __forceinline__ void publish(Part* p, VV s, unsigned long long launch) {
  asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %2};" ::"l"(p),
               "l"(__double_as_longlong(static_cast<double>(s))), "l"(launch));
}
__device__ __forceinline__ Part peek(const Part* p) {
  long long v;
  unsigned long long launch;
  asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];" : "=l"(v), "=l"(launch) : "l"(p));
  return {__longlong_as_double(v), launch};
}

// Tile b's sum of a long row spanning tiles a..b (own: tile b's part, lane 0), by the whole warp:
// the parts in rounds of kParts loads per lane, each round repeated until all of its parts carry
// this launch's number, then added in a fixed order (in VV: the parts narrow back exactly).
template <int kParts, class VV>
__device__ __forceinline__ VV collect_row(const Parts& p, long long a, long long b, VV own, int lane) {
  VV s = 0;
  for (long long u0 = a; u0 < b; u0 += kParts * 32) {
    VV part[kParts];
    bool ready;
    int polls = 0;
    do {
      // A part that never shows (a scheduling that breaks the assumption above) ends the kernel
      // with an error after about a second instead of hanging the process.
      if (++polls > (1 << 20)) __trap();
      ready = true;
#pragma unroll
      for (int j = 0; j < kParts; ++j) {
        const long long u = u0 + j * 32 + lane;
        part[j] = VV(0);
        if (u < b) {
          const Part r = peek(u == a ? p.tail + u : p.head + u);
          part[j] = static_cast<VV>(r.value);
          ready &= r.launch == p.launch;
        }
      }
    } while (!__all_sync(kFull, ready));
#pragma unroll
    for (int j = 0; j < kParts; ++j) s += part[j];
  }
  s = group_sum(s, 32);
  return s + own;
}

}  // namespace spmv::cuda::csr5
