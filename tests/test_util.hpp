#pragma once
// Helpers shared by the tests: random and edge-case matrices, a dense reference, the shared
// matrices, and a scratch folder per test.
#include <gtest/gtest.h>

#include <spmv/matrix.hpp>
#include <spmv/spmv.hpp>

#include <gtest/gtest.h>
#include <algorithm>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace spmv::test {

// The message of the spmv::Error that f throws, or "no error".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A file's bytes; bytes written as a file.
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
inline void dump(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Two CSR matrices alike in sizes, field, structure and the values' bits (double or float).
template <class V>
void expect_same_csr(const BasicCsr<V>& got, const BasicCsr<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.field, want.field);
  EXPECT_EQ(got.row_ptr, want.row_ptr);
  EXPECT_EQ(got.col, want.col);
  ASSERT_EQ(got.val.size(), want.val.size());
  EXPECT_EQ(std::memcmp(got.val.data(), want.val.data(), got.val.size() * sizeof(V)), 0) << "values differ in bits";
  ASSERT_EQ(got.imag.size(), want.imag.size());
  EXPECT_EQ(std::memcmp(got.imag.data(), want.imag.data(), got.imag.size() * sizeof(V)), 0)
      << "imaginary parts differ in bits";
}

// The shared SuiteSparse folder: $SPMV_SHARED_MATRICES if set (the GPU machine carries a copy),
// else the path CMake compiled in (../shared/matrices beside the checkout).
// The SuiteSparse matrices the tests read: $SPMV_SHARED_MATRICES, else the full set beside the
// repository (../shared/matrices), else the small subset in tests/data/suitesparse.
inline std::string shared_matrices_dir() {
  if (const char* e = std::getenv("SPMV_SHARED_MATRICES"); e && *e) return e;
  if (std::filesystem::exists(std::string(SPMV_SHARED_MATRICES) + "/MANIFEST.tsv")) return SPMV_SHARED_MATRICES;
  return std::string(SPMV_TEST_DATA) + "/suitesparse";
}
// Whether the tests read the full set (77 matrices) rather than tests/data's subset (14).
inline bool full_shared_set() { return shared_matrices_dir() != std::string(SPMV_TEST_DATA) + "/suitesparse"; }
// A count a test expects: on the full set, or on the subset.
inline std::size_t shared_count(std::size_t full, std::size_t subset) { return full_shared_set() ? full : subset; }

// Every row strictly increasing and in range: a valid CSR that coo_to_csr would produce.
inline void expect_valid_csr(const Csr& a) {
  ASSERT_EQ(a.row_ptr.size(), static_cast<std::size_t>(a.rows) + 1);
  ASSERT_EQ(a.col.size(), static_cast<std::size_t>(a.nnz()));
  for (index_t r = 0; r < a.rows; ++r)
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      ASSERT_GE(a.col[p], 0);
      ASSERT_LT(a.col[p], a.cols);
      if (p > a.row_ptr[r]) ASSERT_LT(a.col[p - 1], a.col[p]) << "row " << r;
    }
}

// Random COO with duplicates and empty rows (about `density` of the entries filled).
inline Coo random_coo(index_t rows, index_t cols, double density, std::uint64_t seed, bool with_duplicates = true) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> v(-2.0, 2.0);
  std::uniform_int_distribution<index_t> ri(0, std::max(rows - 1, 0)), ci(0, std::max(cols - 1, 0));
  Coo c;
  c.rows = rows;
  c.cols = cols;
  const offset_t n = rows && cols ? static_cast<offset_t>(density * rows * cols) : 0;
  for (offset_t e = 0; e < n; ++e) {
    c.row.push_back(ri(g));
    c.col.push_back(ci(g));
    c.val.push_back(v(g));
    if (with_duplicates && e % 7 == 3) {  // a repeated coordinate, to be summed
      c.row.push_back(c.row.back());
      c.col.push_back(c.col.back());
      c.val.push_back(v(g));
    }
  }
  return c;
}

// Dense rows x cols image of a COO with duplicates summed.
inline std::vector<double> dense(const Coo& c) {
  std::vector<double> d(static_cast<std::size_t>(c.rows) * c.cols, 0.0);
  for (offset_t e = 0; e < c.nnz(); ++e) d[static_cast<std::size_t>(c.row[e]) * c.cols + c.col[e]] += c.val[e];
  return d;
}

inline std::vector<double> dense_product(const std::vector<double>& d, index_t rows, index_t cols,
                                         const std::vector<double>& x) {
  std::vector<double> y(rows, 0.0);
  for (index_t r = 0; r < rows; ++r) {
    long double s = 0;
    for (index_t c = 0; c < cols; ++c) s += static_cast<long double>(d[static_cast<std::size_t>(r) * cols + c]) * x[c];
    y[r] = static_cast<double>(s);
  }
  return y;
}

// Builds CSR from explicit row lengths (columns spread deterministically, values random).
inline Csr csr_from_lengths(const std::vector<offset_t>& lengths, index_t cols, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> v(-1.0, 1.0);
  Csr a;
  a.rows = static_cast<index_t>(lengths.size());
  a.cols = cols;
  a.row_ptr.assign(lengths.size() + 1, 0);
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    const offset_t len = std::min<offset_t>(lengths[r], cols);
    a.row_ptr[r + 1] = a.row_ptr[r] + len;
    // len distinct sorted columns: a stride walk starting at a row-dependent offset.
    std::vector<index_t> cs;
    for (offset_t j = 0; j < len; ++j)
      cs.push_back(static_cast<index_t>((r * 7 + j * (cols / std::max<offset_t>(len, 1))) % cols));
    std::sort(cs.begin(), cs.end());
    cs.erase(std::unique(cs.begin(), cs.end()), cs.end());
    for (index_t c = 0; static_cast<offset_t>(cs.size()) < len; ++c)
      if (!std::binary_search(cs.begin(), cs.end(), c)) {
        cs.insert(std::lower_bound(cs.begin(), cs.end(), c), c);
      }
    for (index_t c : cs) {
      a.col.push_back(c);
      a.val.push_back(v(g));
    }
  }
  return a;
}

// The edge cases every kernel must survive (name, matrix).
inline std::vector<std::pair<std::string, Csr>> edge_cases() {
  std::vector<std::pair<std::string, Csr>> v;
  v.emplace_back("empty_0nnz", csr_from_lengths({0, 0, 0, 0, 0}, 5, 1));
  v.emplace_back("zero_rows", csr_from_lengths({}, 3, 1));
  v.emplace_back("one_by_one", csr_from_lengths({1}, 1, 2));
  v.emplace_back("wide_3x50", csr_from_lengths({10, 50, 3}, 50, 3));
  v.emplace_back("tall_200x3", csr_from_lengths(std::vector<offset_t>(200, 2), 3, 4));
  {
    std::vector<offset_t> l(300, 3);
    for (int i = 0; i < 5; ++i) l[i] = 0;      // empty at the start
    for (int i = 140; i < 160; ++i) l[i] = 0;  // in the middle
    for (int i = 290; i < 300; ++i) l[i] = 0;  // at the end
    v.emplace_back("empty_rows_everywhere", csr_from_lengths(l, 300, 5));
  }
  {
    std::vector<offset_t> l(2000, 1);
    l[1234] = 5000;  // one row holds most of the nonzeros (and is longer than any block)
    v.emplace_back("one_dominant_row", csr_from_lengths(l, 6000, 6));
  }
  v.emplace_back("equal_rows", csr_from_lengths(std::vector<offset_t>(1000, 16), 1000, 7));
  {
    std::vector<offset_t> l(5000);
    std::mt19937 g(8);
    for (auto& x : l) x = g() % 3 == 0 ? 0 : 1 + g() % 40;
    v.emplace_back("irregular_5000", csr_from_lengths(l, 5000, 8));
  }
  return v;
}

// Names and files of the shared SuiteSparse matrices (MANIFEST.tsv: name, file, ...).
inline std::vector<std::pair<std::string, std::string>> shared_matrix_files() {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string dir = shared_matrices_dir();
  static const bool said = [&] {  // which set the run read, once
    std::printf("[ info ] SuiteSparse matrices from %s (%s)\n", dir.c_str(),
                full_shared_set() ? "the full set" : "the subset in tests/data; ../shared/matrices is not there");
    return true;
  }();
  (void)said;
  std::ifstream in(dir + "/MANIFEST.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name, file;
    if (std::getline(ls, name, '\t') && std::getline(ls, file, '\t')) out.emplace_back(name, dir + "/" + file);
  }
  return out;
}

// One shared matrix by its MANIFEST.tsv name; throws where it is missing.
inline Csr shared_matrix(const std::string& name) {
  for (const auto& [n, file] : shared_matrix_files())
    if (n == name) return io::load_csr(file);
  throw std::runtime_error(name + " missing from " + shared_matrices_dir());
}

// Rows of 100k entries next to rows of 2 (like SuiteSparse's dc1), empty rows, and a long row at
// the very end.
inline Csr dc1_like() {
  std::vector<offset_t> l(40000, 2);
  for (int i = 0; i < 40000; i += 9973) l[i] = 100000;
  l[39999] = 100000;
  for (int i = 100; i < 400; ++i) l[i] = 0;
  return csr_from_lengths(l, 120000, 21);
}

// Runs `plan` (made for a, with k right-hand sides in layout lay) on X = make_vector(xspec), then
// twice more on its own vectors (repeated products must not accumulate): "" where Y matches the
// reference, else why not. (The host vector's 12345s only show a get_y that copies nothing.)
inline std::string spmm_mismatch(const Csr& a, Plan& plan, int k, Layout lay, const std::string& xspec) {
  const auto x = make_vector(xspec, static_cast<std::size_t>(a.cols) * k);
  std::vector<double> y(static_cast<std::size_t>(a.rows) * k, 12345.0);
  plan.multiply(x, y);
  if (const auto first = check_product(a, reference_product(a, x, k, lay), y, k, lay); !first.passed)
    return "multiply: " + first.message;
  std::fill(y.begin(), y.end(), 12345.0);
  plan.set_x(x);
  plan.run(2);
  plan.get_y(y);
  const auto res = check_product(a, reference_product(a, x, k, lay), y, k, lay);
  return res.passed ? "" : res.message;
}

// The kernel named in Plan::chosen: "omp/hll hack=16 threads=2" -> "hll".
inline std::string chosen_kernel(const std::string& chosen) {
  const auto slash = chosen.find('/');
  return chosen.substr(slash + 1, chosen.find(' ', slash) - slash - 1);
}

// A fresh folder for one test, named by process and test so that parallel runs never share it;
// removed with its contents at the end of the test.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path = std::filesystem::path(::testing::TempDir()) /
           fmt::format("spmv_{}_{}_{}", ::getpid(), info->test_suite_name(), info->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  std::string str() const { return path.string(); }
};

}  // namespace spmv::test
