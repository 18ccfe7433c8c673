// The device solve's outer Krylov method (device/outer_krylov.h) driven step
// by step: A x = b for a matrix copied to the device, with an optional
// diagonal preconditioner z = d .* r. The same method objects run on the CPU
// backend in the host solvers, so the tests compare the two backends
// iteration by iteration.
//
// Plain C++: the CUDA types stay in krylov_steps.cu.
#pragma once
#include <memory>
#include <vector>

#include "core/csr_matrix.h"
#include "device/outer_krylov.h"
#include "solvers/solver.h"

namespace jaxamg::device {

// Whether a CUDA device can be used by this process.
bool cuda_device_available();

template <class T>
class KrylovSteps {
 public:
  // `diagonal`: d of the preconditioner (n entries), or empty for none;
  // `restart`, `window`: (F)GMRES's cycle and FGMRES's gmres_krylov_dim.
  KrylovSteps(KrylovKind kind, const CsrMatrix<T>& A, const std::vector<T>& diagonal,
              int restart = 20, int window = 0);
  ~KrylovSteps();
  KrylovSteps(const KrylovSteps&) = delete;
  KrylovSteps& operator=(const KrylovSteps&) = delete;

  // x = x0, r = b - A x, and the method started from r (host vectors).
  void start(const std::vector<T>& b, const std::vector<T>& x0);
  // One iteration; reads the slots back to tell how it ended.
  IterationResult iterate();
  // (F)GMRES: adds the pending correction of the cycle to x.
  void finalize();
  // The iterate, its recurrence residual and the method's slots, on the host.
  std::vector<T> x() const;
  std::vector<T> r() const;
  std::vector<double> slots() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jaxamg::device
