#!/bin/bash
# The reader's memory bound for reads into CSR: one read a process (io_load_peak: seconds, peak RSS,
# the bound 1.2x the CSR + 64 MiB a thread), through the COO (never) against straight into CSR
# (always: one pass or two; once: row groups) and the reader's own choice (auto), mapped and through
# a pipe, on three generated 50M-entry files: general in column order (SuiteSparse's), symmetric in
# column order (the entries below the diagonal), general in row order; one thread and all of them.
# Writes OUT/load_peak.txt.
#   bash bench/scripts/io_load_peak_run.sh [path/to/io_load_peak] [OUT]
# (The H200 runs in bench/results/io_load_peak_h200_*.txt used a copy of this with stripped
# portable binaries: .gpu/io/exp*.sh.)
set -u
P=$(realpath "${1:-build/bench/io_load_peak}")  # absolute: the files are written in /tmp
OUT=$(realpath "${2:-.}")
T=$(nproc)
cd /tmp
"$P" /tmp/col50.mtx --generate 50000000 --order columns
"$P" /tmp/sym50.mtx --generate 50000000 --order columns --symmetric
"$P" /tmp/row50.mtx --generate 50000000 --order rows
for f in col50 sym50 row50; do for t in 1 "$T"; do
  for s in never always once auto; do
    /usr/bin/time -f "  /usr/bin/time: maxrss_kB %M wall_s %e" "$P" /tmp/$f.mtx --threads $t --straight $s 2>&1
  done
  cat /tmp/$f.mtx | /usr/bin/time -f "  /usr/bin/time: maxrss_kB %M wall_s %e" "$P" /dev/stdin --threads $t 2>&1 | sed "s/^file/pipe $f: file/"
done; done | tee "$OUT/load_peak.txt"
rm -f /tmp/col50.mtx /tmp/row50.mtx /tmp/sym50.mtx
