#!/usr/bin/env bash
# Single and mixed precision on the GPU machine (one 600 s device call): GPU tests, then double / single / mixed on three
# generated matrices and three structure-alikes (3-127M nonzeros: five larger than the H200's 50 MB L2,
# one, Cube_Coup_dt0, larger than the host's 300 MiB L3), GPU against every cuSPARSE SpMV algorithm and
# CPU (16 threads) against Eigen, each in the same precision; summary by bench/scripts/precision_summary.py.
#   bash bench/scripts/precision_run.sh COMMIT   (portable binaries in .gpu/bin or $BIN, libisal.so.2 in .gpu/lib,
#   the shared matrices in .gpu/matrices; results under $OUT named by the card and COMMIT)
set -u
C=$1; G=$PWD/.gpu; B=${BIN:-$G/bin}; export LD_LIBRARY_PATH=$G/lib SPMV_SHARED_MATRICES=$G/matrices
M=/tmp/m/p; mkdir -p $M
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -o 'H[0-9]*' | head -1 | tr 'H' 'h')
$B/spmv generate --kind stencil3d --rows 1000000 --nnz-per-row 27 --seed 1 -o $M/stencil27_1M.spmvbin > /dev/null &
$B/spmv generate --kind road --rows 2000000 --nnz-per-row 2.8 --seed 1 -o $M/road_2M.spmvbin > /dev/null &
$B/spmv generate --kind powerlaw --rows 1000000 --nnz-per-row 8 --seed 1 -o $M/powerlaw_1M.spmvbin > /dev/null &
for m in Cube_Coup_dt0 ML_Laplace webbase-1M; do $B/spmv generate --like $m --seed 1 -o $M/$m.spmvbin > /dev/null & done
if [ -x $B/spmv_gpu_tests ]; then
  s=$(date +%s); timeout 200 $B/spmv_gpu_tests > $OUT/gpu_tests_${card}_$C.txt 2>&1
  echo "gpu_tests rc=$? $(( $(date +%s) - s )) s"; tail -1 $OUT/gpu_tests_${card}_$C.txt
  grep -E "FAILED|Failure" -A3 $OUT/gpu_tests_${card}_$C.txt | head -30
fi
wait
P="--precisions double,single,mixed --k 1 --repeat 5 --min-sample-ms 10 --no-progress --duel-rounds 0"
s=$(date +%s)
timeout 200 $B/spmv bench $M --backends cuda --kernels auto,csr,ell,hll,cusparse-alg1,cusparse-alg2,cusparse-coo-alg1,cusparse-coo-alg2,cusparse-sell --block-size 256 --hack 32 $P --out $OUT/precision_cuda_${card}_$C.csv > $OUT/precision_cuda.log 2>&1
echo "cuda bench rc=$? $(( $(date +%s) - s )) s"; tail -3 $OUT/precision_cuda.log
s=$(date +%s)
OMP_PROC_BIND=close OMP_PLACES=cores timeout 200 $B/spmv bench $M --backends omp --kernels auto,eigen --threads 16 $P --out $OUT/precision_omp_xeon16_$C.csv > $OUT/precision_omp.log 2>&1
echo "omp bench rc=$? $(( $(date +%s) - s )) s"; tail -3 $OUT/precision_omp.log
python3 bench/scripts/precision_summary.py $OUT/precision_*_$C.csv
