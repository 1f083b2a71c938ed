#pragma once
// Measured memory-bandwidth ceilings that effective bandwidths are reported against.
#include <vector>

namespace spmv {

// STREAM triad a[i] = b[i] + s*c[i] over arrays far larger than the last-level cache, with
// `threads` OpenMP threads; bytes/s counting 3 arrays x 8 bytes per element (best of several).
double cpu_triad_bandwidth(int threads);
// The same measured `runs` times (at least 1) over one allocation: each run's bytes/s (the best
// of its 4 passes), in the order measured.
std::vector<double> cpu_triad_bandwidths(int threads, int runs);

}  // namespace spmv
