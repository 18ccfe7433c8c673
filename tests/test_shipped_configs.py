"""The configs shipped in the package: listed, loaded by name, and each one
solving a random SPD system (and, where its solver takes it, a nonsymmetric
one) to the SciPy direct solution when called by its name."""

import json
from importlib import resources

import jax
import numpy as np
import pytest
import scipy.sparse.linalg as spla
from helpers import weighted_poisson2d

import jaxamg
from jaxamg import config as jconfig

jax.config.update("jax_enable_x64", True)

# AmgX's stock configs we have equivalents of, and our tuned ones.
STOCK = [
    "AGGREGATION_JACOBI",
    "AMG_CLASSICAL_PMIS",
    "CLASSICAL_F_CYCLE",
    "CLASSICAL_V_CYCLE",
    "CLASSICAL_W_CYCLE",
    "FGMRES_AGGREGATION",
    "GMRES_AMG_D2",
    "JACOBI",
    "PBICGSTAB_CLASSICAL_JACOBI",
    "PCGF_CLASSICAL_V_JACOBI",
    "PCG_AGGREGATION_JACOBI",
    "PCG_CLASSICAL_V_JACOBI",
    "PCG_NOPREC",
]
TUNED = [
    "FGMRES_AGGREGATION_DILU",
    "FGMRES_CLASSICAL_MCGS",
    "PCGF_AGGREGATION_SIZE8_CG",
    "PCG_CLASSICAL_AGG1_CHEBY2",
    "PCG_CLASSICAL_L1JACOBI_T025",
    "PCG_CLASSICAL_L1JACOBI_T05",
    "PCG_CLASSICAL_MCGS_T025",
    "PCG_SA_NEAR_NULLSPACE",
]
SYMMETRIC_ONLY = ("PCG", "PCGF")  # outer solvers that need a symmetric matrix


def test_the_list_is_the_packaged_files():
    folder = resources.files("jaxamg").joinpath("configs")
    on_disk = sorted(e.name[:-5] for e in folder.iterdir() if e.name.endswith(".json"))
    assert jconfig.shipped_configs() == on_disk == sorted(STOCK + TUNED)


def test_load_ignores_case_and_suffix_and_returns_a_fresh_copy():
    folder = resources.files("jaxamg").joinpath("configs")
    expected = json.loads(folder.joinpath("FGMRES_AGGREGATION.json").read_text())
    for name in ("FGMRES_AGGREGATION", "fgmres_aggregation", "FGMRES_AGGREGATION.json"):
        assert jconfig.load(name) == expected
    first = jconfig.load("PCG_NOPREC")
    first["solver"]["max_iters"] = -5
    assert jconfig.load("PCG_NOPREC")["solver"]["max_iters"] != -5
    with pytest.raises(jaxamg.ConfigError, match="PCG_NOPRC.*shipped configs are.*PCG_NOPREC"):
        jconfig.load("PCG_NOPRC")
    with pytest.raises(TypeError, match="`name` must be a config name"):
        jconfig.load(3)


def _random_system(symmetric: bool, seed: int):
    rng = np.random.default_rng(seed)
    A = weighted_poisson2d(24, symmetric, rng)
    return A, rng.standard_normal(A.shape[0])


@pytest.mark.parametrize("name", STOCK + TUNED)
def test_each_shipped_config_solves_by_name(name):
    outer = jconfig.load(name)["solver"]["solver"]
    for symmetric in (True, False):
        if not symmetric and outer in SYMMETRIC_ONLY:
            continue
        A, b = _random_system(symmetric, seed=len(name) + symmetric)
        reference = spla.spsolve(A.tocsc(), b)
        # Tight tolerance and room to iterate, so that x can be compared with
        # the direct solve; the shipped solver tree is what runs.
        x, info = jaxamg.solve(
            A,
            b,
            config=name,
            tolerance=1e-10,
            max_iters=5000,
            convergence="RELATIVE_INI_CORE",
        )
        x = np.asarray(x)
        assert info["status"] == 0, (name, symmetric, info["status"], info["iterations"])
        true_relres = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
        assert true_relres < 1e-9, (name, symmetric, true_relres)
        err = np.linalg.norm(x - reference) / np.linalg.norm(reference)
        assert err < 1e-7, (name, symmetric, err)


def test_a_name_runs_the_same_tree_as_its_dict():
    A, b = _random_system(True, seed=5)
    by_name = jaxamg.solve(A, b, config="PCG_CLASSICAL_AGG1_CHEBY2")[1]
    by_dict = jaxamg.solve(A, b, config=jconfig.load("pcg_classical_agg1_cheby2"))[1]
    assert int(by_name["iterations"]) == int(by_dict["iterations"])
    # A different shipped config is a different tree: not the default.
    default = jaxamg.solve(A, b)[1]
    assert jconfig.prepare_config("PCG_NOPREC") != jconfig.prepare_config(None)
    assert int(default["iterations"]) != int(
        jaxamg.solve(A, b, config="PCG_NOPREC", max_iters=1000)[1]["iterations"]
    )
