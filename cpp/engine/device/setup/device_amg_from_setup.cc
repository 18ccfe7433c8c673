// DeviceAmg over a hierarchy built on the device (DeviceHierarchy): the level
// matrices and transfers are copied device to device, the smoother data is
// computed on the device, and only the coarsest matrix (at most
// dense_lu_num_rows rows) goes to the host for the dense LU factorisation.
#include <memory>
#include <string>

#include "core/error.h"
#include "device/device_amg.h"
#include "device/setup/device_hierarchy.h"
#include "device/setup/l1_jacobi.h"
#include "solvers/direct/dense_lu.h"
#include "solvers/factory.h"
#include "solvers/smoothers/block_jacobi.h"
#include "solvers/smoothers/chebyshev.h"
#include "solvers/smoothers/jacobi_l1.h"

namespace jaxamg::cuda {

namespace {

// What a smoother of a device-built hierarchy needs: its diagonal M^-1
// (w / l1 row norm for JACOBI_L1, w / a_ii for BLOCK_JACOBI), and for
// CHEBYSHEV the order and the configured interval. Throws NotSupported
// naming what the device cannot set up.
struct SmootherPlan {
  bool chebyshev = false;
  bool l1 = true;  // JACOBI_L1's diagonal; otherwise BLOCK_JACOBI's
  double w = 0;
  int order = 0;
  double lmin = 0, lmax = 0;
};

// The diagonal smoother `s` into `plan`; false if it is not one (a block
// BLOCK_JACOBI is not: device hierarchies are scalar).
template <class T>
bool diagonal_plan(const Solver<T>* s, SmootherPlan* plan) {
  if (const auto* l1 = dynamic_cast<const JacobiL1Solver<T>*>(s)) {
    plan->w = static_cast<double>(l1->relaxation_factor());
    return true;
  }
  if (const auto* bj = dynamic_cast<const BlockJacobiSolver<T>*>(s)) {
    plan->l1 = false;
    plan->w = static_cast<double>(bj->relaxation_factor());
    return true;
  }
  return false;
}

template <class T>
SmootherPlan smoother_plan(SolverContext& ctx, const SolverRef& smoother) {
  SmootherPlan plan;
  const std::unique_ptr<Solver<T>> s = create_solver<T>(ctx, smoother);
  if (diagonal_plan(s.get(), &plan)) return plan;
  const auto* c = dynamic_cast<const ChebyshevSolver<T>*>(s.get());
  if (!c || smoother.name != "CHEBYSHEV" || !diagonal_plan(c->preconditioner(), &plan) ||
      !c->configured_bounds(&plan.lmin, &plan.lmax)) {
    throw NotSupported("smoother " + smoother.name + " (scope '" + smoother.scope +
                       "') on a hierarchy built on the GPU (JACOBI_L1, BLOCK_JACOBI, NOSOLVER, "
                       "or CHEBYSHEV with chebyshev_lambda_estimate_mode 3 on a JACOBI_L1 or "
                       "BLOCK_JACOBI preconditioner are)");
  }
  plan.chebyshev = true;
  plan.order = c->order();
  return plan;
}

}  // namespace

template <class T>
std::string DeviceAmg<T>::unsupported(SolverContext& ctx, const std::string& scope) {
  // The host solver's constructor parses and checks the cycle parameters.
  const AmgSolver<T> amg(ctx, scope);
  const std::string cycle = cycle_unsupported(amg.cycle_params());
  if (!cycle.empty()) return cycle;
  const SolverRef smoother = ctx.config.get_solver("smoother", scope);
  if (smoother.name != "NOSOLVER") {
    try {
      smoother_plan<T>(ctx, smoother);
    } catch (const NotSupported& e) {
      return e.what();
    }
  }
  const SolverRef coarse = ctx.config.get_solver("coarse_solver", scope);
  if (coarse.name != "NOSOLVER" && coarse.name != "DENSE_LU_SOLVER") {
    return "coarse solver " + coarse.name + " (scope '" + coarse.scope + "')";
  }
  return "";
}

template <class T>
DeviceAmg<T>::DeviceAmg(cusparseHandle_t handle, const DeviceHierarchy<T>& setup,
                        SolverContext& ctx, const std::string& scope)
    : handle_(handle) {
  const std::string why = unsupported(ctx, scope);
  if (!why.empty()) throw NotSupported("CUDA backend: " + why + " does not run on the GPU");
  const Config& cfg = ctx.config;
  {
    const AmgSolver<T> amg(ctx, scope);
    data_.params = amg.cycle_params();
    max_iters_ = amg.max_iters();
  }
  const int nl = setup.num_levels();
  if (nl < 1) {
    throw InvalidInput("DeviceAmg: the device hierarchy has no levels; call setup() on it "
                       "before building the cycle");
  }

  const SolverRef smoother = cfg.get_solver("smoother", scope);
  const bool smoothing = smoother.name != "NOSOLVER";
  const SmootherPlan plan = smoothing ? smoother_plan<T>(ctx, smoother) : SmootherPlan();
  // AmgSolver::setup_smoothers: the coarse solver, unless dropped for size.
  const SolverRef coarse = cfg.get_solver("coarse_solver", scope);
  const int dense_lu_max_rows = cfg.get_int("dense_lu_max_rows", scope);
  bool want_coarse = coarse.name != "NOSOLVER";
  if (coarse.name == "DENSE_LU_SOLVER" && dense_lu_max_rows > 0 &&
      setup.matrix(nl - 1).rows > dense_lu_max_rows) {
    want_coarse = false;
  }

  data_.levels.resize(nl);
  for (int l = 0; l < nl; ++l) {
    const DeviceCsrView<T> A = setup.matrix(l);
    device::DeviceAmgLevel<T>& L = data_.levels[l];
    const Index n = A.rows;
    L.A.copy_device(handle_, n, n, A.nnz, A.ptr, A.col, A.val);
    if (l + 1 < nl) {
      const Index nc = setup.matrix(l + 1).rows;
      const DeviceCsrView<T> P = setup.prolongation(l);
      const DeviceCsrView<T> R = setup.restriction(l);
      L.P.copy_device(handle_, n, nc, P.nnz, P.ptr, P.col, P.val);
      L.R.copy_device(handle_, nc, n, R.nnz, R.ptr, R.col, R.val);
    }
    const bool solved = l + 1 == nl && want_coarse;  // no smoother beside the coarse solver
    if (smoothing && !solved) {
      L.diag.resize(n);
      if (plan.l1) {
        l1_scaled_inverse_diagonal(A, plan.w, L.diag.data());
      } else {
        jacobi_scaled_inverse_diagonal(A, static_cast<T>(plan.w), L.diag.data());
      }
      L.smoother =
          plan.chebyshev ? device::DeviceSmoother::kChebyshev : device::DeviceSmoother::kDiagonal;
      if (plan.chebyshev) {
        L.order = plan.order;
        L.lmin = plan.lmin;
        L.lmax = plan.lmax;
      }
    }
  }
  if (want_coarse) {
    auto Ac = std::make_shared<CsrMatrix<T>>(setup.download_matrix(nl - 1));
    const std::unique_ptr<Solver<T>> lu = create_solver<T>(ctx, coarse);
    lu->setup(Ac);
    set_coarse_inverse(dynamic_cast<const DenseLUSolver<T>&>(*lu));
  }
  make_cycle();
}

template std::string DeviceAmg<float>::unsupported(SolverContext&, const std::string&);
template std::string DeviceAmg<double>::unsupported(SolverContext&, const std::string&);
template DeviceAmg<float>::DeviceAmg(cusparseHandle_t, const DeviceHierarchy<float>&,
                                     SolverContext&, const std::string&);
template DeviceAmg<double>::DeviceAmg(cusparseHandle_t, const DeviceHierarchy<double>&,
                                      SolverContext&, const std::string&);

}  // namespace jaxamg::cuda
