// Splitting a matrix over ranks (src/distributed/partition.hpp).
#include "distributed/partition.hpp"

#include <algorithm>
#include <stdexcept>

namespace spmv::dist {

int Ownership::owner(index_t i) const {
  // The last rank whose block starts at or before i and is not empty.
  const auto it = std::upper_bound(bounds.begin(), bounds.end(), i);
  return static_cast<int>(it - bounds.begin()) - 1;
}

Ownership partition_rows(const CsrView& a, int ranks) {
  if (ranks < 1) throw Error("partition_rows: ranks must be at least 1");
  Ownership o;
  o.bounds.assign(static_cast<std::size_t>(ranks) + 1, a.rows);
  o.bounds[0] = 0;
  const double total = static_cast<double>(a.nnz()) + a.rows;
  for (int r = 1; r < ranks; ++r) {  // the first row at or past r/ranks of the nonzeros plus rows
    const double target = total * r / ranks;
    index_t lo = o.bounds[static_cast<std::size_t>(r) - 1], hi = a.rows;
    while (lo < hi) {
      const index_t mid = lo + (hi - lo) / 2;
      if (static_cast<double>(a.row_ptr[static_cast<std::size_t>(mid)]) + mid < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    o.bounds[static_cast<std::size_t>(r)] = lo;
  }
  return o;
}

Ownership partition_columns(const CsrView& a, const Ownership& rows) {
  if (a.rows == a.cols) return rows;
  Ownership o;
  const int ranks = rows.ranks();
  o.bounds.resize(static_cast<std::size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r)
    o.bounds[static_cast<std::size_t>(r)] = static_cast<index_t>(static_cast<offset_t>(a.cols) * r / ranks);
  return o;
}

LocalPart split_rows(const CsrView& a, const Ownership& rows, const Ownership& cols, int rank) {
  const index_t r0 = rows.begin(rank), n = rows.size(rank);
  CsrView mine = a;  // rows [r0, r0 + n): their offsets, into a's columns and values
  mine.rows = n;
  mine.row_ptr = a.row_ptr.subspan(static_cast<std::size_t>(r0), static_cast<std::size_t>(n) + 1);
  return split_local(mine, cols.begin(rank), cols.end(rank), cols);
}

LocalPart split_local(const CsrView& a, index_t c0, index_t c1, const Ownership& cols) {
  if (a.is_complex() || a.values_in_float()) throw Error("split_rows: a real double matrix");
  const index_t n = a.rows;
  LocalPart p;
  // The halo: every column outside [c0, c1) the rows touch, sorted and unique.
  for (index_t r = 0; r < n; ++r)
    for (offset_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q)
      if (a.col[q] < c0 || a.col[q] >= c1) p.halo.push_back(a.col[q]);
  std::sort(p.halo.begin(), p.halo.end());
  p.halo.erase(std::unique(p.halo.begin(), p.halo.end()), p.halo.end());
  for (const index_t c : p.halo) p.halo_owner.push_back(cols.owner(c));
  const auto block = [n](index_t cols) {
    return Csr{.rows = n,
               .cols = cols,
               .field = Field::Real,
               .symmetry = Symmetry::General,
               .row_ptr = Array<offset_t>(static_cast<std::size_t>(n) + 1, 0),
               .col = {},
               .val = {},
               .imag = {}};
  };
  p.diag = block(c1 - c0);
  p.offd = block(static_cast<index_t>(p.halo.size()));
  for (index_t r = 0; r < n; ++r) {
    for (offset_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q) {
      const index_t c = a.col[q];
      if (c >= c0 && c < c1) {
        p.diag.col.push_back(c - c0);
        p.diag.val.push_back(a.val[q]);
      } else {  // columns stay increasing within the row: the halo is sorted
        p.offd.col.push_back(static_cast<index_t>(std::lower_bound(p.halo.begin(), p.halo.end(), c) - p.halo.begin()));
        p.offd.val.push_back(a.val[q]);
      }
    }
    p.diag.row_ptr[static_cast<std::size_t>(r) + 1] = static_cast<offset_t>(p.diag.col.size());
    p.offd.row_ptr[static_cast<std::size_t>(r) + 1] = static_cast<offset_t>(p.offd.col.size());
  }
  return p;
}

std::vector<HaloPattern> halo_patterns(const std::vector<LocalPart>& parts, const Ownership& cols) {
  const int ranks = cols.ranks();
  if (static_cast<int>(parts.size()) != ranks) throw Error("halo_patterns: one part per rank");
  std::vector<HaloPattern> pat(static_cast<std::size_t>(ranks));
  for (HaloPattern& h : pat) {
    h.send.resize(static_cast<std::size_t>(ranks));
    h.recv.assign(static_cast<std::size_t>(ranks), 0);
  }
  for (int q = 0; q < ranks; ++q) {  // q receives its halo, entry by entry, from their owners
    const LocalPart& p = parts[static_cast<std::size_t>(q)];
    for (std::size_t h = 0; h < p.halo.size(); ++h) {
      const int from = p.halo_owner[h];
      pat[static_cast<std::size_t>(from)].send[static_cast<std::size_t>(q)].push_back(p.halo[h] - cols.begin(from));
      ++pat[static_cast<std::size_t>(q)].recv[static_cast<std::size_t>(from)];
    }
  }
  return pat;
}

}  // namespace spmv::dist
