// spmv: a thin command line over the library. Exit status: 0 success, 1 bad input, a failed
// check or a missing device, 2 bad usage. `spmv` and `spmv help [COMMAND]` print the help.
#include <spmv/types.hpp>
#include <spmv/version.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <iostream>
#include <omp.h>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"

namespace {

// A message as the terminal gets it: control bytes (a file name may hold ESC or a newline) as \xNN;
// keep_lines: CLI11's messages, laid out in lines.
std::string printable(const std::string& text, bool keep_lines = false) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && !(keep_lines && c == '\n')) || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += ch;
  }
  return out;
}

// Edits (insertions, deletions, substitutions) between a and b.
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// " (did you mean 'X'?)" for the name within two edits of `word` (the nearest), else "".
std::string suggestion(const std::string& word, const std::vector<std::string>& names) {
  std::string best;
  std::size_t d = 3;
  for (const auto& n : names)
    if (const std::size_t e = distance(word, n); e < d) d = e, best = n;
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

// A mistyped command or option: the one-line message with the nearest known name, or "" where
// none was mistyped (other extra arguments keep CLI11's message).
std::string mistyped(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* c : app.get_subcommands([](CLI::App*) { return true; })) commands.push_back(c->get_name());
  CLI::App* sub = nullptr;
  for (int i = 1; i < argc && !sub; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("-")) continue;
    if (std::find(commands.begin(), commands.end(), arg) == commands.end())
      return fmt::format("spmv: no command '{}'{}", printable(arg), suggestion(arg, commands));
    sub = app.get_subcommand(arg);
  }
  std::vector<std::string> known;
  for (CLI::App* a : {&app, sub})
    if (a)
      for (const CLI::Option* o : a->get_options())
        for (const auto& n : o->get_lnames()) known.push_back("--" + n);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.starts_with("--") || arg == "--") continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), name) == known.end())
      return fmt::format("spmv{}: no option '{}'{}", sub ? " " + sub->get_name() : "", printable(name),
                         suggestion(name, known));
  }
  return "";
}

// `spmv`, `spmv help` or `spmv help COMMAND`: the help through the formatter (App::help() on a
// parsed app prints its parsed subcommand's, help's). 2 for a command that does not exist.
int print_help(CLI::App& app, const std::string& help_on) {
  CLI::App* of = &app;
  std::string usage = app.get_name();
  if (!help_on.empty()) {
    try {
      of = app.get_subcommand(help_on);
      usage += " " + of->get_name();
    } catch (const CLI::OptionNotFound&) {
      std::fprintf(stderr, "spmv help: no command '%s'\nRun with --help for more information.\n",
                   printable(help_on).c_str());
      return 2;
    }
  }
  std::fputs(of->get_formatter()->make_help(of, usage, CLI::AppFormatMode::Normal).c_str(), stdout);
  return 0;
}

// The command's action, its errors as messages: bad usage exit 2, anything else exit 1, never an
// abort.
int run_action(const spmv::cli::Action& action) {
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
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", printable(e.what()).c_str());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "error: unknown exception\n");
    return 1;
  }
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
    if (app.get_subcommands().empty() || help->parsed()) return print_help(app, help_on);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e))
      if (const std::string m = mistyped(app, argc, argv); !m.empty()) {
        std::fprintf(stderr, "%s\nRun with --help for more information.\n", m.c_str());
        return 2;
      }
    std::ostringstream err;
    app.exit(e, std::cout, err);
    std::fputs(printable(err.str(), true).c_str(), stderr);
    return 2;
  }
  return run_action(action);
}
