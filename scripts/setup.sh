#!/usr/bin/env bash
# Installs the Debian packages the build needs, only those missing.
set -euo pipefail
pkgs=(g++ cmake make git pkg-config zlib1g-dev libisal-dev libfmt-dev libcli11-dev libfast-float-dev
      libeigen3-dev libgtest-dev python3 python3-matplotlib
      pybind11-dev python3-dev python3-numpy python3-scipy python3-pytest python3-pip python3-venv
      python3-setuptools python3-wheel doxygen libopenmpi-dev openmpi-bin petsc-dev libmetis-dev
      clang-format)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
