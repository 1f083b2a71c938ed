#!/usr/bin/env bash
# Issue 17's follow-up on the GPU machine: the webbase-1M alike with the windowed row sort against
# cuSPARSE ALG1/ALG2, GPU tests, the SpMM sweep on webbase again, the three generated matrices and
# the Cube_Coup_dt0 alike, then gpu_bench's SpMM section.
#   bash bench/spmm_followup.sh COMMIT   (portable binaries in .gpu/bin, libisal.so.2 in .gpu/lib,
#   the shared matrices in .gpu/matrices; results under $OUT)
set -u
C=$1; G=$PWD/.gpu; B=$G/bin; export LD_LIBRARY_PATH=$G/lib SPMV_SHARED_MATRICES=$G/matrices
M=/tmp/m; mkdir -p $M/w $M/g $M/c
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
$B/spmv generate --like webbase-1M --seed 1 -o $M/w/webbase-1M.spmvbin > /dev/null &
$B/spmv generate --like Cube_Coup_dt0 --seed 1 -o $M/c/Cube_Coup_dt0.spmvbin > /dev/null &
$B/spmv generate --kind stencil3d --rows 1000000 --nnz-per-row 27 --seed 1 -o $M/g/stencil27_1M.spmvbin > /dev/null &
$B/spmv generate --kind road --rows 2000000 --nnz-per-row 2.8 --seed 1 -o $M/g/road_2M.spmvbin > /dev/null &
$B/spmv generate --kind powerlaw --rows 1000000 --nnz-per-row 8 --seed 1 -o $M/g/powerlaw_1M.spmvbin > /dev/null &
timeout 120 $B/spmv_gpu_tests > $OUT/gpu_tests_h100_$C.txt 2>&1; echo "gpu_tests rc=$?"; tail -1 $OUT/gpu_tests_h100_$C.txt; grep -E "FAILED|Failure" $OUT/gpu_tests_h100_$C.txt | head
wait
r() { $B/spmv run $M/w/webbase-1M.spmvbin --backend cuda --repeat 20 "$@" 2>&1 | grep -E '^(time_s|detail)' | cut -c1-330; }
for cfg in "--k 4 --layout col" "--k 64 --layout row"; do
  echo "=== $cfg"; r --kernel csr $cfg; for a in cusparse-spmm-alg1 cusparse-spmm-alg2; do r --kernel $a $cfg | grep time_s; done
done
K="--backends cuda --kernels auto,csr,ell,hll,cusparse,cusparse-spmm-alg1,cusparse-spmm-alg2,cusparse-spmm-alg3 --block-sizes 256 --hack 32 --k 4,16,64 --layouts row,col --repeat 5 --min-sample-ms 10 --no-progress --duel-rounds 0"
s=$(date +%s); timeout 100 $B/spmv bench $M/w $K --out $OUT/spmm_webbase_h100_$C.csv > $OUT/sweep_webbase.log 2>&1; echo "webbase rc=$? $(( $(date +%s) - s )) s"
s=$(date +%s); timeout 160 $B/spmv bench $M/g $K --time-budget 120 --out $OUT/spmm_generated_h100_$C.csv > $OUT/sweep_gen.log 2>&1; echo "gen rc=$? $(( $(date +%s) - s )) s"
s=$(date +%s); timeout 100 $B/spmv bench $M/c $K --time-budget 70 --out $OUT/spmm_cube_h100_$C.csv > $OUT/sweep_cube.log 2>&1; echo "cube rc=$? $(( $(date +%s) - s )) s"
for f in webbase generated cube; do python3 bench/spmm_summary.py $OUT/spmm_${f}_h100_$C.csv 2>&1 | grep -v "^not ok" | tail -14; done
s=$(date +%s); timeout 80 $B/gpu_bench --quick --samples 3 --sample-ms 5 > $OUT/gpu_bench_h100_$C.txt 2>&1; echo "gpu_bench rc=$? $(( $(date +%s) - s )) s"
grep -A40 "== Summary" $OUT/gpu_bench_h100_$C.txt | head -45
