#pragma once
// Internal: kernel "auto" on any backend. The backend supplies how a candidate's plan is made, so
// that it can share data between candidates (CUDA: one device copy of the CSR matrix).
#include <spmv/planner.hpp>

#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace spmv::detail {

// Makes a candidate's plan; adds to shared_setup_seconds the time of data it shares with the other
// candidates (an upload the product needs whatever is chosen: setup, not planning).
using CandidateMaker = std::function<std::unique_ptr<Plan>(const Candidate&, double& shared_setup_seconds)>;

// Times `rounds` rounds, each one batch of batch[i] products of every plans[i] in order: per plan,
// its seconds per product in each round. A backend that queues products (CUDA) times them all
// behind one synchronisation; without one, each batch is timed on its own (Plan::time_runs).
using RoundTimer = std::function<std::vector<std::vector<double>>(std::span<Plan* const> plans,
                                                                  std::span<const int> batch, int rounds)>;

// Computes the matrix's features where the backend keeps it; adds to shared_setup_seconds the
// time of data it shares with the candidates (CUDA: the upload), as CandidateMaker does. Without
// one: analyze(a) on the host.
using Analyzer = std::function<MatrixFeatures(double& shared_setup_seconds)>;

// The planner's clock, in seconds from any origin: its budget and the account of its time (the
// candidates' products are timed by the plans themselves). Without one: the steady clock; tests
// pass one that only their plans' products advance.
using Clock = std::function<double()>;

// Analysis, model ranking, a bounded trial of the top candidates (or the model's first choice
// when opt.trial is false); candidates that are refused or fail are skipped and named in the
// plan's detail. Throws Unsupported only when no candidate can be made.
std::unique_ptr<Plan> plan_auto(const CsrView& a, Backend b, const PlanOptions& opt, const CandidateMaker& make,
                                const RoundTimer& time_rounds = {}, const Analyzer& analyzer = {},
                                const Clock& now = {});

}  // namespace spmv::detail
