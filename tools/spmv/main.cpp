// spmv: a thin command line over the library. Exit status: 0 success, 1 bad input, a failed
// check or a missing device, 2 bad usage. `spmv` and `spmv help [COMMAND]` print the help.
#include <spmv/types.hpp>
#include <spmv/version.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <iostream>
#include <omp.h>
#include <sstream>

#include "commands.hpp"

namespace {

// A message as the terminal gets it: control bytes (a file name may hold ESC or a newline) as \xNN;
// keep_lines: CLI11's messages, laid out in lines.
std::string printable(const std::string& text, bool keep_lines = false) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && !(keep_lines && c == '\n')) || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += ch;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // CUDA loads each kernel at its first launch unless told otherwise; a command makes a few plans,
  // and each load would land in the first plan's conversion or the planner's trial
  // (bench/results/README.md). Loaded with the context instead; a user's own setting wins.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  // Past a file size limit (ulimit -f) a write fails with EFBIG and the command reports it, removing
  // its unfinished output, instead of the process being killed by the signal.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"spmv: sparse matrix-vector products on CPUs and GPUs, checked and measured"};
  app.require_subcommand(0, 1);
  app.fallthrough();  // -q/-v also after the subcommand
  bool quiet = false, verbose = false;
  app.add_flag("-q,--quiet", quiet, "Print only errors (the exit status tells the rest)");
  app.add_flag("-v,--verbose", verbose, "Print more: what the check measures, the timing's spread, notes");
  app.set_version_flag("--version", fmt::format("spmv {} (commit {})", spmv::version(), spmv::git_commit()));
  spmv::cli::Action action;
  spmv::cli::add_info(app, action);
  spmv::cli::add_run(app, action);
  spmv::cli::add_convert(app, action);
  spmv::cli::add_kernels(app, action);
  spmv::cli::add_generate(app, action);
  spmv::cli::add_bench(app, action);
  spmv::cli::add_report(app, action);
  auto* help = app.add_subcommand("help", "Print this help, or a command's: spmv help run");
  std::string help_on;
  help->add_option("COMMAND", help_on, "The command whose help to print");
  try {
    app.parse(argc, argv);
    // OMP_NUM_THREADS past the library's limit would reach the parallel regions that take OpenMP's
    // default (libgomp crashes creating some 65,000 threads).
    if (omp_get_max_threads() > spmv::max_threads()) omp_set_num_threads(spmv::max_threads());
    spmv::cli::verbosity = quiet ? 0 : verbose ? 2 : 1;
    if (quiet && verbose) throw CLI::ValidationError("-q and -v", "give one of them");
    if (app.get_subcommands().empty() || help->parsed()) {
      // Through the formatter: App::help() on a parsed app prints its parsed subcommand's (help's).
      CLI::App* of = &app;
      std::string usage = app.get_name();
      if (!help_on.empty()) {
        try {
          of = app.get_subcommand(help_on);
          usage += " " + of->get_name();
        } catch (const CLI::OptionNotFound&) {
          std::fprintf(stderr, "spmv help: no command '%s'\nRun with --help for more information.\n", printable(help_on).c_str());
          return 2;
        }
      }
      std::fputs(of->get_formatter()->make_help(of, usage, CLI::AppFormatMode::Normal).c_str(), stdout);
      return 0;
    }
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    std::ostringstream err;
    app.exit(e, std::cout, err);
    std::fputs(printable(err.str(), true).c_str(), stderr);
    return 2;
  }
  try {
    return action ? action() : 2;
  } catch (const spmv::cli::UsageError& e) {
    std::fprintf(stderr, "%s\nRun with --help for more information.\n", printable(e.what()).c_str());
    return 2;
  } catch (const spmv::Error& e) {
    std::fprintf(stderr, "%s\n", printable(e.what()).c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "out of memory\n");
    return 1;
  } catch (const std::exception& e) {  // never an abort: anything else is still a message and exit 1
    std::fprintf(stderr, "error: %s\n", printable(e.what()).c_str());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "error: unknown exception\n");
    return 1;
  }
}
