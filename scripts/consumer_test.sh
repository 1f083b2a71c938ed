#!/usr/bin/env bash
# The library used as another project would use it: the build installed to a temporary prefix,
# examples/ built against it with find_package(spmv), and again with the source tree as a
# subproject (add_subdirectory); the examples run on shared matrices and their results are checked
# (spmm against the reference, cg to its tolerance against the known answer).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
m=${SPMV_SHARED_MATRICES:-../shared/matrices}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { echo "+ $*"; "$@"; }

cmake --install "$BUILD_DIR" --prefix "$tmp/prefix" >/dev/null
cmake -S examples -B "$tmp/installed" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/installed" -j "$(nproc)" >/dev/null
run "$tmp/installed/multiply" "$m/bcsstk16.mtx.gz"
run "$tmp/installed/spmm" "$m/Reuters911.mtx.gz" 8
run "$tmp/installed/cg" "$m/bcsstk16.mtx.gz" omp
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
echo "pkg-config: spmv $(pkg-config --modversion spmv): $(pkg-config --cflags --libs spmv)"
[ "$(pkg-config --modversion spmv)" = "$("$tmp/prefix/bin/spmv" --version | awk '{print $2}')" ] ||
  { echo "pkg-config's version differs from spmv --version"; exit 1; }
[ -f "$(pkg-config --variable=includedir spmv)/spmv/spmv.hpp" ] || { echo "pkg-config's includedir lacks the headers"; exit 1; }

# As a subproject (its CUDA backend off: this checks the packaging, not the kernels).
cmake -S examples -B "$tmp/subproject" -DSPMV_SOURCE_DIR="$PWD" -DSPMV_ENABLE_CUDA=OFF >/dev/null
cmake --build "$tmp/subproject" -j "$(nproc)" >/dev/null
run "$tmp/subproject/multiply" "$m/bcsstk16.mtx.gz"
echo "consumer projects: ok"
