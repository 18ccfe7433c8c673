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
                                        bool transpose, LaneVector rhs, LaneVector guess, T* out)
    : enabled_(enabled), lanes_(lanes), n_(n), use_x0_(use_x0), transpose_(transpose),
      rhs_(std::move(rhs)), guess_(std::move(guess)), out_(out), slot_(lanes, -1) {}

template <class T>
SolveResult SharedMatrixLanes<T>::solve(LinearSolver<T>& solver, int64_t lane) {
  const std::size_t n = static_cast<std::size_t>(n_);
  T* sol = out_ + lane * n;
  if (!solved_) {
    solved_ = true;
    // The batch: lanes [lane, lanes) with finite inputs (the others are
    // reported FAILED by the caller's loop).
    std::vector<int64_t> batch;
    bool in_place = true;  // every lane of [lane, lanes), b one after the other
    for (int64_t l = lane; l < lanes_; ++l) {
      const T* b = rhs_(l);
      if (!finite(b, n_) || (use_x0_ && !finite(guess_(l), n_))) {
        in_place = false;
        continue;
      }
      if (b != rhs_(lane) + (l - lane) * n) in_place = false;
      slot_[l] = static_cast<int64_t>(batch.size());
      batch.push_back(l);
    }
    const Index k = static_cast<Index>(batch.size());
    if (in_place) {
      // Lane slot j is lane `lane + j`: read b and write x where they are.
      if (use_x0_) {
        for (int64_t l : batch) {
          const T* g = guess_(l);
          if (g != out_ + l * n) std::copy(g, g + n, out_ + l * n);
        }
      }
      results_ = solver.solve_many(rhs_(lane), sol, static_cast<Index>(n_), k, use_x0_,
                                   transpose_);
    } else {
      std::vector<T> B, X;
      B.reserve(batch.size() * n);
      for (int64_t l : batch) {
        B.insert(B.end(), rhs_(l), rhs_(l) + n);
        if (use_x0_) X.insert(X.end(), guess_(l), guess_(l) + n);
      }
      X.resize(B.size());
      results_ = solver.solve_many(B.data(), X.data(), static_cast<Index>(n_), k, use_x0_,
                                   transpose_);
      for (std::size_t j = 0; j < batch.size(); ++j) {
        std::copy(X.begin() + j * n, X.begin() + (j + 1) * n, out_ + batch[j] * n);
      }
    }
  }
  const int64_t j = slot_[lane];
  if (j < 0) {
    // Not in the batch: the caller checked its inputs, so solve it alone.
    if (use_x0_) std::copy(guess_(lane), guess_(lane) + n, sol);
    return solver.solve(rhs_(lane), sol, static_cast<Index>(n_), use_x0_, transpose_);
  }
  return results_[j];
}

template class SharedMatrixLanes<float>;
template class SharedMatrixLanes<double>;

}  // namespace jaxamg::ffi_handlers
