"""OpenMP settings applied before the native modules load.

The engine's OpenMP threads share the cores with XLA's own thread pool (and
with other processes under MPI). OpenMP's default is to spin between parallel
regions, which then steals cycles from everything else: on a busy 2-core
machine a small AMG setup took 40 times longer spinning than sleeping. So,
unless the user chose otherwise, idle engine threads sleep
(``OMP_WAIT_POLICY=passive``). The variable is read once, when the OpenMP
runtime starts, so this must run before the first native import.
"""

import os


def configure_openmp() -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
