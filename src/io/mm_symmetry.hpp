#pragma once
// Symmetry expansion: symmetric, skew-symmetric and hermitian files store one triangle; each
// off-diagonal entry a(i,j) gets its mirror at (j,i): a, -a (skew) or conj(a) (hermitian).
#include <optional>
#include <utility>
#include <vector>

#include "io/io_internal.hpp"
#include "io/mm_text.hpp"

namespace spmv::io::detail {

// The entries cut into blocks, one per thread for large matrices, and where each block's
// mirrors go: block b appends at nnz + mirror_offset[b].
struct MirrorBlocks {
  int blocks = 1;
  std::vector<i64> mirror_offset;  // blocks + 1 prefix sums of off-diagonal counts
  bool both_triangles = false;     // entries stored both below and above the diagonal
};

// Counts each block's off-diagonal entries, in parallel.
template <class V>
MirrorBlocks count_mirrors(const BasicCoo<V>& coo, int threads);

// A file of mirrored symmetry must not store both (i,j) and (j,i), i != j: the mirror would be
// counted twice. Returns the (earlier, later) entry indices of the first such pair in file order.
template <class V>
std::optional<std::pair<i64, i64>> find_mirrored_pair(const BasicCoo<V>& coo);

// Appends the mirrors, in parallel; the arrays' capacity should already hold them.
template <class V>
void append_mirrors(BasicCoo<V>& coo, const MirrorBlocks& mb);

}  // namespace spmv::io::detail
