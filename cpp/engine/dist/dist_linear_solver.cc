#include "dist/dist_linear_solver.h"

#include <cmath>

#include "core/error.h"
#include "solvers/factory.h"

namespace jaxamg::dist {

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

template <class T>
DistLinearSolver<T>::DistLinearSolver(const std::string& config_text, MPI_Comm comm)
    : comm_(comm), ctx_(std::make_unique<SolverContext>()) {
  // Configs that differ across processes would run different collectives.
  const int64_t h = static_cast<int64_t>(fnv1a(config_text) >> 1);
  if (comm_.min_int(h) != comm_.max_int(h)) {
    throw ConfigError("config: the processes of the communicator passed different "
                      "configurations; every process must pass the same config");
  }
  comm_.agree_on([&] { ctx_->config = Config::parse(config_text); });
}

template <class T>
void DistLinearSolver<T>::setup(int64_t row_start, int64_t nglobal, Index n_local,
                                const int32_t* row_ptr, const int32_t* col, const T* val,
                                int64_t nnz, Index block_dim) {
  part_ = RowPartition::build(comm_, row_start, n_local, nglobal, block_dim);
  local_ = localize(comm_, part_, GlobalRows<T>{row_ptr, col, val, nnz}, block_dim);
  input_nnz_ = nnz;
  transposed_.reset();
  At_ = LocalMatrix<T>();
  solver_.reset();
  // The same config everywhere: a ConfigError is raised on every process.
  comm_.agree_on([&] { solver_ = create_solver<T>(*ctx_, ctx_->config.top_solver()); });
  solver_->setup(local_.A, false);
}

template <class T>
void DistLinearSolver<T>::load_values(const T* val, int64_t nnz, CsrMatrix<T>& into) const {
  comm_.agree_on([&] {
    if (nnz != input_nnz_) {
      throw InvalidInput("A: new values have " + std::to_string(nnz) +
                         " entries but this process's rows were set up with " +
                         std::to_string(input_nnz_) + "; pass values for the same pattern");
    }
    for (int64_t k = 0; k < nnz; ++k) {
      if (!std::isfinite(static_cast<double>(val[k]))) {
        throw InvalidInput("A: value " + std::to_string(k) +
                           " is NaN or infinite; pass finite values");
      }
    }
  });
  if (local_.value_map.empty()) {
    std::copy(val, val + nnz, into.val.begin());
  } else {
    std::fill(into.val.begin(), into.val.end(), T(0));
    for (int64_t k = 0; k < nnz; ++k) into.val[local_.value_map[k]] += val[k];
  }
}

template <class T>
void DistLinearSolver<T>::resetup(const T* val, int64_t nnz) {
  if (!local_.A) throw InvalidInput("resetup called before setup");
  auto A = std::make_shared<CsrMatrix<T>>(*local_.A);  // keeps dist: same structure
  load_values(val, nnz, *A);
  local_.A = A;
  transposed_.reset();
  solver_->setup(local_.A, true);
}

template <class T>
void DistLinearSolver<T>::replace_values(const T* val, int64_t nnz) {
  if (!local_.A) throw InvalidInput("replace_values called before setup");
  load_values(val, nnz, *local_.A);
  transposed_.reset();
}

template <class T>
SolveResult DistLinearSolver<T>::solve(const T* b, T* x, Index n, bool use_x0, bool transpose) {
  if (!local_.A) throw InvalidInput("solve called before setup");
  comm_.agree_on([&] {
    if (n != local_.A->nrows) {
      throw InvalidInput("b: has " + std::to_string(n) + " entries but this process owns " +
                         std::to_string(local_.A->nrows) + " rows; pass one entry per local row");
    }
    for (Index i = 0; i < n; ++i) {
      if (!std::isfinite(static_cast<double>(b[i]))) {
        throw InvalidInput("b: local entry " + std::to_string(i) +
                           " is NaN or infinite; pass finite values");
      }
    }
  });
  return run_solve(tree(transpose), b, x, use_x0);
}

template <class T>
Solver<T>& DistLinearSolver<T>::tree(bool transpose) {
  if (!local_.A) throw InvalidInput("solve called before setup");
  if (!transpose) return *solver_;
  {
    if (!transposed_) {
      if (!At_.A) {
        At_ = dist::transpose(comm_, part_, *local_.A, local_.ghosts, *local_.plan, &at_map_);
      } else {
        // Same structure, new values: one exchange of the moved values.
        auto At = std::make_shared<CsrMatrix<T>>(*At_.A);
        transpose_values(comm_, *local_.plan, at_map_, *local_.A, *At);
        At_.A = At;
      }
      transposed_ = solver_->make_transposed(At_.A);
    }
  }
  return *transposed_;
}

template <class T>
std::string DistLinearSolver<T>::take_log() {
  return ctx_->take_log();
}

template class DistLinearSolver<float>;
template class DistLinearSolver<double>;

}  // namespace jaxamg::dist
