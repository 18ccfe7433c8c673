# Developer entry points. Every target installs what it needs on a fresh
# Debian machine (system packages, a virtual environment, builds), so
# `make test` is the whole CI.
#
#   make          the .venv with jaxamg installed editable (rerun after C++
#                 changes: the compiled module is rebuilt only by `make`)
#   make test     the layering check (check-layers), the import check
#                 (check-imports), the Python lint (lint), C++ tests (ctest), the
#                 C++ tests under ASan+UBSan, the fuzzers (FUZZ_SECONDS each),
#                 Python tests (pytest) and the MPI suites under mpirun
#                 (py-test-mpi)
#   make check-layers   which folder of cpp/ may include which
#                 (tools/check_layers.py lists the rules)
#   make check-imports  no import cycle and no private name imported from
#                 another module in src/jaxamg (tools/check_imports.py)
#   make lint     ruff over the Python tree: lint, and the formatting checked
#                 ([tool.ruff] of pyproject.toml; ruff comes with the dev extra)
#   make format   what lint checks, fixed: ruff check --fix, then ruff format
#   make stubs    the type stubs of the compiled modules (src/jaxamg/_*.pyi)
#                 regenerated from the built modules (nanobind's stubgen)
#   make typecheck   mypy over the public modules' type hints ([tool.mypy]
#                 of pyproject.toml; mypy comes with the dev extra)
#   make cpp-test-sanitize   the C++ tests built with ASan+UBSan (build/asan)
#   make fuzz     the libFuzzer targets of cpp/fuzz, FUZZ_SECONDS each (build/fuzz)
#   make bench    benchmarks (bench/run.py)
#   make bench-report   BENCHMARKS.md (and the history index) regenerated from
#                 bench/results/ (bench/report.py; tests/test_bench_report.py
#                 fails when the committed page differs)
#   make bench-plots    the PNGs of docs/images from bench/results/ (bench/plots.py)
#   make docs     the documentation site (mkdocs --strict, into build/site) and
#                 the docstring check of every public name
#   make wheel    the wheel of the package (build/wheel), from the editable
#                 build's tree
#   make package-test   that wheel installed in a fresh virtual environment
#                 outside the checkout, smoke-tested there (solve, gradient,
#                 command line: tools/wheel_smoke_test.py)
#   make demo     a command-line solve of a generated Poisson problem, then the
#                 sharded Poisson demo on 2 CPU processes (mpirun -n 2)
#   make clean    remove what these targets built

SHELL := /bin/bash
.DEFAULT_GOAL := venv

PYTHON ?= python3
JOBS ?= 2
VENV := .venv
VPY := $(VENV)/bin/python
PIP := $(VPY) -m pip
EDITABLE_BUILD := build/editable
CPP_BUILD := build/cpp
DEMO_DIR := build/demo
WHEEL_DIR := build/wheel
ASAN_BUILD := build/asan
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := fuzz_config fuzz_solve

# Headers and libraries the engine and its tests build against.
SYS_PKGS := libgtest-dev nlohmann-json3-dev openmpi-bin libopenmpi-dev
# Only `make fuzz` needs these: clang with libFuzzer and its OpenMP runtime.
FUZZ_PKGS := clang libclang-rt-dev libomp-dev
# Build requirements of pyproject.toml, installed first because the editable
# install runs without build isolation (its build directory must persist for
# incremental rebuilds).
BUILD_DEPS := "scikit-build-core>=0.10" "nanobind>=3.1,<3.2" "numpy>=2.0" "jax>=0.10"
# cuSPARSE (headers and library) for the CUDA backend, compiled wherever nvcc
# is found (CUDA 13.0's cuSPARSE; the GPU runs with the one JAX brings).
BUILD_DEPS += "nvidia-cusparse==12.6.3.3"

# Anything here changing makes `make` rebuild and reinstall the modules.
# Directories are listed so that adding or removing a file counts too.
# Python sources are not: the editable install imports them from src/,
# new files included.
NATIVE_INPUTS := $(shell find cpp -path cpp/tests -prune -o -print 2>/dev/null) \
                 CMakeLists.txt pyproject.toml

export CMAKE_BUILD_PARALLEL_LEVEL := $(JOBS)

.PHONY: venv test wheel package-test typecheck stubs check-layers check-imports lint format cpp-test py-test bench bench-report bench-plots demo clean sysdeps cpp-test-sanitize fuzz py-test-mpi docs sweep

venv: $(VENV)/.installed

# apt-get runs only when a package is missing, so a ready machine needs no
# network and no root.
sysdeps:
	@missing=""; \
	for p in $(SYS_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" \
	    || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing system packages:$$missing"; \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo"; \
	  $$sudo apt-get update -qq \
	    && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq \
	       --no-install-recommends $$missing >/dev/null; \
	fi

$(VPY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.build-deps: Makefile | $(VPY)
	$(PIP) install -q $(BUILD_DEPS)
	@touch $@

$(VENV)/.installed: $(VENV)/.build-deps $(NATIVE_INPUTS) | sysdeps
	$(PIP) install -q --no-build-isolation -Cbuild-dir=$(EDITABLE_BUILD) -e '.[dev]'
	@touch $@

test: check-layers check-imports lint typecheck docs cpp-test cpp-test-sanitize fuzz py-test py-test-mpi \
      package-test

# First and cheap (no build): a backend that includes the layers above it,
# or an engine file that includes the front ends, fails before anything
# compiles.
check-layers:
	$(PYTHON) tools/check_layers.py

# As cheap (no build, stdlib only): the Python package reads downward.
check-imports:
	$(PYTHON) tools/check_imports.py

# ruff, from the dev extra of the venv: the lint rules and the format of
# pyproject.toml's [tool.ruff] over every Python file (cpp/ and the Markdown
# pages left out). `make format` fixes what it can: the lint fixes first, then
# the formatter over their output; it fails if a violation needs a hand.
RUFF := $(VPY) -m ruff
lint: venv
	$(RUFF) check .
	$(RUFF) format --check .

format: venv
	$(RUFF) check --fix .; status=$$?; $(RUFF) format . && exit $$status

typecheck: venv
	$(VPY) -m mypy

# A module this build lacks (no nvcc: _cuda; no MPI: _mpi; either: _mpi_cuda) keeps its stub.
STUB_MODULES := _engine _cpu _mpi _cuda _mpi_cuda
stubs: venv
	@for m in $(STUB_MODULES); do \
	  if $(VPY) -c "import jaxamg.$$m" 2>/dev/null; then \
	    $(VPY) -m nanobind.stubgen -q -m jaxamg.$$m -o src/jaxamg/$$m.pyi || exit 1; \
	    echo "stubs: src/jaxamg/$$m.pyi"; \
	  fi; \
	done

# The venv's build dependencies bring cuSPARSE (nvidia-cusparse), so where
# nvcc is found the CUDA backend and its tests are built here too; the tests
# skip without a GPU.
cpp-test: sysdeps $(VENV)/.build-deps
	cmake -S . -B $(CPP_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DJAXAMG_BUILD_PYTHON=OFF -DJAXAMG_BUILD_TESTS=ON -DPython_EXECUTABLE=$(abspath $(VPY)) \
	  --log-level=WARNING
	cmake --build $(CPP_BUILD) -j $(JOBS)
	ctest --test-dir $(CPP_BUILD) --output-on-failure -j $(JOBS) -LE mpi

# The C++ tests with AddressSanitizer (leaks included) and UBSan; any report
# aborts the run. -O1 keeps the stacks readable and the suite fast.
cpp-test-sanitize: sysdeps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DJAXAMG_SANITIZE=ON \
	  -DJAXAMG_BUILD_PYTHON=OFF -DJAXAMG_BUILD_TESTS=ON --log-level=WARNING
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 OMP_WAIT_POLICY=passive $(ASAN_BUILD)/jaxamg_tests --gtest_brief=1

# Each libFuzzer target of cpp/fuzz runs FUZZ_SECONDS on the seeds of
# cpp/fuzz/corpus/<target> plus what earlier runs found (build/fuzz/corpus);
# a crash, sanitizer report or timeout fails the target and leaves the input
# in build/fuzz/<target>-crash-* (rerun: build/fuzz/<target> FILE).
fuzz: sysdeps
	@$(MAKE) --no-print-directory sysdeps SYS_PKGS="$(FUZZ_PKGS)"
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DJAXAMG_BUILD_FUZZERS=ON -DJAXAMG_BUILD_TESTS=OFF \
	  -DJAXAMG_BUILD_PYTHON=OFF --log-level=WARNING
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive ASAN_OPTIONS=detect_leaks=1 \
	    $(FUZZ_BUILD)/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -max_len=4096 -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/$$t- \
	    $(FUZZ_BUILD)/corpus/$$t cpp/fuzz/corpus/$$t 2>&1 \
	    | grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|RELOAD) '; \
	  [ "$${PIPESTATUS[0]}" -eq 0 ] || { echo "fuzz: $$t failed"; exit 1; }; \
	done

# The docs extra of pyproject.toml goes in once (again when pyproject.toml
# changes); the editable build is incremental, so this reinstall is quick.
$(VENV)/.docs-deps: pyproject.toml | $(VENV)/.installed
	$(PIP) install -q --no-build-isolation -Cbuild-dir=$(EDITABLE_BUILD) -e '.[dev,docs]'
	@touch $@

# The site from mkdocs.yml and docs/ (API pages from the docstrings); --strict
# turns a broken link or an unresolved reference into a failure. The
# docstring test fails on a public name without a docstring.
docs: venv $(VENV)/.docs-deps
	$(VPY) -m pytest -q -p no:cacheprovider tests/test_docstrings.py
	NO_MKDOCS_2_WARNING=1 $(VPY) -m mkdocs build --strict --site-dir build/site

py-test: venv
	$(VPY) -m pytest

# The long configuration sweep (a 3-wise design).
sweep: venv
	JAXAMG_SWEEP=long $(VPY) -m pytest -q tests/test_sweep.py

# The MPI suites: tests/mpi under mpirun at each of MPI_RANKS process counts
# (every rank runs pytest), then the C++ tests labelled mpi (built by
# cpp-test; they launch mpirun themselves). As root, Open MPI needs the two
# allow-run-as-root variables; --oversubscribe allows more ranks than cores;
# `timeout` ends a run that a hang would keep waiting.
# tests/sharded (JAX multi-process over MPI, the seed's interface) runs at
# SHARDED_RANKS. Waiting Open MPI processes yield instead of spinning, and are
# not pinned, so that more ranks than cores share them.
MPI_RANKS ?= 1 2 3 4
SHARDED_RANKS ?= 2 3
MPI_TIMEOUT ?= 1800
MPI_ENV := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive \
  OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_hwloc_base_binding_policy=none
py-test-mpi: venv cpp-test
	@export $(MPI_ENV); \
	for np in $(MPI_RANKS); do \
	  echo "py-test-mpi: tests/mpi on $$np rank(s)"; \
	  timeout $(MPI_TIMEOUT) mpirun --oversubscribe -n $$np \
	    $(VPY) -m pytest -p no:cacheprovider -q tests/mpi || exit 1; \
	done; \
	for np in $(SHARDED_RANKS); do \
	  echo "py-test-mpi: tests/sharded on $$np processes"; \
	  timeout $(MPI_TIMEOUT) mpirun --oversubscribe -n $$np \
	    $(VPY) -m pytest -p no:cacheprovider -q tests/sharded || exit 1; \
	done
	ctest --test-dir $(CPP_BUILD) -L mpi --output-on-failure

# The wheel is built in the editable build's tree, so what `make` compiled
# is not compiled again.
wheel: venv
	rm -rf $(WHEEL_DIR)
	$(PIP) wheel -q --no-build-isolation --no-deps -Cbuild-dir=$(EDITABLE_BUILD) \
	  -w $(WHEEL_DIR) .

# The wheel with its dependencies (not the dev extra) in a fresh virtual
# environment in a temporary folder, and the smoke test run from there, so
# that nothing of the checkout can be imported.
package-test: wheel
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	$(PYTHON) -m venv "$$d/venv" && \
	"$$d/venv/bin/python" -m pip install -q $(WHEEL_DIR)/*.whl && \
	cd "$$d" && "$$d/venv/bin/python" $(CURDIR)/tools/wheel_smoke_test.py "$$d"

bench: venv
	$(VPY) bench/run.py

# Standard library only, like check-layers: no venv needed.
bench-report:
	$(PYTHON) bench/report.py --write

# matplotlib comes with the dev extra that `make venv` installs.
bench-plots: venv
	$(VPY) bench/plots.py

# A 2-D Poisson problem (5-point stencil, 64 x 64 grid) solved from the
# command line with the default configuration, then the main job: the
# sharded Poisson solve with its gradient check on 2 CPU processes.
demo: venv
	@mkdir -p $(DEMO_DIR)
	$(VPY) -c "import scipy.io, scipy.sparse as sp; \
	  T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(64, 64)); I = sp.identity(64); \
	  scipy.io.mmwrite('$(DEMO_DIR)/poisson2d.mtx', (sp.kron(T, I) + sp.kron(I, T)).tocoo())"
	$(VPY) -m jaxamg solve $(DEMO_DIR)/poisson2d.mtx --solution $(DEMO_DIR)/x.mtx
	@echo "demo: the sharded solve of the seed on 2 CPU processes (mpirun -n 2)"
	export $(MPI_ENV); timeout 600 mpirun --oversubscribe -n 2 $(VPY) demo/sharded_poisson_problem.py

# Only what these targets create: build/ also holds other build trees.
clean:
	rm -rf $(VENV) $(EDITABLE_BUILD) $(CPP_BUILD) $(DEMO_DIR) $(WHEEL_DIR) build/cp3* .pytest_cache .ruff_cache
	rm -rf $(ASAN_BUILD) $(FUZZ_BUILD)
