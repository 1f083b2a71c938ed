#!/usr/bin/env bash
# Hostile inputs for the reader, made afresh in DIR and run through the CLI as a user would: each case's
# exit status, wall seconds and peak memory (/usr/bin/time) and the first line of what it printed on
# stderr. Every case not marked valid must end with a message (exit 1), in well under a second,
# in a few MB; the FIFO cases (valid: a small matrix through a pipe) must not hang (a timeout
# says 124).
#   bash bench/scripts/hostile_inputs.sh [SPMV] [DIR]     (defaults: build/spmv, /tmp/spmv_hostile)
# Needs about 300 MB of disk (the 3 GB files are sparse; the bomb is 1 MB of gzip).
set -u
export LC_ALL=C
spmv=${1:-build/spmv}
[ -x "$spmv" ] || { echo "hostile_inputs.sh: no spmv at '$spmv' (pass its path)" >&2; exit 2; }
spmv=$(realpath "$spmv")
dir=${2:-/tmp/spmv_hostile}
mkdir -p "$dir" && cd "$dir" || exit 2
banner='%%MatrixMarket matrix coordinate real general'

printf '%s\n1 1 1\n1 1 2.5\n' "$banner" > one_by_one.mtx
printf '%s\n2147483647 2147483647 0\n' "$banner" > vec.mtx
printf '%s\n1 1000 3\n1 1 1\n1 500 2\n1 1000 3\n' "$banner" > wide_1row.mtx
printf '%s\n100000000 1 0\n' "$banner" > empty_rows.mtx
printf '%s\n2147483647 1 1\n5 1 1.0\n' "$banner" > rows_2g.mtx
if [ ! -f bomb.mtx.gz ]; then  # made beside, then renamed: an interrupted run leaves no half bomb
  { printf '%s\n20000 20000 178000000\n' "$banner"; yes '1 1 1' | head -n 178000000; } | gzip -9 > bomb.tmp.gz &&
    mv bomb.tmp.gz bomb.mtx.gz || exit 2
fi
rm -f nul3g.mtx && truncate -s 3G nul3g.mtx
{ printf '%s\n' "$banner"; head -c 300000000 /dev/zero | tr '\0' x; printf '\n'; } > x_size.mtx
rm -f nultoken.mtx && printf '%s\n2 2 1\n1 1 ' "$banner" > nultoken.mtx && truncate -s +3G nultoken.mtx
rm -f fifo && mkfifo fifo
# A version-1 binary cache (no header checksum), gzipped, whose header claims 500M rows and no payload.
python3 -c "import struct,gzip,sys; sys.stdout.buffer.write(gzip.compress(b'SPMVBIN\x1a'+struct.pack('<IIiiqIIQQQ',1,64,500000000,1,0,0,0,4000000008,0,0)))" > rows500m.spmvbin.gz

run() {  # label, then the spmv arguments (TIMEOUT seconds at most, 20 by default)
  local label=$1
  shift
  /usr/bin/time -f '%e %M' -o time.txt timeout "${TIMEOUT:-20}" "$spmv" "$@" > out.txt 2> err.txt
  local rc=$?
  awk -v l="spmv $label" -v rc="$rc" -v msg="$(head -n 1 err.txt | cut -c 1-160)" \
    'END { printf "%-50s exit %3d %7.2f s %9.1f MB  %s\n", l, rc, $1, $2 / 1024, msg }' time.txt
}
fifo_run() {  # the FIFO fed by a writer in the background, as `cat file | spmv ...` would be
  local label=$1
  shift
  cat one_by_one.mtx > fifo &
  run "$label" "$@"
  kill $! 2> /dev/null
  wait 2> /dev/null
}

run "run one_by_one.mtx --x vec.mtx" run one_by_one.mtx --x vec.mtx
run "run wide_1row.mtx --k 2147483647" run wide_1row.mtx --k 2147483647
run "info empty_rows.mtx (valid: 10^8 rows)" info empty_rows.mtx
run "info empty_rows.mtx --memory-budget 100M" info empty_rows.mtx --memory-budget 100M
run "run rows_2g.mtx" run rows_2g.mtx
run "info bomb.mtx.gz --memory-budget 100M" info bomb.mtx.gz --memory-budget 100M
run "info /dev/zero" info /dev/zero
run "info nul3g.mtx" info nul3g.mtx
run "info x_size.mtx" info x_size.mtx
run "info nultoken.mtx" info nultoken.mtx
run "run one_by_one.mtx --threads 100000" run one_by_one.mtx --threads 100000
OMP_NUM_THREADS=100000 run "run one_by_one.mtx, OMP_NUM_THREADS=100000" run one_by_one.mtx --backend omp --kernel csr
run "run one_by_one.mtx --kernel hll --hack 500000000" run one_by_one.mtx --backend omp --kernel hll --hack 500000000
run "info rows500m.spmvbin.gz" info rows500m.spmvbin.gz
fifo_run "info FIFO (valid)" info fifo
fifo_run "run FIFO (valid)" run fifo
fifo_run "convert FIFO out.spmvbin (valid)" convert fifo out.spmvbin
TIMEOUT=300 run "info bomb.mtx.gz (valid: 178M duplicates)" info bomb.mtx.gz
