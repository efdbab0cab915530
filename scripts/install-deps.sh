#!/usr/bin/env bash
# Installs hetplan's build and test dependencies from Debian 12 packages.
# Idempotent and non-interactive: packages already present are left alone.
set -euo pipefail

packages=(
  build-essential cmake ninja-build
  libboost-dev            # Hana, Container, Graph (headers)
  librange-v3-dev
  doctest-dev
  catch2                  # v2, for benchmarks
  nlohmann-json3-dev
  python3-jsonschema      # the ranks format's schema test (docs/schemas)
  pybind11-dev python3-dev python3-pytest  # the Python module (python/) and its tests
)
# Optional extras, asked for by name: chromium (and python3 to read its PNG) for the SVG
# screenshot test; Clang for the fuzz targets.
if [[ "${HETPLAN_WITH_BROWSER:-0}" == 1 ]]; then
  packages+=(chromium python3)
fi
# OpenMPI for the execution module's MPI communicator and its tests (mpirun on loopback).
if [[ "${HETPLAN_WITH_MPI:-0}" == 1 ]]; then
  packages+=(libopenmpi-dev openmpi-bin)
fi
# Clang 14 and libFuzzer for the fuzz preset (cmake --preset fuzz).
if [[ "${HETPLAN_WITH_FUZZ:-0}" == 1 ]]; then
  packages+=(clang-14 libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
