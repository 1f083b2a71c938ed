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
  cmd->callback([&action, in, out] {
    action = [in, out] {
      const Csr a = io::load_csr(*in);
      const std::string generated = io::generated_description(*in);  // a synthetic matrix stays marked
      if (out->ends_with(".spmvbin")) io::write_binary(*out, a, !generated.empty());
      else io::write_matrix_market(*out, a, generated);
      fmt::print("wrote {} ({} x {}, {} nonzeros)\n", *out, a.rows, a.cols, a.nnz());
      return 0;
    };
  });
}

}  // namespace spmv::cli
