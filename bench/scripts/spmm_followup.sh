#!/usr/bin/env bash
# SpMM on the GPU machine, in three parts, each within one 600 s device call:
#   PART=webbase (default): GPU tests; the webbase-1M alike against cuSPARSE ALG1/ALG2 with
#     `spmv run`, then its SpMM sweep; gpu_bench's quick run (SpMM in both layouts with auto).
#   PART=sweeps: the three generated matrices (about 200 s on the H200) and the Cube_Coup_dt0 alike
#     (--time-budget 150: about 230 s).
#   PART=suite: the default suite's 12 other matrices of >= 1M nonzeros as structure-alikes
#     (--time-budget 330).
#   PART=... bash bench/scripts/spmm_followup.sh COMMIT   (portable binaries in .gpu/bin or $BIN, libisal.so.2 in
#   .gpu/lib, the shared matrices in .gpu/matrices; results under $OUT named by the card and COMMIT)
set -u
C=$1; G=$PWD/.gpu; B=${BIN:-$G/bin}; export LD_LIBRARY_PATH=$G/lib SPMV_SHARED_MATRICES=$G/matrices
M=/tmp/m; mkdir -p $M/w $M/g $M/c $M/s
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -o 'H[0-9]*' | head -1 | tr 'H' 'h')
K="--backends cuda --kernels auto,csr,ell,hll,cusparse,cusparse-spmm-alg1,cusparse-spmm-alg2,cusparse-spmm-alg3 --block-size 256 --hack 32 --k 4,16,64 --layouts row,col --repeat 5 --min-sample-ms 10 --no-progress --duel-rounds 0"
sweep() {  # NAME DIR LIMIT_S [bench options]
  local s=$(date +%s) f=$OUT/spmm_$1_${card}_$C.csv
  timeout "$3" $B/spmv bench "$2" $K "${@:4}" --out $f > $OUT/sweep_$1.log 2>&1; echo "$1 rc=$? $(( $(date +%s) - s )) s"
  python3 bench/scripts/spmm_summary.py $f 2>&1 | grep -v "^not ok" | tail -14
}
if [ "${PART:-webbase}" = webbase ]; then
  $B/spmv generate --like webbase-1M --seed 1 -o $M/w/webbase-1M.spmvbin > /dev/null &
  if [ -x $B/spmv_gpu_tests ]; then  # (not carried when the call's 64 MiB would not hold it)
    timeout 120 $B/spmv_gpu_tests > $OUT/gpu_tests_${card}_$C.txt 2>&1; echo "gpu_tests rc=$?"
    tail -1 $OUT/gpu_tests_${card}_$C.txt; grep -E "FAILED|Failure" $OUT/gpu_tests_${card}_$C.txt | head
  fi
  wait
  r() { $B/spmv run $M/w/webbase-1M.spmvbin --backend cuda --repeat 20 "$@" 2>&1 | grep -E '^(time_s|detail)' | cut -c1-330; }
  for cfg in "--k 4 --layout col" "--k 64 --layout row"; do
    echo "=== $cfg"; r --kernel csr $cfg; for a in cusparse-spmm-alg1 cusparse-spmm-alg2; do r --kernel $a $cfg | grep time_s; done
  done
  sweep webbase $M/w 100
  s=$(date +%s); timeout 300 $B/gpu_bench --quick --samples 3 --sample-ms 5 > $OUT/gpu_bench_${card}_$C.txt 2>&1; echo "gpu_bench rc=$? $(( $(date +%s) - s )) s"
  grep -A40 "== Summary" $OUT/gpu_bench_${card}_$C.txt | head -45
elif [ "$PART" = suite ]; then
  for m in ML_Laplace PR02R af_1_k101 amazon0302 cant cop20k_A mac_econ_fwd500 nlpkkt80 olafu roadNet-PA thermal2 webbase-1M; do
    $B/spmv generate --like $m --seed 1 -o $M/s/$m.spmvbin > /dev/null &
  done
  wait
  sweep suite1m $M/s 560 --time-budget 330
else
  $B/spmv generate --like Cube_Coup_dt0 --seed 1 -o $M/c/Cube_Coup_dt0.spmvbin > /dev/null &
  $B/spmv generate --kind stencil3d --rows 1000000 --nnz-per-row 27 --seed 1 -o $M/g/stencil27_1M.spmvbin > /dev/null &
  $B/spmv generate --kind road --rows 2000000 --nnz-per-row 2.8 --seed 1 -o $M/g/road_2M.spmvbin > /dev/null &
  $B/spmv generate --kind powerlaw --rows 1000000 --nnz-per-row 8 --seed 1 -o $M/g/powerlaw_1M.spmvbin > /dev/null &
  wait
  sweep generated $M/g 290
  sweep cube $M/c 230 --time-budget 150
fi
