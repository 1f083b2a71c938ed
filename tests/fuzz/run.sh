#!/usr/bin/env bash
# Builds the fuzz targets (clang, ASan + UBSan, FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) and runs
# each for SECONDS (default 600) on a seed corpus from tests/data and the smallest shared matrices,
# two at a time; prints each target's executions and whether it found anything. Crashes land in
# $BUILD_DIR/crashes/<target>/.
#   bash tests/fuzz/run.sh [SECONDS]      (SPMV=path/to/spmv makes binary-cache seeds; default build/spmv)
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-600}
B=${BUILD_DIR:-build-fuzz}
spmv=${SPMV:-build/spmv}
shared=${SPMV_SHARED_MATRICES:-../shared/matrices}
targets=(fuzz_text fuzz_gzip fuzz_binary fuzz_vector)
CC=clang CXX=clang++ cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPMV_FUZZ=ON -DSPMV_ENABLE_CUDA=OFF \
  -DSPMV_BUILD_TESTS=OFF -DSPMV_BUILD_TOOLS=OFF -DSPMV_BUILD_PYTHON=OFF >/dev/null
cmake --build "$B" -j "$(getconf _NPROCESSORS_ONLN)" --target "${targets[@]}" >/dev/null

c=$B/corpus
mkdir -p "$c"/{text,gzip,binary,vector}
cp tests/data/mm/*.mtx "$c/text/"
cp tests/data/mm/vector_*.mtx tests/data/mm/array_real_general.mtx tests/data/mm/coord_real_general.mtx "$c/vector/"
cp tests/data/*.spmvbin "$c/binary/"
cp tests/data/fuzz/*.gz "$c/gzip/"  # what the targets once found
for f in $(ls -S "$shared"/*.mtx.gz 2>/dev/null | tail -n 6); do  # the six smallest
  cp "$f" "$c/gzip/"
  gzip -dc "$f" > "$c/text/$(basename "$f" .gz)"
done
for f in tests/data/mm/coord_*.mtx; do
  gzip -c "$f" > "$c/gzip/$(basename "$f").gz"
  [ -x "$spmv" ] && "$spmv" convert "$f" "$c/binary/$(basename "$f" .mtx).spmvbin" >/dev/null 2>&1 || true
done

status=0
run_one() {
  local t=$1
  mkdir -p "$B/crashes/$t" "$B/logs"
  "$B/tests/fuzz/$t" "$c/${t#fuzz_}" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$B/crashes/$t/" -print_final_stats=1 > "$B/logs/$t.log" 2>&1
}
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  pids=()
  for t in "${targets[@]:i:2}"; do run_one "$t" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
done
for t in "${targets[@]}"; do
  runs=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$B/logs/$t.log" | tail -1 || true)
  found=$(ls "$B/crashes/$t" | wc -l)
  echo "$t: ${runs:-no final line (see $B/logs/$t.log)}; artifacts: $found"
done
exit $status
