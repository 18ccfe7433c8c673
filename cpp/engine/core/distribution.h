// How the rows of a matrix are spread over processes, seen from the engine.
//
// A distributed matrix is a CsrMatrix holding this process's block of rows
// with its columns renumbered: [0, nrows) are the rows it owns, [nrows,
// ncols) are "ghost" columns owned by other processes. The matrix carries a
// Distribution (CsrMatrix::dist) that knows how to fetch ghost values and
// how to reduce across processes; the solvers call it through the few
// kernels of Solver<T> (matvec, residual_of, global_dot, global_norm) and
// never learn about MPI. The implementation (halo plans over MPI) lives in
// cpp/engine/dist/, a separate library, so the engine stays MPI-free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/types.h"

namespace jaxamg {

template <class T>
struct CsrMatrix;
template <class T>
class Solver;
struct SolverContext;

// A distributed system gathered on rank 0: the whole matrix once, then
// vectors on demand. For solvers that only run on one process (a dense LU
// factorisation, the coarsest level of a distributed AMG).
template <class T>
class GatheredSystem {
 public:
  virtual ~GatheredSystem() = default;
  // The whole matrix in global numbering (canonical) on rank 0; null on
  // the other processes.
  virtual std::shared_ptr<const CsrMatrix<T>> matrix() const = 0;
  // Collective. global (global_rows entries, read on rank 0 only) from
  // every process's local (its owned rows).
  virtual void gather(const T* local, T* global) const = 0;
  // Collective. Each process's owned part of global (read on rank 0).
  virtual void scatter(const T* global, T* local) const = 0;
};

// A halo exchange of packed values, for backends whose vectors do not live
// in host memory: the caller gathers its owned values at send_rows() (in
// that order) into a host buffer, and receives num_ghosts() values in the
// ghost columns' order; the reverse sends one value per ghost back to its
// owner. Collective over the processes that share the exchange.
class PackedHalo {
 public:
  virtual ~PackedHalo() = default;
  // Local rows whose values leave this process, in send order (a row sent
  // to several neighbours appears once per neighbour).
  virtual const std::vector<int32_t>& send_rows() const = 0;
  virtual int num_ghosts() const = 0;
  // ghost[k] = the value of ghost k at its owner; send: the packed values.
  virtual void exchange_packed(const float* send, float* ghost) const = 0;
  virtual void exchange_packed(const double* send, double* ghost) const = 0;
  // out[s] (send_rows().size() entries) = the value a neighbour sends back
  // for send slot s; ghost: one value per ghost column.
  virtual void reverse_packed(const float* ghost, float* out) const = 0;
  virtual void reverse_packed(const double* ghost, double* out) const = 0;
};

// Reductions over the processes of one communicator.
class Reducer {
 public:
  virtual ~Reducer() = default;
  // v[i] = sum over processes of v[i].
  virtual void sum(double* v, int count) const = 0;
  virtual double max(double v) const = 0;
  // Collective: every process passes its local error (empty if none); if any
  // process failed, every process throws the same exception (the first
  // failing process's message prefixed with "rank R: ").
  virtual void agree(const std::string& local_error, int kind) const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
};

template <class T>
class Distribution : public Reducer {
 public:
  // First global row owned by this process, and the global row count.
  virtual int64_t row_start() const = 0;
  virtual int64_t global_rows() const = 0;
  // y = A x and r = b - A x for the owned rows; x has A.nrows entries. A
  // has the structure this Distribution was built for (values may differ).
  virtual void spmv(const CsrMatrix<T>& A, const T* x, T* y) const = 0;
  virtual void residual(const CsrMatrix<T>& A, const T* x, const T* b, T* r) const = 0;
  // The ghost values of x (ncols - nrows entries, in ghost column order).
  virtual const T* ghost_values(const T* x) const = 0;
  // The same exchange on packed values (device backends).
  virtual const PackedHalo& packed_halo() const = 0;
  // Collective. A (with this Distribution's structure) gathered on rank 0.
  virtual std::unique_ptr<GatheredSystem<T>> gather_system(const CsrMatrix<T>& A) const = 0;
  // Collective. A colour per owned row such that two rows coupled in either
  // direction, through an owned or a ghost column, never share a colour;
  // with block_dim k > 1 the nodes (k consecutive rows) are coloured and a
  // node's rows share its colour. *num_colors (the same on every process)
  // is one more than the largest colour of any process.
  virtual std::vector<int> color_rows(const CsrMatrix<T>& A, Index block_dim,
                                      int* num_colors) const = 0;
  // The distributed multigrid that the engine's AMG (config scope `scope`)
  // hands its setup and cycles to on this matrix.
  virtual std::unique_ptr<Solver<T>> make_multigrid(SolverContext& ctx,
                                                    const std::string& scope) const = 0;
};

// Runs f; returns the failure's message and sets *kind (an ErrorKind), or
// returns "" if f returned normally. Turns a local failure into data that
// the processes can agree on before anyone throws.
template <class F>
std::string capture_error(F&& f, int* kind) {
  try {
    f();
  } catch (...) {
    Failure failure = classify(std::current_exception());
    *kind = static_cast<int>(failure.kind);
    return std::move(failure.message);
  }
  return std::string();
}

// Throws the exception of `kind` (an ErrorKind as int) with message `msg`.
[[noreturn]] inline void throw_error_of_kind(int kind, const std::string& msg) {
  throw_error_of_kind(static_cast<ErrorKind>(kind), msg);
}

}  // namespace jaxamg
