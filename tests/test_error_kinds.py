"""Engine failures reach Python as the exception of their kind: the XLA
error code the FFI handlers return (one table in cpp/ffi/handler_common.h)
is read back by one table (jaxamg._core.errors). Real failures through the
FFI, eager and under jit, and every code of the table."""

import importlib
import json
import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.experimental.sparse import BCSR

import jaxamg
from jaxamg._core.errors import ERROR_CLASS_OF_CODE, to_runtime_error

ROOT = pathlib.Path(__file__).resolve().parents[1]
LU = {"config_version": 2, "solver": {"scope": "main", "solver": "DENSE_LU_SOLVER"}}


def _singular(n, rng):
    """A random dense-ish matrix whose last row repeats the first."""
    dense = rng.standard_normal((n, n)) + n * np.eye(n)
    dense[-1] = dense[0]
    return BCSR.from_scipy_sparse(sp.csr_matrix(dense))


def test_a_numerical_failure_is_a_runtime_error_with_the_engines_message():
    rng = np.random.default_rng(11)
    A = _singular(6, rng)
    b = jnp.asarray(rng.standard_normal(6), A.data.dtype)
    with pytest.raises(RuntimeError) as raised:
        jaxamg.solve(A, b, config=LU)
    text = str(raised.value)
    assert text.startswith("jaxamg.solve: DENSE_LU_SOLVER: the 6 x 6 matrix is singular"), text
    assert "FAILED_PRECONDITION" not in text and "\n" not in text
    assert type(raised.value) is RuntimeError


def test_under_jit_the_error_code_carries_the_kind():
    # Inside a compiled program XLA raises the error at the call; its code
    # is the kind, and the one table reads it back.
    rng = np.random.default_rng(12)
    A = _singular(5, rng)
    b = jnp.asarray(rng.standard_normal(5), A.data.dtype)
    with pytest.raises(jax.errors.JaxRuntimeError) as raised:
        jax.block_until_ready(jax.jit(lambda A, b: jaxamg.solve(A, b, config=LU)[0])(A, b))
    assert "FAILED_PRECONDITION: DENSE_LU_SOLVER: the 5 x 5 matrix is singular" in str(raised.value)
    error = to_runtime_error(raised.value)
    assert type(error) is RuntimeError
    assert str(error).startswith("jaxamg.solve: DENSE_LU_SOLVER: the 5 x 5 matrix is singular")


def test_the_engine_module_raises_each_kind_as_its_python_class():
    engine = importlib.import_module("jaxamg._engine")
    rng = np.random.default_rng(13)
    singular = _singular(4, rng)
    indptr, indices = np.asarray(singular.indptr), np.asarray(singular.indices)
    data = np.asarray(singular.data, np.float64)
    solver = engine.EngineSolver(json.dumps(LU))
    with pytest.raises(RuntimeError, match="DENSE_LU_SOLVER: the 4 x 4 matrix is singular") as e:
        solver.setup(indptr, indices, data)
    assert type(e.value) is RuntimeError
    bad_indptr = indptr.copy()
    bad_indptr[-1] += 1  # the last offset must be nnz
    with pytest.raises(ValueError) as e:
        engine.EngineSolver(json.dumps(LU)).setup(bad_indptr, indices, data)
    assert not isinstance(e.value, jaxamg.ConfigError)
    with pytest.raises(jaxamg.ConfigError, match="did you mean 'PCG'"):
        engine.EngineSolver('{"config_version": 2, "solver": {"solver": "PCGG"}}')


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("INVALID_ARGUMENT: jaxamg_solve: b has 3 rows", ValueError),
        ("INVALID_ARGUMENT: config: unknown solver 'CGG'", jaxamg.ConfigError),
        ("UNIMPLEMENTED: IDR on the device", NotImplementedError),
        ("FAILED_PRECONDITION: pivot 4 is 0", RuntimeError),
        ("INTERNAL: jaxamg_solve: vector::reserve", RuntimeError),
        ("something XLA said", RuntimeError),
    ],
)
def test_every_code_of_the_table_maps_to_its_class(text, kind):
    wrapped = f"jax.errors.JaxRuntimeError: {text}\n\nAt:\n  some traceback"
    error = to_runtime_error(RuntimeError(wrapped))
    assert type(error) is kind
    message = text.split(": ", 1)[1] if ": " in text else text
    assert str(error).startswith("jaxamg.solve: ")
    assert message in str(error) and "At:" not in str(error).split(message)[0]


def test_the_table_reads_back_every_code_the_handlers_return():
    source = (ROOT / "cpp" / "ffi" / "handler_common.h").read_text()
    body = source[source.index("inline xla::ffi::Error to_ffi_error") :]
    body = body[: body.index("\n}\n")]
    codes = {
        re.sub(r"(?<!^)(?=[A-Z])", "_", c).upper() for c in re.findall(r"ErrorCode::k(\w+)", body)
    }
    assert codes == set(ERROR_CLASS_OF_CODE)


def test_a_stats_result_of_the_wrong_length_is_refused_not_overrun():
    # The handler writes STATS_HEAD + history_len entries per solve; a caller
    # that declares fewer gets an error naming the length, not a write past
    # the end of XLA's buffer.
    from jaxamg._core import ffi

    ffi.ensure_registered()
    A = sp.csr_matrix(sp.diags([4.0] * 5))
    b = jnp.ones(5)
    history_len = 3
    call = jax.ffi.ffi_call(
        "jaxamg_solve",
        (
            jax.ShapeDtypeStruct(b.shape, b.dtype),
            jax.ShapeDtypeStruct((ffi.STATS_HEAD - 1 + history_len,), b.dtype),
        ),
    )
    with pytest.raises(jax.errors.JaxRuntimeError) as raised:
        call(
            jnp.asarray(A.indptr, jnp.int32),
            jnp.asarray(A.indices, jnp.int32),
            jnp.asarray(A.data),
            b,
            jnp.zeros(5),
            config=json.dumps(LU),
            structure_hi=np.int64(0),
            structure_lo=np.int64(0),
            transpose=False,
            use_x0=False,
            reuse_setup=False,
            block_dim=np.int64(1),
            history_len=np.int64(history_len),
        )
    assert "INVALID_ARGUMENT" in str(raised.value)
    assert f"stats: the result has {ffi.STATS_HEAD - 1 + history_len} entries" in str(raised.value)
