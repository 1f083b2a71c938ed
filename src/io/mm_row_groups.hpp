#pragma once
// A coordinate file read once (a pipe, stdin, gzip; a mapped file out of row order read by a few
// threads) straight into CSR, in one pass and bounded memory. Each entry is kept in the group of consecutive rows (at most 65536) it
// belongs to, with its row as a 16-bit offset into the group: 14 bytes an entry in double (10 in
// float) where the COO takes 16 (12), beside 12 (8) in the CSR. At the end the groups are placed
// into the CSR in row order, each group's memory given back as it is placed, so the peak is the
// groups' bytes (the CSR's pages fill as the groups' empty), not both: about 1.17x the CSR in
// double. Rows are counted as entries arrive. Groups are small enough (about 64K entries each)
// that a block of a file in row order spans many: thread t keeps the groups g with g % T == t.
#include <spmv/matrix.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/mm_header.hpp"

namespace spmv::io::detail {

template <class V>
class RowGroups {
 public:
  // entries: those the file may hold (the size line's count, or fewer where a plain file's bytes
  // cannot hold that many), which size the groups and their chunks (mirrors counted here).
  RowGroups(const MmHeader& h, i64 entries);
  ~RowGroups();
  RowGroups(const RowGroups&) = delete;
  RowGroups& operator=(const RowGroups&) = delete;

  // Entries [0, n) of `buf` in file order, and a symmetric file's mirrors; `threads` at a time for
  // a large block, each taking the entries of its groups.
  void add(const BasicCoo<V>& buf, i64 n, int threads);

  // First, before any add(): a general file's entries read so far in row order (InRowOrder: row
  // r < last at [start[r], start[r + 1]), row `last` from start[last] to n), taken in file order a
  // slice of 2^20 at a time, the arrays' pages behind each slice given back: memory moves from the
  // CSR's arrays into the groups instead of doubling. `start` becomes the rows' counts (no second
  // array of rows).
  void add_in_row_order(Array<offset_t>&& start, index_t last, const index_t* col, const V* val, const V* imag,
                        offset_t n, int threads);

  // The CSR: each group's entries placed in their rows in file order, `threads` groups at a time,
  // its memory given back right after; then rows sorted and duplicates summed as csr_from_rows
  // does. A symmetric file with entries in both triangles is checked for a mirrored pair: ParseError
  // naming `name`, without lines (the input is gone), or, where `pair` is given, *pair set and an
  // empty matrix returned (a caller that can read the input again names the lines). Unsupported for
  // float sums beyond float's range.
  BasicCsr<V> to_csr(int threads, const std::string& name, bool* pair = nullptr);

  // Instead of to_csr: the file's entries kept so far (mirrors left out) appended to `out`'s arrays
  // (grown as they fill) group by group, each group's in file order, so that every position's
  // entries stay in file order; each chunk given back once copied. Returns out's entries.
  i64 drain(BasicCoo<V>& out, int threads);

 private:
  struct Group {
    std::vector<char*> chunks;  // each `capacity_` entries; the last holds `last`
    std::uint32_t last = 0;
  };
  // Where a thread cuts its chunks from: its current mapping.
  struct Slab {
    char* at = nullptr;
    std::size_t left = 0;
  };
  static constexpr std::uint32_t kMirror = 0x80000000u;  // column flag: a mirror, not a file's entry

  // Count: the rows' counts go up (not for entries whose rows add_in_row_order counted).
  template <bool Count>
  void add(const index_t* row, const index_t* col, const V* val, const V* imag, i64 n, int threads);
  // False when memory ran out (no exception: puts run inside parallel regions).
  template <bool Count>
  bool put(Slab& slab, std::uint32_t r, std::uint32_t c, V v, V im);
  char* new_chunk(Slab& slab);
  void give_back(char* chunk) const;
  V* vals(char* b) const { return reinterpret_cast<V*>(b); }
  V* imags(char* b) const { return reinterpret_cast<V*>(b) + capacity_; }
  std::uint32_t* cols(char* b) const { return reinterpret_cast<std::uint32_t*>(b + col_at_); }
  std::uint16_t* offsets(char* b) const { return reinterpret_cast<std::uint16_t*>(b + offset_at_); }

  MmHeader h_;
  bool cplx_;
  int bits_ = 0;                            // a group holds 2^bits_ rows
  std::uint32_t capacity_ = 0;              // entries a chunk holds
  std::size_t chunk_bytes_ = 0;             // a whole number of pages
  std::size_t col_at_ = 0, offset_at_ = 0;  // the column and row-offset arrays within a chunk
  std::vector<Group> groups_;
  Array<offset_t> count_;   // count_[r + 1]: row r's entries so far (then the row starts); from the first add
  std::vector<Slab> slab_;  // each thread's
  std::vector<std::pair<char*, std::size_t>> slabs_;  // every mapping, unmapped at the end
  bool lower_ = false, upper_ = false;                // a symmetric file's entries below and above the diagonal
};

}  // namespace spmv::io::detail
