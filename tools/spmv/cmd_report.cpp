#include <spmv/bench/bench.hpp>

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <sys/wait.h>

#include "commands.hpp"

namespace spmv::cli {

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int report_cmd(const std::string& csv, const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(csv, ec)) throw Error(fmt::format("{}: no such file", csv));
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  const std::string script = bench::find_report_script(exe);
  if (script.empty()) throw Error("scripts/report.py not found (set SPMV_REPORT_SCRIPT to its path)");
  const std::string cmd = fmt::format("{} {} {} -o {}", shell_quote(bench::find_python()), shell_quote(script),
                                      shell_quote(csv), shell_quote(dir));
  const int st = std::system(cmd.c_str());
  if (st == -1 || !WIFEXITED(st)) throw Error("could not run " + cmd);
  // Exit 1: report.py said what was wrong with the CSV or the output folder, in one line.
  if (WEXITSTATUS(st) == 1) return 1;
  if (WEXITSTATUS(st) != 0)
    throw Error(
        fmt::format("report.py failed (exit {}); it needs python3 with matplotlib "
                    "(bash scripts/setup.sh installs Debian's)",
                    WEXITSTATUS(st)));
  return 0;
}

}  // namespace

void add_report(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("report", "Plots (PNG) and Markdown tables from a bench CSV");
  auto csv = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>("report");
  cmd->add_option("CSV", *csv, "results.csv written by `spmv bench`")->required();
  add_output(cmd, *dir, "Output folder (created)")->capture_default_str();
  cmd->callback([&action, csv, dir] { action = [csv, dir] { return report_cmd(*csv, *dir); }; });
}

}  // namespace spmv::cli
