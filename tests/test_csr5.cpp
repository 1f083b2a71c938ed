// CSR5: conversion round trip, descriptor fields against a direct recomputation, and the CPU
// kernels (serial and OpenMP, SpMV and SpMM) against the reference product.
#include <gtest/gtest.h>
#include <spmv/formats/csr5.hpp>
#include <spmv/spmv.hpp>

#include <omp.h>

#include <bit>
#include <fmt/format.h>

#include "cpu/tuning.hpp"
#include "csr5_cases.hpp"
#include "cuda/tuning.hpp"
#include "test_util.hpp"

using namespace spmv;

namespace {

const std::vector<std::pair<int, int>> kTileShapes = {{1, 1},  {1, 5}, {2, 3},  {3, 5},   {4, 1},
                                                      {4, 16}, {8, 7}, {32, 4}, {32, 17}, {32, 32}};

// Row of every stored entry, by walking the row pointer (independent of the conversion code).
std::vector<index_t> entry_rows(const Csr& a) {
  std::vector<index_t> row(a.nnz());
  for (index_t r = 0; r < a.rows; ++r)
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) row[p] = r;
  return row;
}

// Recomputes every field of every full tile from the CSR and compares with the decoded CSR5.
void check_fields(const Csr& a, const Csr5& f, const std::string& what) {
  const offset_t te = static_cast<offset_t>(f.omega) * f.sigma;
  ASSERT_EQ(f.tiles, a.nnz() / te) << what;
  ASSERT_EQ(f.tile_ptr.size(), static_cast<std::size_t>(f.tiles + 1)) << what;
  const auto row = entry_rows(a);
  std::vector<bool> starts(a.nnz() + 1, false);  // entry p begins a (non-empty) row
  for (index_t r = 0; r < a.rows; ++r)
    if (a.row_length(r) > 0) starts[a.row_ptr[r]] = true;
  for (offset_t t = 0; t < f.tiles; ++t) {
    const offset_t base = t * te;
    ASSERT_EQ(Csr5::row_of(f.tile_ptr[t]), row[base]) << what << " tile " << t;
    bool has_empty = false;  // an empty row whose successor starts inside the tile
    for (index_t r = 0; r < a.rows; ++r)
      if (a.row_length(r) == 0 && a.row_ptr[r] >= base && a.row_ptr[r] < base + te) has_empty = true;
    ASSERT_EQ(f.hinted(t), has_empty) << what << " tile " << t;
    unsigned segments_before = 0;
    std::vector<int> opened;  // rows of segments in order
    for (int c = 0; c < f.omega; ++c) {
      const std::uint64_t d = f.descriptor(t, c);
      ASSERT_EQ(f.y_offset(d), segments_before) << what << " tile " << t << " col " << c;
      for (int i = 0; i < f.sigma; ++i) {
        const offset_t p = base + static_cast<offset_t>(c) * f.sigma + i;
        ASSERT_EQ((f.bit_flag(d) >> i) & 1, starts[p] ? 1u : 0u) << what << " tile " << t << " col " << c;
        if (starts[p] || p == base) {
          ++segments_before;
          opened.push_back(row[p]);
        }
        // The transposed entry.
        ASSERT_EQ(f.col[base + static_cast<offset_t>(i) * f.omega + c], a.col[p]);
        ASSERT_EQ(f.val[base + static_cast<offset_t>(i) * f.omega + c], a.val[p]);
      }
      ASSERT_EQ(f.bit_flag(d) >> f.sigma, 0u) << "no stray bits above sigma";
      unsigned flag_free = 0;
      for (int j = c + 1; j < f.omega; ++j) {
        bool any = false;
        for (int i = 0; i < f.sigma; ++i) any = any || starts[base + static_cast<offset_t>(j) * f.sigma + i];
        if (any) break;
        ++flag_free;
      }
      ASSERT_EQ(f.seg_offset(d), flag_free) << what << " tile " << t << " col " << c;
    }
    const offset_t n_eo = f.empty_offset_ptr[t + 1] - f.empty_offset_ptr[t];
    if (f.hinted(t)) {
      ASSERT_EQ(n_eo, static_cast<offset_t>(opened.size())) << what << " tile " << t;
      for (std::size_t k = 0; k < opened.size(); ++k)
        ASSERT_EQ(f.empty_offset[f.empty_offset_ptr[t] + k], opened[k] - row[base]) << what << " tile " << t;
    } else {
      ASSERT_EQ(n_eo, 0);
      for (std::size_t k = 0; k < opened.size(); ++k)  // without empty rows, segment k is row + k
        ASSERT_EQ(opened[k], row[base] + static_cast<index_t>(k)) << what << " tile " << t;
    }
  }
}

void expect_round_trip(const Csr& a, const Csr5& f, const std::string& what) {
  const Csr b = csr5_to_csr(f);
  EXPECT_EQ(b.rows, a.rows) << what;
  EXPECT_EQ(b.cols, a.cols) << what;
  EXPECT_EQ(b.row_ptr, a.row_ptr) << what;
  EXPECT_EQ(b.col, a.col) << what;
  // Bit-for-bit: compare the representations, not the values (NaN, -0.0).
  ASSERT_EQ(b.val.size(), a.val.size()) << what;
  for (std::size_t i = 0; i < a.val.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(b.val[i]), std::bit_cast<std::uint64_t>(a.val[i])) << what;
}

// o.precision's product against the reference with its tolerance; k right-hand sides in o.layout.
// A single plan rounds x to float: x is rounded here first, so the reference sees the same x.
void expect_product_ok(const Csr& a, Backend b, const PlanOptions& o, const std::string& what) {
  auto plan = make_plan(a, b, "csr5", o);
  for (const char* xs : {"random:3", "ones"}) {
    auto x = make_vector(xs, static_cast<std::size_t>(a.cols) * o.k);
    if (o.precision == Precision::Single)
      for (double& v : x) v = static_cast<float>(v);
    std::vector<double> y(static_cast<std::size_t>(a.rows) * o.k, 12345.0);  // garbage a plan must overwrite
    plan->multiply(x, y);
    const Reference ref = reference_product(a, x, o.k, o.layout);
    const auto res = check_product(a, ref, y, o.k, o.layout, o.precision);
    ASSERT_TRUE(res.passed) << what << " x=" << xs << ": " << res.message;
    // A second product on the same plan must not accumulate into the first.
    plan->multiply(x, y);
    ASSERT_TRUE(check_product(a, ref, y, o.k, o.layout, o.precision).passed) << what << " (second product)";
  }
}

}  // namespace

TEST(Csr5Format, RoundTripIsExactForEveryTileShape) {
  for (const auto& [name, a] : test::csr5_all_cases())
    for (auto [w, s] : kTileShapes) {
      const Csr5 f = csr_to_csr5(a, w, s);
      expect_round_trip(a, f, name + " " + std::to_string(w) + "x" + std::to_string(s));
    }
}

TEST(Csr5Format, RoundTripKeepsNanAndNegativeZero) {
  Csr a = test::csr_from_lengths(std::vector<offset_t>(40, 5), 40, 3);
  a.val[7] = std::numeric_limits<double>::quiet_NaN();
  a.val[70] = -0.0;
  expect_round_trip(a, csr_to_csr5(a, 4, 16), "nan/-0");
}

TEST(Csr5Format, DescriptorFieldsMatchDirectRecomputation) {
  for (const auto& [name, a] : test::csr5_all_cases()) {
    if (a.nnz() > 30000) continue;  // the recomputation is quadratic in rows x tiles
    for (auto [w, s] : kTileShapes)
      check_fields(a, csr_to_csr5(a, w, s), name + " " + std::to_string(w) + "x" + std::to_string(s));
  }
}

TEST(Csr5Format, TileZeroWithLeadingEmptyRowsIsNegativeZero) {
  const Csr a = test::csr_from_lengths({0, 0, 70, 3}, 100, 4);
  const Csr5 f = csr_to_csr5(a, 4, 16);
  ASSERT_EQ(f.tiles, 1);
  EXPECT_EQ(f.tile_ptr[0], Csr5::kEmptyHint | 2u) << "row 2 with the empty-row hint";
  const Csr b = test::csr_from_lengths({70, 3}, 100, 4);
  EXPECT_EQ(csr_to_csr5(b, 4, 16).tile_ptr[0], 0u) << "+0: no empty rows";
}

TEST(Csr5Format, DescriptorPacking) {
  EXPECT_EQ(csr5_descriptor_bits(4, 16), 16 + 6 + 2);
  EXPECT_EQ(csr5_descriptor_bits(32, 16), 16 + 9 + 5);  // the paper's example: 30 bits
  EXPECT_EQ(csr_to_csr5(test::csr_from_lengths({100}, 100, 1), 32, 16).desc_words, 1);
  EXPECT_EQ(csr_to_csr5(test::csr_from_lengths({100}, 100, 1), 32, 32).desc_words, 2);
  EXPECT_THROW(csr_to_csr5(test::csr_from_lengths({100}, 100, 1), 32, 60), Unsupported);
  EXPECT_THROW(csr_to_csr5(test::csr_from_lengths({100}, 100, 1), 0, 4), Unsupported);
}

TEST(Csr5Format, SigmaRule) {
  // Our CPU default: 4 x 32 for short rows where the library has its AVX2 4-wide tiles (a
  // property of the library's build, not of this file's), else 16; the plan uses that rule.
  EXPECT_TRUE(cpu::tuning::csr5_sigma(7.0, 4) == 32 || cpu::tuning::csr5_sigma(7.0, 4) == 16);
  EXPECT_EQ(cpu::tuning::csr5_sigma(26.0, 4), 16);
  EXPECT_EQ(cpu::tuning::csr5_sigma(7.0, 8), 16);
  for (offset_t len : {7, 26}) {
    const Csr a = test::csr_from_lengths(std::vector<offset_t>(500, len), 600, 3);
    PlanOptions o;
    o.threads = 2;
    const auto plan = make_plan(a, Backend::Omp, "csr5", o);
    const std::string want = "sigma=" + std::to_string(cpu::tuning::csr5_sigma(static_cast<double>(len), 4)) + " ";
    EXPECT_NE(plan->detail.find(want), std::string::npos) << plan->detail;
  }
  EXPECT_EQ(cuda::tuning::csr5_sigma_paper(0.0), 4);
  EXPECT_EQ(cuda::tuning::csr5_sigma_paper(4.0), 4);
  EXPECT_EQ(cuda::tuning::csr5_sigma_paper(6.6), 6);
  EXPECT_EQ(cuda::tuning::csr5_sigma_paper(32.0), 32);
  EXPECT_EQ(cuda::tuning::csr5_sigma_paper(100.0), 32);
  EXPECT_EQ(cuda::tuning::csr5_sigma_paper(256.0), 32);
  EXPECT_EQ(cuda::tuning::csr5_sigma_paper(257.0), 4);
  EXPECT_EQ(cpu::tuning::csr5_omega, 4);
  EXPECT_EQ(cuda::tuning::csr5_omega, 32);
}

TEST(Csr5Format, CudaSigmaFollowsRowLengthAndRegularity) {
  // Regular rows of 12 or more: 16, however long; shorter: 8.
  EXPECT_EQ(cuda::tuning::csr5_sigma(test::csr_from_lengths(std::vector<offset_t>(5000, 26), 2000, 1)), 16);
  EXPECT_EQ(cuda::tuning::csr5_sigma(test::csr_from_lengths(std::vector<offset_t>(5000, 7), 2000, 1)), 8);
  EXPECT_EQ(cuda::tuning::csr5_sigma(test::csr_from_lengths(std::vector<offset_t>(5000, 11), 2000, 1)), 8);
  EXPECT_EQ(cuda::tuning::csr5_sigma(test::csr_from_lengths(std::vector<offset_t>(5000, 12), 2000, 1)), 16);
  EXPECT_EQ(cuda::tuning::csr5_sigma(test::csr_from_lengths(std::vector<offset_t>(500, 100), 2000, 1)), 16);
  EXPECT_EQ(cuda::tuning::csr5_sigma(test::csr_from_lengths(std::vector<offset_t>(500, 17), 2000, 1)), 16);
  // Mean 26 but irregular (one row in 50 is 1000 long): 8.
  std::vector<offset_t> l(5000, 6);
  for (std::size_t i = 0; i < l.size(); i += 50) l[i] = 1000;
  EXPECT_EQ(cuda::tuning::csr5_sigma(test::csr_from_lengths(l, 2000, 1)), 8);
  EXPECT_EQ(cuda::tuning::csr5_sigma(Csr{}), 8);
}

TEST(Csr5Format, MemoryBudgetIsEnforced) {
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(1000, 10), 1000, 2);
  ConvertOptions o;
  o.memory_budget_bytes = 1000;
  EXPECT_THROW(csr_to_csr5(a, 4, 16, o), Unsupported);
}

TEST(Csr5Cpu, MatchesReferenceOnEdgeAndAdversarialCasesAcrossThreads) {
  for (const auto& [name, a] : test::csr5_all_cases()) {
    expect_product_ok(a, Backend::Serial, {}, name + " serial");
    for (const char* variant : {"lanes", "simd", "simd_loads"})
      for (int threads : {1, 2, 3, 7, 16, 64}) {
        PlanOptions o;
        o.threads = threads;
        o.kernel.variant = variant;
        expect_product_ok(a, Backend::Omp, o, name + " " + variant + " threads=" + std::to_string(threads));
      }
  }
}

TEST(Csr5Cpu, MatchesReferenceForOtherTileShapes) {
  for (const auto& [name, a] : test::csr5_all_cases())
    for (auto [w, s] :
         std::vector<std::pair<int, int>>{{1, 1}, {2, 3}, {4, 7}, {4, 16}, {8, 7}, {32, 4}, {32, 32}, {4, 50}}) {
      PlanOptions o;
      o.threads = 3;
      o.kernel.csr5_omega = w;
      o.kernel.csr5_sigma = s;
      for (const char* variant : {"lanes", "simd", "simd_loads"}) {
        o.kernel.variant = variant;
        expect_product_ok(a, Backend::Omp, o, name + " " + variant + " " + std::to_string(w) + "x" + std::to_string(s));
      }
    }
}

// Single and mixed precision (float values; float or double sums, x and y): the plain C++ tiles
// (the AVX2 ones are double's) on every adversarial case, several tile shapes, threads and k.
TEST(Csr5Cpu, SingleAndMixedPrecision) {
  int runs = 0;
  for (const auto& [name, a] : test::csr5_all_cases())
    for (const Precision p : {Precision::Single, Precision::Mixed})
      for (auto [w, s] : std::vector<std::pair<int, int>>{{0, 0}, {4, 16}, {4, 32}, {8, 7}})
        for (const int threads : {1, 3})
          for (const int k : {1, 3}) {
            PlanOptions o;
            o.threads = threads;
            o.kernel.csr5_omega = w;
            o.kernel.csr5_sigma = s;
            o.k = k;
            o.layout = k > 1 ? Layout::ColMajor : Layout::RowMajor;
            o.precision = p;
            expect_product_ok(a, threads == 1 ? Backend::Serial : Backend::Omp, o,
                              fmt::format("{} {} {}x{} threads={} k={}", name, to_string(p), w, s, threads, k));
            ++runs;
          }
  EXPECT_GT(runs, 100);
}

// SpMM (k > 1): the lane walk with K-wide sums, on every adversarial case (rows across tiles and
// threads, hinted tiles, the tail), several tile shapes and thread counts, both layouts; repeated
// products must not accumulate.
TEST(Csr5Cpu, SpmmMatchesReferenceBothLayouts) {
  int runs = 0;
  for (const auto& [name, a] : test::csr5_all_cases())
    for (auto [w, s] : std::vector<std::pair<int, int>>{{0, 0}, {1, 1}, {2, 3}, {4, 16}, {8, 7}, {32, 4}})
      for (const int threads : {1, 3, 16})
        for (const int k : {2, 3, 8})
          for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
            PlanOptions o;
            o.threads = threads;
            o.kernel.csr5_omega = w;
            o.kernel.csr5_sigma = s;
            o.k = k;
            o.layout = lay;
            const auto plan = make_plan(a, threads == 1 ? Backend::Serial : Backend::Omp, "csr5", o);
            EXPECT_EQ(test::spmm_mismatch(a, *plan, k, lay, "random:5"), "")
                << name << " " << w << "x" << s << " threads=" << threads << " k=" << k
                << (lay == Layout::RowMajor ? " row" : " col");
            ++runs;
          }
  EXPECT_GT(runs, 500);
  PlanOptions o;
  o.k = 2;
  o.kernel.variant = "simd";  // the SIMD tiles are SpMV's
  EXPECT_THROW(make_plan(test::csr_from_lengths({3, 4}, 10, 1), Backend::Omp, "csr5", o), Unsupported);
}

// Inside an outer parallel region (nesting off) OpenMP gives the plan's region one thread: the
// parts and their carries must follow that team, not the threads asked for, and carries left by an
// earlier product on all the threads must not be added again.
TEST(Csr5Cpu, ProductOnASmallerTeamThanAsked) {
  // Rows across tiles and across the parts' edges (lengths of 3 and 4: rows of one length can start
  // exactly on every part's first tile, and then nothing carries).
  std::vector<offset_t> l(6000);
  for (std::size_t i = 0; i < l.size(); ++i) l[i] = i % 500 == 0 ? 701 : 3 + static_cast<offset_t>(i % 2);
  const Csr a = test::csr_from_lengths(l, 6000, 11);
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(1);
  for (const int k : {1, 3}) {
    PlanOptions o;
    o.threads = 4;
    o.k = k;
    o.kernel.variant = "lanes";  // no trial of fewer threads
    const auto plan = make_plan(a, Backend::Omp, "csr5", o);
    EXPECT_EQ(test::spmm_mismatch(a, *plan, k, Layout::RowMajor, "random:2"), "") << "k=" << k << " on 4 threads";
    std::string inner = "not run";
#pragma omp parallel num_threads(2)
    {
#pragma omp single
      inner = test::spmm_mismatch(a, *plan, k, Layout::RowMajor, "random:3");
    }
    EXPECT_EQ(inner, "") << "k=" << k << " inside an outer region";
  }
  omp_set_max_active_levels(levels);
}

TEST(Csr5Cpu, RefusesUnsupportedOmegaAndReportsConversionTime) {
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(5000, 20), 5000, 2);
  PlanOptions o;
  o.kernel.csr5_omega = 3;
  EXPECT_THROW(make_plan(a, Backend::Omp, "csr5", o), Unsupported);
  o.kernel.csr5_omega = 0;
  o.kernel.variant = "fast";
  EXPECT_THROW(make_plan(a, Backend::Omp, "csr5", o), Unsupported);
  auto plan = make_plan(a, Backend::Omp, "csr5", {});
  EXPECT_GT(plan->convert_seconds, 0.0);
  EXPECT_EQ(plan->stored_entries, a.nnz());
}

TEST(Csr5Cpu, EverySharedMatrix) {
  const auto files = test::shared_matrix_files();
  ASSERT_GE(files.size(), test::shared_count(70, 14)) << "MANIFEST.tsv not found in " << test::shared_matrices_dir();
  int checked = 0;
  for (const auto& [name, file] : files) {
    const Csr a = io::load_csr(file);
    if (a.is_complex()) continue;  // real kernels refuse complex input (tested elsewhere)
    expect_round_trip(a, csr_to_csr5(a, 4, 16), name);
    for (int threads : {1, 2, 7}) {
      PlanOptions o;
      o.threads = threads;
      expect_product_ok(a, Backend::Omp, o, name + " threads=" + std::to_string(threads));
    }
    ++checked;
  }
  EXPECT_GE(checked, static_cast<int>(test::shared_count(70, 13)));
}
