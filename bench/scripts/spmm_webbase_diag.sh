#!/usr/bin/env bash
# SpMM on the webbase-1M alike under the profiler: per-kernel times (ncu) of CSR SpMM on the
# webbase-1M alike (K = 64 row-major, K = 4 both layouts) beside cuSPARSE SpMM ALG1/2/3 and theirs.
#   bash bench/scripts/spmm_webbase_diag.sh   (B: a folder with a portable spmv; OUT: where ncu logs go)
set -u
B=${B:-.gpu/bin}; M=/tmp/m; mkdir -p $M "${OUT:=/tmp}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
$B/spmv generate --like webbase-1M --seed 1 -o $M/wb.spmvbin >/dev/null
NCU="ncu -c 120 --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel"
r() { $B/spmv run $M/wb.spmvbin --backend cuda --repeat 5 "$@" 2>&1 | grep -E '^(time_s|detail|check|plan|kernel)' | cut -c1-250; }
for cfg in "--k 64 --layout row" "--k 4 --layout col" "--k 4 --layout row"; do
  echo "=== $cfg"
  r --kernel csr $cfg
  for alg in cusparse-spmm-alg1 cusparse-spmm-alg2 cusparse-spmm-alg3; do echo "-- $alg"; r --kernel $alg $cfg | grep time_s; done
done
for cfg in "--k 64 --layout row --variant c4:w16" "--k 4 --layout col --variant c4:w2" "--k 4 --layout row --variant c4:w1"; do
  echo "=== ncu csr $cfg"
  $NCU $B/spmv run $M/wb.spmvbin --backend cuda --kernel csr --repeat 3 $cfg > $OUT/ncu_$(echo $cfg | tr -dc 'a-z0-9').txt 2>&1
  grep -E '^  [a-zA-Z_].*\(|gpu__time_duration' $OUT/ncu_$(echo $cfg | tr -dc 'a-z0-9').txt | cut -c1-150 | head -30
done
echo "=== ncu cusparse alg2 k64 row"
$NCU $B/spmv run $M/wb.spmvbin --backend cuda --kernel cusparse-spmm-alg2 --repeat 3 --k 64 --layout row > $OUT/ncu_cs2.txt 2>&1; grep -E '^  [a-zA-Z_].*\(|gpu__time_duration' $OUT/ncu_cs2.txt | cut -c1-150 | head -30
echo "=== ncu cusparse alg1 k4 col"
$NCU $B/spmv run $M/wb.spmvbin --backend cuda --kernel cusparse-spmm-alg1 --repeat 3 --k 4 --layout col > $OUT/ncu_cs1.txt 2>&1; grep -E '^  [a-zA-Z_].*\(|gpu__time_duration' $OUT/ncu_cs1.txt | cut -c1-150 | head -30
