// The reader's merging of repeated positions (src/io/mm_repeats): a file that repeats a few
// positions is held as its distinct positions, and the matrix, the float rounding, the errors and
// their lines are those of a read that keeps every entry (repeat_check beyond the file).
#include <spmv/io.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <string>

#include "io/byte_source.hpp"
#include "io/io_internal.hpp"

using namespace spmv;

namespace {

constexpr std::int64_t kNever = std::int64_t{1} << 60;

template <class V = double>
io::detail::BasicParsed<V> read(const std::string& text, int threads, std::int64_t repeat_check,
                                std::size_t block_bytes = 512) {
  io::detail::ByteSource src = io::detail::ByteSource::memory(text, "r.mtx");
  return io::detail::parse<V>(src, {.threads = threads},
                              {.block_bytes = block_bytes, .min_chunk = 32, .repeat_check = repeat_check});
}

template <class V = double>
std::string error_of(const std::string& text, int threads, std::int64_t repeat_check) {
  try {
    read<V>(text, threads, repeat_check);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

template <class V>
void expect_same_csr(const BasicCsr<V>& a, const BasicCsr<V>& b) {
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col, b.col);
  ASSERT_EQ(a.val.size(), b.val.size());
  EXPECT_EQ(0, std::memcmp(a.val.data(), b.val.data(), a.val.size() * sizeof(V)));  // bit for bit
  EXPECT_EQ(a.imag, b.imag);
}

std::string banner(const char* field, const char* symmetry) {
  return fmt::format("%%MatrixMarket matrix coordinate {} {}\n", field, symmetry);
}

// 3000 entry lines over 35 positions (general: row i % 7, column i % 5) or 15 (symmetric: below
// the diagonal), values whose sums depend on their order; `extra` lines appended to the data.
std::string repeating(const char* field = "real", const char* symmetry = "general", const std::string& extra = "",
                      int extra_entries = 0) {
  const bool general = std::string(symmetry) == "general";
  std::string body;
  for (int i = 0; i < 3000; ++i) {
    const int r = general ? 1 + i % 7 : 3 + i % 5, c = general ? 1 + i % 5 : 1 + i % 3;
    if (std::string(field) == "complex")
      body += fmt::format("{} {} {:.17g} {}\n", r, c, 1.0 / (i + 1), i % 3);
    else
      body += fmt::format("{} {} {:.17g}\n", r, c, i % 2 ? 1e16 / (i + 1) : 1.0 / (i + 3));
  }
  return banner(field, symmetry) + fmt::format("% repeats\n100 100 {}\n", 3000 + extra_entries) + body + extra;
}

}  // namespace

// Held as its distinct positions, summed in file order: the copying conversion's matrix, bit for
// bit, on one thread and on three in small blocks.
TEST(ReaderRepeats, HeldAsDistinctPositionsSummedInFileOrder) {
  const std::string text = repeating();
  const auto whole = read(text, 1, kNever);
  ASSERT_EQ(whole.coo.nnz(), 3000);
  for (const int threads : {1, 3}) {
    const auto merged = read(text, threads, 16);
    EXPECT_EQ(merged.coo.nnz(), 35) << threads;
    expect_same_csr(coo_to_csr(merged.coo), coo_to_csr(whole.coo));
  }
}

// Complex values and a float read: the imaginary parts summed alike; float sums taken in double and
// rounded once, as coo_to_csr rounds them.
TEST(ReaderRepeats, ComplexAndFloatSumsAsTheConversions) {
  const std::string complex = repeating("complex");
  const auto c = read(complex, 3, 16);
  EXPECT_EQ(c.coo.nnz(), 35);
  expect_same_csr(coo_to_csr(c.coo), coo_to_csr(read(complex, 1, kNever).coo));
  const std::string real = repeating();
  const auto f = read<float>(real, 3, 16);
  EXPECT_EQ(f.coo.nnz(), 35);
  expect_same_csr(coo_to_csr(f.coo), coo_to_csr(read<float>(real, 1, kNever).coo));
  // 2^24 then 1000 ones: float partial sums would stay at 2^24; in double they reach 2^24 + 1000.
  std::string big = banner("real", "general") + "40 40 1001\n1 1 16777216\n";
  for (int i = 0; i < 1000; ++i) big += "1 1 1\n";
  const auto b = read<float>(big, 1, 16);
  EXPECT_EQ(b.coo.nnz(), 1);
  EXPECT_EQ(coo_to_csr(b.coo).val, std::vector<float>{16778216.0f});
}

// Symmetric files: mirrors of the merged entries, and a pair stored in both triangles named on the
// lines where its entries first occur, as in a read that keeps every entry.
TEST(ReaderRepeats, SymmetricMirrorsAndPairErrorLines) {
  const std::string sym = repeating("real", "symmetric");
  const auto merged = read(sym, 3, 16);
  EXPECT_EQ(merged.coo.nnz(), 15 + 14);  // 15 positions, all but (3,3) off the diagonal and mirrored
  expect_same_csr(coo_to_csr(merged.coo), coo_to_csr(read(sym, 1, kNever).coo));
  // (3,1) first occurs at entry 0, line 4; its mirror (1,3) comes last, on line 3004.
  const std::string pair = repeating("real", "symmetric", "1 3 5\n", 1);
  const std::string e = error_of(pair, 3, 16);
  EXPECT_EQ(e, error_of(pair, 1, kNever));
  EXPECT_NE(e.find("r.mtx:3004:"), std::string::npos) << e;
  EXPECT_NE(e.find("line 4"), std::string::npos) << e;
}

// Errors after merging began name the same lines as a read that keeps every entry.
TEST(ReaderRepeats, ErrorsKeepTheirLines) {
  const std::string bad = repeating("real", "general", "1 x 1\n", 1);
  EXPECT_NE(error_of(bad, 3, 16).find("r.mtx:3004:"), std::string::npos) << error_of(bad, 3, 16);
  EXPECT_EQ(error_of(bad, 3, 16), error_of(bad, 1, kNever));
  const std::string more = repeating("real", "general", "1 1 1\n2 2 2\n", 1);  // one entry past the count
  EXPECT_NE(error_of(more, 3, 16).find("r.mtx:3005: too many entries"), std::string::npos) << error_of(more, 3, 16);
  EXPECT_EQ(error_of(more, 3, 16), error_of(more, 1, kNever));
  // A float sum beyond float's range: refused on the line where the position first occurs.
  std::string over = banner("real", "general") + "20 20 200\n2 2 1\n";
  for (int i = 0; i < 199; ++i) over += "1 1 3e38\n";
  const std::string o = error_of<float>(over, 3, 16);
  EXPECT_NE(o.find("r.mtx:4: the duplicate entries at row 1, column 1 sum beyond single precision"), std::string::npos)
      << o;
  EXPECT_THROW(coo_to_csr(read<float>(over, 1, kNever).coo), Unsupported);  // the same refusal without merging
}

// A file that repeats, then stops repeating, then repeats again: merging ends and starts again,
// and the matrix is still the one of every entry kept.
TEST(ReaderRepeats, FileThatChangesCharacter) {
  std::string body;
  int n = 0;
  // Text held in memory is parsed in blocks of at least 64 KiB: each stretch spans a few.
  for (int i = 0; i < 4000; ++i, ++n) body += fmt::format("5 5 {:.17g}\n", 1.0 / (i + 7));
  for (int i = 0; i < 8000; ++i, ++n) body += fmt::format("{} {} {:.17g}\n", 1 + i % 100, 1 + i / 100, 1.0 / (i + 1));
  for (int i = 0; i < 12000; ++i, ++n) body += fmt::format("{} 3 {:.17g}\n", 1 + i % 2, 3.0 / (i + 1));
  const std::string text = banner("real", "general") + fmt::format("1000 1000 {}\n", n) + body;
  for (const int threads : {1, 3}) {
    const auto merged = read(text, threads, 16);
    EXPECT_LT(merged.coo.nnz(), 8000 + 2000) << threads;  // most of both repeating stretches merged
    expect_same_csr(coo_to_csr(merged.coo), coo_to_csr(read(text, 1, kNever).coo));
  }
  const auto f = read<float>(text, 3, 16);
  expect_same_csr(coo_to_csr(f.coo), coo_to_csr(read<float>(text, 1, kNever).coo));
}

// A float read whose merging stops keeps the positions' sums in double: a repeat after the stop is
// added to the exact sum, not to its rounding (2^24 + 1 + 1 is 2^24 + 2, not 2^24), and a sum that
// passes float's range and comes back is no error.
TEST(ReaderRepeats, FloatSumsStayInDoubleAfterMergingStops) {
  std::string body = "1 1 16777216\n1 1 1\n3 3 3e38\n3 3 3e38\n";
  int n = 4;
  for (int i = 0; i < 11000; ++i, ++n) body += "2 2 1\n";                                           // merging starts
  for (int i = 0; i < 12000; ++i, ++n) body += fmt::format("{} {} 1\n", 4 + i % 100, 1 + i / 100);  // and stops
  body += "1 1 1\n3 3 -3e38\n";
  n += 2;
  const std::string text = banner("real", "general") + fmt::format("1000 1000 {}\n", n) + body;
  const auto merged = read<float>(text, 3, 16);
  EXPECT_LT(merged.coo.nnz(), n - 10000);
  const CsrF32 a = coo_to_csr(merged.coo);
  expect_same_csr(a, coo_to_csr(read<float>(text, 1, kNever).coo));
  EXPECT_EQ(a.val[0], 16777218.0f);
  EXPECT_EQ(a.val[a.row_ptr[2]], 3e38f);
}

// Many rows of one column (keys that differ in the row only) merge as any others, here a file
// cycling through 4000 positions (a sample of the last 16384 entries sees each repeat).
TEST(ReaderRepeats, OneColumnOfManyRows) {
  std::string body;
  for (int i = 0; i < 40000; ++i) body += fmt::format("{} 1 {:.17g}\n", 1 + (i * 7) % 4000, 1.0 / (i + 1));
  const std::string text = banner("real", "general") + "4000 100 40000\n" + body;
  const auto merged = read(text, 3, 16);
  EXPECT_EQ(merged.coo.nnz(), 4000);
  expect_same_csr(coo_to_csr(merged.coo), coo_to_csr(read(text, 1, kNever).coo));
}

// A file cycling through more positions than the exact sample's 16384 entries can show repeating
// (12000, 24 times over) is merged too, once a sample's window holds four entries a position (an
// estimate of the distinct positions over up to 2^18 entries). The samples come at doublings of the
// entries held and look at those since the last, so the last one sees at least a quarter of the
// file's 288000: 72000 entries, six a position. It was held whole.
TEST(ReaderRepeats, LongCyclesAreMergedToo) {
  constexpr int kPositions = 12000, kEntries = 24 * kPositions;
  std::string body;
  for (int i = 0; i < kEntries; ++i) {
    const int r = (i * 7) % kPositions;
    body += fmt::format("{} {} {:.17g}\n", 1 + r, 1 + r % 3, 1.0 / (i + 1));
  }
  const std::string text = banner("real", "general") + fmt::format("{0} {0} {1}\n", kPositions, kEntries) + body;
  const auto merged = read(text, 2, 16, std::size_t{1} << 16);
  EXPECT_EQ(merged.coo.nnz(), kPositions);
  expect_same_csr(coo_to_csr(merged.coo), coo_to_csr(read(text, 1, kNever).coo));
}
