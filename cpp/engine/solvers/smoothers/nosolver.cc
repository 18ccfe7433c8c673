#include "solvers/smoothers/nosolver.h"

#include "backend/cpu/blas.h"

namespace jaxamg {

template <class T>
IterationResult NoSolver<T>::solve_iteration(const T* /*b*/, T* x, bool x_is_zero) {
  if (x_is_zero) cpu::fill<T>(this->rows(), T(0), x);
  return IterationResult::kContinue;
}

template class NoSolver<float>;
template class NoSolver<double>;

}  // namespace jaxamg
