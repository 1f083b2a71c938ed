#include <spmv/io.hpp>

#include <fmt/format.h>

#include "commands.hpp"

namespace spmv::cli {

void add_convert(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "convert", "Convert between Matrix Market and the binary cache (by the output's extension)");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("INPUT", *in, "Matrix Market file or binary cache")->required();
  cmd->add_option("OUTPUT", *out, "*.spmvbin for the binary cache, otherwise Matrix Market")->required();
  auto budget = std::make_shared<std::uint64_t>(0);
  add_memory_budget(cmd, *budget);
  cmd->callback([&action, in, out, budget] {
    action = [in, out, budget] {
      // One read of the input (a FIFO or /dev/stdin too); a synthetic matrix stays marked.
      const auto [a, generated] = io::load(*in, {.memory_budget_bytes = static_cast<double>(*budget)});
      if (out->ends_with(".spmvbin")) io::write_binary(*out, a, !generated.empty());
      else io::write_matrix_market(*out, a, generated);
      fmt::print("wrote {} ({} x {}, {} nonzeros)\n", *out, a.rows, a.cols, a.nnz());
      return 0;
    };
  });
}

}  // namespace spmv::cli
