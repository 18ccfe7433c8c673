// The distributed counterpart of LinearSolver: one configured solver for one
// distributed matrix pattern. Every process passes its contiguous block of
// rows with global column indices; every call is collective over the
// communicator, and every error is raised on all processes alike.
//
//   DistLinearSolver<double> s(config_text, comm);
//   s.setup(row_start, nglobal, n_local, row_ptr, global_cols, vals, nnz);
//   auto r = s.solve(b_local, x_local, n_local, false);
//   auto t = s.solve(b_local, x_local, n_local, false, /*transpose=*/true);
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

#include "api/linear_solver.h"
#include "dist/dist_matrix.h"
#include "dist/dist_transpose.h"

namespace jaxamg::dist {

template <class T>
class DistLinearSolver {
 public:
  // Collective: checks that every process passes the same configuration.
  DistLinearSolver(const std::string& config_text, MPI_Comm comm);

  void setup(int64_t row_start, int64_t nglobal, Index n_local, const int32_t* row_ptr,
             const int32_t* col, const T* val, int64_t nnz, Index block_dim = 1);
  // New values on the same pattern (structure reuse), or only the fine
  // values (the whole hierarchy kept, JAX-AMG's reuse_setup).
  void resetup(const T* val, int64_t nnz);
  void replace_values(const T* val, int64_t nnz);

  // Solves A x = b (or A^T x = b) for this process's rows. The result
  // (status, iterations, residual, history) is identical on every process.
  SolveResult solve(const T* b, T* x, Index n, bool use_x0, bool transpose = false);

  const CsrMatrix<T>& matrix() const { return *local_.A; }
  // The set-up solver tree of A (transpose false) or of A^T, which the
  // first call for it builds (collective). A device solve reads it
  // (cuda::DeviceSolver); it lives until the next setup or value change.
  Solver<T>& tree(bool transpose);
  const RowPartition& partition() const { return part_; }
  const Communicator& comm() const { return comm_; }
  // Bytes this process sent through the fine matrix's halo plan.
  uint64_t halo_bytes_sent() const { return local_.plan->bytes_sent(); }
  std::vector<LevelInfo> hierarchy() const { return solver_->hierarchy(); }
  // The hierarchy of the adjoint's solver (empty before a transposed solve).
  std::vector<LevelInfo> transposed_hierarchy() const {
    return transposed_ ? transposed_->hierarchy() : std::vector<LevelInfo>{};
  }
  std::string take_log();
  // The grid table again, for a solve on a cached setup
  // (Solver::print_setup_stats; not collective).
  void print_setup_stats() const { solver_->print_setup_stats(); }

 private:
  void load_values(const T* val, int64_t nnz, CsrMatrix<T>& into) const;

  Communicator comm_;
  std::unique_ptr<SolverContext> ctx_;
  RowPartition part_;
  LocalMatrix<T> local_;
  int64_t input_nnz_ = 0;
  std::unique_ptr<Solver<T>> solver_;
  std::unique_ptr<Solver<T>> transposed_;  // built on the first transposed solve
  // A^T and where A's entries land in it, built on the first transposed
  // solve and kept across value changes (only values travel then).
  LocalMatrix<T> At_;
  TransposeMap at_map_;
};

}  // namespace jaxamg::dist
