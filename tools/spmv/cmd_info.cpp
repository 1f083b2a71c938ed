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
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print one JSON object instead of key: value lines");
  cmd->callback([&action, file, budget, json] {
    action = [file, budget, json] {
      const Csr a = io::load_csr(*file, {.memory_budget_bytes = static_cast<double>(*budget)});
      const MatrixStats s = compute_stats(a);
      KeyValues out;
      out.add("file", *file);
      out.add("rows", static_cast<long long>(s.rows));
      out.add("cols", static_cast<long long>(s.cols));
      out.add("nnz", static_cast<long long>(s.nnz));
      out.add("field", to_string(a.field));
      out.add("symmetry", to_string(a.symmetry));
      out.add("nnz_per_row_min", static_cast<long long>(s.row_nnz_min));
      out.add("nnz_per_row_mean", s.row_nnz_mean);
      out.add("nnz_per_row_std", s.row_nnz_std);
      out.add("max_row_nnz", static_cast<long long>(s.row_nnz_max));
      out.add("empty_rows", static_cast<long long>(s.empty_rows));
      out.add("bandwidth", static_cast<long long>(s.bandwidth));
      out.add("pattern_symmetric", s.pattern_symmetric ? "yes" : "no");
      for (const FormatStorage& f : s.storage)  // the padded formats' slots against the nonzeros
        if (f.pads) out.add(f.name + "_padding_ratio", f.padding, 4);
      if (verbosity >= 1) out.print(*json);
      return 0;
    };
  });
}

}  // namespace spmv::cli
