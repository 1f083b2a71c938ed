#pragma once
/// @file
/// Symmetric reorderings of a square matrix (P A P^T): the permutation, and the matrix renumbered
/// by it. A plan made with PlanOptions::reorder multiplies in the new numbering and takes x and
/// gives y in the user's; a user who iterates in the new numbering takes both from here.
#include <spmv/formats/limits.hpp>
#include <spmv/matrix.hpp>

#include <vector>

namespace spmv {

/// order[i]: the original index of new index i; position[j]: the new index of original index j.
struct Permutation {
  std::vector<index_t> order, position;
  index_t size() const { return static_cast<index_t>(order.size()); }
};

/// The permutation whose order is `order` (a permutation of 0..n-1; Error otherwise), its position
/// worked out.
Permutation permutation_from_order(std::vector<index_t> order);

/// Reverse Cuthill-McKee on the pattern of A + A^T: each connected component from a
/// pseudo-peripheral vertex of least degree, breadth first with neighbours by increasing degree,
/// the whole order reversed. O(nnz log d) time, one pass of A^T's pattern where A is not
/// symmetric. Square matrices only (Unsupported otherwise).
Permutation rcm(const CsrView& a, const ConvertOptions& opt = {});
/// The largest |i - j| over A's entries: what RCM makes small.
index_t bandwidth(const CsrView& a);
/// P A P^T in CSR: B(i, j) = A(p.order[i], p.order[j]), columns sorted within rows, values in
/// double (a float matrix's widened). Memory checked against `opt` first.
Csr permute(const CsrView& a, const Permutation& p, const ConvertOptions& opt = {});
/// One vector (k = 1) in the new numbering: out[i] = x[p.order[i]]; and back: y[p.order[i]] = in[i].
/// Vectors of another size than the permutation's: Error.
void to_new(const Permutation& p, std::span<const double> x, std::span<double> out);
void to_old(const Permutation& p, std::span<const double> in, std::span<double> y);

}  // namespace spmv
