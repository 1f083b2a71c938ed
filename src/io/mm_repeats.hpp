#pragma once
// Files that repeat a few positions many times (a gzip of one line repeated millions of times, an
// assembly output never summed) would hold every line in the COO: memory a multiple of the text.
// After each block the reader asks RepeatMerger; once a sample of the entries so far shows most
// positions repeating, it sums each block's entries into the positions already held, as they
// arrive, so memory follows the distinct positions. Sums are taken in file order, in double (a
// float read keeps them in double until the end: rounded once, as coo_to_csr rounds them), so the
// matrix is the one coo_to_csr makes of the unmerged entries. A block in which more than a quarter
// of the entries are new ends the merging (the file changed character) until a later sample shows
// repeats again; a float read then still folds repeats of the positions it holds sums for (their
// sums must stay in double), only new positions are no longer looked for.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "io/arrays.hpp"
#include "io/io_internal.hpp"
#include "io/mm_text.hpp"

namespace spmv::io::detail {

// Whether the last of n entries mostly repeat positions: at most a quarter of the last 16384 are
// distinct, or else (n larger) an estimate says at most a quarter of the last 2^18 are. The test
// RepeatMerger starts merging on.
bool mostly_repeats(const index_t* row, const index_t* col, std::size_t n);

// For a read that keeps every entry as it goes (straight into CSR): the block just read sampled
// with mostly_repeats at doubling checkpoints of the entries seen, as RepeatMerger samples its arrays.
class RepeatCheckpoints {
 public:
  explicit RepeatCheckpoints(i64 first) : next_(first < 1 ? 1 : first) {}
  // The block's n entries mostly repeat positions, the file's entries now `seen`: asked at the
  // first block past each checkpoint, false at the others.
  bool block_repeats(const index_t* row, const index_t* col, i64 n, i64 seen) {
    if (seen < next_) return false;
    while (next_ <= seen) next_ *= 2;
    return mostly_repeats(row, col, static_cast<std::size_t>(n));
  }

 private:
  i64 next_;
};

template <class V>
class RepeatMerger {
 public:
  // first_check: the stored entries at which the first sample is taken (then at each doubling);
  // track_origin: keep each slot's file entry index (symmetric files name the lines of a mirrored pair).
  RepeatMerger(i64 first_check, bool track_origin)
      : next_check_(first_check < 1 ? 1 : first_check), track_origin_(track_origin) {}

  // After a block: the arrays hold `stored` entries, those from `fresh` on are the block's new
  // ones. Returns the entries the arrays hold now (the block's repeats summed into earlier ones).
  i64 after_block(BasicCoo<V>& coo, i64 stored, i64 fresh);

  // At the end of the data: float sums written back rounded once. Returns the slot of the first
  // sum of finite values that rounded to infinity (the caller refuses the file, as coo_to_csr
  // refuses such a sum), or -1.
  i64 finish(BasicCoo<V>& coo);

  // The file's entry index (0-based, in entry lines) of the entry at `slot` of the arrays: where
  // its position first occurred (track_origin; otherwise right only for files never merged).
  i64 origin(i64 slot) const {
    return slot < static_cast<i64>(origin_.size()) ? origin_[static_cast<std::size_t>(slot)] : slot + removed_;
  }

  // File entries summed into earlier ones so far.
  i64 removed() const { return removed_; }

  // Whether the merging ever started: the arrays' slots are then no longer the file's entries.
  bool ever_merged() const { return inserting_ || removed_ > 0 || !table_.empty(); }

 private:
  // The table holds slots of the arrays plus one (0: an empty bucket), 4 bytes a bucket: a slot's
  // position is read from the arrays themselves (8 to 16 bytes a position held, where a key and
  // a slot took 32 to 64).
  static constexpr i64 kMaxSlots = ~std::uint32_t{0};  // slots [0, kMaxSlots) fit a bucket

  bool sample_repeats(const BasicCoo<V>& coo, i64 stored) const;
  // Sums entries [from, to) into the positions held (from == kept_): a repeat of a position in the
  // table is folded into it; a new one is kept at kept_ and, while inserting_, entered in the
  // table. Returns how many repeated.
  i64 merge(BasicCoo<V>& coo, i64 from, i64 to);
  // The bucket holding the slot (+ 1) of `key`'s position, or the empty one where it would go.
  std::uint32_t& find(const BasicCoo<V>& coo, std::uint64_t key);
  // A table twice the size, the slots [0, in_table_) entered again from the arrays (every slot
  // below in_table_ is in the table): the old table is freed first, never both at once.
  void grow_table(const BasicCoo<V>& coo);
  void drop_table();

  i64 next_check_;
  bool track_origin_;
  bool inserting_ = false;          // merging: new positions enter the table
  i64 checked_ = 0;                 // entries held at the last sample: the next samples what came after
  i64 kept_ = 0;                    // entries held after the last merge
  i64 in_table_ = 0;                // slots [0, in_table_) are in the table (float: with their sums in sum_)
  i64 removed_ = 0;                 // file entries summed away so far
  ZeroPages<std::uint32_t> table_;  // slots + 1, open addressing, at most half full; empty when not merging (double)
  int bits_ = 0;                    // log2 of table_'s size
  std::vector<double> sum_;         // float reads: the sums of the slots in the table, in double
  std::vector<i64> origin_;         // file entry index of each slot below origin_.size()
};

}  // namespace spmv::io::detail
