#include "device/device_solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "amg/amg_solver.h"
#include "backend/cuda/kernels.h"
#include "core/error.h"
#include "device/device_mixed_amg.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg::cuda {

namespace {

// Whether `name` is an outer method the device runs: a Krylov method of
// device/outer_krylov.h, or AMG.
bool device_method(const std::string& name) {
  device::KrylovKind kind;
  return name == "AMG" || device::krylov_kind_of(name, &kind);
}

template <class T>
const AmgSolver<T>* amg_of(const Solver<T>& top) {
  if (const auto* a = dynamic_cast<const AmgSolver<T>*>(&top)) return a;
  if (const auto* k = dynamic_cast<const KrylovSolver<T>*>(&top)) {
    return dynamic_cast<const AmgSolver<T>*>(k->preconditioner());
  }
  return nullptr;
}

// The float32 AMG (x_amg_precision FLOAT) that is `top` or its
// preconditioner, or nullptr; always nullptr in a float32 solve.
template <class T>
const MixedPrecisionAmg* mixed_of(const Solver<T>& top) {
  if constexpr (std::is_same<T, double>::value) {
    if (const auto* m = dynamic_cast<const MixedPrecisionAmg*>(&top)) return m;
    if (const auto* k = dynamic_cast<const KrylovSolver<T>*>(&top)) {
      return dynamic_cast<const MixedPrecisionAmg*>(k->preconditioner());
    }
  }
  return nullptr;
}

// The preconditioner of a Krylov `top` that is neither AMG nor a float32
// AMG (a smoother, or another solver), or nullptr.
template <class T>
const Solver<T>* smoother_of(const Solver<T>& top) {
  const auto* k = dynamic_cast<const KrylovSolver<T>*>(&top);
  if (!k || !k->preconditioner() || amg_of(top) || mixed_of(top)) return nullptr;
  return k->preconditioner();
}

Reduce norm_reduction(NormType t) {
  switch (t) {
    case NormType::kL1: return Reduce::kSumAbs;
    case NormType::kLMax: return Reduce::kMaxAbs;
    case NormType::kL2: break;
  }
  return Reduce::kSumSquaresSqrt;
}

// JAXAMG_CUDA_GRAPHS=0 selects the per-iteration host loop.
bool graphs_enabled() {
  const char* v = std::getenv("JAXAMG_CUDA_GRAPHS");
  return !(v && std::strcmp(v, "0") == 0);
}

}  // namespace

template <class T>
std::string DeviceSolver<T>::unsupported_method(const Solver<T>& top) {
  if (!device_method(top.name())) return "solver " + top.name();
  return "";
}

template <class T>
std::string DeviceSolver<T>::unsupported(const Solver<T>& top) {
  const std::string why = unsupported_method(top);
  if (!why.empty()) return why;
  const bool distributed = top.matrix().dist != nullptr;
  if (const Solver<T>* smoother = smoother_of(top)) {
    if (smoother->monitors_residual()) return "a smoother preconditioner that monitors its residual";
    const std::string why_not = DeviceAmg<T>::unsupported_smoother(*smoother);
    if (why_not.empty()) return "";
    return "preconditioner " + smoother->name() + " of " + top.name() + " (" + why_not + ")";
  }
  if (const AmgSolver<T>* amg = amg_of(top)) {
    if (amg != &top && amg->monitors_residual()) {
      return "an AMG preconditioner that monitors its residual";
    }
    return DeviceAmg<T>::unsupported(*amg);
  }
  if (const MixedPrecisionAmg* mixed = mixed_of(top)) {
    if (distributed) return "x_amg_precision FLOAT on a distributed matrix";
    if (static_cast<const void*>(mixed) != static_cast<const void*>(&top) &&
        mixed->monitors_residual()) {
      return "an AMG preconditioner that monitors its residual";
    }
    return DeviceMixedAmg::unsupported(*mixed);
  }
  return "";
}

template <class T>
void DeviceSolver<T>::choose_method(const std::string& why) {
  if (!why.empty()) throw NotSupported("CUDA backend: " + why + " does not run on the GPU");
  amg_outer_ = top_.name() == "AMG";
  if (!amg_outer_) device::krylov_kind_of(top_.name(), &shape_.kind);
}

template <class T>
template <class Build>
void DeviceSolver<T>::build_on_new_handle(Build build) {
  check(cusparseCreate(&handle_), "cusparseCreate");
  try {
    build();
    allocate_work();
  } catch (...) {
    krylov_.reset();
    amg_.reset();
    mixed_.reset();
    cusparseDestroy(handle_);
    handle_ = nullptr;
    throw;
  }
}

template <class T>
DeviceSolver<T>::DeviceSolver(const Solver<T>& top) : top_(top) {
  choose_method(unsupported(top));
  setup_seconds_ = top.setup_seconds();
  n_ = top.matrix().nrows;
  capacity_ = n_;
  const Distribution<T>* dist = top.matrix().dist.get();
  if (dist) {
    reducer_ = dist;
    capacity_ = std::max(n_, top.matrix().ncols);
    shape_.first_row = dist->row_start();
  }
  build_on_new_handle([&] {
    // The host matrix of the device hierarchy's level 0, shared with the
    // outer method when it is the same.
    const CsrMatrix<T>* fine = nullptr;
    if (const AmgSolver<T>* amg = amg_of(top)) {
      amg_ = std::make_unique<DeviceAmg<T>>(handle_, *amg);
      fine = amg->view().levels.front().A;
    } else if (const Solver<T>* smoother = smoother_of(top)) {
      amg_ = std::make_unique<DeviceAmg<T>>(handle_, *smoother);
      fine = &smoother->matrix();
    }
    if (fine == &top.matrix()) {
      A_ = &amg_->fine_matrix();
    } else {
      own_A_.upload(handle_, top.matrix());
      if (dist) own_A_.set_halos(&dist->packed_halo(), n_, nullptr, 0);
      A_ = &own_A_;
    }
    if constexpr (std::is_same<T, double>::value) {
      if (const MixedPrecisionAmg* mixed = mixed_of(top)) {
        mixed_ = std::make_unique<DeviceMixedAmg>(handle_, *mixed, own_A_);
      }
    }
  });
}

template <class T>
DeviceSolver<T>::DeviceSolver(const Solver<T>& top, const DeviceHierarchy<T>& setup,
                              const std::string& amg_scope)
    : top_(top) {
  choose_method(unsupported_method(top));
  if (setup.num_levels() < 1) {
    throw InvalidInput("DeviceSolver: the device hierarchy has no levels; call setup() "
                       "on it first");
  }
  n_ = setup.matrix(0).rows;
  build_on_new_handle([&] {
    amg_ = std::make_unique<DeviceAmg<T>>(handle_, setup, top.context(), amg_scope);
    A_ = &amg_->fine_matrix();
  });
}

template <class T>
DeviceSolver<T>::DeviceSolver(const Solver<T>& top, const DeviceHierarchy<float>& setup,
                              const std::string& amg_scope, const DeviceCsrView<T>& A)
    : top_(top) {
  if constexpr (!std::is_same<T, double>::value) {
    throw NotSupported("CUDA backend: x_amg_precision FLOAT inside a float32 solve");
  } else {
    choose_method(unsupported_method(top));
    if (setup.num_levels() < 1 || setup.matrix(0).rows != A.rows) {
      throw InvalidInput("DeviceSolver: the float32 device hierarchy has no levels or another "
                         "size than A; set it up from A first");
    }
    n_ = A.rows;
    build_on_new_handle([&] {
      own_A_.copy_device(handle_, A.rows, A.rows, A.nnz, A.ptr, A.col, A.val);
      A_ = &own_A_;
      mixed_ = std::make_unique<DeviceMixedAmg>(handle_, setup, top.context(), amg_scope, own_A_);
    });
  }
}

template <class T>
void DeviceSolver<T>::replace_values(const T* val, cudaStream_t stream) {
  if (mixed_ && A_ == &own_A_) {
    // The float32 hierarchy stays; the float64 operator takes the values.
    own_A_.replace_values(val, stream);
    return;
  }
  if (!amg_ || A_ != &amg_->fine_matrix()) {
    throw NotSupported("DeviceSolver::replace_values: only a solver built from a device setup "
                       "takes new operator values in place");
  }
  amg_->replace_fine_values(val, stream);
}

template <class T>
void DeviceSolver<T>::allocate_work() {
  capacity_ = std::max(capacity_, n_);
  const std::size_t n = static_cast<std::size_t>(n_);
  r_.resize(static_cast<std::size_t>(capacity_));
  if (!amg_outer_) {
    // The shape of the host solver's method (gmres_cycle.h): the cycle
    // capped at max_iters, FGMRES's window; the residual vector carried
    // where the loop measures it.
    const Config& cfg = top_.context().config;
    const std::string& scope = top_.scope();
    shape_.preconditioned = has_amg();
    if (shape_.kind == device::KrylovKind::kGmres || shape_.kind == device::KrylovKind::kFgmres) {
      shape_.restart =
          std::min(cfg.get_int("gmres_n_restart", scope), std::max(1, top_.max_iters()));
      shape_.window =
          shape_.kind == device::KrylovKind::kFgmres ? cfg.get_int("gmres_krylov_dim", scope) : 0;
    }
    if (shape_.kind == device::KrylovKind::kIdr || shape_.kind == device::KrylovKind::kIdrmsync) {
      // As the host solver: at most the global rows.
      const std::int64_t rows = reducer_ ? top_.matrix().dist->global_rows() : n_;
      shape_.subspace =
          static_cast<int>(std::min<std::int64_t>(cfg.get_int("subspace_dim_s", scope), rows));
    }
    shape_.track_residual = top_.monitors_residual();
    krylov_ = std::make_unique<device::OuterKrylov<T>>(
        shape_, n, stream_, static_cast<std::size_t>(capacity_), reducer_);
    // Its vectors and slots were zeroed on this (default) stream; a solve
    // runs on XLA's stream, which may not wait for it.
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (Krylov method)");
  }
  scal_.resize(kNumSlots);
  work_.resize(kReduceBlocks);
  flags_.resize(2);
  check(cudaMallocHost(reinterpret_cast<void**>(&pinned_), 4 * sizeof(double)),
        "cudaMallocHost");
}

template <class T>
DeviceSolver<T>::~DeviceSolver() {
  if (pinned_) cudaFreeHost(pinned_);
  if (handle_) cusparseDestroy(handle_);
}

template <class T>
void DeviceSolver<T>::spmv(T alpha, const T* x, T beta, T* y) {
  A_->spmv(handle_, alpha, x, beta, y);
  traffic_.bytes += A_->spmv_bytes() + (beta != T(0) ? n_ * sizeof(T) : 0);
}

template <class T>
void DeviceSolver<T>::residual(const T* x, const T* b, T* r) {
  if (!A_->uses_cusparse()) {
    csr_residual(A_->ref(), x, b, r, stream_);
    traffic_.bytes += A_->spmv_bytes() + static_cast<double>(n_) * sizeof(T);
    return;
  }
  check(cudaMemcpyAsync(r, b, n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
        "cudaMemcpyAsync (residual)");
  traffic_.bytes += 2.0 * n_ * sizeof(T);
  spmv(T(-1), x, T(1), r);
}

template <class T>
void DeviceSolver<T>::reduce_to(Reduce op, const T* x, const T* y, int slot) {
  traffic_.bytes += (y ? 2.0 : 1.0) * n_ * sizeof(T);
  if (!reducer_) {
    reduce<T>(op, n_, x, y, work_.data(), scal_.data(), slot, stream_);
    return;
  }
  // Over processes: the 2-norm from the sum of squares, a NaN in a maximum
  // as infinity (which the convergence test rejects as it does a NaN).
  const bool l2 = op == Reduce::kSumSquaresSqrt;
  reduce<T>(l2 ? Reduce::kDot : op, n_, x, l2 ? x : y, work_.data(), scal_.data(), slot, stream_);
  double v = 0;
  check(cudaMemcpyAsync(&v, scal_.data() + slot, sizeof(double), cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync (local reduction)");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (reduction over processes)");
  if (op == Reduce::kMaxAbs) {
    v = reducer_->max(std::isnan(v) ? std::numeric_limits<double>::infinity() : v);
  } else {
    reducer_->sum(&v, 1);
    if (l2) v = std::sqrt(v);
  }
  check(cudaMemcpyAsync(scal_.data() + slot, &v, sizeof(double), cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync (reduction over processes)");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (reduction over processes)");
}

template <class T>
void DeviceSolver<T>::precondition(const T* r, T* z) {
  if constexpr (std::is_same<T, double>::value) {
    if (mixed_) return mixed_->precondition(r, z, stream_);
  }
  amg_->precondition(r, z, stream_);
}

template <class T>
void DeviceSolver<T>::amg_cycle(const T* b, T* x, bool x_is_zero) {
  if constexpr (std::is_same<T, double>::value) {
    if (mixed_) return mixed_->cycle(b, x, x_is_zero, stream_);
  }
  amg_->cycle(b, x, x_is_zero, stream_);
}

template <class T>
void DeviceSolver<T>::read_back(NormType type, double out[2]) {
  reduce_to(norm_reduction(type), r_.data(), nullptr, kNorm);
  check(cudaMemcpyAsync(pinned_, scal_.data(), 2 * sizeof(double), cudaMemcpyDeviceToHost,
                        stream_),
        "cudaMemcpyAsync (solver scalars)");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (convergence test)");
  out[0] = pinned_[kStop];
  out[1] = pinned_[kNorm];
}

template <class T>
bool DeviceSolver<T>::all_finite(const T* x) {
  check(cudaMemsetAsync(flags_.data(), 0, 2 * sizeof(int), stream_), "cudaMemsetAsync (flags)");
  inspect<T>(n_, x, nullptr, flags_.data(), stream_);
  int h[2] = {0, 0};
  check(cudaMemcpyAsync(h, flags_.data(), 2 * sizeof(int), cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync (flags)");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (finite check)");
  if (reducer_) return reducer_->max(h[0] != 0 ? 1.0 : 0.0) == 0.0;
  return h[0] == 0;
}

// KrylovSolver::initial_residual plus each method's solve_init.
template <class T>
double DeviceSolver<T>::traffic_total() {
  return traffic_.bytes + (amg_ ? amg_->traffic().bytes : 0) +
         (mixed_ ? mixed_->traffic_bytes() : 0);
}

template <class T>
bool DeviceSolver<T>::ensure_loop(const T* b, T* x, bool monitor, bool store, NormType norm_type,
                                  int max_iters) {
  if (loop_failed_) return false;
  const LoopKey key{b, x, monitor, store, norm_type, max_iters};
  if (loop_.captured() && loop_key_ == key) return true;
  LoopRule rule;
  rule.rule = top_.stopping_rule();
  rule.monitor = monitor ? 1 : 0;
  rule.store = monitor && store ? 1 : 0;
  cudaStream_t run_stream = stream_;
  const double before = traffic_total();
  // The body is the host loop's iteration: method_iteration (or an AMG cycle
  // and its residual) and read_back's norm, enqueued on the capture stream.
  auto body = [&](cudaStream_t cs) {
    stream_ = cs;
    check(cusparseSetStream(handle_, cs), "cusparseSetStream (capture)");
    if (amg_outer_) {
      amg_cycle(b, x, false);
      residual(x, b, r_.data());
    } else {
      method_iteration(b, x);
    }
    reduce_to(norm_reduction(norm_type), r_.data(), nullptr, kNorm);
  };
  bool ok = true;
  try {
    loop_.capture(body, scal_.data(), rule, max_iters);
  } catch (const CudaError&) {
    // Not capturable here (an older driver, a library call that
    // synchronises): the host loop gives the same results. The refused
    // call left its error as the thread's last error: clear it, or the next
    // launch check would report it.
    cudaGetLastError();
    loop_failed_ = true;
    ok = false;
  }
  stream_ = run_stream;
  check(cusparseSetStream(handle_, run_stream), "cusparseSetStream");
  // Capturing enqueued nothing: its traffic counts per iteration run.
  loop_bytes_ = traffic_total() - before;
  traffic_.bytes -= loop_bytes_;
  if (ok) loop_key_ = key;
  return ok;
}

// PCG without a preconditioner is the same recurrence as CG (z = r).
template <class T>
bool DeviceSolver<T>::solve_small(const T* b, T* x, bool use_x0, SolveResult* res) {
  const bool cg = shape_.kind == device::KrylovKind::kCg || shape_.kind == device::KrylovKind::kPcg;
  if (amg_outer_ || !cg || has_amg() || reducer_ || n_ < 1 || n_ > kSmallCgMaxRows ||
      !small_cg_enabled()) {
    return false;
  }
  if (!small_) small_ = std::make_unique<SmallCg<T>>(*A_);
  const Solver<T>& S = top_;
  SmallCgRule rule;
  rule.rule = S.stopping_rule();
  rule.monitor = S.monitors_residual();
  rule.store = S.stores_history();
  rule.norm = rule.monitor ? S.norm_type() : NormType::kL2;
  rule.max_iters = S.max_iters();
  if (!small_->solve(rule, b, x, use_x0, stream_, &res->history)) return false;
  const SmallCgRecord& rec = small_->last_record();
  res->status = static_cast<Status>(rec.status);
  res->iterations = rec.iterations;
  res->residual = rule.monitor ? rec.final_norm : -1;
  last_initial_ = rule.monitor ? rec.initial : -1;
  last_bytes_ = small_->last_solve_bytes();
  small_blocks_ = small_->last_blocks();
  return true;
}

template <class T>
SolveResult DeviceSolver<T>::solve(const T* b, T* x, bool use_x0, cudaStream_t stream) {
  const auto start = std::chrono::steady_clock::now();
  stream_ = stream;
  small_blocks_ = 0;
  last_initial_ = -1;
  SolveResult res;
  if (!solve_small(b, x, use_x0, &res)) res = solve_loop(b, x, use_x0);
  // Both paths return with the stream's work done.
  res.solve_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  res.setup_seconds = setup_seconds_;
  SolveStatsRecord record;
  record.history = &res.history;
  record.iterations = res.iterations;
  record.initial = last_initial_;
  record.final = res.residual;
  // AmgX prints its device pool's high-water mark: here the device memory
  // jaxamg has held at most.
  record.memory_gb = static_cast<double>(peak_device_bytes().load()) / (1024.0 * 1024.0 * 1024.0);
  record.setup_seconds = res.setup_seconds;
  record.solve_seconds = res.solve_seconds;
  top_.write_solve_stats(record);
  return res;
}

template <class T>
SolveResult DeviceSolver<T>::solve_loop(const T* b, T* x, bool use_x0) {
  check(cusparseSetStream(handle_, stream_), "cusparseSetStream");
  // The stop flags are read after every iteration, also by methods that
  // never set them (AMG): start from zeros.
  check(cudaMemsetAsync(scal_.data(), 0, kNumSlots * sizeof(double), stream_),
        "cudaMemsetAsync (solver scalars)");
  traffic_.bytes = 0;
  if (amg_) amg_->traffic().bytes = 0;
  if (mixed_) mixed_->reset_traffic();
  if (krylov_) {
    krylov_->set_stream(stream_);
    krylov_->reset_traffic();
  }
  const Solver<T>& S = top_;
  const bool monitor = S.monitors_residual();
  const bool store = S.stores_history();
  const NormType norm_type = monitor ? S.norm_type() : NormType::kL2;
  const bool keeps_residual = !amg_outer_;
  const int max_iters = S.max_iters();
  const bool x_is_zero = !use_x0;

  // With the iteration graph the solve runs on vectors of its own, so that
  // the captured iteration's addresses hold for every call; a distributed
  // solve, whose exchanges wait for the host, runs no graph and iterates on
  // an x with room for its ghosts.
  const bool graphs = !reducer_ && graphs_enabled() && (monitor || !amg_outer_) &&
                      (amg_outer_ || krylov_->capturable());
  T* const x_out = x;
  if (graphs || reducer_) {
    x_loop_.resize(static_cast<std::size_t>(capacity_));
    if (use_x0) {
      check(cudaMemcpyAsync(x_loop_.data(), x, n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
            "cudaMemcpyAsync (initial guess)");
    }
    x = x_loop_.data();
    if (amg_outer_) {
      b_loop_.resize(n_);
      check(cudaMemcpyAsync(b_loop_.data(), b, n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
            "cudaMemcpyAsync (right-hand side)");
      b = b_loop_.data();
    }
  }

  SolveTracker track(S.loop_settings());
  double back[2] = {0, -1};
  if (monitor) {
    if (x_is_zero) {
      check(cudaMemcpyAsync(r_.data(), b, n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
            "cudaMemcpyAsync (initial residual)");
    } else {
      residual(x, b, r_.data());
    }
    read_back(norm_type, back);
  }
  track.start(back[1]);
  while (!track.finished()) {
    method_init(b, x, x_is_zero && track.begin_pass());
    bool pass_started = false;
    while (track.running()) {
      // After the first iteration of a pass (which may differ: a zero
      // guess, the first direction), the rest runs as one graph launch.
      // Only an AMG iteration reads b; a Krylov iteration works on r, so
      // its graph does not depend on the caller's b buffer.
      if (graphs && pass_started &&
          ensure_loop(amg_outer_ ? b : nullptr, x, monitor, store, norm_type, max_iters)) {
        LoopState start;
        start.initial = track.initial();
        start.largest = track.largest();
        start.final_norm = track.final_norm();
        start.limit = max_iters - track.iterations();
        const LoopState out =
            loop_.run(start, stream_, store && monitor ? &track.history() : nullptr);
        traffic_.bytes += out.iterations * loop_bytes_;
        track.record_block(out.iterations, out.final_norm, out.largest, out.done,
                           static_cast<Status>(out.status), keeps_residual);
        continue;
      }
      pass_started = true;
      if (amg_outer_) {
        amg_cycle(b, x, x_is_zero && track.iterations() == 0);
        if (monitor) residual(x, b, r_.data());
      } else {
        method_iteration(b, x);
      }
      // AMG without monitoring needs no read-back: it never stops early.
      const bool need_back = monitor || !amg_outer_;
      back[0] = 0;
      if (need_back) read_back(norm_type, back);
      // The method's stop flag; an exactly zero residual means converged
      // (stop_recurrence()), any other stop is a breakdown.
      IterationResult step = IterationResult::kContinue;
      if (back[0] != 0.0) {
        step = back[1] == 0.0 ? IterationResult::kConverged : IterationResult::kBreakdown;
      }
      track.record(step, back[1], keeps_residual);
    }
    if (!amg_outer_) method_finalize(b, x);
    if (track.end_pass()) {
      residual(x, b, r_.data());
      read_back(norm_type, back);
      track.check_true_residual(back[1]);
    }
  }
  if (track.answer_is_zero_guess(x_is_zero)) fill<T>(n_, T(0), x, stream_);
  if (x != x_out) {
    check(cudaMemcpyAsync(x_out, x, n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpyAsync (solution)");
  }
  if (!all_finite(x)) track.fail();
  SolveResult res;
  res.status = track.status();
  res.iterations = track.iterations();
  res.residual = track.final_norm();
  res.history = std::move(track.history());
  last_initial_ = track.initial();
  last_bytes_ = traffic_.bytes + (amg_ ? amg_->traffic().bytes : 0) +
                (mixed_ ? mixed_->traffic_bytes() : 0) + (krylov_ ? krylov_->traffic() : 0);
  return res;
}

template class DeviceSolver<float>;
template class DeviceSolver<double>;

}  // namespace jaxamg::cuda
