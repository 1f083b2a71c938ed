#!/usr/bin/env bash
# The planner's measurement on the GPU machine (bench/results/README.md quotes the calls):
#   bench/scripts/auto_planner_run.sh tests|focus|irregular|suite|model BIN OUT
# BIN holds spmv and spmv_gpu_tests (portable builds), OUT receives the logs and CSVs. Every run
# of `spmv bench` times every kernel (auto included) and every baseline: Eigen, and cuSPARSE CSR
# ALG1/ALG2, COO ALG1/ALG2 and sliced ELL.
set -uo pipefail
what=$1 bin=$2 out=$3
export OMP_PROC_BIND=close OMP_PLACES=cores
sweep=(--backends omp,cuda --threads 16 --block-size 256,1024 --no-progress)
gen_irregular() {
  # Generated irregular matrices: graphs, a permuted mesh, wide rectangular, tall short rows,
  # empty-and-heavy rows, and two regular ones for contrast.
  g=.cache/irregular
  mkdir -p $g
  python3 bench/scripts/make_irregular.py $g
  gen() { "$bin/spmv" generate --seed 1 -o "$g/$1.spmvbin" "${@:2}" >/dev/null; }
  gen powerlaw_2M --kind powerlaw --rows 2000000 --nnz-per-row 8
  gen wide_100k_x_2M --kind random --rows 100000 --cols 2000000 --nnz-per-row 60
  gen tall_10M_short --kind random --rows 10000000 --nnz-per-row 2 --std 0.8
  gen circuit_heavy_1M --kind circuit --rows 1000000 --nnz-per-row 6 --std 80
  gen road_2M --kind road --rows 2000000 --nnz-per-row 2.8
  gen kkt_1M --kind kkt --rows 1000000 --nnz-per-row 15 --std 10
  gen mesh2d_4M --kind mesh2d --rows 4000000 --nnz-per-row 5
  gen stencil27_1M --kind stencil3d --rows 1000000 --nnz-per-row 27
}
g=.cache/irregular
case $what in
  focus)
    # Sliced ELL where cuSPARSE's led: our HLL at 1-16 threads per row (spmv run --subwarp) beside
    # cuSPARSE SELL_ALG1, ELL, CSR5 and CSR-vector, on structure-alikes of the suite's matrices where
    # SELL led and on the generated irregular ones; then the planner's line on both backends.
    gen_irregular
    f=.cache/focus
    mkdir -p $f
    for m in thermal2 af_1_k101 thermomech_TK nlpkkt80 ML_Laplace webbase-1M; do
      "$bin/spmv" generate --like $m --seed 1 -o "$f/$m.spmvbin" >/dev/null
    done
    cp $g/*.spmvbin $f/
    t() { "$bin/spmv" run "$1" --backend cuda --repeat 20 "${@:2}" 2>&1 | awk -F': ' '/^time_s/ {printf "%.1f", $2 * 1e6} /^check: failed/ {printf "FAILED"}'; }
    for m in $f/*.spmvbin; do
      line="$(basename $m .spmvbin)"
      for l in 1 2 4 8 16; do line+=" hll/$l=$(t $m --kernel hll --subwarp $l)"; done
      line+=" hll/auto=$(t $m --kernel hll)"
      for k in cusparse-sell ell csr5 csr-vector auto; do line+=" $k=$(t $m --kernel $k)"; done
      echo "$line"
    done | tee "$out/focus.txt"
    for m in $f/*.spmvbin; do
      "$bin/spmv" run "$m" --backend cuda 2>&1 | grep -E "^(plan|planning_s|time_s):" | sed "s|^|$(basename $m) |"
    done > "$out/focus_plans.txt" ;;
  tests)
    "$bin/spmv_gpu_tests" 2>&1 | tee "$out/gpu_tests.txt" | grep -E "^\[  (FAILED|PASSED) |tests? ran|Failure" ;;
  irregular)
    gen_irregular
    "$bin/spmv" bench $g "${sweep[@]}" --time-budget "${BUDGET:-300}" --out "$out/irregular.csv" \
      > "$out/irregular_summary.txt" 2> "$out/irregular_log.txt"
    tail -40 "$out/irregular_summary.txt" ;;
  model)
    # auto alone with --no-trial (the model's first choice) over both sets: how close the model
    # gets without the trial, against the oracle of the full runs (bench/scripts/auto_summary.py --model).
    gen_irregular
    model=(--kernels auto --no-trial --no-baselines "${sweep[@]}" --time-budget "${BUDGET:-150}")
    "$bin/spmv" bench --suite full "${model[@]}" --out "$out/model_suite.csv" > /dev/null 2> "$out/model_log.txt"
    "$bin/spmv" bench $g "${model[@]}" --out "$out/model_irregular.csv" > /dev/null 2>> "$out/model_log.txt" ;;
  suite)
    "$bin/spmv" bench --suite full "${sweep[@]}" --time-budget "${BUDGET:-420}" --out "$out/suite.csv" \
      > "$out/suite_summary.txt" 2> "$out/suite_log.txt"
    tail -60 "$out/suite_summary.txt" ;;
esac
