"""Runtime requirements of the sharded interface, checked with clear errors.

The sharded interface runs one MPI rank per JAX process on a
one-dimensional mesh whose device ``i`` belongs to MPI rank ``i``: each
process uses exactly one mesh device (a CPU device or a GPU), whatever
other local devices it sees (a node whose processes each see every GPU, as
``jax.distributed.initialize`` sets it up). These checks run at the start of
every ``make_sharded_*`` call. Facts that can differ between ranks are
agreed with one allgather, so every rank raises the same error instead of
some ranks waiting in a collective the others never reach.

As in JAX-AMG, a JAX process count or index that does not match the
communicator's size or the rank raises ValueError; a missing
``jax.distributed.initialize`` and an unsupported JAX or device raise
RuntimeError.
"""

from __future__ import annotations

from typing import Any

from .._core.xla_setup import cpu_collectives_problem
from .._dist.comm import check_comm, require_mpi4py, run_and_agree

_HINT_INIT = (
    'call jax.distributed.initialize(cluster_detection_method="mpi4py") at the start of the '
    "program, before any JAX computation or device query, and launch it with mpirun"
)


def resolve_comm(comm: Any, where: str) -> Any:
    """`comm`, or MPI.COMM_WORLD when None."""
    if comm is None:
        return require_mpi4py(where).COMM_WORLD
    check_comm(comm, where)
    return comm


def _local_problem(comm: Any, where: str) -> Exception | None:
    """What is wrong with this process's JAX setup for `comm` (the exception
    to raise), or None."""
    import jax

    if not (hasattr(jax, "shard_map") and hasattr(jax, "set_mesh")):
        return RuntimeError(
            f"`{where}` needs JAX >= 0.10 (jaxamg's minimum, with jax.shard_map and "
            f"jax.set_mesh); this is JAX {jax.__version__}. Upgrade JAX."
        )
    size, rank = comm.Get_size(), comm.Get_rank()
    if jax.process_count() == 1 and size > 1:
        initialized = jax.distributed.is_initialized()
        detail = (
            "jax.distributed is initialised but this process sees only itself"
            if initialized
            else "jax.distributed.initialize() was not called"
        )
        return RuntimeError(
            f"`{where}`: the communicator has {size} ranks but JAX runs a single process "
            f"({detail}); {_HINT_INIT}."
        )
    if jax.process_count() != size:
        return ValueError(
            f"`{where}`: the JAX process count and the communicator size must match, got "
            f"{jax.process_count()} JAX processes and {size} MPI ranks. Sub-communicators are "
            "not supported: pass MPI.COMM_WORLD (the default) and let "
            'jax.distributed.initialize(cluster_detection_method="mpi4py") number the processes.'
        )
    if jax.process_index() != rank:
        return ValueError(
            f"`{where}`: the JAX process index must equal the MPI rank, but MPI rank {rank} of "
            f"{size} is JAX process {jax.process_index()}. Sub-communicators are not "
            "supported: pass MPI.COMM_WORLD (the default) and let "
            'jax.distributed.initialize(cluster_detection_method="mpi4py") number the processes.'
        )
    platform = jax.local_devices()[0].platform
    if platform not in ("cpu", "gpu"):
        return RuntimeError(
            f"`{where}`: the local devices of rank {rank} are {platform!r} devices; "
            "the sharded interface runs on one CPU device or one GPU per process."
        )
    message = cpu_collectives_problem(jax, where)
    return None if message is None else RuntimeError(message)


def check_runtime(comm: Any, where: str) -> None:
    """Raises (on every rank alike) when this job does not meet the sharded
    interface's requirements. Collective over `comm`."""

    def describe(problem):
        return None if problem is None else (type(problem).__name__, str(problem))

    _, problems = run_and_agree(comm, lambda: _local_problem(comm, where), extra=describe)
    for problem in problems:
        if problem is not None:
            kind, message = problem
            raise (ValueError if kind == "ValueError" else RuntimeError)(message)


def default_mesh(comm: Any, axis_name: str):
    """A 1-D mesh with one device per process, in process order: each
    process's first device (all of them when each process has one)."""
    import jax

    size = comm.Get_size()
    first: dict[int, Any] = {}
    for device in jax.devices():
        first.setdefault(device.process_index, device)
    devices = [first[p] for p in sorted(first)][:size]
    return jax.make_mesh((size,), (axis_name,), devices=devices)


def check_mesh(mesh: Any, comm: Any, axis_name: Any, where: str) -> None:
    """`mesh` must be a 1-D mesh named `axis_name` whose device i lives on
    MPI rank i (so each process owns exactly one mesh device, whatever other
    local devices it has). The mesh is the same object on every rank, so
    every rank reaches the same verdict without communication."""
    import jax

    if not isinstance(mesh, jax.sharding.Mesh):
        raise TypeError(
            f"`{where}`: `mesh` must be a jax.sharding.Mesh (e.g. jax.make_mesh((nranks,), "
            f"('rank',))), got {type(mesh).__name__}."
        )
    if not isinstance(axis_name, str):
        raise TypeError(f"`{where}`: `axis_name` must be a string, got {axis_name!r}.")
    if tuple(mesh.axis_names) != (axis_name,):
        raise ValueError(
            f"`{where}`: the mesh must be one-dimensional with the axis {axis_name!r}, got axes "
            f"{tuple(mesh.axis_names)} of sizes {tuple(mesh.devices.shape)}; pass "
            f"mesh=jax.make_mesh((nranks,), ({axis_name!r},)) or axis_name= matching the mesh."
        )
    size = comm.Get_size()
    if mesh.devices.size != size:
        raise ValueError(
            f"`{where}`: the mesh has {mesh.devices.size} devices but the communicator has "
            f"{size} ranks; the mesh needs exactly one device per rank."
        )
    owners = [d.process_index for d in mesh.devices.flat]
    if owners != list(range(size)):
        raise ValueError(
            f"`{where}`: mesh device i must belong to MPI rank i, but the devices belong to "
            f"processes {owners}; build it from one device per process in process order "
            f"(jax.make_mesh(({size},), ({axis_name!r},), devices=[next(d for d in "
            f"jax.devices() if d.process_index == p) for p in range({size})]), or leave "
            "mesh=None for that default)."
        )


def setup(comm: Any, mesh: Any, axis_name: Any, where: str):
    """The checked ``(comm, mesh)`` of a sharded call (defaults filled in)."""
    comm = resolve_comm(comm, where)
    check_runtime(comm, where)
    if mesh is None:
        mesh = default_mesh(comm, axis_name)
    check_mesh(mesh, comm, axis_name, where)
    return comm, mesh
