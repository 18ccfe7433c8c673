"""Runtime requirements of the sharded interface, checked with clear errors.

The sharded interface runs one MPI rank per JAX process with exactly one
local device (a CPU device or a GPU), on a one-dimensional mesh whose device
``i`` belongs to MPI rank ``i``. These checks run at the start of every
``make_sharded_*`` call. Facts that can differ between ranks are agreed with
one allgather, so every rank raises the same error instead of some ranks
waiting in a collective the others never reach.
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


def _local_problem(comm: Any, where: str) -> str | None:
    """What is wrong with this process's JAX setup for `comm`, or None."""
    import jax

    if not (hasattr(jax, "shard_map") and hasattr(jax, "set_mesh")):
        return (
            f"`{where}` needs JAX >= 0.9 (jax.shard_map and jax.set_mesh); this is JAX "
            f"{jax.__version__}. Upgrade JAX."
        )
    size, rank = comm.Get_size(), comm.Get_rank()
    if jax.process_count() == 1 and size > 1:
        initialized = jax.distributed.is_initialized()
        detail = (
            "jax.distributed is initialised but this process sees only itself"
            if initialized
            else "jax.distributed.initialize() was not called"
        )
        return (
            f"`{where}`: the communicator has {size} ranks but JAX runs a single process "
            f"({detail}); {_HINT_INIT}."
        )
    if jax.process_count() != size or jax.process_index() != rank:
        return (
            f"`{where}`: the communicator must span every JAX process in order, but MPI rank "
            f"{rank} of {size} is JAX process {jax.process_index()} of {jax.process_count()}. "
            "Sub-communicators are not supported: pass MPI.COMM_WORLD (the default) and let "
            'jax.distributed.initialize(cluster_detection_method="mpi4py") number the processes.'
        )
    devices = jax.local_devices()
    if len(devices) != 1:
        return (
            f"`{where}`: each process must own exactly one local JAX device, but rank {rank} has "
            f"{len(devices)} ({', '.join(str(d) for d in devices)}). On GPUs keep every GPU "
            "visible and let jax.distributed.initialize pick one per process (do not remap each "
            "rank to CUDA ordinal 0); on CPU do not set JAX_NUM_CPU_DEVICES or "
            "--xla_force_host_platform_device_count."
        )
    if devices[0].platform not in ("cpu", "gpu"):
        return (
            f"`{where}`: the local device of rank {rank} is a {devices[0].platform!r} device; "
            "the sharded interface runs on one CPU device or one GPU per process."
        )
    return cpu_collectives_problem(jax, where)


def check_runtime(comm: Any, where: str) -> None:
    """Raises (on every rank alike) when this job does not meet the sharded
    interface's requirements. Collective over `comm`."""
    _, problems = run_and_agree(comm, lambda: _local_problem(comm, where), extra=lambda p: p)
    for message in problems:
        if message is not None:
            raise RuntimeError(message)


def default_mesh(comm: Any, axis_name: str):
    """A 1-D mesh over the first `comm.size` global devices (device i on
    process i, as jax.distributed numbers them)."""
    import jax

    size = comm.Get_size()
    return jax.make_mesh((size,), (axis_name,), devices=jax.devices()[:size])


def check_mesh(mesh: Any, comm: Any, axis_name: Any, where: str) -> None:
    """`mesh` must be a 1-D mesh named `axis_name` whose device i lives on
    MPI rank i. The mesh is the same object on every rank, so every rank
    reaches the same verdict without communication."""
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
            f"processes {owners}; build the mesh from jax.devices() in process order "
            f"(jax.make_mesh(({size},), ({axis_name!r},), devices=jax.devices()[:{size}]))."
        )


def setup(comm: Any, mesh: Any, axis_name: Any, where: str):
    """The checked ``(comm, mesh)`` of a sharded call (defaults filled in)."""
    comm = resolve_comm(comm, where)
    check_runtime(comm, where)
    if mesh is None:
        mesh = default_mesh(comm, axis_name)
    check_mesh(mesh, comm, axis_name, where)
    return comm, mesh
