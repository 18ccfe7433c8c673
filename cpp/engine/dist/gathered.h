// A distributed matrix gathered on rank 0 (GatheredSystem): its rows, with
// global column ids, travel once at construction; vectors are gathered and
// scattered along the same row counts. The distributed AMG consolidates its
// coarsest level with it, and a one-process solver (DENSE_LU_SOLVER) runs on
// a distributed matrix through it.
#pragma once
#include <memory>
#include <vector>

#include "dist/dist_matrix.h"

namespace jaxamg::dist {

template <class T>
class Gathered final : public GatheredSystem<T> {
 public:
  // Collective. `op` is A's Distribution.
  Gathered(const DistOperator<T>& op, const CsrMatrix<T>& A, const std::string& what);

  std::shared_ptr<const CsrMatrix<T>> matrix() const override { return matrix_; }
  void gather(const T* local, T* global) const override;
  void scatter(const T* global, T* local) const override;

 private:
  Communicator comm_;
  int n_local_;                       // owned rows of this process
  std::vector<int> counts_, displs_;  // on rank 0: owned rows per process, offsets
  std::shared_ptr<const CsrMatrix<T>> matrix_;
};

}  // namespace jaxamg::dist
