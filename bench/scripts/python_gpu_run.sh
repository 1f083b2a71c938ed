#!/usr/bin/env bash
# Python on the GPU machine: the Python module built there (its python3.12, pybind11 and g++,
# against libspmv.a built here), then the Python tests (the host ones and tests_gpu with CuPy and
# PyTorch) and bench_gpu_arrays.py.
# Needs libspmv.a of this commit in .gpu/lib (cp build/libspmv.a .gpu/lib/), libisal.so.2 there and the
# shared matrices in .gpu/matrices; BENCH=1 also runs python/bench_gpu_arrays.py.
set -u
G=$PWD/.gpu; export LD_LIBRARY_PATH=$G/lib SPMV_SHARED_MATRICES=$G/matrices PYTHONUNBUFFERED=1
P=/tmp/py/spmv; mkdir -p $P; cp python/src/spmv/* $P/
PYINC=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
PBINC=$(python3 -c 'import pybind11; print(pybind11.get_include())')
EXT=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
CUDA=${CUDA_HOME:-/usr/local/cuda}
ls $PYINC/Python.h $CUDA/lib64/libcudart_static.a 2>&1 | head; g++ --version | head -1
s=$(date +%s)
g++ -O3 -fPIC -shared -std=c++20 -fopenmp -march=x86-64-v3 -fvisibility=hidden -DSPMV_HAVE_CUDA=1 -I include \
  -isystem $PYINC -isystem $PBINC python/spmv_py.cpp -o $P/_spmv$EXT $G/lib/libspmv.a -L$G/lib -l:libisal.so.2 \
  -L$CUDA/lib64 -lcudart_static -lcusparse -ldl -lrt -lpthread -static-libstdc++ -static-libgcc 2>&1 | tail -20
echo "build rc=$? $(( $(date +%s) - s )) s"; ls -la $P
export PYTHONPATH=/tmp/py
python3 -c 'import spmv, cupy, torch; print(spmv.__version__, spmv.default_backend(), cupy.__version__, torch.__version__)'
timeout 200 python3 -m pytest -q -p no:cacheprovider -x python/tests_gpu 2>&1 | tail -25
timeout 200 python3 -m pytest -q -p no:cacheprovider python/tests/test_spmv.py 2>&1 | tail -8
timeout 150 python3 python/bench_gpu_arrays.py 2>&1 | tee $OUT/gpu_arrays_h200.txt | tail -12
