#!/usr/bin/env bash
# Formats every C++ and CUDA file git tracks with .clang-format; --check changes nothing and fails
# (naming the files) where one is not formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' ':!bench/results')
if [ "${1:-}" = "--check" ]; then
  clang-format --style=file --dry-run --Werror "${files[@]}"
  echo "format: ${#files[@]} files formatted as .clang-format says"
else
  clang-format --style=file -i "${files[@]}"
fi
