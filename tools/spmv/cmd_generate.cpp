#include <spmv/bench/generate.hpp>
#include <spmv/formats/reorder.hpp>
#include <spmv/io.hpp>
#include <spmv/stats.hpp>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <fmt/format.h>

#include "commands.hpp"

namespace spmv::cli {

namespace {

struct GenArgs {
  std::string like, kind, suite_file, output;
  index_t rows = 0, cols = 0;
  double nnz_per_row = 0, std = 0, scale = 1.0;
  offset_t nnz = 0;
  std::uint64_t seed = 1;
  int threads = 0;
  bool scramble = false;
  int values = 0;
};

int generate_cmd(const GenArgs& g) {
  gen::GenSpec spec;
  std::string name;
  if (!g.like.empty()) {
    const auto suite = gen::read_seed_suite(g.suite_file);
    const auto e = gen::find_seed(suite, g.like);
    if (!e) {
      std::string names;
      for (const auto& s : suite) names += (names.empty() ? "" : ", ") + s.name;
      throw Error(fmt::format("no matrix '{}' in the seed suite (known: {})", g.like, names));
    }
    spec = gen::spec_like(*e, g.scale, g.seed);
    name = e->name + " alike (" + e->kind_text + ")";
  } else {
    spec = {.kind = gen::parse_kind(g.kind),
            .rows = g.rows,
            .cols = g.cols,
            .nnz = g.nnz,
            .mean = g.nnz_per_row,
            .std = g.std,
            .seed = g.seed};
    if (spec.mean <= 0 && spec.nnz <= 0) throw UsageError("--kind needs --nnz-per-row or --nnz");
    const index_t cols = spec.cols > 0 ? spec.cols : spec.rows;
    if (spec.mean > cols)
      throw UsageError(fmt::format("--nnz-per-row {}: a row holds at most the {} columns", spec.mean, cols));
    if (static_cast<double>(spec.nnz) > static_cast<double>(spec.rows) * cols)  // (the generator would cut it)
      throw UsageError(fmt::format("--nnz {}: a {} x {} matrix holds at most {}", spec.nnz, spec.rows, cols,
                                   static_cast<std::int64_t>(spec.rows) * cols));
    name = std::string(gen::to_string(spec.kind));
  }
  gen::check_generate_memory(spec, name);
  const auto t0 = std::chrono::steady_clock::now();
  Csr a = gen::generate(spec, g.threads);
  if (g.values > 0) {  // few distinct values, as stencils, pattern matrices and repeated element matrices have
    std::vector<double> level(static_cast<std::size_t>(g.values));
    std::mt19937_64 rng(spec.seed);
    for (double& v : level) v = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
    for (std::size_t q = 0; q < a.val.size(); ++q)
      a.val[q] = level[static_cast<std::size_t>((q * 0x9E3779B97F4A7C15ull) >> 20) % level.size()];
    name += fmt::format(", {} distinct values", g.values);
  }
  if (g.scramble) {  // rows and columns renumbered alike at random: the structure's locality gone
    if (a.rows != a.cols) throw UsageError("--scramble: a square matrix (rows and columns renumbered alike)");
    std::vector<index_t> order(static_cast<std::size_t>(a.rows));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(spec.seed));
    const Permutation p = permutation_from_order(std::move(order));
    ConvertOptions copt;
    copt.threads = g.threads;
    copt.memory_budget_bytes = std::max(16.0 * (1 << 30), 2.0 * csr_storage_bytes(a));  // what was generated fits
    a = permute(a, p, copt);
    name += ", scrambled";
  }
  const double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The file says it is synthetic, so `spmv bench FILE` labels it so (never "real").
  if (binary_name(g.output))
    io::write_binary(g.output, a, true);
  else
    io::write_matrix_market(g.output, a, fmt::format("{}, seed {}", name, spec.seed));
  const MatrixStats st = compute_stats(a);
  fmt::print(
      "wrote {}: {}\nkind: {}\nrows: {}\ncols: {}\nnnz: {}\nnnz_per_row_mean: {:.6g}\n"
      "nnz_per_row_std: {:.6g}\nmax_row_nnz: {}\nseed: {}\ngenerate_s: {:.3f}\n",
      g.output, name, gen::to_string(spec.kind), a.rows, a.cols, a.nnz(), st.row_nnz_mean, st.row_nnz_std,
      st.row_nnz_max, spec.seed, gen_s);
  return 0;
}

}  // namespace

void add_generate(CLI::App& app, Action& action) {
  auto* cmd =
      app.add_subcommand("generate", "Write a synthetic structure-alike matrix (deterministic for a given seed)");
  auto g = std::make_shared<GenArgs>();
  auto* like = cmd->add_option("--like", g->like, "Imitate this seed-suite matrix (rows, nnz, mean, std, kind)");
  std::vector<std::string> kinds;
  for (const gen::Kind k : gen::all_kinds()) kinds.emplace_back(gen::to_string(k));
  auto* kind = cmd->add_option("--kind", g->kind, "The structure to generate")->check(CLI::IsMember(kinds));
  like->excludes(kind);
  cmd->add_option("--rows", g->rows, "Rows (with --kind)")->check(positive_int())->needs(kind);
  cmd->add_option("--cols", g->cols, "Columns (default: square)")->check(positive_int())->needs(kind);
  cmd->add_option("--nnz-per-row", g->nnz_per_row, "Mean row length (with --kind)")
      ->check(positive_real())
      ->needs(kind);
  cmd->add_option("--nnz", g->nnz, "Exact nonzeros instead of rows x nnz-per-row")->check(positive_int())->needs(kind);
  cmd->add_option("--std", g->std, "Row-length standard deviation")->check(non_negative_real());
  cmd->add_option("--scale", g->scale, "With --like: shrink rows and nnz by this factor (0..1]")
      ->check(real_in(1e-9, 1.0, "(0, 1]"));
  cmd->add_option("--values", g->values,
                  "Draw the values from this many distinct ones (a stencil has 2, a pattern matrix 1; 0: the "
                  "generator's own values, all different)")
      ->check(int_in(0, 1 << 24));
  cmd->add_flag("--scramble", g->scramble,
                "Renumber rows and columns alike at random (P A P^T, seeded): a mesh without its locality, as "
                "a reordering (spmv run --reorder rcm) finds it");
  cmd->add_option("--seed", g->seed, "Random seed (same seed, same bytes)")
      ->check(non_negative_int())
      ->capture_default_str();
  cmd->add_option("--suite-file", g->suite_file, "seed_suite.tsv (default: ../shared/suite, else built in)");
  cmd->add_option("--threads", g->threads, "Generator threads (0: all); the output does not depend on it")
      ->check(thread_count(0))
      ->capture_default_str();
  add_output(
      cmd, g->output,
      "Output: *.spmvbin for the binary cache, else Matrix Market; *.gz (A.mtx.gz, A.spmvbin.gz) gzip-compressed")
      ->required();
  cmd->callback([&action, g, like, kind, cmd] {
    if (!*like && !*kind) throw CLI::RequiredError("--like or --kind");
    if (*kind && g->rows <= 0) throw CLI::RequiredError("--rows");
    (void)cmd;
    action = [g] { return generate_cmd(*g); };
  });
}

}  // namespace spmv::cli
