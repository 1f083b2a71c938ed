// The reader into CSR for an input read once (src/io/mm_row_groups, a pipe): the matrix of the read
// through the COO bit for bit and its errors word for word, whether the COO hands over after its
// first block or later, on one thread and on several in small blocks. Two errors are found only at
// the end: a mirrored pair and a float sum past float's range. An input that can be read again is
// then read through the COO, which names their lines; from a pipe they name the entries only.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <string>
#include <thread>
#include <unistd.h>

#include "straight_csr_cases.hpp"

using namespace spmv;
using namespace spmv::test;

namespace {

// Once, against the read through the COO: handed over after the first block (repeat_check 0) and
// after the entries the repeats are first sampled at; returns the reads that went into row groups.
template <class V = double>
int expect_once_as_through_coo(const std::string& text, std::size_t block = 200) {
  return expect_as_through_coo<V>(text, block, 0, StraightToCsr::Once) +
         expect_as_through_coo<V>(text, block, 300, StraightToCsr::Once);
}

// The text through a real pipe (/dev/fd/N, written by another thread as the reader reads).
template <class V = double>
Outcome<V> read_through_pipe(const std::string& text, StraightToCsr how, int threads, std::int64_t repeat_check = 0,
                             std::size_t block_bytes = 0) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  std::thread writer([&] {
    for (std::size_t at = 0; at < text.size();) {
      const ssize_t n = write(fds[1], text.data() + at, text.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    close(fds[1]);
  });
  Outcome<V> o;
  try {
    io::detail::ByteSource src = io::detail::ByteSource::open(fmt::format("/dev/fd/{}", fds[0]));
    o.read = io::detail::parse_csr<V>(
        src, {.threads = threads}, {.block_bytes = block_bytes, .repeat_check = repeat_check, .straight_to_csr = how});
  } catch (const Error& e) {
    o.error = e.what();
  }
  close(fds[0]);  // a writer still blocked gets EPIPE
  writer.join();
  return o;
}

}  // namespace

TEST(ReaderRowGroups, EveryFieldAndSymmetryGivesTheMatrixOfTheReadThroughTheCoo) {
  for_each_field_and_symmetry([](const std::string& field, const std::string& text) {
    EXPECT_EQ(expect_once_as_through_coo(text), 4);
    if (field != "complex") EXPECT_EQ(expect_once_as_through_coo<float>(text), 4) << "float";
  });
}

// Every valid coordinate file goes into row groups, the symmetric one with entries in both
// triangles too (its pairs are checked in the CSR); the errors are the COO's, but for the mirrored pair.
TEST(ReaderRowGroups, HandWrittenFilesGiveTheSameMatricesAndErrors) {
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(std::string(SPMV_TEST_DATA) + "/mm")) {
    const std::string name = f.path().filename().string();
    if (name == "bad_symmetric_both_triangles.mtx") continue;  // below
    SCOPED_TRACE(name);
    const bool valid_coordinate =
        !name.starts_with("bad_") && !name.starts_with("array_") && name != "vector_array.mtx";
    // (no data section, nothing to hand over: coord_empty.mtx)
    const int want = valid_coordinate && name != "coord_empty.mtx" ? 2 : 0;
    EXPECT_EQ(expect_as_through_coo(test::slurp(f.path()), 40, 0, StraightToCsr::Once), want);
    ++files;
  }
  EXPECT_GT(files, 60);
}

TEST(ReaderRowGroups, AMirroredPairIsRefusedByLineOrFromAPipeNamingBothEntries) {
  const std::string text = coordinate("real", "symmetric", 4, "2 1 1\n3 3 1\n4 2 5\n1 2 2\n", 4);
  for (const int threads : {1, 3}) {
    const std::string want = read(text, StraightToCsr::Never, threads, 8, 0).error;
    EXPECT_NE(want.find("d.mtx:7: entry (1,2) mirrors the entry (2,1) on line 4"), std::string::npos) << want;
    EXPECT_EQ(read(text, StraightToCsr::Once, threads, 8, 0).error, want);  // read again through the COO
    const std::string piped = read_through_pipe(text, StraightToCsr::Auto, threads).error;
    EXPECT_NE(
        piped.find(": the entries (1,2) and (2,1) mirror each other: a symmetric file must store each off-diagonal "
                   "pair once (read once from a stream, their lines are not known)"),
        std::string::npos)
        << piped;
  }
  // Both triangles without a pair: the matrix of the read through the COO.
  EXPECT_EQ(
      expect_as_through_coo(coordinate("real", "symmetric", 4, "2 1 1\n1 3 2\n4 4 1\n", 3), 8, 0, StraightToCsr::Once),
      2);
}

TEST(ReaderRowGroups, FloatSumsPastFloatsRangeAreRefusedByLineOrFromAPipeNamingTheEntry) {
  const std::string text = coordinate("real", "general", 2, "2 2 1\n1 1 3e38\n1 1 3e38\n", 3);
  const std::string want = read<float>(text, StraightToCsr::Never, 1, 0, 0).error;
  EXPECT_NE(want.find("single precision"), std::string::npos) << want;
  EXPECT_EQ(read<float>(text, StraightToCsr::Once, 1, 0, 0).error, want);
  EXPECT_EQ(read_through_pipe<float>(text, StraightToCsr::Auto, 1).error,
            "the duplicate entries at row 1, column 1 (1-based) sum beyond single precision's range; read the matrix "
            "in double "
            "precision");
}

// Errors in blocks after the hand-over name the lines the read through the COO names.
TEST(ReaderRowGroups, ErrorsNameTheLinesTheReadThroughTheCooNames) {
  for_each_bad_general_file([](const std::string& text) {
    const Outcome<double> want = read(text, StraightToCsr::Never, 2, 8, 0);
    EXPECT_FALSE(want.error.empty());
    EXPECT_EQ(read(text, StraightToCsr::Once, 2, 8, 0).error, want.error);
  });
}

// A file that mostly repeats positions stays in the COO, merged as it is read (memory follows the
// distinct positions): not handed over.
TEST(ReaderRowGroups, AFileOfRepeatsStaysInTheCooThatMergesIt) {
  std::string body;
  for (int i = 0; i < 30000; ++i) body += fmt::format("{} {} {:.17g}\n", 1 + i % 7, 1 + i % 5, 1.0 / (i + 3));
  const std::string repeats = coordinate("real", "general", 200, body, 30000);
  const Outcome<double> once = read(repeats, StraightToCsr::Once, 1, std::size_t{1} << 20, 64);
  EXPECT_FALSE(once.read.straight);
  EXPECT_EQ(once.read.csr.nnz(), 35);
  expect_same(once.read.csr, read(repeats, StraightToCsr::Never, 1, std::size_t{1} << 20, 64).read.csr);
}

// Rows past one group, groups of many chunks, and blocks of more than 2^16 entries (3 threads
// then add them, each its own groups).
TEST(ReaderRowGroups, ManyGroupsAndChunksGiveTheSameMatrix) {
  for (const char* symmetry : {"general", "symmetric"}) {
    SCOPED_TRACE(symmetry);
    const bool general = std::string(symmetry) == "general";
    EXPECT_EQ(expect_as_through_coo(scattered("real", symmetry, !general, 200000, 300000), std::size_t{1} << 20, 0,
                                    StraightToCsr::Once),
              2);
    EXPECT_EQ(expect_as_through_coo(scattered("real", symmetry, !general, 60000, 700000), std::size_t{8} << 20, 0,
                                    StraightToCsr::Once),
              2);
  }
}

TEST(ReaderRowGroups, SharedMatricesGiveTheMatricesOfTheReadThroughTheCoo) {
  int taken = 0;
  const int files = for_each_shared_matrix([&](const std::filesystem::path&, const std::string& text) {
    const Outcome<double> want = read(text, StraightToCsr::Never, 4);
    ASSERT_EQ(want.error, "");
    for (const int threads : {1, 4}) {
      const Outcome<double> got = read(text, StraightToCsr::Once, threads, threads == 1 ? 0 : std::size_t{1} << 16, 0);
      ASSERT_EQ(got.error, "");
      expect_same(got.read.csr, want.read.csr);
      taken += got.read.straight;
    }
  });
  EXPECT_GE(files, static_cast<int>(test::shared_count(70, 14)));
  EXPECT_GE(taken, 2 * files - 12);  // array files aside
}

// A real pipe goes into row groups once the COO hands over (a small file, under the repeats' first
// sample, stays in the COO); gzip through the pipe alike. (30000 rows: scattered() cycles through
// 7n positions, and 21000 of them ten times over are merged in the COO.)
TEST(ReaderRowGroups, APipeGoesIntoRowGroups) {
  const std::string text = scattered("real", "symmetric", true, 30000, 200000);
  ASSERT_GT(text.size(), std::size_t{1} << 20);  // more than a pipe holds: read as it is written
  const Outcome<double> want = read(text, StraightToCsr::Never, 2);
  ASSERT_EQ(want.error, "");
  for (const std::string& input : {text, gzipped(text)}) {
    for (const int threads : {1, 2}) {
      const Outcome<double> small = read_through_pipe(input, StraightToCsr::Auto, threads, std::int64_t{1} << 21);
      EXPECT_FALSE(small.read.straight);
      expect_same(small.read.csr, want.read.csr);
      for (const StraightToCsr how : {StraightToCsr::Auto, StraightToCsr::Always}) {
        const Outcome<double> got = read_through_pipe(input, how, threads);
        EXPECT_TRUE(got.read.straight);
        expect_same(got.read.csr, want.read.csr);
      }
    }
  }
}

// A general file keeps row order into the CSR's arrays until a row decreases; the entries so far
// then move into row groups a slice of 2^20 at a time from the end (here 1.2M of them, and the
// break early, in the middle, or never).
TEST(ReaderRowGroups, RowOrderGoesOnUntilARowDecreasesThenMovesIntoRowGroups) {
  std::string in_order, middle;
  int lines = 0;
  for (int r = 1; r <= 400000; ++r) {
    for (int k = 0; k < 3; ++k, ++lines) in_order += fmt::format("{} {}\n", r, 1 + (r * 7 + k * 13) % 1000);
    if (r == 200000) middle = in_order + "5 5\n";
  }
  middle += in_order.substr(middle.size() - 4);
  for (const auto& [body, n] :
       {std::pair{in_order, lines}, std::pair{in_order + "9 9\n", lines + 1}, std::pair{middle, lines + 1}}) {
    SCOPED_TRACE(n);
    const std::string text = coordinate("pattern", "general", 400000, body, n);
    const Outcome<double> want = read(text, StraightToCsr::Never, 2);
    ASSERT_EQ(want.error, "");
    ASSERT_EQ(want.read.csr.nnz(), n);
    for (const int threads : {1, 2}) {
      const Outcome<double> got = read(text, StraightToCsr::Once, threads, std::size_t{1} << 20, 0);
      EXPECT_TRUE(got.read.straight);
      expect_same(got.read.csr, want.read.csr);
    }
  }
  // Broken after the first block, with values whose sums depend on their order.
  std::string body;
  for (int r = 1; r <= 3000; ++r) body += fmt::format("{} {} {:.17g}\n", r, r % 7 + 1, 1.0 / (r + 2));
  for (int r = 1; r <= 3000; r += 3) body += fmt::format("{} {} {:.17g}\n", r, r % 7 + 1, 1e16 / (r + 2));
  EXPECT_EQ(expect_once_as_through_coo(coordinate("real", "general", 3000, body, 4000), 4096), 4);
}

// Repeats that start after the first sample go to the COO, which merges them as it reads (memory
// follows the distinct positions): a file that can be read again is read again; from a pipe the
// entries held so far (row groups, or the CSR's arrays while in row order) and the block move into
// the COO, each position's entries in file order, so the sums are the read through the COO's bit
// for bit. Every field and symmetry, double and float.
TEST(ReaderRowGroups, RepeatsStartingLaterGoBackToTheCooThatMergesThem) {
  const auto check = [](const std::string& text, auto v) {
    using V = decltype(v);
    const Outcome<V> want = read<V>(text, StraightToCsr::Never, 2, std::size_t{64} << 10, 64);
    ASSERT_EQ(want.error, "");
    for (const int threads : {1, 2}) {
      const Outcome<V> got = read<V>(text, StraightToCsr::Once, threads, std::size_t{64} << 10, 64);
      EXPECT_FALSE(got.read.straight);
      expect_same(got.read.csr, want.read.csr);
      // Blocks of 64 KiB: the merger starts at a later sample; of 1 MiB (16K+ entries, the sample's
      // size), at the hand-over itself, over the drained entries.
      for (const std::size_t block : {std::size_t{64} << 10, std::size_t{1} << 20}) {
        const Outcome<V> piped = read_through_pipe<V>(text, StraightToCsr::Auto, threads, 64, block);
        ASSERT_EQ(piped.error, "");
        EXPECT_FALSE(piped.read.straight);
        expect_same(piped.read.csr, want.read.csr);
      }
    }
  };
  for (const char* field : {"real", "integer", "pattern", "complex"}) {
    for (const char* symmetry : {"general", "symmetric", "skew-symmetric", "hermitian"}) {
      if (std::string(symmetry) == "hermitian" && std::string(field) != "complex") continue;
      if (std::string(symmetry) == "skew-symmetric" && std::string(field) == "pattern") continue;
      SCOPED_TRACE(fmt::format("{} {}", field, symmetry));
      const bool complex = std::string(field) == "complex", pattern = std::string(field) == "pattern";
      const auto value = [&](int i) {
        if (pattern) return std::string();
        if (std::string(field) == "integer") return fmt::format(" {}", i % 17 - 8);
        return complex ? fmt::format(" {:.17g} {:.17g}", 1.0 / (i + 3), 1.0 / (i + 5))
                       : fmt::format(" {:.17g}", 1.0 / (i + 3));
      };
      std::string body;  // distinct positions below the diagonal in no row order, then 60000 repeats of 3
      for (int i = 0; i < 30000; ++i) {
        const int r = 2 + (i * 37) % 4999, c = 1 + i % (r - 1);
        body += fmt::format("{} {}{}\n", r, c, value(i));
      }
      for (int i = 0; i < 60000; ++i) body += fmt::format("{} 1{}\n", 2 + i % 3, value(i + 7));
      const std::string text = coordinate(field, symmetry, 5000, body, 90000);
      check(text, double{});
      if (!complex) check(text, float{});
    }
  }
  // In row order up to the repeats (which keep it: the last row's): the CSR's arrays move into the COO.
  std::string body;
  for (int r = 1; r <= 5000; ++r)
    for (int k = 0; k < 6; ++k)
      body += fmt::format("{} {} {:.17g}\n", r, 1 + (r * 7 + k * 13) % 1000, 1.0 / (r + k + 3));
  for (int i = 0; i < 60000; ++i)
    body += fmt::format("5000 {} {:.17g}\n", 1 + (5000 * 7 + (i % 3) * 13) % 1000, 1.0 / (i + 7));
  check(coordinate("real", "general", 5000, body, 90000), double{});
}

// A mirrored pair split by the hand-over to the COO, from a pipe: the entry read before it is named
// by the range of lines read before it (those entries kept no lines), the one after by its line.
TEST(ReaderRowGroups, AMirroredPairAcrossTheHandOverNamesTheLinesItCan) {
  std::string body = "3 2 1.5\n";
  for (int i = 0; i < 29999; ++i)
    body += fmt::format("{} {} 1\n", 8 + (i * 37) % 4990, 4 + i % 4);  // below the diagonal
  for (int i = 0; i < 60000; ++i) body += fmt::format("{} 1 0.5\n", 2 + i % 3);
  body += "2 3 2.5\n";
  const std::string text = coordinate("real", "symmetric", 5000, body, 90001);
  const Outcome<double> piped = read_through_pipe(text, StraightToCsr::Auto, 1, 64, std::size_t{64} << 10);
  const std::string& e = piped.error;
  EXPECT_EQ(e.rfind("/dev/fd/", 0), 0u) << e;
  EXPECT_NE(e.find(":90004: entry (2,3) mirrors the entry (3,2) on a line in 4-"), std::string::npos) << e;
  EXPECT_NE(e.find(": a symmetric file must store each off-diagonal pair once"), std::string::npos) << e;
}

// A row longer than a slice (2^20 entries) moves into row groups in pieces, in file order; the
// rows after the last entry's stay empty.
TEST(ReaderRowGroups, ARowLongerThanASliceMovesInPieces) {
  std::string body;
  const int long_row = (1 << 20) + 5000;
  for (int c = 1; c <= long_row; ++c) body += fmt::format("1 {}\n", c);
  body += "2 7\n1 5\n";  // in order, then row 1 again (a duplicate of (1,5))
  const std::string text = coordinate("pattern", "general", 2000000, body, long_row + 2);
  const Outcome<double> want = read(text, StraightToCsr::Never, 2);
  ASSERT_EQ(want.error, "");
  ASSERT_EQ(want.read.csr.nnz(), long_row + 1);
  const Outcome<double> got = read(text, StraightToCsr::Once, 2, std::size_t{4} << 20, 0);
  EXPECT_TRUE(got.read.straight);
  expect_same(got.read.csr, want.read.csr);
}

// A size line whose count the file cannot hold: the arrays are sized from what the bytes can hold,
// and the error is the COO read's, not an allocation's.
TEST(ReaderRowGroups, ACountTheFileCannotHoldEndsAsTheCooReadEnds) {
  std::string body;
  for (int i = 0; i < 200; ++i) body += fmt::format("{} {} 1\n", 1 + (i * 7919) % 10000000, 1 + i);
  const std::string text = coordinate("real", "general", 10000000, body, 100000000000);
  const std::string want = read(text, StraightToCsr::Never, 1, 0, 0).error;
  EXPECT_NE(want.find("unexpected end of file: 200 of 100000000000 entries"), std::string::npos) << want;
  EXPECT_EQ(read(text, StraightToCsr::Once, 1, 0, 0).error, want);
}
