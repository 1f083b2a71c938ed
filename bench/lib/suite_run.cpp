// The sweep over a suite under a time budget (run_suite in spmv/bench/bench.hpp).
#include <spmv/bench/bench.hpp>
#include <spmv/bench/budget.hpp>
#include <spmv/timing.hpp>

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace spmv::bench {

std::vector<Row> run_suite(const std::vector<MatrixSource>& sources, const SuiteOptions& so, SweepConfig& cfg,
                           const Ceilings& ceil, TimeBudget& budget, std::chrono::steady_clock::time_point started,
                           const Progress& progress) {
  const auto say = [&](const std::string& line) {
    if (progress.message) progress.message(line);
  };
  const std::size_t per_matrix = count_configs(cfg);
  const std::size_t total = per_matrix * sources.size();
  const auto sweep_start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  const auto add = [&](std::vector<Row> r) {
    if (progress.rows) progress.rows(r);
    rows.insert(rows.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
  };
  std::size_t done = 0;
  for (std::size_t i = 0; i < sources.size(); ++i, done += per_matrix) {
    const MatrixSource& s = sources[i];
    budget.before_matrix(cfg, seconds_since(started), seconds_since(sweep_start), done, total);
    if (budget.exhausted(seconds_since(started))) {
      say(s.name + ": skipped: time budget exhausted");
      add({unavailable_row(s, "skipped: time budget exhausted (--time-budget)")});
      continue;
    }
    if (progress.update)
      progress.update(done, total, "loading " + s.name);
    else
      say(fmt::format("[{}/{}] {} ({}{})", i + 1, sources.size(), s.name, s.origin,
                      s.origin == "synthetic-scaled" ? fmt::format(" x{:.3g}", s.scale) : ""));
    Csr mat;
    try {
      mat = load_source(s, so);
    } catch (const std::exception& e) {
      say(fmt::format("{}: skipped: {}", s.name, e.what()));
      add({unavailable_row(s, std::string("skipped: ") + e.what())});
      continue;
    }
    std::vector<Row> r;
    try {
      r = bench_matrix(mat, s, cfg, ceil, progress, done, total);
    } catch (const std::exception& e) {  // one bad matrix never ends the run
      say(fmt::format("{}: error: {}", s.name, e.what()));
      add({unavailable_row(s, std::string("error: ") + e.what())});
      continue;
    }
    std::vector<std::string> noisy;
    for (const Row& row : r) {
      if (row.status == "failed" || row.status.starts_with("error"))
        say(fmt::format("{}: {}/{} {}: {}", s.name, row.backend, row.kernel, row.status, row.detail));
      if (row.status == "noisy")
        noisy.push_back(fmt::format(
            "{}/{}{}", row.backend, row.kernel,
            row.threads_requested > 0 && row.backend != "serial" ? fmt::format(" t={}", row.threads_requested) : ""));
    }
    if (!noisy.empty())
      say(fmt::format("{}: {} noisy configuration{} (timing spread above {:.1f}% twice; left out of bests): {}{}",
                      s.name, noisy.size(), noisy.size() == 1 ? "" : "s", 100 * cfg.noise_threshold,
                      fmt::join(noisy.begin(), noisy.begin() + std::min<std::ptrdiff_t>(5, noisy.size()), ", "),
                      noisy.size() > 5 ? ", ..." : ""));
    add(std::move(r));
  }
  return rows;
}

}  // namespace spmv::bench
