#include "api/linear_solver.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/finite_check.h"
#include "solvers/factory.h"

namespace jaxamg {

template <class T>
LinearSolver<T>::LinearSolver(const std::string& config_text)
    : LinearSolver(Config::parse(config_text)) {}

template <class T>
LinearSolver<T>::LinearSolver(Config config) : ctx_(std::make_unique<SolverContext>()) {
  ctx_->config = std::move(config);
}

template <class T>
void LinearSolver<T>::check_shape(Index nrows, const Index* row_ptr, Index nnz,
                                  Index block_dim) const {
  if (nrows <= 0) {
    throw InvalidInput("A: the matrix has " + std::to_string(nrows) +
                       " rows; pass a non-empty square matrix");
  }
  if (block_dim < 1) {
    throw InvalidInput("block_dim = " + std::to_string(block_dim) +
                       " is not a block size; pass an integer >= 1");
  }
  if (nrows % block_dim != 0) {
    throw InvalidInput("A: " + std::to_string(nrows) + " rows are not divisible by block_dim = " +
                       std::to_string(block_dim) +
                       "; a block matrix needs a whole number of block rows");
  }
  if (row_ptr[0] != 0 || row_ptr[nrows] != nnz) {
    throw InvalidInput("A: row offsets must run from 0 to nnz = " + std::to_string(nnz) +
                       ", got " + std::to_string(row_ptr[0]) + " to " +
                       std::to_string(row_ptr[nrows]));
  }
  for (Index i = 0; i < nrows; ++i) {
    if (row_ptr[i + 1] < row_ptr[i]) {
      throw InvalidInput("A: row offsets must be non-decreasing; row " + std::to_string(i) +
                         " has offsets " + std::to_string(row_ptr[i]) + " > " +
                         std::to_string(row_ptr[i + 1]));
    }
  }
}

template <class T>
void LinearSolver<T>::setup(Index nrows, const Index* row_ptr, const Index* col, const T* val,
                            Index nnz, Index block_dim, const T* near_nullspace,
                            Index near_nullspace_cols) {
  check_shape(nrows, row_ptr, nnz, block_dim);
  auto A = std::make_shared<CsrMatrix<T>>();
  A->nrows = A->ncols = nrows;
  A->row_ptr.assign(row_ptr, row_ptr + nrows + 1);
  A->col.assign(col, col + nnz);
  A->val.assign(val, val + nnz);
  A->block_dim = block_dim;
  setup_matrix(std::move(A), row_ptr, col, nnz, near_nullspace, near_nullspace_cols);
}

template <class T>
void LinearSolver<T>::setup_borrowed(Index nrows, const Index* row_ptr, const Index* col,
                                     const T* val, Index nnz,
                                     std::shared_ptr<const void> keep_alive, Index block_dim,
                                     const T* near_nullspace, Index near_nullspace_cols) {
  check_shape(nrows, row_ptr, nnz, block_dim);
  auto A = std::make_shared<CsrMatrix<T>>();
  A->nrows = A->ncols = nrows;
  A->row_ptr = CsrArray<Index>::borrow(row_ptr, static_cast<std::size_t>(nrows) + 1, keep_alive);
  A->col = CsrArray<Index>::borrow(col, static_cast<std::size_t>(nnz), keep_alive);
  A->val = CsrArray<T>::borrow(val, static_cast<std::size_t>(nnz), std::move(keep_alive));
  A->block_dim = block_dim;
  setup_matrix(std::move(A), row_ptr, col, nnz, near_nullspace, near_nullspace_cols);
}

template <class T>
void LinearSolver<T>::setup_matrix(std::shared_ptr<CsrMatrix<T>> A, const Index* row_ptr,
                                   const Index* col, Index nnz, const T* near_nullspace,
                                   Index near_nullspace_cols) {
  const Index nrows = A->nrows;
  value_map_.clear();
  // canonicalize reports whether the input had unsorted or repeated columns
  // (it checks every row, in parallel, before reordering any); it leaves a
  // borrowed matrix borrowed unless it has to reorder it.
  const bool sorted = !canonicalize(*A, "A");
  if (!sorted && nnz > 0) {
    value_map_.resize(nnz);
    // Map every input entry to its canonical slot by searching its column in
    // the canonical row (columns are sorted and unique there).
    const CsrMatrix<T>& C = *A;
    for (Index i = 0; i < nrows; ++i) {
      const Index* b = C.col.data() + C.row_ptr[i];
      const Index* e = C.col.data() + C.row_ptr[i + 1];
      for (Index k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        value_map_[k] = static_cast<Index>(std::lower_bound(b, e, col[k]) - C.col.data());
      }
    }
  }
  input_nnz_ = nnz;
  A_ = std::move(A);
  transposed_.reset();
  drop_batch();
  set_near_nullspace(near_nullspace, near_nullspace_cols);
  solver_ = create_solver<T>(*ctx_, ctx_->config.top_solver());
  solver_->setup(A_, false);
  if (ctx_->near_nullspace && !ctx_->near_nullspace_used) {
    throw ConfigError("near_nullspace: " + std::to_string(near_nullspace_cols) +
                      " near-null-space vectors were given but no AMG of the config uses them; "
                      "use an AMG scope with algorithm AGGREGATION, selector x_STANDARD and "
                      "x_smoothed_aggregation 2 (the shipped config PCG_SA_NEAR_NULLSPACE)");
  }
}

template <class T>
void LinearSolver<T>::set_near_nullspace(const T* B, Index cols) {
  ctx_->near_nullspace.reset();
  ctx_->near_nullspace_used = false;
  if (cols == 0) return;
  const Index n = A_->nrows;
  if (cols < 0 || B == nullptr) {
    throw InvalidInput("near_nullspace: " + std::to_string(cols) +
                       " columns without values; pass an (n, m) array with m >= 0");
  }
  if (cols > n) {
    throw InvalidInput("near_nullspace: " + std::to_string(cols) + " vectors for " +
                       std::to_string(n) + " unknowns; pass at most n linearly independent "
                       "vectors");
  }
  auto ns = std::make_shared<NearNullspace>();
  ns->rows = n;
  ns->cols = cols;
  ns->val.resize(static_cast<std::size_t>(n) * cols);
  for (std::size_t i = 0; i < ns->val.size(); ++i) {
    const double v = static_cast<double>(B[i]);
    if (!std::isfinite(v)) {
      throw InvalidInput("near_nullspace: entry (" + std::to_string(i / cols) + ", " +
                         std::to_string(i % cols) + ") is not finite; pass finite vectors");
    }
    ns->val[i] = v;
  }
  ctx_->near_nullspace = std::move(ns);
}

template <class T>
void LinearSolver<T>::load_values(const T* val, Index nnz, CsrMatrix<T>& into) const {
  if (nnz != input_nnz_) {
    throw InvalidInput("A: new values have " + std::to_string(nnz) +
                       " entries but the matrix was set up with " + std::to_string(input_nnz_) +
                       "; pass values for the same sparsity pattern");
  }
  const std::int64_t bad = first_non_finite(val, nnz);
  if (bad < nnz) {
    throw InvalidInput("A: value " + std::to_string(bad) + " is NaN or infinite; pass finite values");
  }
  if (value_map_.empty()) {
    std::copy(val, val + nnz, into.val.begin());
  } else {
    std::fill(into.val.begin(), into.val.end(), T(0));
    for (Index k = 0; k < nnz; ++k) into.val[value_map_[k]] += val[k];
  }
}

template <class T>
void LinearSolver<T>::resetup(const T* val, Index nnz) {
  if (!A_) throw InvalidInput("resetup called before setup");
  // A fresh matrix object: the old one may be shared by levels being rebuilt.
  auto A = std::make_shared<CsrMatrix<T>>(*A_);
  load_values(val, nnz, *A);
  A_ = A;
  transposed_.reset();
  drop_batch();
  solver_->setup(A_, true);
}

template <class T>
void LinearSolver<T>::replace_values(const T* val, Index nnz) {
  if (!A_) throw InvalidInput("replace_values called before setup");
  // The solver tree holds a pointer to A_ and reads it at solve time, so
  // updating the values in place changes the operator without any setup.
  load_values(val, nnz, *A_);
  transposed_.reset();
  drop_batch();
}

template <class T>
SolveResult LinearSolver<T>::solve(const T* b, T* x, Index n, bool use_x0, bool transpose) {
  if (!A_) throw InvalidInput("solve called before setup");
  if (n != A_->nrows) {
    throw InvalidInput("b: has " + std::to_string(n) + " entries but A has " +
                       std::to_string(A_->nrows) + " rows; pass one entry per row");
  }
  const std::int64_t bad = first_non_finite(b, n);
  if (bad < n) {
    throw InvalidInput("b: entry " + std::to_string(bad) + " is NaN or infinite; pass finite values");
  }
  return run_solve(*solver_for(transpose), b, x, use_x0);
}

template <class T>
std::string LinearSolver<T>::take_log() {
  return ctx_->take_log();
}

template class LinearSolver<float>;
template class LinearSolver<double>;

}  // namespace jaxamg
