#pragma once
// What kernel "auto" is compared with, one rule for the summary (output.cpp) and the interleaved
// timing after the sweep (runner.cpp): the oracle is the fastest usable non-baseline, non-auto row
// of auto's backend, k, layout and precision (any setting); the baseline the fastest usable baseline
// row of its side (CPU: Eigen; GPU: every cuSPARSE kernel), k, layout and precision, on one thread
// for a serial auto (like with like). nullptr where there is none.
#include <spmv/bench/bench.hpp>

#include <span>

namespace spmv::bench {

const Row* auto_oracle(const Row& a, std::span<const Row* const> rows);
const Row* auto_baseline(const Row& a, std::span<const Row* const> rows);

}  // namespace spmv::bench
