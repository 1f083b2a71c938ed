#pragma once
/// @file
/// The automatic planner behind kernel "auto", the default of make_plan and `spmv run`. Inspector-
/// executor style: structure features computed once (one O(rows) pass), a model that
/// ranks the backend's candidates (kernel + settings) by the predicted cost of the expected number
/// of products including conversion, then a short timed trial of the top few on the real matrix.
/// The plan it returns runs the winner and says what it chose and why (Plan::describe()).
#include <spmv/plan.hpp>
#include <spmv/stats.hpp>

#include <string>
#include <vector>

namespace spmv {

struct MatrixFeatures {
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  double mean = 0, std = 0;  ///< nonzeros per row
  offset_t max_row = 0;
  index_t empty_rows = 0;
  double ell_padding = 1;             ///< ELL slots / nnz (rows * max_row / nnz)
  double hll_padding[3] = {1, 1, 1};  ///< HLL slots / nnz for hacks 16, 32, 64
  double csr_bytes = 0;               ///< one CSR product: 12 nnz + 4 (rows + 1) + 8 cols + 8 rows
  /// Values sampled (evenly spaced entries, matrices above a million nonzeros only) and how many
  /// distinct among them: few suggest the compact formats' shared values.
  int values_sampled = 0, sampled_distinct = 0;

  double cv() const { return mean > 0 ? std / mean : 0; }  ///< row-length coefficient of variation
};
MatrixFeatures analyze(const CsrView& a);
/// What each format stores for a matrix of these features: CSR and CSR5 their nonzeros, ELL every
/// row at the longest row's width, HLL each hack of 16, 32 or 64 rows at its longest row's width.
std::vector<FormatStorage> format_storage(const MatrixFeatures& f);

struct Candidate {
  std::string kernel;              ///< a kernel of the backend, as registered
  PlanOptions opt;                 ///< its settings
  std::string label;               ///< "ell bs=256", "csr variant=balanced:simd threads=16"
  double predicted_s = 0;          ///< the model's time of one product
  double predicted_convert_s = 0;  ///< the conversion, or a CSR plan's own making (row blocks)
  bool converts = false;           ///< its format is made from CSR when the plan is made
  double cost(long long products) const { return predicted_convert_s + static_cast<double>(products) * predicted_s; }
};
/// The model's candidates for backend b, best first: every kernel that may win on this matrix, k
/// and layout, with formats whose conversion cannot be repaid within opt.products left out.
std::vector<Candidate> rank_candidates(const MatrixFeatures& f, Backend b, const PlanOptions& opt);

}  // namespace spmv
