#include "device/device_setup_solver.h"

#include <chrono>
#include <type_traits>

#include "amg/grid_stats.h"
#include "backend/cuda/kernels.h"
#include "config/config.h"
#include "core/error.h"
#include "device/setup/device_aggregation_setup.h"
#include "device/setup/device_classical_setup.h"
#include "device/setup/device_transpose.h"
#include "solvers/factory.h"

namespace jaxamg::cuda {

namespace {

// The hierarchy of an AMG scope's algorithm, values of type U. Throws
// NotSupported for a variant the device does not build.
template <class U>
std::unique_ptr<DeviceHierarchy<U>> make_hierarchy(const Config& cfg, const std::string& scope,
                                                   const std::string& algorithm) {
  if (algorithm == "CLASSICAL") {
    return std::make_unique<DeviceClassicalSetup<U>>(DeviceClassicalParams::from_config(cfg, scope));
  }
  return std::make_unique<DeviceAggregationSetup<U>>(
      DeviceAggregationParams::from_config(cfg, scope));
}

template <class V>
std::size_t view_bytes(const DeviceCsrView<V>& M) {
  return static_cast<std::size_t>(M.rows + 1) * sizeof(Index) +
         static_cast<std::size_t>(M.nnz) * (sizeof(Index) + sizeof(V));
}

// The rows of AmgX's grid table for a device hierarchy; a level's storage is
// its matrix and transfer operators (the cycle's work vectors are not
// counted, unlike the host's table).
template <class V>
void add_grid_stats(const DeviceHierarchy<V>& h, std::vector<GridLevelStats>* out) {
  for (int l = 0; l < h.num_levels(); ++l) {
    const DeviceCsrView<V> A = h.matrix(l);
    std::size_t bytes = view_bytes(A);
    if (l + 1 < h.num_levels()) {
      bytes += view_bytes(h.prolongation(l)) + view_bytes(h.restriction(l));
    }
    out->push_back({A.rows, A.nnz, bytes});
  }
}

// The outer methods of the device that apply their "preconditioner".
bool preconditioned_method(const std::string& name) {
  device::KrylovKind kind;
  return device::krylov_kind_of(name, &kind) && device::applies_preconditioner(kind);
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
  const std::string precision = cfg.get_string("x_amg_precision", s);
  // FLOAT: a float32 hierarchy inside the float64 method (MixedPrecisionAmg).
  mixed_ = precision == "FLOAT" && std::is_same<T, double>::value;
  if (precision != "SAME" && !mixed_) {
    return "x_amg_precision " + precision + " (scope '" + s + "')";
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
    if (mixed_) {
      setup_lo_ = make_hierarchy<float>(cfg, s, algorithm);
    } else {
      setup_ = make_hierarchy<T>(cfg, s, algorithm);
    }
  } catch (const NotSupported& e) {
    return e.what();
  }
  return mixed_ ? DeviceAmg<float>::unsupported(*ctx_, s) : DeviceAmg<T>::unsupported(*ctx_, s);
}

template <class T>
DeviceCsrView<float> DeviceSetupSolver<T>::to_float(const DeviceCsrView<T>& A,
                                                    DeviceArray<float>& val) const {
  if constexpr (std::is_same<T, double>::value) {
    val.resize(A.nnz > 0 ? A.nnz : 1);
    convert<float, double>(A.nnz, A.val, val.data(), nullptr);
    // The float64 values are finite (checked by the caller): an infinity
    // here is a value beyond float32's range (MixedPrecisionAmg's check).
    DeviceArray<int> flags(2);
    check(cudaMemsetAsync(flags.data(), 0, 2 * sizeof(int)), "cudaMemsetAsync (float32 values)");
    inspect<float>(A.nnz, val.data(), nullptr, flags.data(), nullptr);
    int bad = 0;
    check(cudaMemcpy(&bad, flags.data(), sizeof(int), cudaMemcpyDeviceToHost),
          "cudaMemcpy (float32 values)");
    if (bad) {
      throw InvalidInput("A: a value does not fit float32, which the AMG of scope '" +
                         amg_scope_ + "' uses (x_amg_precision FLOAT); scale the system or set "
                         "x_amg_precision to SAME");
    }
    return {A.rows, A.nnz, A.ptr, A.col, val.data()};
  } else {
    throw NotSupported("x_amg_precision FLOAT inside a float32 solve");
  }
}

template <class T>
void DeviceSetupSolver<T>::drop_solvers() {
  t_solver_.reset();
  t_setup_.reset();
  t_setup_lo_.reset();
  solver_.reset();
}

template <class T>
void DeviceSetupSolver<T>::build_cycle(const DeviceCsrView<T>& A) {
  drop_solvers();  // before the new one: keep one hierarchy copy at a time
  if (mixed_) {
    solver_ = std::make_unique<DeviceSolver<T>>(*top_, *setup_lo_, amg_scope_, A);
  } else {
    solver_ = std::make_unique<DeviceSolver<T>>(*top_, *setup_, amg_scope_);
  }
}

template <class T>
void DeviceSetupSolver<T>::setup(const DeviceCsrView<T>& A) {
  if (!why_.empty()) {
    throw NotSupported("CUDA backend: " + why_ + " is not set up on the GPU");
  }
  const auto start = std::chrono::steady_clock::now();
  drop_solvers();
  if (mixed_) {
    setup_lo_->setup(to_float(A, val_lo_));
  } else {
    setup_->setup(A);
  }
  build_cycle(A);
  finish_setup(start);
}

template <class T>
void DeviceSetupSolver<T>::finish_setup(std::chrono::steady_clock::time_point start) {
  // The setup returns synchronised (see the header).
  solver_->set_setup_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  print_setup_stats();
}

template <class T>
void DeviceSetupSolver<T>::print_setup_stats() const {
  if (!wants_grid_stats(ctx_->config, amg_scope_)) return;
  std::vector<GridLevelStats> stats;
  if (setup_) add_grid_stats(*setup_, &stats);
  if (setup_lo_) add_grid_stats(*setup_lo_, &stats);
  ctx_->log << format_grid_stats(stats);
}

template <class T>
std::string DeviceSetupSolver<T>::take_log() {
  return ctx_->take_log();
}

template <class T>
void DeviceSetupSolver<T>::resetup(const DeviceCsrView<T>& A) {
  if (!solver_) {
    setup(A);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  // Re-read at every setup, as AmgSolver::build_levels does.
  const int reuse_levels = ctx_->config.get_int("structure_reuse_levels", amg_scope_);
  drop_solvers();
  if (mixed_) {
    const DeviceCsrView<float> lo = to_float(A, val_lo_);
    if (reuse_levels < 0) {
      setup_lo_->resetup(lo);
    } else {
      setup_lo_->setup(lo);
    }
  } else if (reuse_levels < 0) {
    setup_->resetup(A);
  } else {
    setup_->setup(A);
  }
  build_cycle(A);
  finish_setup(start);
}

template <class T>
void DeviceSetupSolver<T>::replace_values(const T* val, cudaStream_t stream) {
  if (!solver_) throw InvalidInput("DeviceSetupSolver::replace_values called before setup");
  // A^T's hierarchy is rebuilt from the new values on its next use.
  t_solver_.reset();
  t_setup_.reset();
  t_setup_lo_.reset();
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
    if (mixed_) {
      // As MixedPrecisionAmg::make_transposed: the float32 hierarchy of
      // A^T from float32(A) with its current values, inside the float64
      // method on A^T.
      DeviceArray<float> lo;
      t_setup_lo_ = setup_lo_->make_transposed(to_float(A, lo));
      DeviceArray<Index> ptr, col;
      DeviceArray<T> val;
      device_transpose(A, A.rows, ptr, col, val);
      const DeviceCsrView<T> At{A.rows, A.nnz, ptr.data(), col.data(), val.data()};
      t_solver_ = std::make_unique<DeviceSolver<T>>(*top_, *t_setup_lo_, amg_scope_, At);
    } else {
      t_setup_ = setup_->make_transposed(A);
      t_solver_ = std::make_unique<DeviceSolver<T>>(*top_, *t_setup_, amg_scope_);
    }
  }
  const SolveResult r = t_solver_->solve(b, x, use_x0, stream);
  last_bytes_ = t_solver_->last_solve_bytes();
  return r;
}

template <class T>
std::vector<LevelInfo> DeviceSetupSolver<T>::hierarchy() const {
  std::vector<LevelInfo> out;
  auto list = [&](const auto& h) {
    for (int l = 0; l < h.num_levels(); ++l) {
      const Index p_nnz = l + 1 < h.num_levels() ? h.prolongation(l).nnz : 0;
      out.push_back(LevelInfo{h.matrix(l).rows, h.matrix(l).nnz, p_nnz});
    }
  };
  if (setup_) list(*setup_);
  if (setup_lo_) list(*setup_lo_);
  return out;
}

template <class T>
const DeviceHierarchy<T>& DeviceSetupSolver<T>::device_hierarchy() const {
  if (!setup_) {
    throw InvalidInput("DeviceSetupSolver::device_hierarchy: this solver's hierarchy is float32 "
                       "(x_amg_precision FLOAT) or not built; see float_hierarchy()");
  }
  return *setup_;
}

template class DeviceSetupSolver<float>;
template class DeviceSetupSolver<double>;

}  // namespace jaxamg::cuda
