#pragma once
// Internal: how a matrix is split over the ranks of a distributed product (the MPI issue's first
// part, usable without MPI). Each rank owns a contiguous block of rows and a block of x's entries;
// its rows split into a diagonal block (the columns it owns, numbered from its first) and an
// off-diagonal block (every other column it touches, renumbered into a compact halo in increasing
// global order), PETSc's MPIAIJ layout. The halo pattern says which owned x entries each rank sends
// to each other: what a product exchanges, computed once.
#include <spmv/matrix.hpp>

#include <vector>

namespace spmv::dist {

/// Rank r owns [bounds[r], bounds[r + 1]) of a range (rows, or x's entries); a rank may own none.
struct Ownership {
  std::vector<index_t> bounds;
  int ranks() const { return static_cast<int>(bounds.size()) - 1; }
  index_t begin(int r) const { return bounds[static_cast<std::size_t>(r)]; }
  index_t end(int r) const { return bounds[static_cast<std::size_t>(r) + 1]; }
  index_t size(int r) const { return end(r) - begin(r); }
  int owner(index_t i) const;  ///< the rank owning entry i
};

/// Contiguous blocks of A's rows balanced by nonzeros plus rows, one per rank.
Ownership partition_rows(const CsrView& a, int ranks);
/// x's entries: the rows' blocks for a square matrix (y and x alike), else even blocks of columns.
Ownership partition_columns(const CsrView& a, const Ownership& rows);

/// One rank's rows: the diagonal block (rows x its own columns) and the off-diagonal block (rows x
/// its halo), with the global column and the owner of each halo entry.
struct LocalPart {
  Csr diag, offd;
  std::vector<index_t> halo;    ///< global columns, increasing
  std::vector<int> halo_owner;  ///< the rank owning each (never this one)
};
LocalPart split_rows(const CsrView& a, const Ownership& rows, const Ownership& cols, int rank);
/// The same from the rank's rows alone (`mine`: its rows, global column numbers), its columns
/// [c0, c1): what each rank of an MPI run does with the rows it holds.
LocalPart split_local(const CsrView& mine, index_t c0, index_t c1, const Ownership& cols);

/// What one rank sends and receives in a product: send[q] are the local indices (into its own x
/// block) of the entries rank q needs, in q's halo order; recv[q] the number it receives from q,
/// which fill its halo in order (the halo is sorted by column, so by owner).
struct HaloPattern {
  std::vector<std::vector<index_t>> send;
  std::vector<index_t> recv;
};
/// Every rank's pattern from every rank's halo (in MPI: each rank's halo list to its owners, an
/// all-to-all made once; here from the parts themselves).
std::vector<HaloPattern> halo_patterns(const std::vector<LocalPart>& parts, const Ownership& cols);

}  // namespace spmv::dist
