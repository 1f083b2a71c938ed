#pragma once
// The reader into CSR against the read through the COO (tests/test_io_direct_csr.cpp for mm_direct,
// tests/test_io_row_groups.cpp for mm_row_groups): the reads, the comparison and the files.
#include <spmv/io.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <string>
#include <utility>
#include <zlib.h>

#include "io/byte_source.hpp"
#include "io/io_internal.hpp"
#include "test_util.hpp"

namespace spmv::test {

using io::detail::StraightToCsr;

template <class V = double>
struct Outcome {
  std::string error;
  io::detail::BasicParsedCsr<V> read;
};

template <class V = double>
inline Outcome<V> read(const std::string& text, StraightToCsr how, int threads, std::size_t block_bytes = 0,
                       std::int64_t repeat_check = std::int64_t{1} << 21) {
  Outcome<V> o;
  try {
    io::detail::ByteSource src = io::detail::ByteSource::memory(text, "d.mtx");
    o.read = io::detail::parse_csr<V>(src, {.threads = threads},
                                      {.block_bytes = block_bytes,
                                       .min_chunk = block_bytes ? 16 : std::size_t{64} << 10,
                                       .repeat_check = repeat_check,
                                       .straight_to_csr = how});
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

template <class V>
inline void expect_same(const BasicCsr<V>& got, const BasicCsr<V>& want) {
  EXPECT_EQ(got.symmetry, want.symmetry);
  test::expect_same_csr(got, want);
}

// The straight read (`how`) against the read through the COO, in V, each on 1 thread in one block
// and on 3 in blocks of `block` bytes; returns how many of the two straight reads took the file
// (not given up, no error).
template <class V = double>
int expect_as_through_coo(const std::string& text, std::size_t block = 200,
                          std::int64_t repeat_check = std::int64_t{1} << 21,
                          StraightToCsr how = StraightToCsr::Always) {
  int straight = 0;
  for (const auto& [threads, bytes] : {std::pair{1, std::size_t{0}}, std::pair{3, block}}) {
    SCOPED_TRACE(fmt::format("{} threads, blocks of {} bytes", threads, bytes));
    const Outcome<V> want = read<V>(text, StraightToCsr::Never, threads, bytes, repeat_check);
    EXPECT_FALSE(want.read.straight);
    const Outcome<V> got = read<V>(text, how, threads, bytes, repeat_check);
    EXPECT_EQ(got.error, want.error);
    if (!got.error.empty() || !want.error.empty()) continue;
    expect_same(got.read.csr, want.read.csr);
    straight += got.read.straight ? 1 : 0;
  }
  return straight;
}

// text as one gzip member.
inline std::string gzipped(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline std::string coordinate(const char* field, const char* symmetry, index_t n, const std::string& body,
                              offset_t entries) {
  return fmt::format("%%MatrixMarket matrix coordinate {} {}\n% made by the test\n{} {} {}\n{}", field, symmetry, n, n,
                     entries, body);
}

// Entries in no order (column-major strides, rows revisited), cycling through at most 7n positions
// (some repeated), values whose sums depend on their order; below the diagonal (and on it, but for
// skew; hermitian's real) when `lower`.
inline std::string scattered(const char* field, const char* symmetry, bool lower, index_t n, int count) {
  std::string body;
  int written = 0;
  for (int i = 0; written < count; ++i) {
    index_t r = 1 + (i * 37) % n, c = 1 + (i * 11 + i / 7) % n;
    if (lower && r < c) std::swap(r, c);
    if (lower && r == c && std::string(symmetry) == "skew-symmetric") continue;
    const double v = i % 2 ? 1e16 / (i + 1) : 1.0 / (i + 3);
    if (std::string(field) == "pattern")
      body += fmt::format("{} {}\n", r, c);
    else if (std::string(field) == "integer")
      body += fmt::format("{} {} {}\n", r, c, i % 9 - 4);
    else if (std::string(field) == "complex")  // (a hermitian diagonal is real)
      body += fmt::format("{} {} {:.17g} {:.17g}\n", r, c, v,
                          r == c && std::string(symmetry) == "hermitian" ? 0.0 : -v / 3);
    else
      body += fmt::format("{} {} {:.17g}\n", r, c, v);
    ++written;
  }
  return coordinate(field, symmetry, n, body, count);
}

// Data sections of a 3 x 3 general file of 4 entries that each hold one error (a bad index, value,
// count or line), under a SCOPED_TRACE of its start: fn(file).
template <class Fn>
void for_each_bad_general_file(Fn fn) {
  const std::string good = "1 1 1\n2 2 2\n3 3 3\n";
  for (const std::string& body :
       {good + "4 1 1\n", good + "1 1 x\n", good, good + "1 1 1\n2 2 2\n", good + "0 1 1\n", good + "1\n",
        good + "3 1 1 9\n", std::string("1 1 1\n") + std::string(70000, '1') + " 1 1\n"}) {
    SCOPED_TRACE(body.substr(0, 60));
    fn(coordinate("real", "general", 3, body, 4));
  }
}

// Every field and symmetry a coordinate file may pair, as fn(field, symmetry, scattered file of
// 700 entries on 41 rows, below the diagonal unless general), under a SCOPED_TRACE.
template <class Fn>
void for_each_field_and_symmetry(Fn fn) {
  for (const char* field : {"real", "integer", "pattern", "complex"})
    for (const char* symmetry : {"general", "symmetric", "skew-symmetric", "hermitian"}) {
      if (std::string(symmetry) == "hermitian" && std::string(field) != "complex") continue;
      if (std::string(symmetry) == "skew-symmetric" && std::string(field) == "pattern") continue;
      SCOPED_TRACE(fmt::format("{} {}", field, symmetry));
      fn(std::string(field), scattered(field, symmetry, std::string(symmetry) != "general", 41, 700));
    }
}

// Every shared SuiteSparse matrix, inflated into memory: fn(path, text) for each (each under a
// SCOPED_TRACE of its name); returns how many.
template <class Fn>
int for_each_shared_matrix(Fn fn) {
  const std::string dir = test::shared_matrices_dir();
  EXPECT_TRUE(std::filesystem::exists(dir + "/MANIFEST.tsv")) << dir << " not found";
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().extension() != ".gz") continue;
    SCOPED_TRACE(f.path().filename().string());
    io::detail::ByteSource src = io::detail::ByteSource::open(f.path().string());
    std::string text;
    char buf[1 << 16];
    while (const std::size_t got = src.read(buf, sizeof buf)) text.append(buf, got);
    fn(f.path(), text);
    ++files;
  }
  return files;
}

}  // namespace spmv::test
