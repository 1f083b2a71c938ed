// The reader straight into CSR (src/io/mm_direct): for every file it takes, the matrix of the read
// through the COO bit for bit, or that read's error word for word, on one thread and on several in
// small blocks; the files it gives up on (entries in both triangles of a symmetric file, a file of
// repeated positions, a line the two passes count differently) read through the COO instead.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <string>

#include "straight_csr_cases.hpp"

using namespace spmv;
using namespace spmv::test;

TEST(ReaderStraightToCsr, EveryFieldAndSymmetryGivesTheMatrixOfTheReadThroughTheCoo) {
  for_each_field_and_symmetry([](const std::string& field, const std::string& text) {
    EXPECT_EQ(expect_as_through_coo(text), 2) << "given up";
    if (field != "complex") EXPECT_EQ(expect_as_through_coo<float>(text), 2) << "given up (float)";
  });
}

TEST(ReaderStraightToCsr, HandWrittenFilesGiveTheSameMatricesAndErrors) {
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(std::string(SPMV_TEST_DATA) + "/mm")) {
    const std::string name = f.path().filename().string();
    SCOPED_TRACE(name);
    const int taken = expect_as_through_coo(test::slurp(f.path()), 40);
    // Taken: every valid coordinate file but the symmetric one with entries in both triangles.
    const bool valid_coordinate =
        !name.starts_with("bad_") && !name.starts_with("array_") && name != "vector_array.mtx";
    EXPECT_EQ(taken, valid_coordinate && name != "coord_symmetric_mixed.mtx" ? 2 : 0);
    ++files;
  }
  EXPECT_GT(files, 60);
}

// Blank and comment lines inside the data, CRLF, tabs, a last line without '\n', an index with
// leading zeros, huge and tiny values: errors and matrices as through the COO.
TEST(ReaderStraightToCsr, OddButValidLinesReadAlike) {
  const std::string body = "3 1 1.5\r\n\n% a comment\n  2\t2   -2e-300\n1 3 1e308\n001 1 4\n2 3 .5\n3 3 7";
  EXPECT_EQ(expect_as_through_coo(coordinate("real", "general", 3, body, 6), 8), 2);
}

TEST(ReaderStraightToCsr, ErrorsNameTheLinesTheReadThroughTheCooNames) {
  for_each_bad_general_file([](const std::string& text) { expect_as_through_coo(text, 8); });
  expect_as_through_coo(coordinate("real", "skew-symmetric", 3, "2 1 1\n2 2 1\n", 2), 8);
}

// A general file in row order is read in one pass; one whose rows decrease only late (blocks
// already appended) is read again in two: either way the matrix of the read through the COO.
TEST(ReaderStraightToCsr, RowOrderToTheEndOrNotGivesTheSameMatrix) {
  std::string in_order, late;
  int count = 0;
  for (int r = 1; r <= 300; r += 1 + r % 3) {  // rows skipped: empty rows
    for (int k = 0; k < 1 + r % 4; ++k, ++count) {
      const std::string line = fmt::format("{} {} {:.17g}\n", r, 1 + (r * 7 + k * 13) % 50, 1.0 / (count + 3));
      in_order += line;
      if (k == 3) in_order += line;  // a duplicate, summed
    }
  }
  const int lines = static_cast<int>(std::count(in_order.begin(), in_order.end(), '\n'));
  late = in_order + "2 2 0.5\n";
  EXPECT_EQ(expect_as_through_coo(coordinate("real", "general", 300, in_order, lines), 300), 2);
  EXPECT_EQ(expect_as_through_coo(coordinate("real", "general", 300, late, lines + 1), 300), 2);
  EXPECT_EQ(expect_as_through_coo<float>(coordinate("real", "general", 300, late, lines + 1), 300), 2);
}

// Given up and read through the COO: the same matrix or error as that read, never a wrong one.
TEST(ReaderStraightToCsr, FilesItGivesUpOnReadThroughTheCoo) {
  // An entry in each triangle of a symmetric file; a mirrored pair, which is an error there, by line.
  EXPECT_EQ(expect_as_through_coo(coordinate("real", "symmetric", 3, "2 1 1\n1 3 2\n", 2)), 0);
  EXPECT_EQ(expect_as_through_coo(coordinate("real", "symmetric", 3, "2 1 1\n1 2 2\n", 2)), 0);
  EXPECT_NE(
      read(coordinate("real", "symmetric", 3, "2 1 1\n1 2 2\n", 2), StraightToCsr::Always, 1).error.find("mirrors"),
      std::string::npos);
  // A row index pass 1 does not read (more than 18 digits) but the parser takes.
  EXPECT_EQ(expect_as_through_coo(coordinate("real", "general", 3, "3 3 3\n0000000000000000000002 1 1\n", 2)), 0);
  // Mostly repeated positions (sampled from the 64th entry on, blocks of more than the sample's
  // 16384 entries): merged as read through the COO; never sampled, summed in the CSR.
  std::string body;
  for (int i = 0; i < 30000; ++i) body += fmt::format("{} {} {:.17g}\n", 1 + i % 7, 1 + i % 5, 1.0 / (i + 3));
  const std::string repeats = coordinate("real", "general", 200, body, 30000);
  ASSERT_EQ(read(repeats, StraightToCsr::Never, 1).read.csr.nnz(), 35);
  EXPECT_EQ(expect_as_through_coo(repeats, std::size_t{1} << 20, 64), 0);
  EXPECT_EQ(expect_as_through_coo(repeats, std::size_t{1} << 20, std::int64_t{1} << 40), 2);
}

// Float sums past float's range: refused as through the COO.
TEST(ReaderStraightToCsr, FloatSumsPastFloatsRangeAreRefusedAlike) {
  const std::string text = coordinate("real", "general", 2, "1 1 3e38\n2 2 1\n1 1 3e38\n", 3);
  const Outcome<float> want = read<float>(text, StraightToCsr::Never, 1);
  const Outcome<float> got = read<float>(text, StraightToCsr::Always, 1);
  EXPECT_NE(want.error.find("single precision"), std::string::npos) << want.error;
  EXPECT_EQ(got.error, want.error);
}

// Every shared SuiteSparse matrix (inflated into memory, where the straight read applies).
TEST(ReaderStraightToCsr, SharedMatricesGiveTheMatricesOfTheReadThroughTheCoo) {
  int taken = 0, seen = 0;
  const int files = for_each_shared_matrix([&](const std::filesystem::path& path, const std::string& text) {
    const Outcome<double> want = read(text, StraightToCsr::Never, 4);
    ASSERT_EQ(want.error, "");
    for (const int threads : {1, 4}) {
      const Outcome<double> got = read(text, StraightToCsr::Always, threads, threads == 1 ? 0 : std::size_t{1} << 16);
      ASSERT_EQ(got.error, "");
      expect_same(got.read.csr, want.read.csr);
      taken += got.read.straight;
    }
    if (seen++ % 8 == 0) {  // the mapped .gz itself, inflated twice
      io::detail::ByteSource gz = io::detail::ByteSource::open(path.string());
      const auto direct = io::detail::parse_csr<double>(gz, {.threads = 2}, {.straight_to_csr = StraightToCsr::Always});
      expect_same(direct.csr, want.read.csr);
      EXPECT_TRUE(direct.straight || want.read.csr.symmetry != Symmetry::General);
    }
  });
  EXPECT_GE(files, static_cast<int>(test::shared_count(70, 14)));
  EXPECT_GE(taken, 2 * files - 20);  // array files and symmetric ones storing both triangles aside
}

// Left to itself the reader goes straight to CSR for a general file in row order, and for one out
// of order (or symmetric) only where the COO would pass its memory bound: not for small files.
TEST(ReaderStraightToCsr, AutoTakesRowOrderAndLeavesSmallFilesOutOfOrderToTheCoo) {
  EXPECT_FALSE(read(scattered("real", "general", false, 41, 700), StraightToCsr::Auto, 1).read.straight);
  EXPECT_FALSE(read(scattered("real", "symmetric", true, 41, 700), StraightToCsr::Auto, 1).read.straight);
  std::string body;
  for (int r = 1; r <= 40; ++r) body += fmt::format("{} {} {}\n", r, 41 - r, r);
  const std::string in_order = coordinate("real", "general", 41, body, 40);
  for (const int threads : {1, 3}) {
    const Outcome<double> got = read(in_order, StraightToCsr::Auto, threads, 64);
    EXPECT_TRUE(got.read.straight);
    expect_same(got.read.csr, read(in_order, StraightToCsr::Never, threads, 64).read.csr);
  }
}

// Blocks of more entries than a thread stages at once (2^18): staged and placed a slice at a time.
TEST(ReaderStraightToCsr, LargeBlocksArePlacedASliceAtATime) {
  for (const char* symmetry : {"general", "symmetric"}) {
    SCOPED_TRACE(symmetry);
    const std::string text = scattered("real", symmetry, std::string(symmetry) != "general", 60000, 700000);
    EXPECT_EQ(expect_as_through_coo(text, std::size_t{8} << 20), 2);
  }
}

// Gzip in memory is inflated again for the second pass (and for the read through the COO when a
// pass gives up): the same matrices and errors.
TEST(ReaderStraightToCsr, GzipInMemoryIsInflatedAgainForTheSecondPass) {
  for (const char* symmetry : {"general", "symmetric", "skew-symmetric"}) {
    SCOPED_TRACE(symmetry);
    const std::string text = scattered("real", symmetry, std::string(symmetry) != "general", 41, 700);
    EXPECT_EQ(expect_as_through_coo(gzipped(text), 200), 2);
  }
  std::string body;
  for (int r = 1; r <= 40; ++r) body += fmt::format("{} {} {}\n", r, 41 - r, r);
  EXPECT_EQ(expect_as_through_coo(gzipped(coordinate("real", "general", 41, body, 40)), 64), 2);
  EXPECT_EQ(expect_as_through_coo(gzipped(coordinate("real", "general", 41, body + "1 1 1\n", 41)), 64), 2);
  EXPECT_EQ(expect_as_through_coo(gzipped(coordinate("real", "symmetric", 3, "2 1 1\n1 2 2\n", 2))), 0);  // an error
  // Left to itself the reader inflates twice only past the memory bound: not for a small file.
  EXPECT_FALSE(read(gzipped(scattered("real", "general", false, 41, 700)), StraightToCsr::Auto, 1).read.straight);
}

// A float read whose repeats the read through the COO merges as it reads (its sample, the last
// 16384 entries, spans three blocks of 7286 lines here, mostly repeats) where the straight read's
// sample of the last block (half of it new positions) sees too few: a sum past float's range is
// refused alike, naming its line.
TEST(ReaderStraightToCsr, FloatSumsTheCooMergesAreRefusedByLine) {
  std::string body;
  int lines = 0;
  for (int i = 0; i < 14572; ++i, ++lines) body += "1 1 3e38\n";  // 9 bytes: blocks of 65576 bytes hold 7286
  for (int i = 0; i < 3643; ++i, lines += 2) body += fmt::format("1 {} 1\n1 1 3e38\n", 1000 + i);
  const std::string text = coordinate("real", "general", 9999, body, lines);
  EXPECT_EQ(expect_as_through_coo<float>(text, 40, 21858), 0);
  const std::string error = read<float>(text, StraightToCsr::Always, 3, 40, 21858).error;
  EXPECT_NE(error.find("d.mtx:4:"), std::string::npos) << error;
}

// Fewer threads than asked (a read from inside a parallel region, nested parallelism off): every
// row range is still placed, by the threads there are.
TEST(ReaderStraightToCsr, FewerThreadsThanAskedStillPlaceEveryRow) {
  const std::string text = scattered("real", "symmetric", true, 41, 700);
  const Outcome<double> want = read(text, StraightToCsr::Never, 1);
  Outcome<double> got;
#pragma omp parallel num_threads(2)
#pragma omp single
  got = read(text, StraightToCsr::Always, 4, 200);
  EXPECT_TRUE(got.read.straight);
  expect_same(got.read.csr, want.read.csr);
}

// A gzip stream that breaks off after an error in its text (fuzz_gzip's find, kept in tests/data/fuzz):
// the error the read through the COO meets first, the line's, whatever the straight read inflated
// before giving up (the input is read again in the same pieces as the first time).
TEST(ReaderStraightToCsr, GzipErrorsComeOutInTheOrderTheyDidTheFirstTime) {
  const std::string input = test::slurp(std::string(SPMV_TEST_DATA) + "/fuzz/gzip_error_after_a_line_error.gz");
  ASSERT_GT(input.size(), 100u);
  for (const int threads : {1, 2}) {
    std::string errors[2];
    for (const StraightToCsr how : {StraightToCsr::Never, StraightToCsr::Always}) {
      try {
        io::detail::ByteSource src = io::detail::ByteSource::memory(input, "g.mtx.gz");
        (void)src.head();  // as the reader's entry points peek
        (void)io::detail::parse_csr<double>(src, {.threads = threads},
                                            {.block_bytes = 97, .min_chunk = 7, .straight_to_csr = how});
      } catch (const Error& e) {
        errors[how == StraightToCsr::Always] = e.what();
      }
    }
    EXPECT_EQ(errors[0], "g.mtx.gz:311: too many entries: the size line says 3") << threads;
    EXPECT_EQ(errors[1], errors[0]) << threads;
  }
}
