"""The bad-input catalogue of the Python API.

Every case passes one wrong thing to a public entry point and checks the
exception type and that the message names the argument, shows the value seen
and says how to fix it (the substrings listed with the case). Under
``jax.jit`` a bad *value* cannot raise; those cases check the documented
status instead (FAILED, a NaN solution, no iterations). The command-line
cases check the exit code and a one-line reason on stderr.

None of these may crash the interpreter, hang or return a wrong answer; the
engine's own catalogue is ``cpp/tests/test_bad_input.cc``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg import config as jconfig
from jaxamg import matrices
from jaxamg.preconditioners import make_preconditioner

jax.config.update("jax_enable_x64", True)

N = 16  # the 4 x 4 Poisson problem used throughout


def poisson() -> sp.csr_matrix:
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(4, 4))
    return sp.csr_matrix(sp.kron(sp.eye(4), T) + sp.kron(T, sp.eye(4)))


A = poisson()
B = np.linspace(1.0, 2.0, N)


def solve(*args: Any, **kwargs: Any):
    return jaxamg.solve(*args, **kwargs)


def with_bad(values: np.ndarray, index: int, value: float) -> np.ndarray:
    out = np.array(values, dtype=np.float64)
    out[index] = value
    return out


def matrix_with_value(value: float) -> sp.csr_matrix:
    M = A.copy()
    M.data[3] = value
    return M


# -- callable operators --------------------------------------------------------


def data_dependent(x):
    if x[0] > 0:  # Python control flow on a traced value
        return 2.0 * x
    return x


def doubled_output(x):
    return jnp.concatenate([x, x])


def scalar_output(x):
    return jnp.sum(x)


def affine(x):
    return 3.0 * x + 1.0


def complex_output(x):
    return x * (1.0 + 1.0j)


def colored_for(n: int) -> Callable:
    def op(x):
        return 3.0 * x

    jaxamg.cache_coloring(op, n)
    return op


def fresh_operator() -> Callable:
    def op(x):
        return 3.0 * x

    return op


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[], Any]
    error: type
    says: tuple[str, ...]  # substrings of the message: argument, value, fix


CASES = [
    # ---- A: shape, type, values -------------------------------------------------
    Case(
        "A-3d-array",
        lambda: solve(np.ones((2, 2, 2)), np.ones(2)),
        ValueError,
        ("`A`", "2-D", "(2, 2, 2)"),
    ),
    Case(
        "A-non-square",
        lambda: solve(np.ones((3, 4)), np.ones(3)),
        ValueError,
        ("`A`", "(3, 4)", "square"),
    ),
    Case(
        "A-empty",
        lambda: solve(np.zeros((0, 0)), np.ones(0)),
        ValueError,
        ("`A`", "0 rows", "non-empty"),
    ),
    Case("A-string", lambda: solve("matrix", B), TypeError, ("`A`", "str", "BCSR")),
    Case("A-none", lambda: solve(None, B), TypeError, ("`A`", "NoneType", "SciPy sparse")),
    Case(
        "A-scipy-dia",
        lambda: solve(sp.dia_matrix(np.eye(4)), np.ones(4)),
        TypeError,
        ("'dia'", "csr, csc"),
    ),
    Case(
        "A-batched-bcsr",
        lambda: solve(jsparse.BCSR.fromdense(jnp.ones((2, 3, 3)), n_batch=1), jnp.ones(3)),
        ValueError,
        ("batched", "n_batch=1", "jax.vmap"),
    ),
    Case(
        "A-complex",
        lambda: solve(np.eye(4, dtype=complex), np.ones(4)),
        TypeError,
        ("`A`", "complex128", "real 2x2 block form"),
    ),
    Case(
        "A-nan-value",
        lambda: solve(matrix_with_value(np.nan), B),
        ValueError,
        ("`A`", "NaN", "pass finite values"),
    ),
    Case(
        "A-inf-value",
        lambda: solve(matrix_with_value(np.inf), B),
        ValueError,
        ("`A`", "infinite", "pass finite values"),
    ),
    # ---- b ----------------------------------------------------------------------
    Case(
        "b-wrong-length",
        lambda: solve(A, np.ones(N + 1)),
        ValueError,
        ("`b`", "17 entries", "16 rows", "one entry per row"),
    ),
    Case("b-2d", lambda: solve(A, np.ones((N, 2))), ValueError, ("`b`", "(16, 2)", "jax.vmap")),
    Case(
        "b-complex",
        lambda: solve(A, np.ones(N, dtype=complex)),
        TypeError,
        ("`b`", "complex128", "real 2x2 block form"),
    ),
    Case("b-string", lambda: solve(A, "abc"), TypeError, ("`b`", "<U3", "numeric")),
    Case("b-none", lambda: solve(A, None), TypeError, ("`b`", "object", "numeric")),
    Case(
        "b-nan",
        lambda: solve(A, with_bad(B, 2, np.nan)),
        ValueError,
        ("`b`", "NaN", "pass finite values"),
    ),
    Case(
        "b-inf",
        lambda: solve(A, with_bad(B, 0, -np.inf)),
        ValueError,
        ("`b`", "infinite", "pass finite values"),
    ),
    # ---- x0 ---------------------------------------------------------------------
    Case(
        "x0-wrong-size",
        lambda: solve(A, B, x0=np.ones(N - 1)),
        ValueError,
        ("x0", "(15,)", "(16,)", "or None"),
    ),
    Case("x0-string", lambda: solve(A, B, x0="zeros"), TypeError, ("`x0`", "<U5", "numeric")),
    Case(
        "x0-complex",
        lambda: solve(A, B, x0=np.ones(N, dtype=complex)),
        TypeError,
        ("`x0`", "complex128", "real"),
    ),
    Case(
        "x0-nan",
        lambda: solve(A, B, x0=with_bad(np.zeros(N), 5, np.nan)),
        ValueError,
        ("`x0`", "NaN", "pass finite values"),
    ),
    # ---- block_dim ----------------------------------------------------------------
    Case(
        "block_dim-not-dividing",
        lambda: solve(A, B, block_dim=3),
        ValueError,
        ("block_dim=3", "16 rows", "divisible", "divides"),
    ),
    Case(
        "block_dim-zero",
        lambda: solve(A, B, block_dim=0),
        ValueError,
        ("`block_dim`", "got 0", ">= 1"),
    ),
    Case(
        "block_dim-negative",
        lambda: solve(A, B, block_dim=-2),
        ValueError,
        ("`block_dim`", "got -2", ">= 1"),
    ),
    Case(
        "block_dim-float",
        lambda: solve(A, B, block_dim=2.0),
        ValueError,
        ("`block_dim`", "got 2.0", "integer"),
    ),
    Case(
        "block_dim-string",
        lambda: solve(A, B, block_dim="2"),
        ValueError,
        ("`block_dim`", "'2'", "integer"),
    ),
    # ---- config ------------------------------------------------------------------
    Case(
        "config-string",
        lambda: solve(A, B, config='{"solver": "CG"}'),
        TypeError,
        ("`config`", "JSON text", "json.loads"),
    ),
    Case(
        "config-list", lambda: solve(A, B, config=["CG"]), TypeError, ("`config`", "list", "dict")
    ),
    Case(
        "config-unknown-key",
        lambda: solve(A, B, config={"solverr": "CG"}),
        jaxamg.ConfigError,
        ("unknown parameter", "'solverr'", "did you mean 'solver'"),
    ),
    Case(
        "config-unknown-solver",
        lambda: solve(A, B, config={"solver": "CGG"}),
        jaxamg.ConfigError,
        ("unknown solver", "'CGG'", "did you mean 'CG'"),
    ),
    Case(
        "config-unknown-enum-value",
        lambda: solve(A, B, norm="L7"),
        jaxamg.ConfigError,
        ("'norm'", "'L7'", "valid: L1, L2"),
    ),
    Case(
        "config-unimplemented-solver",
        lambda: solve(A, B, solver="CF_JACOBI"),
        jaxamg.ConfigError,
        ("'CF_JACOBI'", "does not implement", "use BLOCK_JACOBI"),
    ),
    Case(
        "config-error-found-at-setup",  # raised inside the native call, same type
        lambda: solve(
            A,
            B,
            config={
                "solver": "PCG",
                "preconditioner": {"solver": "MULTICOLOR_ILU", "ilu_sparsity_level": 1},
            },
        ),
        jaxamg.ConfigError,
        ("ilu_sparsity_level = 1", "not implemented", "MULTICOLOR_DILU"),
    ),
    Case(
        "config-solver-number",
        lambda: solve(A, B, config={"solver": 5}),
        jaxamg.ConfigError,
        ('"solver"', "got 5", "solver name"),
    ),
    Case(
        "config-preconditioner-number",
        lambda: solve(
            A, B, config={"config_version": 2, "solver": {"solver": "PCG", "preconditioner": 7}}
        ),
        jaxamg.ConfigError,
        ("'preconditioner'", "number 7", "solver name"),
    ),
    Case(
        "config-tolerance-string",
        lambda: solve(A, B, tolerance="small"),
        jaxamg.ConfigError,
        ("`tolerance`", "'small'", "positive number"),
    ),
    Case(
        "config-tolerance-nan",
        lambda: solve(A, B, tolerance=float("nan")),
        jaxamg.ConfigError,
        ("`solver.tolerance`", "nan", "finite number"),
    ),
    Case(
        "config-value-none",
        lambda: solve(A, B, norm=None),
        jaxamg.ConfigError,
        ("`solver.norm`", "None", "leave the key out"),
    ),
    Case(
        "config-value-object",
        lambda: solve(A, B, norm=object()),
        TypeError,
        ("`solver.norm`", "object", "str, int, float"),
    ),
    Case(
        "config-key-not-string",
        lambda: solve(A, B, config={1: "PCG"}),
        TypeError,
        ("keys must be strings", "1 (int)", "strings"),
    ),
    Case(
        "config-version-3",
        lambda: solve(A, B, config={"config_version": 3, "solver": "CG"}),
        jaxamg.ConfigError,
        ("`config_version`", "got 3", "1 or 2"),
    ),
    Case(
        "config-max_iters-zero",
        lambda: solve(A, B, max_iters=0),
        jaxamg.ConfigError,
        ("`max_iters`", "got 0", "positive"),
    ),
    Case(
        "config-max_iters-fraction",
        lambda: solve(A, B, max_iters=1.5),
        jaxamg.ConfigError,
        ("'max_iters'", "1.5", "whole number"),
    ),
    Case(
        "config-max_iters-overflow",
        lambda: solve(A, B, max_iters=10**12),
        jaxamg.ConfigError,
        ("'max_iters'", "1000000000000", "[-2147483648, 2147483647]"),
    ),
    Case(
        "config-presweeps-negative",
        lambda: solve(A, B, preconditioner={"solver": "AMG", "presweeps": -1}),
        jaxamg.ConfigError,
        ("`presweeps`", "got -1", ">= 0"),
    ),
    Case(
        "config-smoother-number",
        lambda: solve(A, B, preconditioner={"solver": "AMG", "smoother": 5}),
        TypeError,
        ("`smoother`", "int", "solver name or a dict"),
    ),
    Case(
        "config-gmres-restart-zero",
        lambda: solve(A, B, solver="GMRES", gmres_n_restart=0),
        jaxamg.ConfigError,
        ("`gmres_n_restart`", "got 0", "positive"),
    ),
    Case(
        "config-communicator",
        lambda: jconfig.validate_config({"solver": {"solver": "PCG"}, "communicator": "TCP"}),
        jaxamg.ConfigError,
        ("`communicator`", "'TCP'", "'MPI'"),
    ),
    # ---- kwargs and flags -----------------------------------------------------------
    Case(
        "kwarg-unknown",
        lambda: solve(A, B, bogus_option=3),
        jaxamg.ConfigError,
        ("'bogus_option'", "not an AmgX parameter", "describe_parameters()"),
    ),
    Case(
        "kwarg-reuse_setup-string",
        lambda: solve(A, B, reuse_setup="no"),
        TypeError,
        ("`reuse_setup`", "'no'", "bool"),
    ),
    Case(
        "kwarg-reuse_setup-number",
        lambda: solve(A, B, reuse_setup=2),
        TypeError,
        ("`reuse_setup`", "got 2", "bool"),
    ),
    # ---- config helpers -------------------------------------------------------------
    Case(
        "prepare_config-string",
        lambda: jconfig.prepare_config("solver=PCG"),
        TypeError,
        ("`config`", "legacy", "shipped config"),
    ),
    Case(
        "validate_config-no-solver",
        lambda: jconfig.validate_config({"config_version": 2}),
        jaxamg.ConfigError,
        ("`solver` scope", "dict naming the outer solver"),
    ),
    Case(
        "deep_merge-list",
        lambda: jconfig.deep_merge({"a": 1}, [1, 2]),
        TypeError,
        ("`override`", "list", "dict"),
    ),
    # ---- matrix builders ------------------------------------------------------------
    Case(
        "tridiagonal-n-zero",
        lambda: matrices.tridiagonal_matrix(0),
        ValueError,
        ("`n`", "got 0", ">= 1"),
    ),
    Case(
        "tridiagonal-n-float",
        lambda: matrices.tridiagonal_matrix(2.5),
        TypeError,
        ("`n`", "2.5", "whole number"),
    ),
    Case(
        "poisson-n-negative",
        lambda: matrices.poisson_matrix(-2),
        ValueError,
        ("`poisson_matrix`", "`n`", "got -2", ">= 1"),
    ),
    Case(
        "poisson-n-string",
        lambda: matrices.poisson_matrix("4"),
        TypeError,
        ("`n`", "'4'", "whole number"),
    ),
    Case(
        "poisson3d-n-zero",
        lambda: matrices.poisson3d_matrix(0),
        ValueError,
        ("`poisson3d_matrix`", "got 0", ">= 1"),
    ),
    Case(
        "random-density-above-one",
        lambda: matrices.random_matrix(10, density=2.0),
        ValueError,
        ("`density`", "2.0", "[0, 1]"),
    ),
    Case(
        "convection-diffusion-n-one",
        lambda: matrices.convection_diffusion_matrix_2d(1),
        ValueError,
        ("`n`", "got 1", ">= 2"),
    ),
    Case(
        "stretched-nx-two",
        lambda: matrices.poisson_matrix_stretched(2, 4, 1.1),
        ValueError,
        ("nx", "got 2", ">= 3"),
    ),
    Case(
        "stretched-stretch-negative",
        lambda: matrices.poisson_matrix_stretched(4, 4, -1.0),
        ValueError,
        ("stretch", "-1.0", "positive finite"),
    ),
    Case(
        "builder-dtype-garbage",
        lambda: matrices.tridiagonal_matrix(4, dtype="floaty"),
        TypeError,
        ("`dtype`", "'floaty'", "float32"),
    ),
    Case(
        "rhs_random-n-negative",
        lambda: matrices.rhs_random(-1),
        ValueError,
        ("`rhs_random`", "got -1", ">= 1"),
    ),
    # ---- callable operators -----------------------------------------------------------
    Case(
        "operator-data-dependent",
        lambda: solve(data_dependent, B),
        ValueError,
        ("'data_dependent'", "TracerBoolConversionError", "jax.lax.cond"),
    ),
    Case(
        "operator-data-dependent-under-jit",
        lambda: jax.jit(lambda b: solve(data_dependent, b))(B),
        ValueError,
        ("'data_dependent'", "pre-scanned", "cache_coloring"),
    ),
    Case(
        "operator-wrong-output-length",
        lambda: solve(doubled_output, B),
        ValueError,
        ("'doubled_output'", "(32,)", "shape (16,)"),
    ),
    Case(
        "operator-scalar-output",
        lambda: solve(scalar_output, B),
        ValueError,
        ("'scalar_output'", "shape ()", "shape (16,)"),
    ),
    Case(
        "operator-complex-output",
        lambda: solve(complex_output, B),
        TypeError,
        ("'complex_output'", "complex128", "real 2x2 block form"),
    ),
    Case(
        "operator-affine",
        lambda: solve(affine, B),
        ValueError,
        ("'affine'", "not linear", "A(x) = M @ x"),
    ),
    Case(
        "operator-no-arguments",
        lambda: solve(lambda: 1.0, B),
        TypeError,
        ("operator", "takes 0 positional arguments", "length 16"),
    ),
    Case(
        "operator-coloring-other-size",
        lambda: solve(colored_for(8), B),
        ValueError,
        ("coloring has 8 rows", "`b` has 16", "cache_coloring"),
    ),
    Case(
        "cache_coloring-other-shape",
        lambda: jaxamg.cache_coloring(colored_for(8), 16),
        ValueError,
        ("`shape` (16, 16)", "(8, 8)", "new operator object"),
    ),
    Case(
        "cache_coloring-negative-shape",
        lambda: jaxamg.cache_coloring(fresh_operator(), -3),
        ValueError,
        ("`shape`", "got -3", "non-negative ints"),
    ),
    Case(
        "with_cache-coloring-not-a-tuple",
        lambda: solve(jaxamg.with_cache(fresh_operator(), coloring=(1, 2, 3)), B),
        ValueError,
        ("coloring", "got tuple", "cache_coloring"),
    ),
    Case(
        "with_cache-coloring-wrong-size",
        lambda: solve(
            jaxamg.with_cache(
                fresh_operator(),
                coloring=(np.arange(3), np.arange(3), np.zeros(3, int), 1, (16, 16)),
            ),
            B,
        ),
        ValueError,
        ("`colors`", "3 entries", "16 columns", "colouring computed for this shape"),
    ),
    Case(
        "with_cache-on-int",
        lambda: jaxamg.with_cache(5, is_symmetric=True),
        TypeError,
        ("`jaxamg.with_cache`", "int", "wrap it"),
    ),
    # ---- null-space options -------------------------------------------------------------
    Case(
        "nullspace-wrong-length",
        lambda: solve(A, B, nullspace=np.ones(N - 1)),
        ValueError,
        ("`nullspace`", "(15,)", "vector of length 16"),
    ),
    Case(
        "nullspace-3d",
        lambda: solve(A, B, nullspace=np.ones((N, 1, 1))),
        ValueError,
        ("`nullspace`", "(16, 1, 1)", "(16, k) array"),
    ),
    Case(
        "nullspace-rank-deficient",
        lambda: solve(A, B, nullspace=np.ones((N, 2))),
        ValueError,
        ("`nullspace`", "linearly dependent", "numpy.linalg.qr"),
    ),
    Case(
        "nullspace-nan",
        lambda: solve(A, B, nullspace=np.full(N, np.nan)),
        ValueError,
        ("`nullspace`", "16 of its entries are NaN", "finite basis"),
    ),
    Case(
        "nullspace-unknown-string",
        lambda: solve(A, B, nullspace="linear"),
        ValueError,
        ("`nullspace`", "'linear'", "nullspace='constant'"),
    ),
    Case(
        "nullspace-complex",
        lambda: solve(A, B, nullspace=np.ones(N, dtype=complex)),
        ValueError,
        ("`nullspace`", "complex128", "real basis"),
    ),
    Case(
        "transpose_nullspace-zero-column",
        lambda: solve(A, B, transpose_nullspace=np.zeros((N, 1))),
        ValueError,
        ("`transpose_nullspace`", "column 0 is zero", "independent columns"),
    ),
    # ---- save_stats_file ------------------------------------------------------------------
    Case(
        "save_stats_file-missing-directory",
        lambda: solve(A, B, save_stats_file="/nonexistent-dir/stats.txt"),
        OSError,
        ("`save_stats_file`", "'/nonexistent-dir/stats.txt'", "writable directory"),
    ),
    Case(
        "save_stats_file-directory",
        lambda: solve(A, B, save_stats_file="/tmp"),
        OSError,
        ("`save_stats_file`", "'/tmp'", "is a directory"),
    ),
    Case(
        "save_stats_file-number",
        lambda: solve(A, B, save_stats_file=12.5),
        TypeError,
        ("`save_stats_file`", "12.5", "file name"),
    ),
    Case(
        "save_stats_file-under-jit",
        lambda: jax.jit(lambda b: solve(A, b, save_stats_file="s.txt"))(B),
        ValueError,
        ("`save_stats_file`", "jax.jit", "call solve directly"),
    ),
    # ---- make_preconditioner ----------------------------------------------------------------
    Case(
        "preconditioner-config-string",
        lambda: make_preconditioner(A, "AMG"),
        TypeError,
        ("`config`", "string", "json.loads"),
    ),
    Case(
        "preconditioner-unknown-key",
        lambda: make_preconditioner(A, bogus=1),
        jaxamg.ConfigError,
        ("'bogus'", "not an AmgX parameter", "describe_parameters()"),
    ),
    Case(
        "preconditioner-unknown-solver",
        lambda: make_preconditioner(A, solver="NOPE"),
        jaxamg.ConfigError,
        ("unknown solver", "'NOPE'", "valid AmgX solvers"),
    ),
    Case(
        "preconditioner-max_iters-zero",
        lambda: make_preconditioner(A, max_iters=0),
        jaxamg.ConfigError,
        ("`max_iters`", "got 0", "positive"),
    ),
    Case(
        "preconditioner-return_info-string",
        lambda: make_preconditioner(A, return_info="no"),
        TypeError,
        ("`return_info`", "'no'", "bool"),
    ),
    Case(
        "preconditioner-wrong-rhs",
        lambda: make_preconditioner(A)(np.ones(3)),
        ValueError,
        ("`b`", "3 entries", "16 rows", "one entry per row"),
    ),
]


def test_catalogue_is_large_and_unique():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) + len(JIT_CASES) + len(CLI_CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_raises_a_helpful_error(case: Case):
    with pytest.raises(case.error) as caught:
        case.call()
    message = str(caught.value)
    for part in case.says:
        assert part in message, f"{part!r} missing from: {message}"
    assert "\n" not in message.strip(), "one-line messages"


# -- inside jax.jit: bad values give a status, not an exception -------------------


def _jit_solve(values, b, x0):
    M = jsparse.BCSR.from_scipy_sparse(A)

    @jax.jit
    def run(data, rhs, guess):
        return jaxamg.solve(jsparse.BCSR((data, M.indices, M.indptr), shape=M.shape), rhs, x0=guess)

    return run(values, b, x0)


JIT_CASES = {
    "jit-nan-in-A": lambda d: (with_bad(d, 4, np.nan), B, np.zeros(N)),
    "jit-inf-in-A": lambda d: (with_bad(d, 0, np.inf), B, np.zeros(N)),
    "jit-nan-in-b": lambda d: (d, with_bad(B, 7, np.nan), np.zeros(N)),
    "jit-inf-in-b": lambda d: (d, with_bad(B, 15, -np.inf), np.zeros(N)),
    "jit-nan-in-x0": lambda d: (d, B, with_bad(np.zeros(N), 3, np.nan)),
}


@pytest.mark.parametrize("make", list(JIT_CASES.values()), ids=list(JIT_CASES))
def test_bad_values_under_jit_give_failed_status(make):
    data = jsparse.BCSR.from_scipy_sparse(A).data
    x, info = _jit_solve(*make(np.asarray(data)))
    assert int(info["status"]) == jaxamg.AMGXStatus.FAILED
    assert int(info["iterations"]) == 0
    assert np.all(np.isnan(np.asarray(x)))
    # The same compiled program still solves good input afterwards.
    x, info = _jit_solve(data, B, np.zeros(N))
    assert int(info["status"]) == jaxamg.AMGXStatus.SUCCESS
    np.testing.assert_allclose(np.asarray(x), sp.linalg.spsolve(A.tocsc(), B), rtol=1e-5)


# -- the command-line interface ----------------------------------------------------

GOOD_MTX = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2.0\n2 2 4.0\n"
CLI_CASES = {
    "cli-missing-matrix": (
        ["solve", "missing.mtx"],
        ("'missing.mtx'", "does not exist", "Matrix Market"),
    ),
    "cli-index-out-of-range": (
        ["solve", "oob.mtx"],
        ("'oob.mtx'", "out of bounds", "%%MatrixMarket"),
    ),
    "cli-not-matrix-market": (["solve", "junk.mtx"], ("'junk.mtx'", "banner", "%%MatrixMarket")),
    "cli-nan-entry": (["solve", "nan.mtx"], ("'nan.mtx'", "nan", "finite")),
    "cli-unknown-solver": (
        ["solve", "good.mtx", "--config", "unknown.json"],
        ("'NOPE'", "unknown solver", "valid AmgX solvers"),
    ),
    "cli-broken-json": (
        ["solve", "good.mtx", "--config", "broken.json"],
        ("'broken.json'", "not valid JSON", "fix the JSON"),
    ),
    "cli-missing-config": (
        ["solve", "good.mtx", "--config", "none.json"],
        ("'none.json'", "does not exist", "pass the path"),
    ),
    "cli-rhs-wrong-size": (["solve", "good.mtx", "--rhs", "rhs3.mtx"], ("rhs", "3", "2")),
}
CLI_FILES = {
    "good.mtx": GOOD_MTX,
    "oob.mtx": "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n9 9 2.0\n",
    "junk.mtx": "garbage\n",
    "nan.mtx": "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 nan\n2 2 4.0\n",
    "unknown.json": '{"solver": "NOPE"}',
    "broken.json": "{broken",
    "rhs3.mtx": "%%MatrixMarket matrix array real general\n3 1\n1.0\n2.0\n3.0\n",
}


@pytest.mark.parametrize("argv,says", list(CLI_CASES.values()), ids=list(CLI_CASES))
def test_cli_bad_input_exits_with_one_line(argv, says, tmp_path):
    for name, text in CLI_FILES.items():
        (tmp_path / name).write_text(text)
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    run = subprocess.run(
        [sys.executable, "-m", "jaxamg", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    for part in says:
        assert part in lines[0], f"{part!r} missing from: {lines[0]}"


class SlotsOperator:
    """A callable object that cannot be weakly referenced (jax.jit of such an
    object, after it was traced, crashed the interpreter)."""

    __slots__ = ()

    def __call__(self, x):
        return 3.0 * x


def test_operator_object_without_weakref_solves_and_does_not_crash():
    x, info = jaxamg.solve(SlotsOperator(), B)
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    np.testing.assert_allclose(np.asarray(x), B / 3.0, rtol=1e-6)
