// Flexible GMRES (AmgX's FGMRES): the preconditioned vectors z_j = M_j^{-1} v_j
// are stored, so the preconditioner may change from one application to the
// next (an AMG cycle, an inner Krylov solve) and the correction is Z y.
// gmres_krylov_dim = k with 0 < k < m bounds the memory (truncated FGMRES,
// see gmres_method.h); 0 means the restart length. The method is
// gmres_method.h, run on the CPU backend by gmres_cycle.h.
#include "core/error.h"
#include "solvers/krylov/gmres_cycle.h"

namespace jaxamg {

namespace {

template <class T>
class Fgmres final : public krylov::GmresCycle<T> {
 public:
  Fgmres(SolverContext& ctx, const std::string& scope)
      : krylov::GmresCycle<T>(ctx, scope, "FGMRES", /*flexible=*/true) {
    const int k = this->param_int("gmres_krylov_dim");
    if (k < 0) {
      throw ConfigError("gmres_krylov_dim: FGMRES (scope '" + scope +
                        "') needs 0 (the restart length) or a positive number of vectors, got " +
                        std::to_string(k) + "; set gmres_krylov_dim to 0 or more");
    }
    this->window_ = k;
  }
};

}  // namespace

template <class T>
std::unique_ptr<Solver<T>> make_fgmres(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<Fgmres<T>>(ctx, scope);
}

template std::unique_ptr<Solver<float>> make_fgmres<float>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<double>> make_fgmres<double>(SolverContext&, const std::string&);

}  // namespace jaxamg
