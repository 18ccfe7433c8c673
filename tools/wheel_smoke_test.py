"""The installed wheel, checked from outside the checkout (`make package-test`
runs it in a fresh virtual environment holding only the wheel and its
dependencies): jaxamg imports from that environment without mpi4py, its
modules share the one engine library the wheel installs, it solves a random
system against SciPy, differentiates a solve against central finite
differences, refuses a `comm` that is not a communicator by name, and its
command line solves a Matrix Market file.

Usage: python tools/wheel_smoke_test.py WORKDIR
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

CLI_CONFIG = (
    '{"config_version": 2, "solver": {"solver": "BICGSTAB", "tolerance": 1e-12, '
    '"max_iters": 500, "preconditioner": {"solver": "BLOCK_JACOBI"}}}'
)


def check(ok: bool, what: str) -> None:
    print(("ok     " if ok else "FAILED ") + what)
    if not ok:
        raise SystemExit(1)


def main(argv: list[str]) -> int:
    workdir = pathlib.Path(argv[0])
    import jax
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    from jax.experimental import sparse as jsparse

    import jaxamg

    jax.config.update("jax_enable_x64", True)
    installed = pathlib.Path(jaxamg.__file__).resolve()
    check(pathlib.Path(sys.prefix).resolve() in installed.parents, f"jaxamg from {installed}")
    check("mpi4py" not in sys.modules, "import jaxamg does not import mpi4py")
    print("jaxamg", jaxamg.__version__, "jax", jax.__version__)
    from jaxamg import _cpu, _engine

    engine = pathlib.Path(_engine.__file__).parent / "libjaxamg_engine.so"
    check(engine.is_file(), f"the engine library is installed beside the modules ({engine.name})")
    check(_engine.engine_instance() == _cpu.engine_instance(), "one engine for _engine and _cpu")

    # A random nonsymmetric, diagonally dominant system against SciPy.
    rng = np.random.default_rng(2026)
    n = 300
    R = sp.random(n, n, density=0.02, random_state=rng)
    A = (R + sp.diags(np.abs(R).sum(axis=1).A1 + 1.0)).tocsr()
    b = rng.standard_normal(n)
    reference = sp.linalg.spsolve(A.tocsc(), b)
    M = jsparse.BCSR.from_scipy_sparse(A)
    x, info = jaxamg.solve(M, jax.numpy.asarray(b), tolerance=1e-12, max_iters=500)
    error = float(np.max(np.abs(np.asarray(x) - reference)) / np.max(np.abs(reference)))
    check(info["status"] == jaxamg.AMGXStatus.SUCCESS and error < 1e-9, f"solve: error {error:.1e}")

    # d/ds of sum(w * x(s)) for A(s) = A + s I, at s = 0, by reverse mode
    # against central differences of SciPy solves.
    w = rng.standard_normal(n)

    def loss(s):
        shifted = jsparse.BCSR((M.data + s * diagonal_mask, M.indices, M.indptr), shape=M.shape)
        x, _ = jaxamg.solve(shifted, jax.numpy.asarray(b), tolerance=1e-13, max_iters=500)
        return jax.numpy.dot(jax.numpy.asarray(w), x)

    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    diagonal_mask = jax.numpy.asarray((rows == A.indices).astype(float))
    grad = float(jax.jit(jax.grad(loss))(0.0))
    h = 1e-5

    def scipy_loss(s):
        return w @ sp.linalg.spsolve((A + s * sp.identity(n)).tocsc(), b)

    fd = (scipy_loss(h) - scipy_loss(-h)) / (2 * h)
    check(abs(grad - fd) <= 1e-6 * abs(fd), f"gradient: {grad:.8e} vs central difference {fd:.8e}")

    # No mpi4py here: a `comm` that is not a communicator is refused by name.
    try:
        jaxamg.solve(M, jax.numpy.asarray(b), comm=object())
        check(False, "solve(comm=object()) raised nothing")
    except TypeError as e:
        check("`comm` must be an mpi4py communicator" in str(e), f"solve(comm=object()): {e}")

    # The command line, as installed in the environment's bin/.
    scipy.io.mmwrite(str(workdir / "A.mtx"), A.tocoo())
    scipy.io.mmwrite(str(workdir / "b.mtx"), b.reshape(-1, 1))
    cli = shutil.which("jaxamg", path=str(pathlib.Path(sys.executable).parent))
    check(cli is not None, "the jaxamg command is installed")
    done = subprocess.run(
        [cli, "solve", str(workdir / "A.mtx"), "--rhs", str(workdir / "b.mtx"),
         "--solution", str(workdir / "x.mtx"), "--config-string", CLI_CONFIG],
        capture_output=True, text=True, cwd=workdir,
    )  # fmt: skip
    check(done.returncode == 0, f"jaxamg solve: exit {done.returncode} {done.stderr[-500:]}")
    x_cli = np.asarray(scipy.io.mmread(str(workdir / "x.mtx"))).ravel()
    error = float(np.max(np.abs(x_cli - reference)) / np.max(np.abs(reference)))
    check(error < 1e-9, f"jaxamg solve A.mtx --rhs b.mtx: error {error:.1e}")
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
