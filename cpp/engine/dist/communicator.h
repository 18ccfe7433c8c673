// A thin wrapper over an MPI communicator: rank and size, the reductions the
// solvers need, and the collective error agreement that keeps every process
// raising the same error instead of one raising while the others wait.
//
// A caller's communicator (an mpi4py communicator handed over as a Fortran
// handle) is never used directly: from_fortran and private_of communicate on
// the engine's private duplicate of it (private_comm.h), so the engine's
// collectives cannot match the caller's. The plain constructor borrows a
// communicator as it is (one the engine made itself, or in tests).
// Point-to-point messages of this library use their own tag (kHaloTag).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/distribution.h"

namespace jaxamg::dist {

constexpr int kHaloTag = 0x6a61;  // "ja"

template <class T>
MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_type<int32_t>() { return MPI_INT32_T; }
template <> inline MPI_Datatype mpi_type<int64_t>() { return MPI_INT64_T; }

// Throws std::runtime_error naming `what` and MPI's error text unless
// rc == MPI_SUCCESS.
void check_mpi(int rc, const char* what);

class Communicator : public Reducer {
 public:
  // Borrows `comm` (no duplicate).
  explicit Communicator(MPI_Comm comm);
  // The engine's private duplicate of the caller's `user`, made on first
  // use (a collective over `user`) and reused afterwards.
  static Communicator private_of(MPI_Comm user);
  // private_of the communicator with this Fortran handle (mpi4py's
  // comm.py2f()).
  static Communicator from_fortran(int64_t handle);

  MPI_Comm comm() const { return comm_; }
  // Identifies the private duplicate within this process (0 for a borrowed
  // communicator): key caches by it, not by the caller's handle, which a
  // new communicator may reuse after the old one is freed.
  uint64_t serial() const { return serial_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void sum(double* v, int count) const override;
  double max(double v) const override;
  int64_t sum_int(int64_t v) const;
  int64_t max_int(int64_t v) const;
  int64_t min_int(int64_t v) const;
  // Exclusive prefix sum over ranks (0 on rank 0).
  int64_t exclusive_scan(int64_t v) const;
  // One value per rank from every rank (metadata only: O(size) entries).
  std::vector<int64_t> allgather(int64_t v) const;

  // Every process passes its local error ("" if none) and the ErrorKind; if
  // any failed, all throw the first failing rank's error as
  // "rank R: message". Returns normally on every rank otherwise.
  void agree(const std::string& local_error, int kind) const override;
  // Runs f on this process and agrees on its outcome.
  template <class F>
  void agree_on(F&& f) const {
    int kind = 0;
    const std::string err = capture_error(f, &kind);
    agree(err, kind);
  }

 private:
  MPI_Comm comm_;
  uint64_t serial_ = 0;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace jaxamg::dist
