#pragma once
// Each subcommand lives in its own file and adds itself to the app; main.cpp lists them.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>

namespace spmv::cli {

// A subcommand's action returns the process exit status (0 ok, 1 bad input or failed check).
using Action = std::function<int()>;

// --memory-budget SIZE (12G, 500M, plain bytes): the most the sizes in an input file may ask for.
inline CLI::Option* add_memory_budget(CLI::App* cmd, std::uint64_t& bytes) {
  return cmd
      ->add_option("--memory-budget", bytes,
                   "The most memory an input's sizes may ask for, e.g. 12G or 500M (default: half of physical memory)")
      ->transform(CLI::AsSizeValue(false));
}

void add_info(CLI::App& app, Action& action);
void add_run(CLI::App& app, Action& action);
void add_convert(CLI::App& app, Action& action);
void add_kernels(CLI::App& app, Action& action);
void add_generate(CLI::App& app, Action& action);
void add_bench(CLI::App& app, Action& action);
void add_report(CLI::App& app, Action& action);

}  // namespace spmv::cli
