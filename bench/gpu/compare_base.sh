#!/usr/bin/env bash
# The GPU benchmark of a base tree in the same run as this tree's, so that
# a change is measured against what it replaces on the same card.
#
#   git archive BASE -o .gpu_base.tar            # here; carry it with the device call
#   bash bench/gpu/run_h200.sh ...               # builds this tree into /tmp/jaxamg-pkg
#   bash bench/gpu/compare_base.sh [benchmark arguments]
#
# Builds the base tree's Python modules (CUDA on) into /tmp/jaxamg-base-pkg
# and runs bench/gpu/bench_poisson_gpu.py with the given arguments on the
# base, then on this tree; logs go to $OUT/bench_base.log and
# $OUT/bench_this.log.
set -u
OUT=${OUT:-/tmp/jaxamg-gpu-out}
ROOT=$PWD
PY=$(command -v python3)
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.5}
rm -rf /tmp/jaxamg-base && mkdir -p /tmp/jaxamg-base && tar xf .gpu_base.tar -C /tmp/jaxamg-base
cmake -S /tmp/jaxamg-base -B /tmp/jaxamg-base-build -G Ninja -DJAXAMG_BUILD_PYTHON=ON \
  -DJAXAMG_BUILD_TESTS=OFF -DJAXAMG_MPI=OFF -DPython_EXECUTABLE="$PY" \
  -Dnlohmann_json_DIR="$ROOT/.devdeps/share/cmake/nlohmann_json" > "$OUT/base_configure.log" 2>&1 &&
  cmake --build /tmp/jaxamg-base-build -j "$(nproc)" --target _cpu _engine _cuda \
    > "$OUT/base_build.log" 2>&1 || { tail -20 "$OUT/base_build.log"; exit 1; }
rm -rf /tmp/jaxamg-base-pkg && mkdir -p /tmp/jaxamg-base-pkg
cp -r /tmp/jaxamg-base/src/jaxamg /tmp/jaxamg-base-pkg/
cp /tmp/jaxamg-base-build/cpp/bindings/*.so /tmp/jaxamg-base-pkg/jaxamg/
for tree in base this; do
  pkg=/tmp/jaxamg-pkg
  [ "$tree" = base ] && pkg=/tmp/jaxamg-base-pkg
  echo "== benchmark: $tree tree"
  # Each tree's own benchmark script: the package's internals it reads move
  # between trees.
  script=$ROOT/bench/gpu/bench_poisson_gpu.py
  [ "$tree" = base ] && script=/tmp/jaxamg-base/bench/gpu/bench_poisson_gpu.py
  PYTHONPATH=$pkg "$PY" "$script" "$@" 2>&1 |
    tee "$OUT/bench_$tree.log" | grep -v '^{'
done
