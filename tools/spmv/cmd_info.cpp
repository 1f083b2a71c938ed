#include <spmv/io.hpp>
#include <spmv/stats.hpp>

#include <fmt/format.h>

#include "commands.hpp"

namespace spmv::cli {

void add_info(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("info", "Print a matrix's sizes and structure as key: value lines");
  auto file = std::make_shared<std::string>();
  auto budget = std::make_shared<std::uint64_t>(0);
  cmd->add_option("FILE", *file, "Matrix Market file (.mtx, .mtx.gz) or binary cache")->required();
  add_memory_budget(cmd, *budget);
  cmd->callback([&action, file, budget] {
    action = [file, budget] {
      const Csr a = io::load_csr(*file, {.memory_budget_bytes = static_cast<double>(*budget)});
      const MatrixStats s = compute_stats(a);
      fmt::print("file: {}\n", *file);
      fmt::print("rows: {}\ncols: {}\nnnz: {}\n", s.rows, s.cols, s.nnz);
      fmt::print("field: {}\nsymmetry: {}\n", to_string(a.field), to_string(a.symmetry));
      fmt::print("nnz_per_row_min: {}\nnnz_per_row_mean: {:.6g}\nnnz_per_row_std: {:.6g}\n",
                 s.row_nnz_min, s.row_nnz_mean, s.row_nnz_std);
      fmt::print("max_row_nnz: {}\nempty_rows: {}\nbandwidth: {}\n", s.row_nnz_max, s.empty_rows,
                 s.bandwidth);
      fmt::print("pattern_symmetric: {}\n", s.pattern_symmetric ? "yes" : "no");
      fmt::print("ell_padding_ratio: {:.4g}\n", s.ell_padding_ratio);
      fmt::print("hll16_padding_ratio: {:.4g}\nhll32_padding_ratio: {:.4g}\nhll64_padding_ratio: {:.4g}\n",
                 s.hll_padding_ratio[0], s.hll_padding_ratio[1], s.hll_padding_ratio[2]);
      return 0;
    };
  });
}

}  // namespace spmv::cli
