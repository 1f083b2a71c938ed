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
  auto precision = std::make_shared<std::string>("double");
  cmd->add_option("--precision", *precision,
                  "Values of a binary cache: double, or single (float: half the values' bytes, for plans in "
                  "single or mixed precision; a value beyond float's range is refused with its line)")
      ->check(CLI::IsMember({"double", "single"}));
  cmd->callback([&action, in, out, budget, precision] {
    action = [in, out, budget, precision] {
      const io::ReadOptions ro{.memory_budget_bytes = static_cast<double>(*budget)};
      // One read of the input (a FIFO or /dev/stdin too); a synthetic matrix stays marked.
      const auto write = [&](const auto& loaded) {
        const auto& a = loaded.matrix;
        if (out->ends_with(".spmvbin")) io::write_binary(*out, a, !loaded.generated.empty());
        else io::write_matrix_market(*out, a, loaded.generated);
        fmt::print("wrote {} ({} x {}, {} nonzeros{})\n", *out, a.rows, a.cols, a.nnz(),
                   *precision == "single" ? ", values in single precision" : "");
      };
      if (*precision == "single") {
        if (!out->ends_with(".spmvbin"))
          throw Unsupported("--precision single applies to a binary cache (*.spmvbin); Matrix Market output keeps the file's values");
        write(io::load_f32(*in, ro));
      } else {
        write(io::load(*in, ro));
      }
      return 0;
    };
  });
}

}  // namespace spmv::cli
