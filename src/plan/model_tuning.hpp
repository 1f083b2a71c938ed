#pragma once
// The planner's model constants, as data. Each kernel's product time is predicted as
//   fixed_us + bytes / (GB/s) + per-row and longest-row terms,
// fitted (least squares in log time) to a run of the default suite (100 matrices) on each backend.
// Conversions are in products of the candidate's CSR product.
namespace spmv::tuning {

// Above this many nonzeros a matrix is large: to the models (their constants above it) and to the
// trial (its budget in products, its candidates timed alone on the CPU).
inline constexpr long long large_nnz = 1'000'000;

// Values a large matrix's features sample (MatrixFeatures::values_sampled).
inline constexpr int value_samples = 1024;

struct KernelFit {
  double fixed_us;        // launch or fork/join: the floor of a product
  double gbs;             // bytes streamed per microsecond x 1e-3 (GB/s)
  double per_row_ns;      // loop overhead per row (CPU: spread over the threads)
  double per_max_row_ns;  // the longest row's serial part (a row no partition splits)
};

struct CpuModel {
  // At 16 threads of the Xeon host; bandwidths scale with threads / 16 below that.
  int fitted_threads = 16;
  double cache_bytes = 300e6;  // last-level cache: beyond it streams run at out_of_cache x
  double out_of_cache = 0.63;
  KernelFit balanced{4.6, 160, 2.2, 0.7};
  // Dynamic's and CSR5's per-row costs and CSR5's bandwidth set from large generated matrices,
  // which the default suite lacks.
  KernelFit dynamic{9.5, 181, 2.2, 0.55};
  KernelFit csr5{5.0, 160, 1.2, 0};  // per row: below CSR's, its tiles carry no row loop
  KernelFit ell{4.7, 186, 4.7, 0};
  KernelFit ell_rowlen{4.4, 143, 0, 0};  // + 0.3 ns x cv per nonzero (rows ending at different slots)
  KernelFit hll{4.6, 163, 0.3, 0};       // + 0.9 ns x hack x longest row (its hack is one unit of work)
  double serial_ns_per_nnz = 1.13;       // one thread, in cache: no fork/join
  // CSR's simd inner loop against its scalar one: lag_0 - slope x mean row length, clamped (the
  // planner's trials at 16 threads: 1.1-1.5 below 8 nonzeros a row, about 1 at 12-25, 0.55-0.9
  // above 30).
  double simd_lag_0 = 1.3, simd_lag_slope = 0.015, simd_lag_lo = 0.8, simd_lag_hi = 1.25;
  // ELL and HLL products above large_nnz run slower than the model: 1.0-1.75x in the trials.
  double padded_large = 1.2;
  // Conversions in CSR products per padded slot (CSR5: per entry), medians at 16 threads, up to
  // and above large_nnz (large ones gain from huge pages and threads first touching them).
  double convert_ell = 7, convert_hll = 12, convert_csr5 = 11;
  double convert_ell_large = 4, convert_hll_large = 5, convert_csr5_large = 6;
  long long small_nnz = 65536;    // below: fewer threads are worth a trial
  double csr5_small_share = 0.8;  // small matrices: CSR5 / the best CSR setting
};

struct CudaModel {
  KernelFit scalar{3.5, 4000, 0, 0.060};             // bytes x (1 + mean/38): uncoalesced rows
  KernelFit vector{3.6, 3100, 0, 0.075};             // longest row / sub-warp; bandwidth of matrices above 1M nnz
  KernelFit adaptive{4.1, 3100, 0, 0};               // + 1.2 us when a row is split across blocks (> 2048)
  KernelFit adaptive_small_blocks{4.0, 2600, 0, 0};  // 256-512 nonzeros per row block
  // Above large_nnz CSR-adaptive trailed the best of ours except on rows of very different lengths,
  // where CSR-vector's longest-row term ranks it behind anyway.
  KernelFit adaptive_large{4.1, 2700, 0, 0};
  double other_block_us = 0.1;             // 1024 threads: as often best as 256 on small matrices
  KernelFit csr5{4.5, 3000, 0, 0};         // fixed cost from the current single-pass kernel
  KernelFit ell{3.4, 4300, 0, 0.060};      // padding's x reads hit the cache: above copy bandwidth
  KernelFit hll{2.8, 4100, 0, 0.19};       // bytes without padding, + half of it: a warp waits for its longest row
  KernelFit hll_spmm{2.8, 4000, 0, 0.19};  // SpMM: padded bytes
  double ell_spmm_max_padding = 1.25;      // SpMM: ELL a candidate up to this padding (slots / nnz)
  // Device conversions, allocation included (medians of the planner's runs):
  // in CSR products (ELL: per padded slot), plus fixed parts (allocations, the layout's kernels, a scan).
  double convert_ell = 5, convert_hll = 5, convert_csr5 = 4;
  double convert_ell_fixed_us = 65, convert_hll_fixed_us = 75, convert_csr5_fixed_us = 70;
  // CSR-adaptive's making: its row blocks, built on the device (two kernels, a scan, a count back),
  // about constant in the rows.
  double adaptive_blocks_us = 55;
  // csr-merge is not a candidate: it never comes near the best of ours.
};

// The compact formats (csr-compact, hll-compact: 2-byte column offsets and values shared through
// a 1- or 2-byte index): candidates for k = 1 where the sampled values are few; their conversion
// runs on the host (hashing every value, then the slots). Measured on the H200 machine (stencil of
// 3 values, FEM-like of 300; bench/results/README.md, issue 51): hll-compact 1730-2000 GB/s of its
// own bytes, made in 5-9 ns a nonzero; csr-compact 45-49 GB/s of its own bytes at 16 threads (bound
// by its table lookups, not by memory), made in 3.4-4.3 ns a nonzero at 16 threads. In double
// precision only: in single (a value of 4 bytes against an index of 1-2) they lost to our plain
// kernels or tied on both backends.
struct CompactModel {
  // Of value_samples: few enough to share (a matrix of 300 values shows about 290, one of tens of
  // thousands nearly all of them).
  int max_sampled_distinct = 512;
  KernelFit gpu{3.0, 1900, 0, 0.19};
  double gpu_convert_ns_per_nnz = 8;
  KernelFit cpu{5.0, 48, 0, 0};
  double cpu_convert_ns_per_nnz = 4.5;  // at 16 threads; scaled by 16 / threads below
};

// Reorder::Auto (src/plan/reorder_route.cpp), from issue 51's runs on the H200 machine: scrambled
// meshes (a 27-point stencil, a FEM-like matrix of 29 +- 6 entries a row) ran 2.2-2.7x slower than
// renumbered by RCM on both backends; a road graph (3 a row) and a power-law graph gained little or
// lost. The permutations of a product in the user's numbering (x gathered, y scattered): 31 us a
// million rows on the GPU, 1.8 ms on 16 cores.
struct ReorderModel {
  long long min_nnz = large_nnz;
  double min_scatter = 0.02;          // mean |column - row| / rows of sampled rows: far from a band
  double max_cv = 0.5, min_mean = 8;  // rows of a mesh, and columns of one (in-degrees alike)
  double lag = 2.2;                   // the scattered product against the renumbered one
  int fitted_threads = 16;
  double gpu_permute_ns_per_entry = 0.0155, cpu_permute_ns_per_entry = 0.9;  // a vector entry, at 16 threads
  // RCM and P A P^T at 16 threads (the breadth-first searches bound by random reads; more threads
  // help up to about 4x fewer).
  double make_ns_per_nnz = 60, make_max_share = 4;
};

// A transposed plan of "auto" (src/plan/transposed_route.cpp): A^T made once on the host, or the
// scatter kernel on A as stored. Predicted: the transpose's making, one product of each (bytes at
// the backend's bandwidth, the scatter's slower by its lag: random adds, on the GPU atomics).
struct TransposeModel {
  double make_fixed_us = 30, make_ns_per_nnz = 5;  // the counting sort on one thread
  int make_threads_useful = 8;                     // beyond: bound by memory
  double cpu_gbs = 160;                            // at CpuModel::fitted_threads threads
  double cpu_fixed_us = 5, cpu_scatter_lag = 1.5;
  // A vector read or written at random (A^T's product gathers x of A's rows; the scatter adds into
  // copies of y of A's columns) costs this per nonzero and thread once it outgrows a core's cache:
  // the tall 4M x 2000 matrix's A^T product, 4.7 ms at 16 threads against A's 1.7.
  double cpu_core_cache_bytes = 2e6, cpu_random_ns_per_nnz = 3;
  double gpu_gbs = 3100, gpu_fixed_us = 4, gpu_scatter_lag = 3.0;  // atomics: 2.9x (geomean, H200)
};

// The trial: at most this many candidates (large / small matrices), none predicted slower than
// prune x the best. Each is made and timed once (an estimate), then all are timed in
// interleaved rounds of batches lasting about batch_s; on matrices above large_nnz everything after
// the first candidate stops at budget_products products' worth of time (its estimate), on smaller
// ones at small_budget_s.
struct TrialPolicy {
  int max_large = 3, max_small = 8;
  double prune = 1.6, prune_small = 2.5;  // small matrices: a candidate costs well under a millisecond
  double budget_products = 12;
  double close = 1.1;     // a converting candidate predicted within this of the first is tried anyway,
  double optimism = 1.3;  // if a product this much faster than predicted would repay its conversion
  int rounds_large = 2, rounds_small = 5;
  // CPU, large matrices: each candidate is timed alone, warm, instead of in rounds: a plan's first
  // products after another plan's run slow (its data back from DRAM into the last-level cache), so
  // rounds of one product each are biased against the formats a conversion has just written.
  // warm_cpu products untimed, then timed_cpu timed (the fastest counts).
  int warm_cpu = 2, timed_cpu = 2;
  double batch_s_large = 0, batch_s_small = 2e-4;  // large: one product per round
  double small_budget_s = 0.04;
};

}  // namespace spmv::tuning
