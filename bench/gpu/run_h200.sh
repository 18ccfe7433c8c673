#!/usr/bin/env bash
# Builds jaxamg with the CUDA backend on the H200 machine and runs, in order:
# the CUDA gtests, the GPU pytest suite (tests/gpu) and the Poisson benchmark.
# Run from the repository root; logs go to $OUT (the device tool's output
# folder) or /tmp/jaxamg-gpu-out.
#
#   bash bench/gpu/run_h200.sh [benchmark arguments, e.g. --sizes 128 192 --peers]
#   SKIP_BENCH=1 bash bench/gpu/run_h200.sh   # build and tests only
#   SKIP_PYTEST=1 ...                          # without tests/gpu
#   MPI=1 SKIP_BENCH=1 bash bench/gpu/run_h200.sh   # also jaxamg._mpi, the device's
#                                                  # distributed solve gtests (2 and 3
#                                                  # ranks) and tests/mpi on 2 ranks
#                                                  # sharing the GPU
#   MPI=1 SHARDED=1 SKIP_MPI_PYTEST=1 ...          # tests/sharded only: 2 JAX processes
#                                                  # sharing the GPU (needs MPI=1)
#
# The machine has no network: nlohmann-json and GoogleTest come from .devdeps
# (an ignored folder carried with the call: .devdeps/include/nlohmann,
# .devdeps/share/cmake/nlohmann_json, .devdeps/googletest).
set -u
OUT=${OUT:-/tmp/jaxamg-gpu-out}
mkdir -p "$OUT"
export OMP_WAIT_POLICY=passive PYTHONUNBUFFERED=1
# Leave room beside JAX's preallocated pool for the hierarchy and CuPy.
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.5}
PY=$(command -v python3)
BUILD=/tmp/jaxamg-build
JOBS=$(nproc)
ROOT=$PWD

echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
t0=$(date +%s)
cmake -S .devdeps/googletest -B /tmp/gtest-build -G Ninja -DCMAKE_INSTALL_PREFIX=/tmp/gtest \
  -DBUILD_GMOCK=OFF > "$OUT/gtest_build.log" 2>&1 &&
  cmake --build /tmp/gtest-build -j "$JOBS" >> "$OUT/gtest_build.log" 2>&1 &&
  cmake --install /tmp/gtest-build >> "$OUT/gtest_build.log" 2>&1 || echo "gtest build FAILED"
cmake -S . -B "$BUILD" -G Ninja -DJAXAMG_BUILD_PYTHON=ON -DJAXAMG_BUILD_TESTS=ON -DJAXAMG_MPI=$([ -n "${MPI:-}" ] && echo ON || echo OFF) \
  -DPython_EXECUTABLE="$PY" -Dnlohmann_json_DIR="$ROOT/.devdeps/share/cmake/nlohmann_json" \
  -DGTest_DIR=/tmp/gtest/lib/cmake/GTest > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
grep -i "cusparse\|cuda" "$OUT/configure.log" | head -5
if ! cmake --build "$BUILD" -j "$JOBS" --target jaxamg_cuda_tests _cpu _engine _cuda $([ -n "${MPI:-}" ] && echo _mpi _mpi_cuda jaxamg_cuda_mpi_tests) > "$OUT/build.log" 2>&1; then
  grep -E "error|FAILED" "$OUT/build.log" | head -40
  exit 1
fi
echo "== build: $(( $(date +%s) - t0 )) s"

# The package from the source tree plus the freshly built modules.
rm -rf /tmp/jaxamg-pkg && mkdir -p /tmp/jaxamg-pkg && cp -r src/jaxamg /tmp/jaxamg-pkg/
cp "$BUILD"/cpp/bindings/*.so /tmp/jaxamg-pkg/jaxamg/
export PYTHONPATH=/tmp/jaxamg-pkg

echo "== CUDA gtests"
"$BUILD/cpp/engine/backend/cuda/jaxamg_cuda_tests" > "$OUT/gtest.log" 2>&1
echo "gtest rc=$?"; grep -E "^\[  (FAILED|PASSED|SKIPPED) |OK \]|Failure|Expected|actual|Which is|cpu .* gpu" "$OUT/gtest.log" | head -40

if [ -z "${SKIP_PYTEST:-}" ]; then
  echo "== GPU pytest"
  "$PY" -m pytest -q -p no:cacheprovider tests/gpu -m gpu > "$OUT/pytest.log" 2>&1
  echo "pytest rc=$?"; tail -25 "$OUT/pytest.log"
fi

if [ -n "${MPI:-}" ]; then
  for np in 2 3; do
    echo "== device distributed solve gtests on $np ranks sharing the GPU"
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=2 timeout 300 \
      mpirun --oversubscribe -n $np "$BUILD/jaxamg_cuda_mpi_tests" > "$OUT/gtest_mpi_np$np.log" 2>&1
    echo "cuda mpi gtest np=$np rc=$?"
    grep -E "^\[  (FAILED|PASSED|SKIPPED) |OK \]|Failure|Expected|actual|Which is|rank [0-9]" \
      "$OUT/gtest_mpi_np$np.log" | head -30
  done
fi

if [ -n "${MPI:-}" ] && [ -z "${SKIP_MPI_PYTEST:-}" ]; then
  # Two JAX processes sharing the one GPU: no preallocated pools.
  echo "== tests/mpi on 2 ranks with GPU arrays"
  XLA_PYTHON_CLIENT_PREALLOCATE=false OMP_NUM_THREADS=4 \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    timeout 400 mpirun --oversubscribe -n 2 -x PYTHONPATH -x XLA_PYTHON_CLIENT_PREALLOCATE \
    "$PY" -m pytest -q -p no:cacheprovider --color=no tests/mpi > "$OUT/pytest_mpi.log" 2>&1
  echo "mpi pytest rc=$?"; tail -15 "$OUT/pytest_mpi.log"
fi
if [ -n "${MPI:-}" ] && [ -n "${SHARDED:-}" ]; then
  echo "== tests/sharded on 2 JAX processes with GPU arrays"
  # With one GPU both processes must use device 0 (JAXAMG_TEST_LOCAL_DEVICE).
  # Then the solves (MPI inside the engine) run, but XLA's own cross-process
  # collectives (a jnp.sum of a global array) fail: NCCL refuses two ranks on
  # one GPU ("Duplicate GPU detected"). The full suite needs a GPU per process.
  PIN=()
  if [ "$(nvidia-smi -L | wc -l)" -lt 2 ]; then PIN=(-x JAXAMG_TEST_LOCAL_DEVICE=0); fi
  XLA_PYTHON_CLIENT_PREALLOCATE=false OMP_NUM_THREADS=4 \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    timeout 400 mpirun --oversubscribe -n 2 -x PYTHONPATH -x XLA_PYTHON_CLIENT_PREALLOCATE \
    "${PIN[@]}" "$PY" -m pytest -p no:cacheprovider --color=no -rs tests/sharded > "$OUT/pytest_sharded.log" 2>&1
  echo "sharded pytest rc=$?"; tail -15 "$OUT/pytest_sharded.log"
fi

if [ -z "${SKIP_BENCH:-}" ]; then
  echo "== benchmark"
  "$PY" bench/gpu/bench_poisson_gpu.py "$@" 2>&1 | tee "$OUT/bench.log" | grep -v '^{'
fi
echo "== total: $(( $(date +%s) - t0 )) s"
