// The reader in single precision (io::load_f32, CsrF32) and the binary cache's value type: each
// entry of a file read into float is the double reading's value rounded once (duplicates then summed
// in double, rounded once), a value or a sum of duplicates beyond float's range is refused with its
// place, and caches store and convert the type.
#include <spmv/io.hpp>
#include <spmv/plan.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <string>

#include "io/byte_source.hpp"
#include "io/io_internal.hpp"
#include "test_util.hpp"

using namespace spmv;
using test::dump;
using test::error_of;

namespace {

const std::string kDir = std::string(SPMV_TEST_DATA) + "/mm";

// Same structure, and every value the float nearest to b's (bit for bit; NaN compared as NaN).
void expect_rounded_from(const CsrF32& f, const Csr& d) {
  EXPECT_EQ(f.rows, d.rows);
  EXPECT_EQ(f.cols, d.cols);
  EXPECT_EQ(f.field, d.field);
  EXPECT_EQ(f.symmetry, d.symmetry);
  EXPECT_EQ(f.row_ptr, d.row_ptr);
  EXPECT_EQ(f.col, d.col);
  ASSERT_EQ(f.val.size(), d.val.size());
  for (std::size_t i = 0; i < f.val.size(); ++i) {
    const float want = static_cast<float>(d.val[i]);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(f.val[i])) << i;
    else
      EXPECT_EQ(std::memcmp(&f.val[i], &want, sizeof want), 0) << i << ": " << f.val[i] << " vs " << want;
  }
  EXPECT_TRUE(f.imag.empty());
}

// Every real, integer and pattern file of the test data, in every symmetry and both formats.
std::vector<std::string> real_files() {
  std::vector<std::string> v;
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("bad_") || name.find("complex") != std::string::npos || name.starts_with("vector_")) continue;
    v.push_back(e.path().string());
  }
  return v;
}

}  // namespace

TEST(FloatReader, EqualsTheDoubleReadRoundedOnce) {
  const auto files = real_files();
  ASSERT_GE(files.size(), 15u);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const io::LoadedMatrix d = io::load(f);
    const io::LoadedMatrixF32 s = io::load_f32(f);
    expect_rounded_from(s.matrix, d.matrix);
    EXPECT_EQ(s.generated, d.generated);
    EXPECT_EQ(csr_structure_error(s.matrix), "");
  }
  // Duplicates are summed in double and rounded once: 1 + 2^-30 + 2^-30 is 1 + 2^-29 in double,
  // which rounds to 1.0f; summed in float each addend would vanish the same way, so take values
  // whose float sum differs: 2^24 + 1 + 1 is 2^24 + 2 exactly, while float would keep 2^24.
  const std::string text = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 16777216\n1 1 1\n1 1 1\n";
  const CooF32 coo = io::parse_matrix_market_f32(text, "dup.mtx");
  ASSERT_EQ(coo.val.size(), 3u);
  const CsrF32 csr = coo_to_csr(coo);
  ASSERT_EQ(csr.val.size(), 1u);
  EXPECT_EQ(csr.val[0], 16777218.0f);
  // Each entry is rounded as it is read, before the sum: cancelling duplicates keep what their
  // rounded values leave (2^24 + 1 rounds to 2^24), where double sums first (documented in io.hpp).
  const std::string cancel = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 16777217\n1 1 -16777216\n";
  EXPECT_EQ(coo_to_csr(io::parse_matrix_market_f32(cancel, "c.mtx")).val, std::vector<float>{0.0f});
  EXPECT_EQ(coo_to_csr(io::parse_matrix_market(cancel, "c.mtx")).val, std::vector<double>{1.0});
}

// A large file parsed on several threads in small blocks gives the serial read's floats.
TEST(FloatReader, ParallelReadEqualsSerial) {
  std::string text = "%%MatrixMarket matrix coordinate real symmetric\n500 500 20000\n";
  for (int i = 0; i < 20000; ++i)
    text += fmt::format("{} {} {:.17g}\n", 250 + i % 251, 1 + i % 250, std::sin(i) * 1e3 / 3);
  io::detail::ByteSource one = io::detail::ByteSource::memory(text, "t.mtx");
  io::detail::ByteSource many = io::detail::ByteSource::memory(text, "t.mtx");
  const auto a = io::detail::parse<float>(one, {.threads = 1});
  const auto b = io::detail::parse<float>(many, {.threads = 3}, {.block_bytes = 4096, .min_chunk = 64});
  EXPECT_EQ(a.coo.row, b.coo.row);
  EXPECT_EQ(a.coo.col, b.coo.col);
  EXPECT_EQ(a.coo.val, b.coo.val);
  std::size_t diagonal = 0;
  for (int i = 0; i < 20000; ++i) diagonal += 250 + i % 251 == 1 + i % 250;
  EXPECT_EQ(a.coo.row.size(), 2u * 20000 - diagonal);  // mirrors appended, the diagonal once
  const Coo d = io::parse_matrix_market(text, "t.mtx");
  ASSERT_EQ(d.val.size(), a.coo.val.size());
  for (std::size_t i = 0; i < d.val.size(); ++i) ASSERT_EQ(a.coo.val[i], static_cast<float>(d.val[i])) << i;
}

// A value that would round to infinity in float is refused on its line, whichever path parses it
// (the fast path inside the file, the general one on its last line, array files, several threads);
// float's largest value, values that underflow to zero or denormals, and inf in the file are not.
TEST(FloatReader, ValuesBeyondFloatAreRefusedWithTheirLine) {
  test::ScratchDir dir;
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  std::string text = head + "1000 10 3000\n";
  for (int i = 0; i < 3000; ++i)
    text += fmt::format("{} {} {}\n", i % 1000 + 1, i % 10 + 1, i == 1700 ? "1e300" : "0.5");
  dump(dir / "mid.mtx", text);
  const std::string msg =
      ":1703: value 1e+300 does not fit in single precision (largest 3.4028235e+38): read the file in double precision";
  EXPECT_EQ(error_of([&] { io::load_f32(dir / "mid.mtx"); }), dir / "mid.mtx" + msg);
  EXPECT_EQ(error_of([&] { io::load_f32(dir / "mid.mtx", {.threads = 3}); }), dir / "mid.mtx" + msg);
  EXPECT_EQ(io::load(dir / "mid.mtx").matrix.nnz(), 1000);  // double reads it (duplicates summed)

  dump(dir / "last.mtx", head + "2 2 2\n1 1 1\n2 2 -3.5e38\n");
  EXPECT_EQ(error_of([&] { io::load_f32(dir / "last.mtx"); }),
            dir /
                "last.mtx:4: value -3.5e+38 does not fit in single precision (largest 3.4028235e+38): read the file in "
                "double precision");
  dump(dir / "array.mtx", "%%MatrixMarket matrix array real symmetric\n% c\n2 2\n1\n1e39\n3\n");
  EXPECT_EQ(error_of([&] { io::load_f32(dir / "array.mtx"); }),
            dir /
                "array.mtx:5: value 1e+39 does not fit in single precision (largest 3.4028235e+38): read the file in "
                "double precision");

  dump(dir / "edge.mtx", head + "1 5 5\n1 1 3.4028235e38\n1 2 -3.40282356e38\n1 3 1e-50\n1 4 1e-40\n1 5 inf\n");
  const CsrF32 e = io::load_f32(dir / "edge.mtx").matrix;
  ASSERT_EQ(e.val.size(), 5u);
  EXPECT_EQ(e.val[0], std::numeric_limits<float>::max());
  EXPECT_EQ(e.val[1], -std::numeric_limits<float>::max());  // rounds to the largest, not beyond
  EXPECT_EQ(e.val[2], 0.0f);                                // underflow is rounding, as in double
  EXPECT_EQ(e.val[3], static_cast<float>(1e-40));           // a denormal
  EXPECT_TRUE(std::isinf(e.val[4]));                        // the file's own infinity stays
  // One rule everywhere: what the reader keeps, a double matrix holding it plans in single too.
  const Csr d = io::load(dir / "edge.mtx").matrix;
  EXPECT_EQ(to_float(d).val[1], -std::numeric_limits<float>::max());
  PlanOptions single;
  single.precision = Precision::Single;
  EXPECT_NO_THROW(make_plan(d, Backend::Serial, "csr", single));
}

// Duplicates summing beyond float are refused naming the entry; complex files read in double only.
TEST(FloatReader, OverflowingSumsAndComplexAreRefused) {
  test::ScratchDir dir;
  dump(dir / "dup.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n2 3 3e38\n1 1 1\n2 3 3e38\n");
  EXPECT_EQ(error_of([&] { io::load_f32(dir / "dup.mtx"); }),
            dir /
                "dup.mtx: the duplicate entries at row 2, column 3 (1-based) sum beyond single precision's range; "
                "read the matrix in double precision");
  EXPECT_EQ(io::load(dir / "dup.mtx").matrix.val[1], 6e38);
  // Rows already in order take the in-place conversion: the same refusal there.
  dump(dir / "dup_sorted.mtx",
       "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 1 2\n2 3 -3e38\n2 3 -3e38\n");
  EXPECT_EQ(
      error_of([&] { io::load_f32(dir / "dup_sorted.mtx"); }),
      dir /
          "dup_sorted.mtx: the duplicate entries at row 2, column 3 (1-based) sum beyond single precision's range; "
          "read the matrix in double precision");
  dump(dir / "c.mtx", "\n%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n");
  EXPECT_EQ(error_of([&] { io::load_f32(dir / "c.mtx"); }),
            dir / "c.mtx:2: a complex matrix is read in double precision only");
}

// A float matrix's cache stores 4-byte values and reads back bit-identical; either type reads as
// the other (float widened exactly, double rounded and range-checked); older versions still read.
TEST(FloatReader, BinaryCacheStoresTheValuesType) {
  test::ScratchDir dir;
  const Csr d = coo_to_csr(test::random_coo(300, 200, 0.05, 11));
  const CsrF32 f = to_float(d);
  io::write_binary(dir / "f.spmvbin", f, true);
  io::write_binary(dir / "d.spmvbin", d);
  const auto nnz = static_cast<std::uintmax_t>(d.nnz());
  EXPECT_EQ(std::filesystem::file_size(dir / "f.spmvbin"), 80 + 8 * 301 + 4 * nnz + (nnz % 2) * 4 + 4 * nnz);
  EXPECT_EQ(std::filesystem::file_size(dir / "d.spmvbin"), 80 + 8 * 301 + 4 * nnz + (nnz % 2) * 4 + 8 * nnz);
  // A double cache keeps version 2's bytes (earlier builds read it); a float one is version 3.
  const auto version = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    char h[12];
    f.read(h, 12);
    return static_cast<int>(static_cast<unsigned char>(h[8]));
  };
  EXPECT_EQ(version(dir / "d.spmvbin"), 2);
  EXPECT_EQ(version(dir / "f.spmvbin"), 3);

  const io::LoadedMatrixF32 ff = io::load_f32(dir / "f.spmvbin");
  EXPECT_EQ(ff.generated, "spmv-generated");
  EXPECT_EQ(ff.matrix.row_ptr, f.row_ptr);
  EXPECT_EQ(ff.matrix.col, f.col);
  EXPECT_EQ(ff.matrix.val, f.val);
  expect_rounded_from(io::load_f32(dir / "d.spmvbin").matrix, d);
  const Csr widened = io::load_csr(dir / "f.spmvbin");
  ASSERT_EQ(widened.val.size(), f.val.size());
  for (std::size_t i = 0; i < f.val.size(); ++i) ASSERT_EQ(widened.val[i], static_cast<double>(f.val[i]));

  // A double cache holding a value beyond float's range: refused when read as float.
  Csr big = d;
  big.val[7] = -1e300;
  io::write_binary(dir / "big.spmvbin", big);
  const auto row = std::upper_bound(big.row_ptr.begin(), big.row_ptr.end(), 7) - big.row_ptr.begin();
  EXPECT_EQ(error_of([&] { io::load_f32(dir / "big.spmvbin"); }),
            fmt::format("{}: value -1.0000000000000001e+300 at row {}, column {} (1-based) does not fit in single "
                        "precision (largest 3.402823e+38); compute in double precision",
                        dir / "big.spmvbin", row, big.col[7] + 1));

  // A version 2 cache (written before the value type was recorded) reads in both types.
  const std::string v2 = std::string(SPMV_TEST_DATA) + "/v2_coord_real_general.spmvbin";
  const Csr want = io::load_csr(kDir + "/coord_real_general.mtx");
  EXPECT_EQ(io::load_csr(v2).val, want.val);
  expect_rounded_from(io::load_f32(v2).matrix, want);
}

// to_float / to_double and the Matrix Market writer on a float view: values written with their
// own shortest digits read back as the same floats.
TEST(FloatReader, ConversionsAndWriterRoundTrip) {
  test::ScratchDir dir;
  Csr d = coo_to_csr(test::random_coo(40, 30, 0.2, 3));
  const CsrF32 f = to_float(d);
  expect_rounded_from(f, d);
  const Csr back = to_double(f);
  for (std::size_t i = 0; i < f.val.size(); ++i) ASSERT_EQ(back.val[i], static_cast<double>(f.val[i]));
  io::write_matrix_market(dir / "f.mtx", f);
  EXPECT_EQ(io::load_f32(dir / "f.mtx").matrix.val, f.val);
  d.val[3] = 1e39;
  const std::string err = error_of([&] { to_float(d); });
  EXPECT_NE(err.find("does not fit in single precision"), std::string::npos) << err;
}
