// The engine's private duplicate of a caller's communicator, the way MPI
// libraries isolate their messages from the caller's.
//
// Why: JAX runs the engine's collectives asynchronously, sometimes on an XLA
// worker thread, while the Python thread may issue its own collectives
// (comm.Allreduce, ...) on the same communicator. Two collectives in flight
// on one communicator match each other in whatever order each process
// reaches them, so a process whose engine call comes first would pair it
// with another process's user call: wrong values, a truncation error or a
// hang. Messages on a duplicate (MPI_Comm_dup) never match messages on the
// original, so the engine and the caller cannot disturb each other.
//
// How: the first use of a caller communicator duplicates it (collective:
// every engine entry point on a communicator is collective, so all its
// processes reach the first use in the same order) and caches the duplicate
// as an MPI attribute on the caller's communicator. A later lookup is one
// MPI_Comm_get_attr. When the caller frees its communicator, MPI calls the
// attribute's delete callback, which frees the duplicate; a new
// communicator that reuses the freed one's handle gets a duplicate of its
// own. MPI_Comm_dup by the caller does not copy the attribute
// (MPI_COMM_NULL_COPY_FN): the copy gets its own duplicate on first use.
//
// The first use of a communicator is still one collective on the caller's
// communicator (the MPI_Comm_dup itself): it must not overlap a collective
// the caller issues on that communicator from another thread. Every later
// engine call is isolated.
//
// Threads: lookups from several threads at once are safe. Two first uses of
// one communicator wait for each other (one duplicate is made); first uses
// of different communicators run concurrently, since serialising them could
// deadlock (process 0 duplicating A while process 1 duplicates B, each
// waiting for the other). Calls from several threads at once need MPI
// initialised with MPI_THREAD_MULTIPLE (mpi4py's default); with a lower
// level the engine keeps working as long as MPI calls never overlap, and the
// duplicate still keeps the engine's messages apart from the caller's.
//
// Finalisation: duplicates of communicators still alive when MPI_Finalize
// starts (MPI_COMM_WORLD's, for one) are released by MPI_Finalize itself; an
// attribute on MPI_COMM_SELF, whose delete callbacks run first in
// MPI_Finalize, marks that point so that no callback calls MPI_Comm_free
// afterwards.
#pragma once
#include <mpi.h>

#include <cstdint>

namespace jaxamg::dist {

struct PrivateComm {
  MPI_Comm comm = MPI_COMM_NULL;  // the duplicate; owned by the attribute
  // A per-process serial number, unique to this duplicate: a communicator
  // that reuses a freed one's handle gets another, so caches keyed by it
  // never hand out state built on a freed duplicate.
  uint64_t serial = 0;
};

// The private duplicate of `user`, made on the first call for `user`
// (collective over `user` then) and cached as an attribute of `user`.
// `user` must be a valid communicator (not MPI_COMM_NULL), MPI initialised.
PrivateComm private_duplicate(MPI_Comm user);

}  // namespace jaxamg::dist
