// spmv run --distributed and spmv bench --distributed: the product over the MPI ranks the command
// runs on (mpirun -np N spmv ...), measured by the benchmark wing (spmv/bench/distributed.hpp).
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <thread>

#include "commands.hpp"

#if SPMV_HAVE_MPI
#include <spmv/bench/distributed.hpp>
#endif

namespace spmv::cli {

#if SPMV_HAVE_MPI
namespace {

// A rank's CPU threads: the cores it is bound to (mpirun --map-by slot:PE=N --bind-to core), or
// the node's cores shared among its ranks where it is not bound.
int rank_threads(int ranks_on_node) {
  const int mine = omp_get_num_procs();  // the cores of this process's affinity mask
  const int node = static_cast<int>(std::thread::hardware_concurrency());
  return mine < node ? mine : std::max(1, node / ranks_on_node);
}

}  // namespace

int run_distributed(const DistributedRequest& req) {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // CPU blocks: the node's cores shared among its ranks, unless --threads says otherwise.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int per_node = 1;
  MPI_Comm_size(node, &per_node);
  MPI_Comm_free(&node);
  int status = 0;
  try {
    bench::DistributedConfig config;
    config.backend = req.backend;
    config.kernel = req.kernel;
    config.samples = req.repeat;
    config.sample_seconds = req.min_sample_ms * 1e-3;
    config.cg_iterations = req.cg_iterations;
    for (const std::string& source : req.sources)
      for (const Operation op : req.operations)
        for (const int k : req.ks) {
          config.opt = req.opt;
          if (config.opt.threads == 0) config.opt.threads = rank_threads(per_node);
          config.opt.operation = op;
          config.opt.k = k;
          const bench::DistributedResult r = bench::run_distributed(MPI_COMM_WORLD, source, config);
          if (rank == 0) {
            if (verbosity >= 1)
              fmt::print("{}{}", req.sources.size() * req.operations.size() * req.ks.size() > 1 ? "\n" : "",
                         bench::distributed_text(r));
            if (!req.csv.empty()) bench::append_distributed_csv(req.csv, r);
          }
          if (!r.passed) {
            if (rank == 0) fmt::print(stderr, "{}: check against the reference failed: {}\n", source, r.check);
            status = 1;
          }
        }
    if (rank == 0 && !req.csv.empty() && verbosity >= 1) fmt::print(stderr, "wrote {}\n", req.csv);
  } catch (const std::exception& e) {  // the library's collective steps throw on every rank
    if (rank == 0) fmt::print(stderr, "error: {}\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
#else
int run_distributed(const DistributedRequest&) {
  throw UsageError(
      "--distributed: this spmv was built without MPI (install Open MPI, e.g. Debian's libopenmpi-dev and "
      "openmpi-bin, and build again)");
}
#endif

}  // namespace spmv::cli
