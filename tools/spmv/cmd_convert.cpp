#include <spmv/io.hpp>

#include <fmt/format.h>

#include "commands.hpp"

namespace spmv::cli {

void add_convert(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "convert", "Convert between Matrix Market and the binary cache, by the output's name (*.gz: gzip-compressed)");
  cmd->footer(
      "Matrix Market output keeps the input's field, symmetry and header comments: a symmetric, skew-symmetric or\n"
      "hermitian matrix is written as its lower triangle, as Matrix Market stores it (--expand: both, as general).\n"
      "A matrix whose entries do not match its declared symmetry is refused (--expand writes it).\n"
      "Examples:\n"
      "  spmv convert A.mtx A.mtx.gz           # gzip-compressed Matrix Market\n"
      "  spmv convert A.mtx.gz -o A.spmvbin    # binary cache\n"
      "  spmv convert A.mtx B.mtx --expand     # both triangles, banner 'general'");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto out_option = std::make_shared<std::string>();
  cmd->add_option("INPUT", *in, "Matrix Market file (.mtx, .mtx.gz) or binary cache")->required();
  auto* positional = cmd->add_option(
      "OUTPUT", *out,
      "*.spmvbin for the binary cache, otherwise Matrix Market; *.gz (A.mtx.gz, A.spmvbin.gz) gzip-compressed");
  auto* option = add_output(cmd, *out_option, "The output, instead of OUTPUT");
  auto expand = std::make_shared<bool>(false);
  cmd->add_flag("--expand", *expand,
                "Matrix Market output: write a symmetric, skew-symmetric or hermitian matrix as general, both "
                "triangles stored (default: its own symmetry and the lower triangle, as the input stores it; a binary "
                "cache always holds both)");
  auto budget = std::make_shared<std::uint64_t>(0);
  add_memory_budget(cmd, *budget);
  auto precision = std::make_shared<std::string>("double");
  cmd->add_option("--precision", *precision,
                  "Values of a binary cache: double, or single (float: half the values' bytes, for plans in "
                  "single or mixed precision; a value beyond float's range is refused with its line)")
      ->check(CLI::IsMember({"double", "single"}));
  cmd->callback([&action, in, out, out_option, positional, option, expand, budget, precision] {
    action = [in, out, out_option, given_twice = positional->count() && option->count(),
              given = positional->count() || option->count(), by_option = option->count() > 0, expand, budget,
              precision] {
      // Exactly one of OUTPUT and -o (UsageError: exit status 2, like CLI11's own parse errors).
      if (given_twice)
        throw UsageError(fmt::format("convert: the output is given twice, as OUTPUT '{}' and as -o '{}': give one",
                                     *out, *out_option));
      if (!given) throw UsageError("convert: no output: give OUTPUT (spmv convert A.mtx A.mtx.gz) or -o OUTPUT");
      if (by_option) *out = *out_option;
      if (out->empty()) throw UsageError("convert: the output's name is empty");
      const io::ReadOptions ro{.memory_budget_bytes = static_cast<double>(*budget)};
      const bool binary = binary_name(*out);
      // One read of the input (a FIFO or /dev/stdin too); a synthetic matrix stays marked.
      const auto write = [&](const auto& loaded) {
        const auto& a = loaded.matrix;
        if (binary) {
          io::write_binary(*out, a, !loaded.generated.empty());
        } else {
          io::write_matrix_market(
              *out, a, io::WriteOptions{.expand = *expand, .generated = loaded.generated, .comments = loaded.comments});
        }
        const bool lower = !binary && !*expand && a.symmetry != Symmetry::General;
        if (verbosity >= 1)  // -q: the exit status alone
          fmt::print("wrote {} ({} x {}, {} nonzeros{}{}{})\n", *out, a.rows, a.cols, a.nnz(),
                     lower ? fmt::format(", {}: lower triangle stored", to_string(a.symmetry)) : "",
                     !binary && *expand && a.symmetry != Symmetry::General ? ", expanded to general" : "",
                     *precision == "single" ? ", values in single precision" : "");
      };
      if (*precision == "single") {
        if (!binary)
          throw Unsupported(
              "--precision single applies to a binary cache (*.spmvbin); Matrix Market output keeps the file's values");
        write(io::load_f32(*in, ro));
      } else {
        write(io::load(*in, ro));
      }
      return 0;
    };
  });
}

}  // namespace spmv::cli
