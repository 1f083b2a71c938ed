#!/usr/bin/env bash
# The transposed product on the GPU machine, in two device calls:
#   bash bench/scripts/transpose_run.sh COMMIT suite   the GPU tests, then `spmv bench --op n,t` over
#       the shared matrices (the default suite's real ones): CUDA auto, csr-scatter and every cuSPARSE
#       SpMV algorithm (A^T: CUSPARSE_OPERATION_TRANSPOSE), 16 cores auto, csr-scatter and Eigen
#       (A.transpose() * x)
#   bash bench/scripts/transpose_run.sh COMMIT large   the same on generated matrices past the H200's
#       50 MB L2 (3-32M nonzeros, a tall 4M x 2000 one among them)
# Portable binaries in .gpu/bin or $BIN, libisal.so.2 in .gpu/lib, the shared matrices in
# .gpu/matrices; results under $OUT named by the card and COMMIT (in transpose_PART_COMMIT.tgz; SKIP_TESTS=1:
# no GPU tests); summary: transpose_summary.py.
set -u
C=$1; PART=$2; G=$PWD/.gpu; B=${BIN:-$G/bin}; export LD_LIBRARY_PATH=$G/lib SPMV_SHARED_MATRICES=$G/matrices
for f in $B/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done; chmod +x $B/*
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -o 'H[0-9]*' | head -1 | tr 'H' 'h')
CUDA_K=auto,csr-scatter,cusparse,cusparse-alg1,cusparse-alg2,cusparse-coo-alg1,cusparse-coo-alg2
P="--op n,t --k 1 --repeat 5 --no-progress --duel-rounds 5"
bench() {  # name paths... : the CUDA sweep, then the CPU one
  local name=$1; shift; local s=$(date +%s)
  timeout 250 $B/spmv bench "$@" --backends cuda --kernels $CUDA_K --block-size 0 $P --min-sample-ms 5 \
    --out $OUT/transpose_${name}_cuda_${card}_$C.csv > $OUT/transpose_${name}_cuda.log 2>&1
  echo "$name cuda bench rc=$? $(( $(date +%s) - s )) s"; tail -2 $OUT/transpose_${name}_cuda.log; s=$(date +%s)
  OMP_PROC_BIND=close OMP_PLACES=cores timeout 250 $B/spmv bench "$@" --backends omp --kernels auto,csr-scatter,eigen \
    --threads 16 $P --min-sample-ms 5 --out $OUT/transpose_${name}_omp_xeon16_$C.csv > $OUT/transpose_${name}_omp.log 2>&1
  echo "$name omp bench rc=$? $(( $(date +%s) - s )) s"; tail -2 $OUT/transpose_${name}_omp.log
}
if [ "$PART" = suite ]; then
  [ -n "${SKIP_TESTS:-}" ] || { s=$(date +%s); timeout 200 $B/spmv_gpu_tests > $OUT/gpu_tests_${card}_$C.txt 2>&1
  echo "gpu_tests rc=$? $(( $(date +%s) - s )) s"; tail -1 $OUT/gpu_tests_${card}_$C.txt
  grep -E "FAILED|Failure" -A3 $OUT/gpu_tests_${card}_$C.txt | head -30; }
  bench suite $G/matrices
else
  M=/tmp/m/t; mkdir -p $M
  $B/spmv generate --kind stencil3d --rows 1000000 --nnz-per-row 27 --seed 1 -o $M/stencil27_1M.spmvbin > /dev/null &
  $B/spmv generate --kind road --rows 2000000 --nnz-per-row 2.8 --seed 1 -o $M/road_2M.spmvbin > /dev/null &
  $B/spmv generate --kind powerlaw --rows 1000000 --nnz-per-row 8 --seed 1 -o $M/powerlaw_1M.spmvbin > /dev/null &
  $B/spmv generate --kind random --rows 4000000 --cols 2000 --nnz-per-row 4 --seed 1 -o $M/tall_4M_2000.spmvbin > /dev/null &
  for m in ML_Laplace webbase-1M; do $B/spmv generate --like $m --seed 1 -o $M/$m.spmvbin > /dev/null & done
  wait
  bench large $M
fi
# One archive: the device machine returns few files.
cd $OUT && tar czf transpose_${PART}_$C.tgz transpose_${PART}_* && rm -f transpose_${PART}_*.csv transpose_${PART}_*.json
