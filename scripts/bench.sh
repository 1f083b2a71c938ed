#!/usr/bin/env bash
# The main job: benchmark every kernel of this build over the default suite (the real matrices
# in ../shared/matrices plus structure-alikes of the seed-suite matrices that are missing), then
# write the report. Extra arguments go to `spmv bench` (e.g. --suite full, --time-budget 900,
# --backends omp,cuda, or matrix files/folders instead of the default suite).
# Results: results/results.csv, results/results.json, results/report/report.md and PNG plots.
# OpenMP threads are pinned (OMP_PROC_BIND=close, OMP_PLACES=cores; each unless the caller set it);
# the CSV records the settings (columns omp_proc_bind, omp_places, omp_num_threads).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
mkdir -p results
# Pinned threads do not wander between cores mid-sample: steadier timings. Each setting the caller
# gave stands (OMP_PROC_BIND=false leaves the threads unpinned).
export OMP_PROC_BIND="${OMP_PROC_BIND-close}" OMP_PLACES="${OMP_PLACES-cores}"
echo "OpenMP: OMP_PROC_BIND=${OMP_PROC_BIND:-(unset)} OMP_PLACES=${OMP_PLACES:-(unset)}${OMP_NUM_THREADS:+ OMP_NUM_THREADS=$OMP_NUM_THREADS}"
status=0
"$BUILD_DIR/spmv" bench -o results/results.csv "$@" || status=$?
# Status 1 means some kernel failed its check (listed in the report); still write the report.
if [ "$status" -gt 1 ] || [ ! -s results/results.csv ]; then
  echo "bench failed (exit $status)" >&2
  exit "$status"
fi
"$BUILD_DIR/spmv" report results/results.csv -o results/report
echo "report: results/report/report.md"
exit "$status"
