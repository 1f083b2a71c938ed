#!/usr/bin/env bash
# Configures and builds into ${BUILD_DIR:-build}. CUDA is built when nvcc is found
# (on PATH or in /usr/local/cuda/bin); pass -DSPMV_ENABLE_CUDA=OFF to skip it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
