"""jaxamg.config: defaults, merge rules, kwargs, validation errors naming the key."""

import json

import jax
import jax.experimental.sparse
import jax.numpy as jnp
import pytest

import jaxamg
from jaxamg import matrices
from jaxamg.config import outer_max_iters, prepare_config, uses_dense_lu_coarse_solver


def cfg(*args, **kwargs):
    return json.loads(prepare_config(*args, **kwargs))


def test_defaults():
    c = cfg()
    s = c["solver"]
    assert c["config_version"] == 2
    assert (s["solver"], s["convergence"], s["tolerance"], s["max_iters"], s["norm"]) == (
        "PBICGSTAB",
        "RELATIVE_INI",
        1e-6,
        1000,
        "L2",
    )
    p = s["preconditioner"]
    assert (p["solver"], p["algorithm"], p["selector"], p["interpolator"]) == (
        "AMG",
        "CLASSICAL",
        "PMIS",
        "D2",
    )
    assert p["smoother"]["solver"] == "BLOCK_JACOBI" and p["smoother"]["relaxation_factor"] == 0.9
    assert p["coarse_solver"] == "DENSE_LU_SOLVER" and p["max_iters"] == 1
    assert s["monitor_residual"] == 1 and s["store_res_history"] == 1


def test_flat_config_and_kwargs_override():
    c = cfg({"solver": "PCG", "max_iters": 50}, tolerance=1e-9)
    assert c["solver"]["solver"] == "PCG" and c["solver"]["max_iters"] == 50
    assert c["solver"]["tolerance"] == 1e-9
    assert c["solver"]["preconditioner"]["solver"] == "AMG"


def test_nested_config_and_kwarg_wins():
    c = cfg({"config_version": 2, "solver": {"solver": "FGMRES", "max_iters": 200}}, max_iters=7)
    assert c["solver"]["max_iters"] == 7 and c["solver"]["solver"] == "FGMRES"
    assert c["solver"]["convergence"] == "RELATIVE_INI"  # defaults fill the nested config


def test_non_amg_preconditioner_drops_amg_keys():
    c = cfg({"solver": "PCG", "preconditioner": {"solver": "JACOBI_L1"}})
    assert c["solver"]["preconditioner"] == {"solver": "JACOBI_L1"}
    c = cfg({"solver": "PCG", "preconditioner": "NOSOLVER"})
    assert c["solver"]["preconditioner"] == "NOSOLVER"


def test_amg_preconditioner_is_filled_from_defaults():
    c = cfg({"preconditioner": {"solver": "AMG", "smoother": "MULTICOLOR_GS"}})
    p = c["solver"]["preconditioner"]
    assert p["smoother"] == "MULTICOLOR_GS"
    assert (p["algorithm"], p["selector"], p["coarse_solver"]) == (
        "CLASSICAL",
        "PMIS",
        "DENSE_LU_SOLVER",
    )
    c = cfg({"config_version": 2, "solver": {"preconditioner": {"solver": "AMG", "cycle": "W"}}})
    assert c["solver"]["preconditioner"]["coarse_solver"] == "DENSE_LU_SOLVER"


def test_user_zero_monitoring_is_overridden():
    c = cfg({"monitor_residual": 0, "store_res_history": 0})
    assert c["solver"]["monitor_residual"] == 1 and c["solver"]["store_res_history"] == 1


def test_save_stats_flags():
    c = cfg(save_stats=True)
    assert c["solver"]["print_solve_stats"] == 1
    assert c["solver"]["preconditioner"]["print_grid_stats"] == 1


def test_block_defaults_and_classical_under_mpi_rejected():
    c = cfg(block_dim=2)
    p = c["solver"]["preconditioner"]
    assert (p["algorithm"], p["selector"], p["min_coarse_rows"], p["dense_lu_num_rows"]) == (
        "AGGREGATION",
        "SIZE_2",
        32,
        64,
    )
    # Classical AMG on a block system (unknown-based) takes the scalar defaults.
    c = cfg({"preconditioner": {"solver": "AMG", "algorithm": "CLASSICAL"}}, block_dim=2)
    p = c["solver"]["preconditioner"]
    assert (p["algorithm"], p["selector"]) == ("CLASSICAL", "PMIS")
    with pytest.raises(ValueError, match="classical AMG does not support block_dim=2 on a matrix"):
        cfg({"preconditioner": {"solver": "AMG", "algorithm": "CLASSICAL"}}, block_dim=2, mpi=True)
    c = cfg(block_dim=2, mpi=True)
    assert c["solver"]["preconditioner"]["coarse_solver"]["solver"] == "BLOCK_JACOBI"
    with pytest.raises(ValueError, match="DENSE_LU_SOLVER as coarse solver"):
        cfg(
            {"preconditioner": {"solver": "AMG", "coarse_solver": "DENSE_LU_SOLVER"}},
            block_dim=2,
            mpi=True,
        )


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"max_iters": 0}, "`max_iters` in the outer solver must be a positive number, got 0"),
        ({"tolerance": -1.0}, "`tolerance` in the outer solver must be a positive number"),
        ({"solver": "GMRES", "gmres_n_restart": 0}, "`gmres_n_restart` in GMRES"),
        ({"communicator": "TCP"}, "`communicator` must be 'MPI' or 'MPI_DIRECT', got 'TCP'"),
        ({"preconditioner": {"solver": "AMG", "max_levels": 0}}, "`max_levels` in the AMG scope"),
        ({"preconditioner": {"solver": "AMG", "presweeps": -1}}, "`presweeps` in the AMG scope"),
        ({"preconditioner": {"solver": "AMG", "min_coarse_rows": 0}}, "`min_coarse_rows`"),
        ({"preconditioner": {"solver": "AMG", "dense_lu_num_rows": -4}}, "`dense_lu_num_rows`"),
    ],
)
def test_validation_errors_name_the_key(bad, match):
    with pytest.raises(ValueError, match=match):
        prepare_config(bad)


def test_smoother_list_is_a_type_error():
    with pytest.raises(TypeError, match="`smoother` in the AMG scope 'amg' must be a solver name"):
        prepare_config({"preconditioner": {"solver": "AMG", "smoother": ["GS"]}})


def test_mpi_dilu_tiny_coarse_grid_rejected():
    bad = {"preconditioner": {"solver": "AMG", "smoother": "MULTICOLOR_DILU"}}
    with pytest.raises(ValueError, match="MULTICOLOR_DILU"):
        prepare_config(bad, mpi=True)
    prepare_config(bad)  # single process: fine
    ok = {
        "preconditioner": {
            "solver": "AMG",
            "smoother": "MULTICOLOR_DILU",
            "dense_lu_num_rows": 64,
            "min_coarse_rows": 64,
        }
    }
    prepare_config(ok, mpi=True)


def test_outer_max_iters():
    assert outer_max_iters(prepare_config({"max_iters": 33})) == 33
    assert outer_max_iters("not json") == 100
    assert outer_max_iters('{"solver": {"max_iters": -2}}') == 100
    assert outer_max_iters('{"solver": {}}') == 100
    assert uses_dense_lu_coarse_solver(prepare_config())
    assert not uses_dense_lu_coarse_solver(
        prepare_config({"preconditioner": {"solver": "AMG", "coarse_solver": "NOSOLVER"}})
    )


def test_solve_rejects_json_text_unknown_names_and_unknown_keys():
    A = matrices.tridiagonal_matrix(8)
    b = matrices.rhs_ones(8)
    with pytest.raises(TypeError, match="got JSON text; parse it first"):
        jaxamg.solve(A, b, config='{"solver": "PCG"}')
    with pytest.raises(TypeError, match="got bytes"):
        jaxamg.solve(A, b, config=b'{"solver": "PCG"}')
    # A name that is no shipped config lists the shipped ones.
    with pytest.raises(jaxamg.ConfigError, match="'FGMRES_AGGREGATON'.*FGMRES_AGGREGATION"):
        jaxamg.solve(A, b, config="FGMRES_AGGREGATON")
    with pytest.raises(jaxamg.ConfigError, match="max_iter"):
        jaxamg.solve(A, b, max_iter=10)
    with pytest.raises(jaxamg.ConfigError, match="NOT_A_SOLVER"):
        jaxamg.solve(A, b, solver="NOT_A_SOLVER")
    with pytest.raises(jaxamg.ConfigError, match="selector"):
        jaxamg.solve(A, b, preconditioner={"solver": "AMG", "selector": "BOGUS"})


def test_solve_input_errors():
    A = matrices.tridiagonal_matrix(8)
    with pytest.raises(ValueError, match="`b` has 7 entries but `A` has 8 rows"):
        jaxamg.solve(A, jnp.ones(7))
    with pytest.raises(ValueError, match="must be square"):
        jaxamg.solve(jnp.ones((3, 4)), jnp.ones(3))
    with pytest.raises(TypeError, match="complex"):
        jaxamg.solve(A, jnp.ones(8, jnp.complex64))
    with pytest.raises(ValueError, match="not divisible by block_dim=3"):
        jaxamg.solve(A, jnp.ones(8), block_dim=3)
    with pytest.raises(ValueError, match="`block_dim` must be an integer >= 1"):
        jaxamg.solve(A, jnp.ones(8), block_dim=0)
    with pytest.raises(TypeError, match="not supported"):
        jaxamg.solve("matrix", jnp.ones(8))
    with pytest.raises(ValueError, match="batched BCSR"):
        jaxamg.solve(
            jax.vmap(lambda s: matrices.tridiagonal_matrix(8, s))(jnp.ones(2)), jnp.ones(8)
        )


def test_nan_values_raise_eagerly_and_fail_under_jit():
    A = matrices.tridiagonal_matrix(8, dtype=jnp.float32)
    bad = A.data.at[3].set(jnp.nan)
    M = jax.experimental.sparse.BCSR((bad, A.indices, A.indptr), shape=A.shape)
    with pytest.raises(ValueError, match="`A` contains NaN"):
        jaxamg.solve(M, jnp.ones(8))
    with pytest.raises(ValueError, match="`b` contains NaN"):
        jaxamg.solve(A, jnp.ones(8).at[0].set(jnp.inf))

    @jax.jit
    def f(data, rhs):
        return jaxamg.solve(
            jax.experimental.sparse.BCSR((data, A.indices, A.indptr), shape=A.shape), rhs
        )

    x, info = f(bad, jnp.ones(8))
    assert int(info["status"]) == jaxamg.AMGXStatus.FAILED
    assert bool(jnp.all(jnp.isnan(x)))
    x, info = f(A.data, jnp.ones(8))  # the same compiled program still solves
    assert int(info["status"]) == jaxamg.AMGXStatus.SUCCESS
