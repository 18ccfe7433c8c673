"""Fixtures of the sharded-interface tests, which run under mpirun with two or
more ranks: every rank runs pytest on the same files, so every test issues
the same collectives on every rank and decides pass/fail from values shared
by all ranks (tests/mpi/mpi_testing.py).

    mpirun -n 2 python -m pytest -p no:cacheprovider tests/sharded
    (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, and
    --oversubscribe for more ranks than cores)

Outside an MPI launch of at least two processes (e.g. the plain `pytest` of
the serial suite) nothing here is collected, and this file imports neither
JAX nor mpi4py. Without mpi4py every module is skipped.
"""

import faulthandler
import importlib.util
import os
import sys
from pathlib import Path

import pytest


def _launched_size() -> int:
    # Set by Open MPI's mpirun (OMPI_*), by Hydra/PMI launchers (PMI_*).
    for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"):
        if name in os.environ:
            return int(os.environ[name])
    return 0


ACTIVE = _launched_size() > 1 and importlib.util.find_spec("mpi4py") is not None
if not ACTIVE:
    collect_ignore_glob = ["test_*.py"]
else:
    # jaxamg first (it sets XLA flags before any backend starts), then one
    # JAX process per MPI rank with one local device each.
    import jax

    import jaxamg  # noqa: F401

    # JAXAMG_TEST_LOCAL_DEVICE pins every process to one local device: the
    # way to run this suite with several processes sharing one GPU, where
    # JAX's default (device number = local rank) names devices that are not
    # there.
    pinned = os.environ.get("JAXAMG_TEST_LOCAL_DEVICE")
    jax.distributed.initialize(
        cluster_detection_method="mpi4py",
        local_device_ids=[int(pinned)] if pinned else None,
    )
    jax.config.update("jax_enable_x64", True)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "mpi"))

# A test still running after this long is taken as a hang (a rank waiting in a
# collective another rank never reached): the rank prints every thread's stack
# and exits, which makes mpirun stop all ranks and fail.
HANG_SECONDS = float(os.environ.get("JAXAMG_MPI_TEST_TIMEOUT", "240"))


def pytest_report_header(config):
    if ACTIVE:
        devices = jax.local_devices()
        return f"jax {jax.__version__}, local devices {[str(d) for d in devices]}"
    return None


@pytest.fixture(autouse=True)
def _fail_on_hang():
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="session")
def comm():
    from mpi4py import MPI

    return MPI.COMM_WORLD


@pytest.fixture
def native_mpi():
    """Skips (on every rank alike) when this build cannot solve across ranks."""
    from jaxamg._core import ffi as _ffi

    if not _ffi.mpi_available():
        pytest.skip("this jaxamg build has no native MPI module (jaxamg._mpi)")
