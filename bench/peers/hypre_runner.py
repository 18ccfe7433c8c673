"""hypre peer: installs Debian's libhypre-dev when missing, compiles
hypre_driver.c with mpicc, and runs it on a problem's .bin file.

Settings (hypre's recommended CPU setup, flags of hypre_driver):
HMIS coarsening (10; PMIS is 8), ext+i interpolation (type 6), PMaxElmts 4,
strength 0.25 (2D) or 0.5 (3D), max_row_sum 0.9, l1-Gauss-Seidel forward on
the way down (relax type 13) and backward on the way up (14), so the V-cycle
is symmetric; Gaussian elimination on the coarsest level (9); one V(1,1)
cycle per preconditioner application.  Krylov: PCG with the 2-norm
criterion ||r|| <= tol ||b|| (SPD), or GMRES(30) (nonsymmetric).

Debian's hypre is built without OpenMP; --np > 1 runs it with mpirun.
Setup is timed around HYPRE_ParCSR{PCG,GMRES}Setup (BoomerAMG setup);
building the hypre IJ matrix from the file is reported separately as
load_seconds and is not included.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "hypre_driver.c")
HEADER = "/usr/include/hypre/HYPRE_parcsr_ls.h"


def ensure_installed(log=print) -> None:
    if os.path.exists(HEADER) and shutil.which("mpicc"):
        return
    log("hypre: libhypre-dev not found, installing it with apt-get")
    prefix: list[str] = []
    if os.geteuid() != 0:
        if not shutil.which("sudo"):
            raise RuntimeError("libhypre-dev is missing; install it: apt-get install libhypre-dev")
        prefix = ["sudo", "-n"]
    install = prefix + [
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "libhypre-dev",
        "libopenmpi-dev",
    ]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    r = subprocess.run(install, env=env, capture_output=True, text=True)
    if r.returncode != 0:  # the package lists may be missing on a fresh machine
        subprocess.run(prefix + ["apt-get", "update"], env=env, capture_output=True)
        r = subprocess.run(install, env=env, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(HEADER):
        raise RuntimeError(
            "apt-get install libhypre-dev failed:\n" + r.stdout[-2000:] + r.stderr[-2000:]
        )


def build_driver(workdir: str) -> str:
    """Compile hypre_driver.c (once per source version) and return its path."""
    with open(SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    exe = os.path.join(workdir, f"hypre_driver-{digest}")
    if os.path.exists(exe):
        return exe
    os.makedirs(workdir, exist_ok=True)
    cmd = ["mpicc", "-O2", "-I/usr/include/hypre", "-o", exe + ".part", SOURCE, "-lHYPRE", "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("compiling hypre_driver.c failed:\n" + r.stderr)
    os.replace(exe + ".part", exe)
    return exe


def installed_version() -> str:
    try:
        r = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "libhypre-dev"], capture_output=True, text=True
        )
        return r.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def run(
    exe: str,
    binfile: str,
    xout: str,
    *,
    krylov: str = "pcg",
    theta: float = 0.25,
    coarsen: int = 10,
    relax: str = "l1gs",
    tol: float = 1e-8,
    maxit: int = 500,
    np_ranks: int = 1,
    timeout: float = 600.0,
    extra: list[str] | None = None,
) -> dict:
    """Run the driver; returns its RESULT dict (x is written to xout, float64[n])."""
    if relax == "l1gs":
        rlx = ["-relax_down", "13", "-relax_up", "14"]
    elif relax == "l1jacobi":
        rlx = ["-relax_down", "18", "-relax_up", "18"]
    else:
        raise ValueError(f"relax must be l1gs or l1jacobi, not {relax!r}")
    cmd = [
        exe,
        "-in",
        binfile,
        "-out",
        xout,
        "-krylov",
        krylov,
        "-theta",
        str(theta),
        "-coarsen",
        str(coarsen),
        "-interp",
        "6",
        "-pmax",
        "4",
        "-tol",
        repr(tol),
        "-maxit",
        str(maxit),
        "-kdim",
        "30",
        "-relax_coarse",
        "9",
        *rlx,
        *(extra or []),
    ]
    env = dict(os.environ)
    if np_ranks > 1:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        cmd = ["mpirun", "-np", str(np_ranks), "--oversubscribe", "--bind-to", "none"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    if r.returncode != 0 or not lines:
        raise RuntimeError(
            f"hypre_driver failed (rc {r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        )
    res = json.loads(lines[-1][len("RESULT ") :])
    coarsen_name = {10: "HMIS", 8: "PMIS", 6: "Falgout"}.get(coarsen, str(coarsen))
    res["settings"] = (
        f"{krylov.upper()} + BoomerAMG: {coarsen_name}, ext+i (6), Pmax 4, "
        f"theta {theta:g}, max_row_sum 0.9, "
        f"{'l1-GS fwd/bwd (13/14)' if relax == 'l1gs' else 'l1-Jacobi (18)'}, "
        f"GE coarse (9), V(1,1), tol {tol:g}"
        + (", GMRES(30)" if krylov == "gmres" else "")
        + (f", driver flags {' '.join(extra)}" if extra else "")
    )
    return res


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("binfile")
    ap.add_argument("--workdir", default="/tmp/jaxamg-bench")
    ap.add_argument("--krylov", default="pcg")
    ap.add_argument("--theta", type=float, default=0.25)
    ap.add_argument("--coarsen", type=int, default=10)
    ap.add_argument("--relax", default="l1gs")
    ap.add_argument("--np", type=int, default=1)
    a = ap.parse_args()
    ensure_installed()
    exe = build_driver(a.workdir)
    out = run(
        exe,
        a.binfile,
        os.path.join(a.workdir, "x_hypre.bin"),
        krylov=a.krylov,
        theta=a.theta,
        coarsen=a.coarsen,
        relax=a.relax,
        np_ranks=a.np,
    )
    json.dump(out, sys.stdout, indent=1)
    print()
