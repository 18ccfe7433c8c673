// The host solvers IDR and IDRMSYNC as the batched solves see them: the
// shape of the one IDR(s) method (idr_method.h) that a solve of theirs runs.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "solvers/krylov/idr_method.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg::krylov {

template <class T>
class IdrSolver : public KrylovSolver<T> {
 public:
  IdrSolver(SolverContext& ctx, const std::string& scope, bool synchronised)
      : KrylovSolver<T>(ctx, scope, synchronised ? "IDRMSYNC" : "IDR", true),
        synchronised_(synchronised) {
    s_param_ = this->positive_param("subspace_dim_s");
  }

  // The shape of a solve over `global_rows` rows whose first row on this
  // process is `first_row`: s = subspace_dim_s, at most the rows (more
  // shadow vectors cannot be independent).
  IdrShape shape(int64_t global_rows, int64_t first_row) const {
    IdrShape sh;
    sh.s = static_cast<int>(std::min<int64_t>(s_param_, global_rows));
    sh.synchronised = synchronised_;
    sh.preconditioned = this->has_preconditioner();
    sh.first_row = first_row;
    return sh;
  }

 private:
  bool synchronised_;
  int s_param_ = 8;  // subspace_dim_s
};

}  // namespace jaxamg::krylov
