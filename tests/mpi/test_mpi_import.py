"""jaxamg.mpi_utils without mpi4py: importing it and the partition helpers
need no MPI; the communicating functions say how to get mpi4py. (These run
with or without mpi4py, so the suite never ends with nothing collected.)"""

import importlib.util
import subprocess
import sys

import pytest

HAS_MPI4PY = importlib.util.find_spec("mpi4py") is not None


def test_partition_helpers_work_without_mpi():
    from jaxamg import mpi_utils

    assert mpi_utils.get_partition_info(10, 0, 3) == (0, 4, 4)
    assert mpi_utils.get_partition_info(10, 2, 3) == (7, 10, 3)


def test_importing_mpi_utils_does_not_load_mpi4py():
    probe = "import sys, jaxamg.mpi_utils; print('mpi4py' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.skipif(HAS_MPI4PY, reason="mpi4py is installed")
def test_gather_without_mpi4py_says_how_to_install_it():
    import numpy as np

    from jaxamg import mpi_utils

    with pytest.raises(ImportError, match="pip install mpi4py"):
        mpi_utils.gather_vector(np.ones(3), comm=None)
