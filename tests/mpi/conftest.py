"""Fixtures of the MPI tests, which run under mpirun: every rank runs pytest
on the same files, so every test must issue the same collectives on every
rank and decide pass/fail from values shared by all ranks (mpi_testing.py).

Outside an MPI launch (the plain `pytest` of the serial suite) nothing here
is collected. Without mpi4py every test module skips itself.
"""

import faulthandler
import os

import pytest

# Set by Open MPI's mpirun (OMPI_*), by Hydra/PMI launchers (PMI_*) and PMIx.
LAUNCHED = any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))
if LAUNCHED:
    import jax

    jax.config.update("jax_enable_x64", True)
else:
    collect_ignore_glob = ["test_*.py"]

# A test still running after this long is taken as a hang (a rank waiting in a
# collective another rank never reached): the rank prints every thread's
# stack and exits, which makes mpirun stop all ranks and fail.
HANG_SECONDS = float(os.environ.get("JAXAMG_MPI_TEST_TIMEOUT", "600"))


@pytest.fixture(autouse=True)
def _fail_on_hang():
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="session")
def comm():
    MPI = pytest.importorskip("mpi4py.MPI")
    return MPI.COMM_WORLD
