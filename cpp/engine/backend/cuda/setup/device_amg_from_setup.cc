// DeviceAmg over a hierarchy built by DeviceAggregationSetup: the level
// matrices and transfers are copied device to device, the smoother data is
// computed on the device, and only the coarsest matrix (at most
// dense_lu_num_rows rows) goes to the host for the dense LU factorisation.
#include <memory>
#include <string>

#include "backend/cuda/device_amg.h"
#include "backend/cuda/setup/device_aggregation_setup.h"
#include "backend/cuda/setup/l1_jacobi.h"
#include "core/error.h"
#include "solvers/direct/dense_lu.h"
#include "solvers/factory.h"
#include "solvers/smoothers/jacobi_l1.h"

namespace jaxamg::cuda {

template <class T>
std::string DeviceAmg<T>::unsupported(SolverContext& ctx, const std::string& scope) {
  // The host solver's constructor parses and checks the cycle parameters.
  const AmgSolver<T> amg(ctx, scope);
  const CycleParams& p = amg.cycle_params();
  if (p.type == CycleType::kCG || p.type == CycleType::kCGF) return "the K-cycle (cycle CG/CGF)";
  if (p.error_scaling >= 2) return "error_scaling " + std::to_string(p.error_scaling);
  const SolverRef smoother = ctx.config.get_solver("smoother", scope);
  if (smoother.name != "NOSOLVER" && smoother.name != "JACOBI_L1") {
    return "smoother " + smoother.name + " (scope '" + smoother.scope +
           "') on a hierarchy built on the GPU (JACOBI_L1 or NOSOLVER are)";
  }
  const SolverRef coarse = ctx.config.get_solver("coarse_solver", scope);
  if (coarse.name != "NOSOLVER" && coarse.name != "DENSE_LU_SOLVER") {
    return "coarse solver " + coarse.name + " (scope '" + coarse.scope + "')";
  }
  return "";
}

template <class T>
DeviceAmg<T>::DeviceAmg(cusparseHandle_t handle, const DeviceAggregationSetup<T>& setup,
                        SolverContext& ctx, const std::string& scope)
    : handle_(handle) {
  const std::string why = unsupported(ctx, scope);
  if (!why.empty()) throw NotSupported("CUDA backend: " + why + " does not run on the GPU");
  const Config& cfg = ctx.config;
  {
    const AmgSolver<T> amg(ctx, scope);
    params_ = amg.cycle_params();
    max_iters_ = amg.max_iters();
  }
  const int nl = setup.num_levels();
  if (nl < 1) {
    throw InvalidInput("DeviceAmg: the device aggregation setup has no levels; call setup() on "
                       "it before building the cycle");
  }

  const SolverRef smoother = cfg.get_solver("smoother", scope);
  double w = 0;
  const bool smoothing = smoother.name != "NOSOLVER";
  if (smoothing) {
    const std::unique_ptr<Solver<T>> s = create_solver<T>(ctx, smoother);
    w = static_cast<double>(dynamic_cast<const JacobiL1Solver<T>&>(*s).relaxation_factor());
  }
  // AmgSolver::setup_smoothers: the coarse solver, unless dropped for size.
  const SolverRef coarse = cfg.get_solver("coarse_solver", scope);
  const int dense_lu_max_rows = cfg.get_int("dense_lu_max_rows", scope);
  bool want_coarse = coarse.name != "NOSOLVER";
  if (coarse.name == "DENSE_LU_SOLVER" && dense_lu_max_rows > 0 &&
      setup.level(nl - 1).rows() > dense_lu_max_rows) {
    want_coarse = false;
  }

  levels_.resize(nl);
  for (int l = 0; l < nl; ++l) {
    const auto& S = setup.level(l);
    Level& L = levels_[l];
    const Index n = S.rows();
    L.A.copy_device(handle_, n, n, S.A.nnz, S.A.ptr, S.A.col, S.A.val);
    if (l + 1 < nl) {
      const Index nc = setup.level(l + 1).rows();
      L.P.copy_device(handle_, n, nc, n, S.p_ptr.data(), S.agg.of.data(), S.ones.data());
      L.R.copy_device(handle_, nc, n, n, S.agg.ptr.data(), S.agg.members.data(), S.ones.data());
    }
    if (l > 0) {
      L.b.resize(n);
      L.x.resize(n);
    }
    L.r.resize(n);
    const bool solved = l + 1 == nl && want_coarse;  // no smoother beside the coarse solver
    if (smoothing && !solved) {
      L.smoother = SmootherKind::kDiagonal;
      L.diag.resize(n);
      l1_scaled_inverse_diagonal(S.A, w, L.diag.data());
    }
  }
  if (want_coarse) {
    auto Ac = std::make_shared<CsrMatrix<T>>(setup.download_matrix(nl - 1));
    const std::unique_ptr<Solver<T>> lu = create_solver<T>(ctx, coarse);
    lu->setup(Ac);
    set_coarse_inverse(dynamic_cast<const DenseLUSolver<T>&>(*lu));
  }
}

template std::string DeviceAmg<float>::unsupported(SolverContext&, const std::string&);
template std::string DeviceAmg<double>::unsupported(SolverContext&, const std::string&);
template DeviceAmg<float>::DeviceAmg(cusparseHandle_t, const DeviceAggregationSetup<float>&,
                                     SolverContext&, const std::string&);
template DeviceAmg<double>::DeviceAmg(cusparseHandle_t, const DeviceAggregationSetup<double>&,
                                      SolverContext&, const std::string&);

}  // namespace jaxamg::cuda
