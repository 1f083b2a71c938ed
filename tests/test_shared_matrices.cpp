// Every SuiteSparse matrix in the shared folder's MANIFEST.tsv loads with the manifest's sizes,
// field and symmetry, its expanded nnz matches (none of these files has duplicate entries: the COO
// and the duplicate-summed CSR have the same count), and the serial CSR product passes the
// reference check. Complex matrices are read as complex and refused by the real kernels.
#include <gtest/gtest.h>
#include <spmv/io.hpp>
#include <spmv/plan.hpp>
#include <spmv/reference.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "test_util.hpp"

using namespace spmv;

namespace {

std::vector<std::map<std::string, std::string>> read_manifest(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::map<std::string, std::string>> rows;
  std::string line;
  std::vector<std::string> names;
  auto split = [](const std::string& s) {
    std::vector<std::string> t;
    std::stringstream ss(s);
    std::string w;
    while (std::getline(ss, w, '\t')) t.push_back(w);
    return t;
  };
  if (!std::getline(f, line)) return rows;
  names = split(line);
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    const auto t = split(line);
    std::map<std::string, std::string> r;
    for (std::size_t i = 0; i < names.size() && i < t.size(); ++i) r[names[i]] = t[i];
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST(SharedMatrices, EveryManifestMatrixLoadsAndMultipliesCorrectly) {
  const std::string dir = test::shared_matrices_dir();
  const std::string manifest = dir + "/MANIFEST.tsv";
  // Not a skip: CI has the folder, and a missing folder must not pass silently.
  ASSERT_TRUE(std::filesystem::exists(manifest))
      << manifest << " not found: check out the shared matrices beside the repository (../shared/matrices) "
      << "or set SPMV_SHARED_MATRICES to the folder holding MANIFEST.tsv";
  const auto rows = read_manifest(manifest);
  ASSERT_GT(rows.size(), 0u) << manifest << " lists no matrices";
  int complex_seen = 0, checked = 0;
  for (const auto& m : rows) {
    const std::string name = m.at("name");
    SCOPED_TRACE(name);
    const std::string path = dir + "/" + m.at("file");
    const Coo coo = io::read_matrix(path);
    const Csr a = coo_to_csr(coo);
    EXPECT_EQ(std::to_string(a.rows), m.at("rows"));
    EXPECT_EQ(std::to_string(a.cols), m.at("cols"));
    EXPECT_EQ(to_string(a.field), m.at("field"));
    EXPECT_EQ(to_string(a.symmetry), m.at("symmetry"));
    EXPECT_EQ(std::to_string(coo.nnz()), m.at("expanded_nnz")) << "expanded entries in the COO";
    EXPECT_EQ(std::to_string(a.nnz()), m.at("expanded_nnz")) << "after summing duplicates";
    if (a.is_complex()) {
      ++complex_seen;
      EXPECT_EQ(a.imag.size(), static_cast<std::size_t>(a.nnz()));
      EXPECT_THROW(make_plan(a, Backend::Serial, "csr"), Unsupported);
      continue;
    }
    const auto x = make_vector("random:" + std::to_string(checked + 1), static_cast<std::size_t>(a.cols));
    std::vector<double> y(static_cast<std::size_t>(a.rows));
    make_plan(a, Backend::Serial, "csr")->multiply(x, y);
    const CheckResult chk = check_product(a, reference_product(a, x), y);
    EXPECT_TRUE(chk.passed) << chk.message;
    ++checked;
  }
  EXPECT_EQ(checked + complex_seen, static_cast<int>(rows.size()));
  EXPECT_GE(complex_seen, 1) << "the manifest lists a complex matrix (dwg961b); it must read as complex";
}
