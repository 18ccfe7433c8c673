#include "shared_matrix_lanes.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace jaxamg::ffi_handlers {

namespace {

template <class T>
bool finite(const T* v, int64_t n) {
  return std::all_of(v, v + n, [](T e) { return std::isfinite(e); });
}

}  // namespace

template <class T>
SharedMatrixLanes<T>::SharedMatrixLanes(bool enabled, int64_t lanes, int64_t n, bool use_x0,
                                        bool transpose, LaneVector rhs, LaneVector guess)
    : enabled_(enabled), lanes_(lanes), n_(n), use_x0_(use_x0), transpose_(transpose),
      rhs_(std::move(rhs)), guess_(std::move(guess)), slot_(lanes, -1) {}

template <class T>
SolveResult SharedMatrixLanes<T>::solve(LinearSolver<T>& solver, int64_t lane, T* sol) {
  const std::size_t n = static_cast<std::size_t>(n_);
  if (!solved_) {
    solved_ = true;
    std::vector<T> B;
    for (int64_t l = lane; l < lanes_; ++l) {
      const T* b = rhs_(l);
      // Lanes with bad values are reported FAILED by the caller's loop.
      if (!finite(b, n_) || (use_x0_ && !finite(guess_(l), n_))) continue;
      slot_[l] = static_cast<int64_t>(B.size() / n);
      B.insert(B.end(), b, b + n);
      if (use_x0_) {
        const T* g = guess_(l);
        X_.insert(X_.end(), g, g + n);
      }
    }
    const Index k = static_cast<Index>(B.size() / n);
    X_.resize(B.size());
    results_ = solver.solve_many(B.data(), X_.data(), static_cast<Index>(n_), k, use_x0_,
                                 transpose_);
  }
  const int64_t j = slot_[lane];
  if (j < 0) {
    // Not in the batch: the caller checked its inputs, so solve it alone.
    if (use_x0_) std::copy(guess_(lane), guess_(lane) + n, sol);
    return solver.solve(rhs_(lane), sol, static_cast<Index>(n_), use_x0_, transpose_);
  }
  std::copy(X_.begin() + j * n, X_.begin() + (j + 1) * n, sol);
  return results_[j];
}

template class SharedMatrixLanes<float>;
template class SharedMatrixLanes<double>;

}  // namespace jaxamg::ffi_handlers
