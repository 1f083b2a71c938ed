// The reader on hostile input (regression tests): every one is an error with
// the file, the line and a bounded message, in bounded memory (the address space is limited while
// reading, so a large allocation would come back as "out of memory" instead of the message), and
// blocks of a large file parse as one: the same entries and exact error lines whatever the threads.
#include <gtest/gtest.h>
#include <spmv/io.hpp>

#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "test_util.hpp"

using namespace spmv;
using test::dump;
using test::error_of;

namespace {

// `f` with the address space capped at what the process maps now plus `extra` bytes.
std::string error_in_bounded_memory(const std::function<void()>& f, std::size_t extra = std::size_t{512} << 20) {
  std::ifstream statm("/proc/self/statm");
  std::size_t vm_pages = 0;
  statm >> vm_pages;
  rlimit old{};
  if (getrlimit(RLIMIT_AS, &old) != 0) return "getrlimit failed";
  rlimit tight = old;
  tight.rlim_cur = std::min<rlim_t>(old.rlim_max, vm_pages * sysconf(_SC_PAGESIZE) + extra);
  if (setrlimit(RLIMIT_AS, &tight) != 0) return "setrlimit failed";
  const std::string msg = error_of(f);
  setrlimit(RLIMIT_AS, &old);
  return msg;
}

constexpr const char* kNoBanner =
    "missing banner: the first line must be '%%MatrixMarket matrix <format> <field> <symmetry>'";

}  // namespace

// 3 GB of NUL bytes once took 5.9 GB before "missing banner"; /dev/zero was read until memory ran out.
TEST(HostileInput, EndlessFirstLineIsMissingBanner) {
  test::ScratchDir dir;
  const std::string nul = dir / "nul.mtx";
  dump(nul, std::string(std::size_t{8} << 20, '\0'));
  EXPECT_EQ(error_in_bounded_memory([&] { io::read_matrix(nul); }), nul + ":1: " + kNoBanner);
  EXPECT_EQ(error_in_bounded_memory([&] { io::read_matrix("/dev/zero"); }), std::string("/dev/zero:1: ") + kNoBanner);
  EXPECT_EQ(error_in_bounded_memory([&] { io::load_csr("/dev/zero"); }), std::string("/dev/zero:1: ") + kNoBanner);
}

// A banner followed by an endless line: no end of line within 64 KiB is an error at that line.
TEST(HostileInput, EndlessLinesAreBounded) {
  test::ScratchDir dir;
  const std::string p = dir / "long_size.mtx";
  dump(p, "%%MatrixMarket matrix coordinate real general\n" + std::string(300000, 'x') + "\n");
  EXPECT_EQ(error_in_bounded_memory([&] { io::read_matrix(p); }),
            p + ":2: a line longer than 65536 bytes before the size line");
  dump(p, "%%MatrixMarket matrix coordinate real general\n2 2 1\n" + std::string(std::size_t{80} << 20, '1'));
  EXPECT_EQ(error_in_bounded_memory([&] { io::read_matrix(p, {.threads = 1}); }),
            p + ":3: a line longer than 65536 bytes (no end of line)");
}

// A token of a megabyte (300 MB once made a 300 MB message), and NUL bytes in one (once cut the
// message at the first NUL): at most 80 bytes quoted, escaped, with the token's length.
TEST(HostileInput, MessagesQuoteAtMostEightyBytesEscaped) {
  test::ScratchDir dir;
  const std::string p = dir / "token.mtx";
  dump(p, "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 " + std::string(1 << 20, 'x') + "\n");
  EXPECT_EQ(error_of([&] { io::read_matrix(p); }),
            p + ":3: value '" + std::string(80, 'x') + "'... (1048576 bytes) is not a number");
  dump(p, std::string("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 \0\0\x01'\\ 1\n", 59));
  EXPECT_EQ(error_of([&] { io::read_matrix(p); }),
            p + ":3: column index '\\x00\\x00\\x01\\x27\\x5c' is not an integer");
  dump(p, "%%MatrixMarket matrix coordinate real general\n2 x" + std::string(200, 'y') + " 1\n");
  EXPECT_EQ(error_of([&] { io::read_matrix(p); }),
            p + ":2: bad size line: cols '" + ("x" + std::string(79, 'y')) + "'... (201 bytes) is not an integer");
}

// A three-line file claiming 2^31-1 rows and one entry once grew `spmv run` to 23.9 GB; a 60-byte
// `100000000 1 0` cost 2.35 GB: the size line is checked against the budget before any allocation.
TEST(HostileInput, SizeLineOverTheBudgetIsRefusedAtItsLine) {
  test::ScratchDir dir;
  const std::string p = dir / "rows.mtx";
  dump(p, "%%MatrixMarket matrix coordinate real general\n2147483647 1 1\n1 1 1\n");
  EXPECT_EQ(error_in_bounded_memory([&] { io::load_csr(p, {.memory_budget_bytes = 1 << 30}); }),
            p + ":2: a 2147483647 x 1 matrix with 1 entries needs 16.0 GiB (row pointers 16.0 GiB, entries 16 B); "
                "the memory budget is 1.0 GiB");
  dump(p, "%%MatrixMarket matrix coordinate real general\n100000000 1 0\n");
  EXPECT_EQ(error_of([&] { io::load_csr(p, {.memory_budget_bytes = 100 << 20}); }),
            p + ":2: a 100000000 x 1 matrix with 0 entries needs 0.7 GiB (row pointers 0.7 GiB, entries 0 B); "
                "the memory budget is 100.0 MiB");
  // The caller's own vectors count: here 8 bytes a row and a column for x and y.
  dump(p, "%%MatrixMarket matrix coordinate real general\n10000000 10000000 1\n1 1 1\n");
  io::ReadOptions ro{.memory_budget_bytes = 200 << 20, .extra_bytes_per_row = 8, .extra_bytes_per_col = 8};
  ro.extra_what = "x and y";
  EXPECT_EQ(error_of([&] { io::load_csr(p, ro); }),
            p + ":2: a 10000000 x 10000000 matrix with 1 entries needs 0.2 GiB (row pointers 76.3 MiB, entries 16 B, "
                "x and y 0.1 GiB); the memory budget is 0.2 GiB");
}

// A size line that lies about the entries of a short plain file allocates for what the bytes can
// hold, and ends with the entry count.
TEST(HostileInput, LyingEntryCountEndsWithTheCount) {
  test::ScratchDir dir;
  const std::string p = dir / "lie.mtx";
  dump(p, "%%MatrixMarket matrix coordinate real general\n100000 100000 1000000000\n1 1 1\n");
  EXPECT_EQ(error_in_bounded_memory([&] { io::load_csr(p); }),
            p + ":3: unexpected end of file: 1 of 1000000000 entries");
}

// A FIFO, opened once (is_binary_cache, the reader and the provenance look each opened it: a
// writer that writes once left the second open waiting forever).
TEST(HostileInput, FifoIsReadOnce) {
  test::ScratchDir dir;
  const std::string fifo = dir / "in.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n% spmv-generated: test\n3 3 2\n1 1 2\n3 2 -1\n";
  std::thread writer([&] { std::ofstream(fifo) << text; });
  const io::LoadedMatrix m = io::load(fifo);
  writer.join();
  EXPECT_EQ(m.matrix.nnz(), 2);
  EXPECT_EQ(m.matrix.val[1], -1.0);
  EXPECT_EQ(m.generated, "test");
}

// A file of many blocks (4 MiB of text a block per thread): the same entries whatever the thread
// count, and an error deep inside reported at its exact line, after blank and comment lines in
// earlier blocks.
TEST(HostileInput, BlocksParseAsOneFile) {
  std::string text = "%%MatrixMarket matrix coordinate real general\n";
  text += "1000 1000 900000\n";
  std::int64_t line = 2;
  for (int i = 0; i < 900000; ++i) {
    if (i % 99991 == 7) {
      text += "% a comment in the data\n\n";
      line += 2;
    }
    text += fmt::format("{} {} {}.25\n", i % 1000 + 1, i / 900 + 1, i);
    ++line;
  }
  ASSERT_GT(text.size(), std::size_t{13} << 20);
  const Coo one = io::parse_matrix_market(text, "big.mtx", {.threads = 1});
  const Coo three = io::parse_matrix_market(text, "big.mtx", {.threads = 3});
  ASSERT_EQ(one.nnz(), 900000);
  EXPECT_EQ(one.row, three.row);
  EXPECT_EQ(one.col, three.col);
  EXPECT_EQ(one.val, three.val);
  EXPECT_EQ(one.val[899999], 899999.25);
  // The last entry's value made bad: its line is the file's last.
  std::string bad = text;
  bad.replace(bad.rfind(".25"), 3, ".2x");
  for (int t : {1, 2, 3})
    EXPECT_EQ(error_of([&] { io::parse_matrix_market(bad, "bad.mtx", {.threads = t}); }),
              fmt::format("bad.mtx:{}: value '899999.2x' is not a number", line))
        << t;
}
