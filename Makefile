# Developer entry points. Every target installs what it needs on a fresh
# Debian machine (system packages, a virtual environment, builds), so
# `make test` is the whole CI.
#
#   make          the .venv with jaxamg installed editable (rerun after C++
#                 changes: the compiled module is rebuilt only by `make`)
#   make test     C++ tests (ctest) and Python tests (pytest)
#   make bench    benchmarks (bench/run.py)
#   make demo     a command-line solve of a generated Poisson problem
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

# Headers and libraries the engine and its tests build against.
SYS_PKGS := libgtest-dev nlohmann-json3-dev
# Build requirements of pyproject.toml, installed first because the editable
# install runs without build isolation (its build directory must persist for
# incremental rebuilds).
BUILD_DEPS := "scikit-build-core>=0.10" "nanobind>=2.0" "numpy>=2.0" "jax>=0.10"

# Anything here changing makes `make` rebuild and reinstall the modules.
# Directories are listed so that adding or removing a file counts too.
# Python sources are not: the editable install imports them from src/,
# new files included.
NATIVE_INPUTS := $(shell find cpp -path cpp/tests -prune -o -print 2>/dev/null) \
                 CMakeLists.txt pyproject.toml

export CMAKE_BUILD_PARALLEL_LEVEL := $(JOBS)

.PHONY: venv test cpp-test py-test bench demo clean sysdeps

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

test: cpp-test py-test

cpp-test: sysdeps
	cmake -S . -B $(CPP_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DJAXAMG_BUILD_PYTHON=OFF -DJAXAMG_BUILD_TESTS=ON --log-level=WARNING
	cmake --build $(CPP_BUILD) -j $(JOBS)
	ctest --test-dir $(CPP_BUILD) --output-on-failure -j $(JOBS)

py-test: venv
	$(VPY) -m pytest

bench: venv
	$(VPY) bench/run.py

# A 2-D Poisson problem (5-point stencil, 64 x 64 grid) solved from the
# command line with the default configuration.
demo: venv
	@mkdir -p $(DEMO_DIR)
	$(VPY) -c "import scipy.io, scipy.sparse as sp; \
	  T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(64, 64)); I = sp.identity(64); \
	  scipy.io.mmwrite('$(DEMO_DIR)/poisson2d.mtx', (sp.kron(T, I) + sp.kron(I, T)).tocoo())"
	$(VPY) -m jaxamg solve $(DEMO_DIR)/poisson2d.mtx --solution $(DEMO_DIR)/x.mtx

# Only what these targets create: build/ also holds other build trees.
clean:
	rm -rf $(VENV) $(EDITABLE_BUILD) $(CPP_BUILD) $(DEMO_DIR) build/cp3* .pytest_cache
