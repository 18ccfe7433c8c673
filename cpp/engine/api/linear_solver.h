// The engine's front door: one configured solver for one matrix pattern.
// Used by the nanobind module (CLI, tests) and by the FFI solver cache.
//
//   LinearSolver<double> s(config_text);
//   s.setup(csr arrays);            // full setup
//   s.resetup(new_values);          // same pattern: keep structure
//   auto r = s.solve(b, x, false);  // r.status, r.iterations, r.residual ...
//   auto t = s.solve(b, x, false, /*transpose=*/true);  // A^T x = b
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "batched/batched_krylov.h"
#include "core/csr_matrix.h"
#include "solvers/solver.h"

namespace jaxamg {

struct SolveResult {
  Status status = Status::kSuccess;
  int iterations = 0;
  double residual = -1;          // final monitored norm, -1 if not monitored
  std::vector<double> history;   // initial norm, then one per iteration
  double setup_seconds = 0;      // of the setup this solve used
  double solve_seconds = 0;
};

// Runs a set-up solver on b (x holds the initial guess if use_x0) and
// collects its result; shared by the serial and the distributed front ends.
template <class T>
SolveResult run_solve(Solver<T>& s, const T* b, T* x, bool use_x0) {
  SolveResult r;
  r.status = s.solve(b, x, !use_x0);
  r.iterations = s.iterations();
  r.residual = s.final_residual();
  r.history = s.residual_history();
  r.setup_seconds = s.setup_seconds();
  r.solve_seconds = s.solve_seconds();
  return r;
}

template <class T>
class LinearSolver {
 public:
  explicit LinearSolver(const std::string& config_text);
  explicit LinearSolver(Config config);

  // Copies and canonicalises the matrix (sorting columns, summing duplicate
  // entries), then builds the solver tree. Throws InvalidInput/ConfigError.
  // block_dim > 1 declares square block_dim x block_dim blocks with unknowns
  // interleaved node-major (row i*k + c is component c of node i): it must
  // divide nrows (InvalidInput otherwise); aggregation AMG then aggregates
  // whole nodes and BLOCK_JACOBI inverts the diagonal blocks.
  //
  // near_nullspace (optional): nrows x near_nullspace_cols values, row-major
  // (row i holds unknown i of every vector), e.g. the rigid-body modes of
  // elasticity. Smoothed aggregation (x_smoothed_aggregation 2) builds its
  // hierarchy from them; a config without it throws ConfigError.
  void setup(Index nrows, const Index* row_ptr, const Index* col, const T* val, Index nnz,
             Index block_dim = 1, const T* near_nullspace = nullptr,
             Index near_nullspace_cols = 0);
  // setup without the copy: when the caller's arrays are already canonical
  // (columns sorted and unique in every row) the solver reads row_ptr, col
  // and val in place; otherwise it copies them as setup does. The arrays
  // must stay alive and unchanged until the next setup or the solver's
  // destruction; `keep_alive` (may be null) is held that long, e.g. the
  // object that owns them. resetup and replace_values never write into
  // them: they work on an own copy (core/csr_array.h).
  void setup_borrowed(Index nrows, const Index* row_ptr, const Index* col, const T* val,
                      Index nnz, std::shared_ptr<const void> keep_alive, Index block_dim = 1,
                      const T* near_nullspace = nullptr, Index near_nullspace_cols = 0);
  // True if the fine matrix reads the caller's arrays (setup_borrowed).
  bool matrix_borrowed() const {
    return A_ && (A_->row_ptr.borrowed() || A_->col.borrowed() || A_->val.borrowed());
  }
  // New values for the pattern given to setup, in the caller's order (the
  // same layout as setup's `val`). Keeps coarsening and interpolation
  // pattern (structure_reuse) and recomputes the numbers.
  void resetup(const T* val, Index nnz);
  // Like resetup, but keeps the whole hierarchy (JAX-AMG's reuse_setup):
  // only the fine matrix values change.
  void replace_values(const T* val, Index nnz);

  // Solves A x = b (or A^T x = b). x holds the initial guess if use_x0.
  SolveResult solve(const T* b, T* x, Index n, bool use_x0, bool transpose = false);
  // Solves nrhs systems with this one setup: lane j is b = B + j*n, x = X +
  // j*n (the initial guess if use_x0). The lanes are independent (each has
  // its own iterations, status and history, as solve gives) and, where the
  // config is covered (batched/batched_krylov.h), are solved together with
  // multi-vector kernels; otherwise one after another.
  std::vector<SolveResult> solve_many(const T* B, T* X, Index n, Index nrhs, bool use_x0,
                                      bool transpose = false);

  Index rows() const { return A_ ? A_->nrows : 0; }
  Index block_dim() const { return A_ ? A_->block_dim : 1; }
  Index nnz() const { return input_nnz_; }
  const CsrMatrix<T>& matrix() const { return *A_; }
  Solver<T>& solver() { return *solver_; }
  std::vector<LevelInfo> hierarchy() const { return solver_ ? solver_->hierarchy() : std::vector<LevelInfo>{}; }
  // AmgX-layout statistics printed since the last call (then cleared).
  std::string take_log();
  // Prints again what the setup printed (the grid tables under
  // print_grid_stats), for a solve on a cached setup (Solver::print_setup_stats).
  void print_setup_stats() const {
    if (solver_) solver_->print_setup_stats();
  }
  const Config& config() const { return ctx_->config; }

 private:
  // Checks the row offsets and block size (InvalidInput) before any copy.
  void check_shape(Index nrows, const Index* row_ptr, Index nnz, Index block_dim) const;
  // setup's work after the matrix has been stored (copied or borrowed) in A.
  void setup_matrix(std::shared_ptr<CsrMatrix<T>> A, const Index* row_ptr, const Index* col,
                    Index nnz, const T* near_nullspace, Index near_nullspace_cols);
  void load_values(const T* val, Index nnz, CsrMatrix<T>& into) const;
  // The solver for A, or for A^T (built on first use from this setup).
  Solver<T>* solver_for(bool transpose);
  // Validates and stores the near null space in the context (cols 0: none).
  void set_near_nullspace(const T* B, Index cols);

  std::unique_ptr<SolverContext> ctx_;
  std::shared_ptr<CsrMatrix<T>> A_;
  std::unique_ptr<Solver<T>> solver_;
  std::unique_ptr<Solver<T>> transposed_;  // built on first transposed solve
  // solve_many's multi-vector solver and work space, kept between calls for
  // the solver it was made for (batch_for_: solver_ or transposed_) and
  // dropped with the setup it reads (wherever transposed_ is reset).
  std::unique_ptr<batched::BatchSolver<T>> batch_;
  const Solver<T>* batch_for_ = nullptr;
  void drop_batch() {
    batch_.reset();
    batch_for_ = nullptr;
  }
  Index input_nnz_ = 0;
  // value_map_[k] = canonical position of input entry k (empty if the input
  // was already canonical); duplicates map to the same position.
  std::vector<Index> value_map_;
};

}  // namespace jaxamg
