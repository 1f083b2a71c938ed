#pragma once
// Each subcommand lives in its own file and adds itself to the app; main.cpp lists them.
#include <CLI/CLI.hpp>

#include <functional>

namespace spmv::cli {

// A subcommand's action returns the process exit status (0 ok, 1 bad input or failed check).
using Action = std::function<int()>;

void add_info(CLI::App& app, Action& action);
void add_run(CLI::App& app, Action& action);
void add_convert(CLI::App& app, Action& action);
void add_kernels(CLI::App& app, Action& action);
void add_generate(CLI::App& app, Action& action);
void add_bench(CLI::App& app, Action& action);
void add_report(CLI::App& app, Action& action);

}  // namespace spmv::cli
