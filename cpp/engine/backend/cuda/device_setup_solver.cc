#include "backend/cuda/device_setup_solver.h"

#include "backend/cuda/setup/device_aggregation_setup.h"
#include "backend/cuda/setup/device_classical_setup.h"
#include "config/config.h"
#include "core/error.h"
#include "solvers/factory.h"

namespace jaxamg::cuda {

namespace {

// The outer methods that apply their "preconditioner" (CG and BICGSTAB
// ignore it, as in AmgX).
bool preconditioned_method(const std::string& name) {
  return name == "PCG" || name == "PCGF" || name == "PBICGSTAB";
}

}  // namespace

template <class T>
DeviceSetupSolver<T>::DeviceSetupSolver(const std::string& config_text)
    : ctx_(std::make_unique<SolverContext>()) {
  ctx_->config = Config::parse(config_text);
  top_ = create_solver<T>(*ctx_, ctx_->config.top_solver());
  why_ = check_config();
}

template <class T>
std::string DeviceSetupSolver<T>::check_config() {
  const Config& cfg = ctx_->config;
  const Solver<T>& top = *top_;
  std::string why = DeviceSolver<T>::unsupported_method(top);
  if (!why.empty()) return why;
  if (top.name() == "AMG") {
    amg_scope_ = top.scope();
  } else if (!preconditioned_method(top.name())) {
    return "solver " + top.name() + " (no AMG preconditioner to set up on the GPU)";
  } else {
    const SolverRef p = cfg.get_solver("preconditioner", top.scope());
    if (p.name != "AMG") return "preconditioner " + p.name + " of " + top.name();
    // The host's create_child rejects it with a ConfigError that names the fix.
    if (p.scope == "default") return "an AMG preconditioner in the default scope";
    amg_scope_ = p.scope;
  }
  const std::string& s = amg_scope_;
  const std::string algorithm = cfg.get_string("algorithm", s);
  if (algorithm != "AGGREGATION" && algorithm != "CLASSICAL") {
    return "AMG algorithm " + algorithm + " (scope '" + s + "')";
  }
  if (cfg.get_string("x_amg_precision", s) != "SAME") {
    return "x_amg_precision " + cfg.get_string("x_amg_precision", s) + " (scope '" + s + "')";
  }
  if (s != top.scope() && cfg.get_int("monitor_residual", s) != 0) {
    return "an AMG preconditioner that monitors its residual";
  }
  const int reuse_levels = cfg.get_int("structure_reuse_levels", s);
  if (reuse_levels > 0) {
    return "structure_reuse_levels " + std::to_string(reuse_levels) + " (scope '" + s +
           "'; partial structure reuse)";
  }
  if (algorithm == "CLASSICAL" && reuse_levels < 0) {
    // The host keeps P's pattern and recomputes its weights.
    return "structure_reuse_levels " + std::to_string(reuse_levels) + " with algorithm CLASSICAL (scope '" +
           s + "')";
  }
  try {
    if (algorithm == "CLASSICAL") {
      setup_ = std::make_unique<DeviceClassicalSetup<T>>(
          DeviceClassicalParams::from_config(cfg, s));
    } else {
      setup_ = std::make_unique<DeviceAggregationSetup<T>>(
          DeviceAggregationParams::from_config(cfg, s));
    }
  } catch (const NotSupported& e) {
    return e.what();
  }
  return DeviceAmg<T>::unsupported(*ctx_, s);
}

template <class T>
void DeviceSetupSolver<T>::drop_solvers() {
  t_solver_.reset();
  t_setup_.reset();
  solver_.reset();
}

template <class T>
void DeviceSetupSolver<T>::build_cycle() {
  drop_solvers();  // before the new one: keep one hierarchy copy at a time
  solver_ = std::make_unique<DeviceSolver<T>>(*top_, *setup_, amg_scope_);
}

template <class T>
void DeviceSetupSolver<T>::setup(const DeviceCsrView<T>& A) {
  if (!why_.empty()) {
    throw NotSupported("CUDA backend: " + why_ + " is not set up on the GPU");
  }
  drop_solvers();
  setup_->setup(A);
  build_cycle();
}

template <class T>
void DeviceSetupSolver<T>::resetup(const DeviceCsrView<T>& A) {
  if (!solver_) {
    setup(A);
    return;
  }
  // Re-read at every setup, as AmgSolver::build_levels does.
  const int reuse_levels = ctx_->config.get_int("structure_reuse_levels", amg_scope_);
  drop_solvers();
  if (reuse_levels < 0) {
    setup_->resetup(A);
  } else {
    setup_->setup(A);
  }
  build_cycle();
}

template <class T>
void DeviceSetupSolver<T>::replace_values(const T* val, cudaStream_t stream) {
  if (!solver_) throw InvalidInput("DeviceSetupSolver::replace_values called before setup");
  // A^T's hierarchy is rebuilt from the new values on its next use.
  t_solver_.reset();
  t_setup_.reset();
  solver_->replace_values(val, stream);
}

template <class T>
SolveResult DeviceSetupSolver<T>::solve(const T* b, T* x, bool use_x0, cudaStream_t stream) {
  if (!solver_) throw InvalidInput("DeviceSetupSolver::solve called before setup");
  const SolveResult r = solver_->solve(b, x, use_x0, stream);
  last_bytes_ = solver_->last_solve_bytes();
  return r;
}

template <class T>
SolveResult DeviceSetupSolver<T>::solve_transposed(const DeviceCsrView<T>& A, const T* b, T* x,
                                                   bool use_x0, cudaStream_t stream) {
  if (!solver_) throw InvalidInput("DeviceSetupSolver::solve_transposed called before setup");
  if (!t_solver_) {
    // The caller's arrays were written on its stream: finish them first.
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (transposed setup)");
    t_setup_ = setup_->make_transposed(A);
    t_solver_ = std::make_unique<DeviceSolver<T>>(*top_, *t_setup_, amg_scope_);
  }
  const SolveResult r = t_solver_->solve(b, x, use_x0, stream);
  last_bytes_ = t_solver_->last_solve_bytes();
  return r;
}

template <class T>
std::vector<LevelInfo> DeviceSetupSolver<T>::hierarchy() const {
  std::vector<LevelInfo> out;
  if (!setup_) return out;
  for (int l = 0; l < setup_->num_levels(); ++l) {
    const DeviceCsrView<T> A = setup_->matrix(l);
    out.push_back(LevelInfo{A.rows, A.nnz});
  }
  return out;
}

template class DeviceSetupSolver<float>;
template class DeviceSetupSolver<double>;

}  // namespace jaxamg::cuda
