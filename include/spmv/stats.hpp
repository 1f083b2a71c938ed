#pragma once
#include <spmv/matrix.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace spmv {

/// What one format stores for a matrix, described once (spmv::format_storage, from the row lengths)
/// for the stats, `spmv info`, the benchmark's tables and the test that each format's plans store
/// just that (Plan::stored_entries).
struct FormatStorage {
  std::string name;    ///< "csr", "ell", "hll16", "hll32", "hll64", "csr5"
  std::string format;  ///< the registry's format: "hll"
  int hack = 0;        ///< HLL: rows per hack (PlanOptions::kernel.hack)
  double slots = 0;    ///< (column index, value) pairs stored, padding included
  double padding = 1;  ///< slots / nnz (1 for a matrix without nonzeros)
  bool pads = false;   ///< the format pads rows (ELL, HLL): its padding is worth showing
};

struct MatrixStats {
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  offset_t row_nnz_min = 0, row_nnz_max = 0;
  double row_nnz_mean = 0, row_nnz_std = 0;
  index_t empty_rows = 0;
  index_t bandwidth = 0;               ///< max |i - j| over stored entries
  bool pattern_symmetric = false;      ///< square and (i,j) stored iff (j,i) stored
  std::vector<FormatStorage> storage;  ///< each format's slots and padding (format_storage)
  /// The padding of the format of that name ("ell", "hll32"); 0 where there is none.
  double padding(std::string_view name) const;
};

MatrixStats compute_stats(const CsrView& a);

}  // namespace spmv
