#!/usr/bin/env bash
# The library used as another project would use it: the build installed to a temporary prefix,
# examples/ built against it with find_package(spmv), and again with the source tree as a
# subproject (add_subdirectory); the examples run on shared matrices and their results are checked
# (spmm against the reference, cg and bicgstab to their tolerance against the known answer).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
m=${SPMV_SHARED_MATRICES:-../shared/matrices}
[ -f "$m/MANIFEST.tsv" ] || m=tests/data/suitesparse  # a clone alone: the subset the tests use
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { echo "+ $*"; "$@"; }

cmake --install "$BUILD_DIR" --prefix "$tmp/prefix" >/dev/null
cmake -S examples -B "$tmp/installed" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/installed" -j "$(nproc)" >/dev/null
run "$tmp/installed/multiply" "$m/bcsstk16.mtx.gz"
run "$tmp/installed/own_arrays" 200000
run "$tmp/installed/spmm" "$m/cage9.mtx.gz" 8
run "$tmp/installed/cg" "$m/bcsstk16.mtx.gz" omp
run "$tmp/installed/bicgstab" "$m/pde2961.mtx.gz" omp
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
echo "pkg-config: spmv $(pkg-config --modversion spmv): $(pkg-config --cflags --libs spmv)"
[ "$(pkg-config --modversion spmv)" = "$("$tmp/prefix/bin/spmv" --version | awk '{print $2}')" ] ||
  { echo "pkg-config's version differs from spmv --version"; exit 1; }
[ -f "$(pkg-config --variable=includedir spmv)/spmv/spmv.hpp" ] || { echo "pkg-config's includedir lacks the headers"; exit 1; }
# A program built with nothing but pkg-config's flags links and runs.
run ${CXX:-g++} -O1 examples/multiply.cpp -o "$tmp/multiply_pc" $(pkg-config --cflags --libs spmv)
run "$tmp/multiply_pc" "$m/bcsstk16.mtx.gz"

# The Python package, where the build made it: imported from the prefix, one product against scipy.
for init in "$tmp"/prefix/lib/python3*/site-packages/spmv/__init__.py; do
  [ -f "$init" ] || continue
  site=$(dirname "$(dirname "$init")")
  imported=0
  for py in python3 /usr/bin/python3; do
    if PYTHONPATH="$site" "$py" -c 'import spmv' 2>/dev/null; then
      run env PYTHONPATH="$site" "$py" -c "
import numpy as np, spmv
a = spmv.read('$m/bcsstk16.mtx.gz'); x = np.linspace(-1, 1, a.shape[1])
y, ref = spmv.Plan(a) @ x, a.to_scipy() @ x
assert np.allclose(y, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max()), 'Python product differs from scipy'
print('installed Python package', spmv.__version__, 'matches scipy')"
      imported=1
      break
    fi
  done
  [ "$imported" = 1 ] || { echo "the installed Python package does not import (PYTHONPATH=$site)"; exit 1; }
done

# pip install --no-build-isolation . (pyproject.toml, setup.py) into a virtual environment that sees
# the system's numpy, with the build folder reused (this checks the packaging, not the compile),
# then one product from the installed package, outside the source tree.
py=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")
if [ -n "$py" ] && [ -d "$BUILD_DIR/python/spmv" ]; then
  run "$py" -m venv --system-site-packages "$tmp/venv"
  run env SPMV_BUILD_DIR="$(cd "$BUILD_DIR" && pwd)" "$tmp/venv/bin/pip" install -q --no-build-isolation --no-index .
  matrix="$(cd "$m" && pwd)/bcsstk16.mtx.gz"
  (cd "$tmp" && run "$tmp/venv/bin/python" -c "
import numpy as np, spmv
assert spmv.__file__.startswith('$tmp/venv'), spmv.__file__
a = spmv.read('$matrix')
x = np.linspace(-1, 1, a.shape[1])
y, ref = spmv.Plan(a) @ x, a.to_scipy() @ x
assert np.allclose(y, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max()), 'pip-installed product differs from scipy'
print('pip-installed package', spmv.__version__, 'matches scipy')")
fi

# As a subproject (its CUDA backend off: this checks the packaging, not the kernels).
cmake -S examples -B "$tmp/subproject" -DSPMV_SOURCE_DIR="$PWD" -DSPMV_ENABLE_CUDA=OFF >/dev/null
cmake --build "$tmp/subproject" -j "$(nproc)" >/dev/null
run "$tmp/subproject/multiply" "$m/bcsstk16.mtx.gz"
echo "consumer projects: ok"
