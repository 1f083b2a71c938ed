// Matrix Market reader: the pipeline (after fast_matrix_market's read_header / chunking /
// read_body split), streaming: the input is opened once and read a block at a time into one
// buffer of bounded size, so memory is the matrix plus the buffer, whatever the file's size.
//
// 1. read_header (mm_header): banner, comments and size line, line by line.
// 2. check_size_line: the sizes the header claims fit the memory budget and, for a plain file,
//    the bytes that follow; nothing has been allocated yet.
// 3. Per block of whole lines (text_blocks):
//    a. split_into_chunks (mm_chunks): the block cut at newline boundaries.
//    b. count_chunks (mm_chunks), pass 1 in parallel: lines and entry lines per chunk. Skipped for
//       a lone chunk (one thread, or a short block), which counts as it parses.
//    c. number_chunks (mm_chunks): prefix sums give each chunk its first line and first entry.
//    d. parse_chunks (mm_parse), pass 2 in parallel: straight into the COO arrays. Every error is
//       recorded with its exact line; the earliest chunk's wins, as in a serial reader.
//    e. RepeatMerger (mm_repeats): once a sample shows a file repeating few positions, each block's
//       repeats are summed into the entries held, so memory follows the distinct positions.
// 4. The entry count: the file holds as many entries as its size line says.
// 5. expand_symmetry (mm_symmetry): symmetric, skew and hermitian files get their mirrors.
//
// parse_csr reads a coordinate file straight into CSR instead where it can (mm_direct: a mapped
// file in row order, or in two passes; mm_row_groups: once, any input, the COO of steps 3-4 handing
// its entries over after the repeats' first sample); the policy is in parse_csr.
//
// Tolerated: blank lines anywhere, `%` comment lines anywhere before the size line and also inside
// the data (like fast_matrix_market), CRLF, tabs, leading/trailing blanks, a UTF-8 BOM, numbers
// such as `1.`, `-.5e-3`, `+2`, `1E+02`, `inf`, `nan` (kept as values).
#include <spmv/formats/limits.hpp>
#include <spmv/matrix.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <fmt/format.h>
#include <new>
#include <optional>
#include <type_traits>

#include "core/convert.hpp"
#include "io/arrays.hpp"
#include "io/byte_source.hpp"
#include "io/io_internal.hpp"
#include "io/mm_chunks.hpp"
#include "io/mm_data.hpp"
#include "io/mm_direct.hpp"
#include "io/mm_header.hpp"
#include "io/mm_parse.hpp"
#include "io/mm_repeats.hpp"
#include "io/mm_row_groups.hpp"
#include "io/mm_row_order.hpp"
#include "io/mm_symmetry.hpp"
#include "io/text_blocks.hpp"

namespace spmv::io::detail {

namespace {

// Text a block holds: 4 MiB a thread (a few chunks each), at most 64 MiB.
std::size_t block_bytes(int threads) {
  return std::clamp<std::size_t>(static_cast<std::size_t>(threads) << 22, std::size_t{4} << 20, std::size_t{64} << 20);
}

// The fewest bytes an entry line takes: "1 1\n" in a coordinate file, "1\n" in an array file.
i64 min_entry_bytes(const MmHeader& h) { return h.format == MmFormat::Coordinate ? 4 : 2; }

// Bytes per stored entry in the COO arrays (row, col, value, imaginary part) with values in V.
template <class V>
double entry_bytes(const MmHeader& h) {
  return 8.0 + sizeof(V) * (h.field == Field::Complex ? 2.0 : 1.0);
}

// The entries the arrays may need: the size line's count, or fewer when a plain file's remaining
// bytes cannot hold that many (a lying or truncated file then ends with "unexpected end of file",
// having allocated only for what is there).
i64 entry_bound(const MmHeader& h, std::int64_t bytes_left) {
  return bytes_left < 0 ? h.entries : std::min<i64>(h.entries, (bytes_left + 1) / min_entry_bytes(h));
}

// Step 2. The sizes on the size line against the memory budget (the COO the reader fills, the CSR
// row pointers it becomes, and what the caller will add per row and column), refused here, before
// anything is allocated.
template <class V>
void check_size_line(const MmHeader& h, i64 entries_max, const ReadOptions& lim, const std::string& name) {
  const i64 sl = h.data_first_line - 1;
  const double entries = entry_bytes<V>(h) * static_cast<double>(with_mirrors(h, entries_max));
  const double row_ptr = 8.0 * (static_cast<double>(h.rows) + 1);
  const double extra =
      lim.extra_bytes_per_row * static_cast<double>(h.rows) + lim.extra_bytes_per_col * static_cast<double>(h.cols);
  const double budget = input_memory_budget(lim.memory_budget_bytes);
  if (entries + row_ptr + extra <= budget) return;
  std::string parts = fmt::format("row pointers {}, entries {}", memory_size_text(row_ptr), memory_size_text(entries));
  if (extra > 0) parts += fmt::format(", {} {}", lim.extra_what, memory_size_text(extra));
  throw ParseError(
      name, sl,
      fmt::format("a {} x {} matrix with {} entries needs {} ({}); the memory budget is {}", h.rows, h.cols, h.entries,
                  memory_size_text(entries + row_ptr + extra), parts, memory_size_text(budget)));
}

// The output, with capacity for `stored` entries (and their mirrors) reserved but not touched:
// pages are only committed as entries arrive.
template <class V>
BasicParsed<V> allocate_output(const MmHeader& h, i64 stored) {
  BasicParsed<V> out;
  out.format = h.format;
  out.generated = h.generated;
  out.comments = h.comments;
  BasicCoo<V>& coo = out.coo;
  coo.rows = static_cast<index_t>(h.rows);
  coo.cols = static_cast<index_t>(h.cols);
  coo.field = h.field;
  coo.symmetry = h.symmetry;
  const auto capacity = static_cast<std::size_t>(with_mirrors(h, stored));
  reserve_on_huge_pages(coo.row, capacity);
  reserve_on_huge_pages(coo.col, capacity);
  reserve_on_huge_pages(coo.val, capacity);
  if (h.field == Field::Complex) reserve_on_huge_pages(coo.imag, capacity);
  return out;
}

std::string where_text(EntryLines::Where w) {
  return w.first == w.last ? fmt::format("line {}", w.first) : fmt::format("a line in {}-{}", w.first, w.last);
}

// Throws when an off-diagonal pair is stored in both triangles, then appends the mirrors.
template <class V>
void expand_symmetry(BasicCoo<V>& coo, int threads, const EntryLines& lines, const RepeatMerger<V>& merged,
                     const std::string& name) {
  const MirrorBlocks mb = count_mirrors(coo, threads);
  if (mb.both_triangles) {
    if (const auto pair = find_mirrored_pair(coo)) {
      const i64 first = pair->first, second = pair->second;
      const EntryLines::Where at = lines.find(merged.origin(second));
      throw ParseError(
          name, at.first,
          fmt::format("entry ({},{}){} mirrors the entry ({},{}) on {}: a {} file must store each "
                      "off-diagonal pair once",
                      coo.row[second] + 1, coo.col[second] + 1, at.first == at.last ? "" : " on " + where_text(at),
                      coo.row[first] + 1, coo.col[first] + 1, where_text(lines.find(merged.origin(first))),
                      to_string(coo.symmetry)));
    }
  }
  append_mirrors(coo, mb);
}

}  // namespace

template <class V>
i64 parse_next_block(TextBlocks& text, const MmHeader& h, int threads, const ParseTuning& tune, const std::string& name,
                     DataCursor& at, EntryLines* lines, BasicCoo<V>& coo, i64 shift) {
  const std::string_view block = text.next_block(at.line);
  if (block.empty()) return -1;
  const char* base = block.data();
  const i64 stored = at.seen - shift;
  std::vector<Chunk> chunks = split_into_chunks(block, 0, threads, tune.min_chunk);  // a
  const bool lone = chunks.size() == 1;
  const i64 room = std::max<i64>(0, h.entries - at.seen);  // entries the arrays still take
  if (lone)
    chunks[0].entries = std::min<i64>(room, static_cast<i64>(block.size()) / min_entry_bytes(h) + 1);
  else
    count_chunks(base, chunks, std::min<int>(threads, static_cast<int>(chunks.size())));  // b
  DataCounts counted = number_chunks(chunks, at.line, at.seen);                           // c
  cover(coo, stored + std::min(room, counted.entries), threads);
  const CooArrays<V> arrays{coo.row.data(), coo.col.data(), coo.val.data(),
                            h.field == Field::Complex ? coo.imag.data() : nullptr, shift};
  parse_chunks(base, h, chunks, h.entries, std::min<int>(threads, static_cast<int>(chunks.size())), arrays, name);  // d
  if (lone) counted = count_parsed_lone_chunk(base, chunks[0]);
  if (at.seen + counted.entries > h.entries)  // 4, early: this block holds the entry past the last
    throw ParseError(name, line_of_entry(base, chunks, h.entries),
                     fmt::format("too many entries: the size line says {}", h.entries));
  const bool open_last = block.back() != '\n';
  if (lines)
    for (Chunk& c : chunks) lines->add(c, c.newlines + (open_last && &c == &chunks.back() ? 1 : 0));
  at.line += counted.newlines;
  at.seen += counted.entries;
  if (open_last) ++at.line;  // the last line, which ends the input without a '\n'
  return counted.entries;
}

template i64 parse_next_block(TextBlocks&, const MmHeader&, int, const ParseTuning&, const std::string&, DataCursor&,
                              EntryLines*, Coo&, i64);
template i64 parse_next_block(TextBlocks&, const MmHeader&, int, const ParseTuning&, const std::string&, DataCursor&,
                              EntryLines*, CooF32&, i64);

namespace {

// Steps 1-2: the header read, its sizes checked; the text then at the data section.
struct DataPlan {
  MmHeader h;
  i64 entries_max = 0;     // entries the arrays may need (entry_bound)
  std::size_t offset = 0;  // where the data starts in the input
};

template <class V>
DataPlan read_and_check_header(TextBlocks& text, ByteSource& src, const ReadOptions& opt) {
  const std::string& name = src.name();
  DataPlan d;
  d.h = read_header(text, name);  // 1
  if (!std::is_same_v<V, double> && d.h.field == Field::Complex)
    throw ParseError(name, d.h.banner_line, "a complex matrix is read in double precision only");
  d.offset = text.consumed();
  const std::int64_t size = src.content_size();
  d.entries_max = entry_bound(d.h, size >= 0 ? size - static_cast<std::int64_t>(d.offset) : -1);
  check_size_line<V>(d.h, d.entries_max, opt, name);  // 2
  return d;
}

// Steps 3-5 into the COO, a block at a time (the read once into CSR, mm_row_groups, takes over
// from one after a few blocks).
template <class V>
class CooReader {
 public:
  CooReader(const DataPlan& d, const ParseTuning& tune)
      : h_(d.h),
        out_(allocate_output<V>(d.h, d.entries_max)),
        merger_(tune.repeat_check, d.h.symmetry != Symmetry::General || !std::is_same_v<V, double>),
        at_{d.h.data_first_line, 0} {}

  // Step 3 for the next block; false at the end of the data.
  bool next_block(TextBlocks& text, int threads, const ParseTuning& tune, const std::string& name) {
    try {
      if (parse_next_block(text, h_, threads, tune, name, at_, &lines_, out_.coo, merger_.removed()) < 0) return false;
      stored_ = merger_.after_block(out_.coo, at_.seen - merger_.removed(), stored_);  // e
      return true;
    } catch (const std::bad_alloc&) {
      throw out_of_memory(name, at_);
    }
  }

  // Steps 4-5 after the last block.
  BasicParsed<V> finish(int threads, const std::string& name) {
    BasicCoo<V>& coo = out_.coo;
    check_entry_count(at_, h_, name);  // 4
    trim(coo, stored_);
    if (const i64 o = merger_.finish(coo); o >= 0) {  // float sums of a merged file, as coo_to_csr refuses them
      const EntryLines::Where at_o = lines_.find(merger_.origin(o));
      throw ParseError(name, at_o.first,
                       fmt::format("the duplicate entries at row {}, column {}{} sum beyond single precision's "
                                   "range; read the matrix in double precision",
                                   coo.row[o] + 1, coo.col[o] + 1,
                                   at_o.first == at_o.last ? "" : " (the first on " + where_text(at_o) + ")"));
    }
    if (h_.symmetry != Symmetry::General) expand_symmetry(coo, threads, lines_, merger_, name);  // 5
    return std::move(out_);
  }

  // Takes over a read once into CSR at `at` (a stream whose repeats started late): fill(coo) puts
  // the entries read so far into the arrays, every position's entries in file order, and returns
  // their count; their lines are known only as a range. The merger samples them at once.
  template <class Fill>
  void resume(const DataCursor& at, Fill&& fill) {
    stored_ = fill(out_.coo);
    lines_.add_range(0, stored_, h_.data_first_line, at.line - h_.data_first_line);
    at_ = at;
    stored_ = merger_.after_block(out_.coo, stored_, 0);
  }

  // The entries held so far, the file's first ones in file order unless ever_merged().
  BasicCoo<V>& coo() { return out_.coo; }
  i64 stored() const { return stored_; }
  bool ever_merged() const { return merger_.ever_merged(); }
  const DataCursor& cursor() const { return at_; }

 private:
  const MmHeader& h_;
  BasicParsed<V> out_;
  EntryLines lines_;
  RepeatMerger<V> merger_;
  DataCursor at_;
  i64 stored_ = 0;  // entries the arrays hold: those seen less the repeats summed (e)
};

template <class V>
BasicParsed<V> parse_data(TextBlocks& text, const DataPlan& d, int threads, const ParseTuning& tune,
                          const std::string& name) {
  CooReader<V> r(d, tune);
  while (r.next_block(text, threads, tune, name)) {}
  return r.finish(threads, name);
}

// A mapped file out of row order (or symmetric) goes straight into CSR in two passes (mm_direct)
// from this many entries (mirrors counted) and threads, where they keep less memory than row groups
// and are about as fast; otherwise it is read once into row groups, much faster on one thread (the
// crossover is measured in bench/results/README.md).
constexpr double kTwoPassesFrom = 1 << 20;
constexpr int kTwoPassesThreads = 4;

// Whether row groups would take the read past 1.2x the CSR + 64 MiB a thread: their entries (a
// 16-bit row offset beside the CSR's column and value, up to a thirty-second more in the groups'
// last chunks) and the row counts, and about 24 MiB of block buffers and mappings (calibrated on
// the peaks in bench/results/README.md). A float read passes from about 100M entries (10 bytes an
// entry against the float CSR's 8); such a file is read in two passes where it can be read twice.
template <class V>
bool groups_past_bound(const DataPlan& d, int threads) {
  const MmHeader& h = d.h;
  const auto m = static_cast<double>(with_mirrors(h, d.entries_max));
  const double value = sizeof(V) * (h.field == Field::Complex ? 2.0 : 1.0);
  const double row_ptr = 8.0 * (static_cast<double>(h.rows) + 1);
  const double groups = (value + 6.0) * m * 33.0 / 32.0 + row_ptr + 24.0 * (1 << 20);
  return groups > 1.2 * ((value + 4.0) * m + row_ptr) + 64.0 * (1 << 20) * threads;
}

// The entries a read once into CSR holds (in row order or in row groups) and the block just read,
// moved into `coo`'s arrays with every position's entries in file order; returns their count.
template <class V>
i64 held_to_coo(std::optional<InRowOrder<V>>& ordered, std::optional<RowGroups<V>>& groups, const BasicCoo<V>& buf,
                i64 n, int threads, BasicCoo<V>& coo) {
  const bool cplx = coo.field == Field::Complex;
  if (ordered) {  // the CSR's arrays become the COO's, its row starts its rows
    InRowOrder<V>& o = *ordered;
    o.close();
    const auto m = static_cast<std::size_t>(o.n);
    coo.col = std::move(o.a.col);
    coo.val = std::move(o.a.val);
    if (cplx) coo.imag = std::move(o.a.imag);
    grow(coo.row, m, threads);
    for (std::size_t r = 0; r + 1 < o.start.size(); ++r)
      std::fill(coo.row.begin() + o.start[r], coo.row.begin() + o.start[r + 1], static_cast<index_t>(r));
    ordered.reset();
  } else {
    groups->drain(coo, threads);
    groups.reset();
  }
  const std::size_t from = coo.row.size(), to = from + static_cast<std::size_t>(n);
  cover(coo, static_cast<i64>(to), threads);
  std::copy_n(buf.row.begin(), n, coo.row.begin() + from);
  std::copy_n(buf.col.begin(), n, coo.col.begin() + from);
  std::copy_n(buf.val.begin(), n, coo.val.begin() + from);
  if (cplx) std::copy_n(buf.imag.begin(), n, coo.imag.begin() + from);
  return static_cast<i64>(to);
}

// A coordinate file read once into CSR: through the COO until the repeats' first sample (a file
// that mostly repeats positions stays there, merged as it is read); then a general file's entries
// in row order go on into the CSR's arrays (InRowOrder) until a row decreases, and the entries held
// move into row groups (mm_row_groups), which take the rest of the file. Repeats that start later
// send the read to the COO, which merges them: a file that can be read twice is read again (return
// false), a stream's entries held so far move into the COO, which reads on from there. False also
// where the read through the COO should read the file again because the row groups found a
// mirrored pair, or float sums past float's range (that read names their lines); else out.csr.
template <class V>
bool parse_once_to_csr(TextBlocks& text, const DataPlan& d, int threads, const ParseTuning& tune,
                       const std::string& name, BasicParsedCsr<V>& out) {
  const MmHeader& h = d.h;
  const bool again = text.can_rewind();
  std::optional<CooReader<V>> first(std::in_place, d, tune);
  for (;;) {
    if (!first->next_block(text, threads, tune, name)) {
      out.csr = spmv::detail::moving_coo_to_csr(std::move(first->finish(threads, name).coo), threads);
      return true;
    }
    if (first->cursor().seen >= tune.repeat_check && !first->ever_merged()) break;
  }
  DataCursor at = first->cursor();
  const bool cplx = h.field == Field::Complex;
  std::optional<InRowOrder<V>> ordered;
  std::optional<RowGroups<V>> groups;
  const auto to_groups = [&] {  // the entries in row order so far, moved into row groups
    groups.emplace(h, d.entries_max);
    if (!ordered) return;
    InRowOrder<V>& o = *ordered;
    groups->add_in_row_order(std::move(o.start), o.last, o.a.col.data(), o.a.val.data(),
                             cplx ? o.a.imag.data() : nullptr, o.n, threads);
    ordered.reset();
  };
  BasicCoo<V> buf;
  buf.field = h.field;
  try {
    if (h.symmetry == Symmetry::General) {
      ordered.emplace(static_cast<index_t>(h.rows), d.entries_max, cplx);
      if (!ordered->append(first->coo(), first->stored(), threads)) ordered.reset();
    }
    if (!ordered) {
      to_groups();
      groups->add(first->coo(), first->stored(), threads);
    }
    first.reset();
    RepeatCheckpoints repeats(2 * std::max<i64>(at.seen, 1));
    for (i64 n; (n = parse_next_block(text, h, threads, tune, name, at, nullptr, buf, at.seen)) >= 0;) {
      // Repeats that start later: the COO's merger samples at each doubling, and so does this read.
      if (repeats.block_repeats(buf.row.data(), buf.col.data(), n, at.seen)) {
        if (again) return false;
        CooReader<V> r(d, tune);
        r.resume(at, [&](BasicCoo<V>& coo) { return held_to_coo(ordered, groups, buf, n, threads, coo); });
        try {
          while (r.next_block(text, threads, tune, name)) {}
          out.csr = spmv::detail::moving_coo_to_csr(std::move(r.finish(threads, name).coo), threads);
        } catch (const std::bad_alloc&) {
          throw out_of_memory(name, r.cursor());
        }
        return true;
      }
      if (ordered && ordered->append(buf, n, threads)) continue;
      if (ordered) to_groups();
      groups->add(buf, n, threads);
    }
  } catch (const std::bad_alloc&) {
    throw out_of_memory(name, at);
  }
  check_entry_count(at, h, name);
  buf = BasicCoo<V>();  // the block buffer given back before the CSR fills
  try {
    if (ordered) {
      out.csr = ordered->to_csr(h);
    } else {
      bool pair = false;
      out.csr = groups->to_csr(threads, name, again ? &pair : nullptr);
      if (pair) return false;
    }
  } catch (const Unsupported&) {
    if (!again) throw;
    return false;
  }
  out.straight = true;
  return true;
}

}  // namespace

template <class V>
BasicParsed<V> parse(ByteSource& src, const ReadOptions& opt, const ParseTuning& tune) {
  const int threads = resolve_threads(opt.threads);
  TextBlocks text(src, tune.block_bytes ? tune.block_bytes : block_bytes(threads));
  const DataPlan d = read_and_check_header<V>(text, src, opt);
  return parse_data<V>(text, d, threads, tune, src.name());
}

template <class V>
BasicParsedCsr<V> parse_csr(ByteSource& src, const ReadOptions& opt, const ParseTuning& tune) {
  const int threads = resolve_threads(opt.threads);
  TextBlocks text(src, tune.block_bytes ? tune.block_bytes : block_bytes(threads));
  const DataPlan d = read_and_check_header<V>(text, src, opt);
  BasicParsedCsr<V> out;
  out.generated = d.h.generated;
  out.comments = d.h.comments;
  // Straight into CSR (measured in bench/results/README.md):
  // - a mapped general file: first in one pass, as though in row order (mm_direct); once a row
  //   decreases, again in two passes for a large file and several threads, else once into row groups;
  // - a mapped symmetric file: two passes for a large file and several threads, else row groups;
  // - anything read from a stream (a pipe, gzip): row groups, which keep row order while it lasts;
  // - two passes wherever row groups would pass the memory bound and the input can be read twice
  //   (a float read of about 100M entries or more; gzip in memory is inflated again).
  // A file the straight reads give up on (mostly repeated positions, a line the two passes count
  // differently, and the errors that need lines the row groups no longer know) reads through the COO.
  const MmHeader& h = d.h;
  const StraightToCsr how = tune.straight_to_csr;
  const std::string& name = src.name();
  if (h.format == MmFormat::Coordinate && how != StraightToCsr::Never) {
    const bool mapped = text.in_memory();
    const bool large = static_cast<double>(with_mirrors(h, d.entries_max)) >= kTwoPassesFrom;
    const bool two_passes =
        how == StraightToCsr::Always
            ? text.can_rewind()
            : how == StraightToCsr::Auto && ((mapped && large && threads >= kTwoPassesThreads) ||
                                             (text.can_rewind() && groups_past_bound<V>(d, threads)));
    const bool one_pass = mapped && h.symmetry == Symmetry::General;  // mm_direct's, as though in row order
    bool once = how == StraightToCsr::Once || (!text.can_rewind() && how == StraightToCsr::Always) ||
                (how == StraightToCsr::Auto && !two_passes && !one_pass);
    if (!once) {
      bool out_of_order = false;
      try {
        if (auto csr = read_csr_direct<V>(text, h, d.entries_max, threads, tune, name, two_passes, &out_of_order)) {
          out.csr = std::move(*csr);
          out.straight = true;
          return out;
        }
      } catch (const Unsupported&) {
        // float duplicates summed past float's range: the read through the COO refuses them too, by
        // line where it merged them as it read
      }
      text.rewind(d.offset);
      once = out_of_order && how == StraightToCsr::Auto;
    }
    if (once) {
      if (parse_once_to_csr(text, d, threads, tune, name, out)) return out;
      text.rewind(d.offset);
    }
  }
  out.csr = spmv::detail::moving_coo_to_csr(std::move(parse_data<V>(text, d, threads, tune, name).coo), threads);
  return out;
}

template Parsed parse(ByteSource&, const ReadOptions&, const ParseTuning&);
template BasicParsed<float> parse(ByteSource&, const ReadOptions&, const ParseTuning&);
template BasicParsedCsr<double> parse_csr(ByteSource&, const ReadOptions&, const ParseTuning&);
template BasicParsedCsr<float> parse_csr(ByteSource&, const ReadOptions&, const ParseTuning&);

}  // namespace spmv::io::detail
