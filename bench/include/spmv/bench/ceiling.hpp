#pragma once
// Measured memory-bandwidth ceilings that effective bandwidths are reported against.
namespace spmv {

// STREAM triad a[i] = b[i] + s*c[i] over arrays far larger than the last-level cache, with
// `threads` OpenMP threads; bytes/s counting 3 arrays x 8 bytes per element (best of several).
double cpu_triad_bandwidth(int threads);

}  // namespace spmv
