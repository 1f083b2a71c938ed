// spmv: a thin command line over the library. Exit status: 0 success, 1 bad input or a failed
// check, 2 bad usage.
#include <spmv/types.hpp>
#include <spmv/version.hpp>

#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>

#include "commands.hpp"

int main(int argc, char** argv) {
  // CUDA loads each kernel at its first launch unless told otherwise; a command makes a few plans,
  // and each load would land in the first plan's conversion or the planner's trial
  // (bench/results/README.md). Loaded with the context instead; a user's own setting wins.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  CLI::App app{"spmv: sparse matrix-vector products on CPUs and GPUs, checked and measured"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("spmv {} (commit {})", spmv::version(), spmv::git_commit()));
  spmv::cli::Action action;
  spmv::cli::add_info(app, action);
  spmv::cli::add_run(app, action);
  spmv::cli::add_convert(app, action);
  spmv::cli::add_kernels(app, action);
  spmv::cli::add_generate(app, action);
  spmv::cli::add_bench(app, action);
  spmv::cli::add_report(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    return action ? action() : 2;
  } catch (const spmv::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "out of memory\n");
    return 1;
  } catch (const std::exception& e) {  // never an abort: anything else is still a message and exit 1
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "error: unknown exception\n");
    return 1;
  }
}
