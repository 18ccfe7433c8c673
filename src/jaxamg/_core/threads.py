"""OpenMP settings applied before the native modules load.

The engine's OpenMP threads share the cores with XLA's own thread pool (and
with other processes under MPI). OpenMP's default is to spin long between
parallel regions, which then steals cycles from everything else: on a busy
2-core machine a small AMG setup took 40 times longer spinning than
sleeping. Sleeping at once, though, makes every parallel region pay a
futex wake-up: a jitted CG solve of a 10^4-unknown system (28 iterations,
a few regions each) took 8 ms instead of 0.6 ms. So, unless the user chose
otherwise, idle engine threads spin briefly and then sleep
(``OMP_WAIT_POLICY=passive`` with ``GOMP_SPINCOUNT=10000``, some microseconds
of spinning: back-to-back regions within a solve find their threads awake,
while threads idle between solves sleep). The variables are read once, when
the OpenMP runtime starts, so this must run before the first native import.
"""

import os


def configure_openmp() -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")
