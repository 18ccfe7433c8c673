// The one engine's Krylov methods (solvers/krylov/cg_method.h,
// bicgstab_method.h) on the CUDA backend (backend/cuda/vector_backend.cuh),
// driven step by step: A x = b for a matrix copied to the device, with an
// optional diagonal preconditioner z = d .* r. The same method objects run
// on the CPU backend in the host solvers, so the tests compare the two
// backends iteration by iteration; the device solver tree builds on this.
//
// Plain C++: the CUDA types stay in krylov_steps.cu.
#pragma once
#include <memory>
#include <vector>

#include "core/csr_matrix.h"
#include "solvers/solver.h"

namespace jaxamg::device {

enum class KrylovKind { kCg, kPcg, kPcgf, kBicgstab, kPbicgstab };

// Whether a CUDA device can be used by this process.
bool cuda_device_available();

template <class T>
class KrylovSteps {
 public:
  // `diagonal`: d of the preconditioner (n entries), or empty for none.
  KrylovSteps(KrylovKind kind, const CsrMatrix<T>& A, const std::vector<T>& diagonal);
  ~KrylovSteps();
  KrylovSteps(const KrylovSteps&) = delete;
  KrylovSteps& operator=(const KrylovSteps&) = delete;

  // x = x0, r = b - A x, and the method started from r (host vectors).
  void start(const std::vector<T>& b, const std::vector<T>& x0);
  // One iteration; reads the slots back to tell how it ended.
  IterationResult iterate();
  // The iterate, its recurrence residual and the method's slots, on the host.
  std::vector<T> x() const;
  std::vector<T> r() const;
  std::vector<double> slots() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jaxamg::device
