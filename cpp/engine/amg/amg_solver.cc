#include "amg/amg_solver.h"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "amg/cycle.h"
#include "amg/grid_stats.h"
#include "backend/cpu/blas.h"
#include "core/error.h"

namespace jaxamg {

namespace {

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

template <class T>
typename AmgSolver<T>::CoarseningFactory& coarsening_factory_slot() {
  static typename AmgSolver<T>::CoarseningFactory factory;
  return factory;
}

}  // namespace

template <class T>
void AmgSolver<T>::set_coarsening_factory(CoarseningFactory factory) {
  coarsening_factory_slot<T>() = std::move(factory);
}

template <class T>
AmgSolver<T>::AmgSolver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "AMG") {
  const std::string& s = this->scope_;
  cycle_ = read_cycle_params(ctx.config, s);
  max_levels_ = this->param_int("max_levels");
  min_coarse_rows_ = this->param_int("min_coarse_rows");
  coarsen_threshold_ = this->param_double("coarsen_threshold");
  dense_lu_num_rows_ = this->param_int("dense_lu_num_rows");
  dense_lu_max_rows_ = this->param_int("dense_lu_max_rows");

  require_amg_param(max_levels_ >= 1, s, "max_levels", max_levels_, "use 1 or more levels");
  require_amg_param(min_coarse_rows_ >= 0, s, "min_coarse_rows", min_coarse_rows_, "use 0 or more rows");
  require_amg_param(coarsen_threshold_ > 0, s, "coarsen_threshold", coarsen_threshold_,
          "use a positive ratio (1.0 stops when a level is not smaller)");
  require_amg_param(dense_lu_num_rows_ >= 0, s, "dense_lu_num_rows", dense_lu_num_rows_,
          "use 0 or more rows");
  require_amg_param(dense_lu_max_rows_ >= 0, s, "dense_lu_max_rows", dense_lu_max_rows_,
          "use 0 (no cap) or a row count");
}

template <class T>
void AmgSolver<T>::solver_setup(bool reuse_structure) {
  if (const Distribution<T>* dist = this->A_->dist.get()) {
    if (transpose_of_ != nullptr && transpose_of_->distributed_) {
      // The adjoint reuses the distributed hierarchy's transfer operators.
      distributed_ = transpose_of_->distributed_->make_transposed(this->A_);
    } else {
      if (!distributed_ || !reuse_structure) {
        distributed_ = dist->make_multigrid(this->ctx_, this->scope_);
      }
      distributed_->setup(this->A_, reuse_structure);
    }
    print_setup_stats();
    return;
  }
  distributed_.reset();
  const double t0 = now_seconds();
  timings_ = AmgSetupTimings();
  const std::vector<bool> same =
      transpose_of_ ? transpose_levels(*transpose_of_) : build_levels(reuse_structure);
  setup_smoothers(same);
  // The work vectors (and the error scaling's state) are made anew by the
  // first cycle (solve_iteration).
  work_sized_ = false;
  timings_.total = now_seconds() - t0;
  print_setup_stats();
}

template <class T>
std::vector<bool> AmgSolver<T>::build_levels(bool reuse_structure) {
  const Config& cfg = this->ctx_.config;
  const std::string& scope = this->scope_;
  // Re-read at every setup, as AmgX does, so that it can change per call.
  const int reuse_levels = cfg.get_int("structure_reuse_levels", scope);
  const bool dense_lu = cfg.get_solver("coarse_solver", scope).name == "DENSE_LU_SOLVER";
  const Index min_rows = dense_lu ? dense_lu_num_rows_ : min_coarse_rows_;
  const auto& injected = coarsening_factory_slot<T>();

  // Level l keeps the sparsity of the previous setup if it is among the
  // first structure_reuse_levels levels (AmgX counts the finest as level 0,
  // so 1 keeps only the fine level's smoother structure and 2 also keeps the
  // first transfer) and every transfer above it was kept.
  auto keep = [&](int l) { return reuse_structure && (reuse_levels < 0 || l < reuse_levels); };
  const std::size_t old_levels = levels_.size();
  bool reusing = keep(0) && old_levels > 0;
  if (levels_.empty()) levels_.emplace_back();
  levels_[0].A = this->A_;
  levels_[0].owned.reset();
  std::vector<bool> same{keep(0)};

  int l = 0;
  for (;; ++l) {
    const Index n = levels_[l].rows();
    if (l + 1 >= max_levels_ || n <= min_rows) break;
    if (levels_.size() < static_cast<std::size_t>(l) + 2) levels_.emplace_back();
    AmgLevel<T>& L = levels_[l];
    AmgLevel<T>& C = levels_[l + 1];

    reusing = reusing && keep(l + 1) && L.coarsening &&
              static_cast<std::size_t>(l) + 1 < old_levels;
    double t = now_seconds();
    if (reusing) {
      L.coarsening->rebuild(*L.A, L.ops);
    } else {
      L.coarsening = injected ? injected(cfg, scope, l) : make_coarsening<T>(cfg, scope, l);
      if (!L.coarsening) {
        throw SetupError("AMG (scope '" + scope + "'): no coarsening for level " +
                         std::to_string(l));
      }
      L.ops = TransferOperators<T>();
      L.galerkin.clear();
      give_near_nullspace(l);
      if (l > 0) {
        if (const std::vector<Index>* f = levels_[l - 1].coarsening->coarse_functions()) {
          L.coarsening->set_functions(*f);
        }
      }
      L.coarsening->build(*L.A, L.ops);
    }
    AmgSetupTimings::Level lt;
    lt.coarsening = now_seconds() - t;
    lt.phases = L.coarsening->phase_seconds();
    timings_.coarsening += lt.coarsening;

    CsrMatrix<T>& P = L.ops.P;
    CsrMatrix<T>& R = L.ops.R;
    const Index nc = P.ncols;
    if (P.nrows != n && !(P.nrows == 0 && nc == 0)) {
      throw SetupError("AMG level " + std::to_string(l) + ": the coarsening built P with " +
                       std::to_string(P.nrows) + " rows for a level of " + std::to_string(n) +
                       " rows; P must be n_fine x n_coarse");
    }
    // AmgX keeps the coarse level only if it is smaller than
    // coarsen_threshold times this one and has at least min_rows rows;
    // otherwise this level becomes the coarsest.
    if (nc == 0 || nc >= n || nc > coarsen_threshold_ * n || nc < min_rows) {
      L.coarsening.reset();
      L.ops = TransferOperators<T>();
      L.r_is_pt = false;
      L.shown.reset();
      L.galerkin.clear();
      break;
    }
    // A coarsening that leaves R empty means R = P^T. The Galerkin product
    // forms it if it needs it (the blocked product does not); a coarsening
    // that builds the coarse matrix itself restricts with it, so it is formed
    // here.
    const bool builds = L.coarsening->builds_coarse_matrix();
    const bool r_empty = R.nrows == 0 && R.ncols == 0;
    if (r_empty && builds) R = transpose(P);
    L.r_is_pt = !builds && (r_empty || L.coarsening->restriction_is_transpose());
    L.shown.reset();
    if ((!r_empty || builds) && (R.nrows != nc || R.ncols != n)) {
      throw SetupError("AMG level " + std::to_string(l) + ": R is " + std::to_string(R.nrows) +
                       " x " + std::to_string(R.ncols) + " but P is " + std::to_string(n) +
                       " x " + std::to_string(nc) + "; R must be n_coarse x n_fine");
    }

    t = now_seconds();
    // With R = P^T, the Galerkin product may run on the transfer's blocks.
    const Index coarse_block = L.r_is_pt ? L.coarsening->galerkin_block() : 1;
    const bool in_place = reusing && C.owned && C.owned->nrows == nc &&
                          (builds || L.galerkin.has_plan());
    if (in_place) {
      if (builds) {
        L.coarsening->coarse_matrix(*L.A, L.ops, *C.owned);
      } else {
        L.galerkin.recompute(R, *L.A, P, *C.owned, coarse_block);
      }
    } else {
      reusing = false;
      // A fresh object: a solver built earlier (a transposed one) may still
      // hold the previous matrix.
      auto Ac = std::make_shared<CsrMatrix<T>>();
      if (builds) {
        L.coarsening->coarse_matrix(*L.A, L.ops, *Ac);
      } else {
        L.galerkin.compute(R, *L.A, P, *Ac, coarse_block);
      }
      C.owned = Ac;
      C.A = Ac;
    }
    CsrMatrix<T>& Ac = *C.owned;
    if (Ac.nrows != nc || Ac.ncols != nc) {
      throw SetupError("AMG level " + std::to_string(l + 1) + ": the coarse matrix is " +
                       std::to_string(Ac.nrows) + " x " + std::to_string(Ac.ncols) +
                       " but P has " + std::to_string(nc) + " columns");
    }
    if (Ac.diag_pos.size() != static_cast<std::size_t>(nc)) Ac.find_diagonal();
    // Block aggregation keeps every level k-blocked; smoothed aggregation with
    // m near-null-space vectors makes it m-blocked.
    Ac.block_dim = L.coarsening->coarse_block_dim(L.A->block_dim);
    // R = P^T has served the Galerkin product; the cycle restricts with P^T.
    if (L.r_is_pt) R = CsrMatrix<T>();
    // The work arrays this level freed (strength graph, interpolation and
    // product buffers) stay with the allocator, for the next level to
    // reuse. Returning them to the system here (malloc_trim) did not lower
    // the peak memory of bench/run.py's rows measurably, and made the next
    // levels fault their pages in again (215 instead of 144 MB of page
    // faults in a first setup of 3D Poisson n = 100), which costs time.
    lt.galerkin = now_seconds() - t;
    timings_.galerkin += lt.galerkin;
    timings_.levels.push_back(std::move(lt));
    same.push_back(in_place);
  }
  levels_.resize(static_cast<std::size_t>(l) + 1);
  AmgLevel<T>& coarsest = levels_.back();
  coarsest.coarsening.reset();
  coarsest.ops = TransferOperators<T>();
  coarsest.r_is_pt = false;
  coarsest.shown.reset();
  coarsest.galerkin.clear();
  return same;
}

template <class T>
void AmgSolver<T>::give_near_nullspace(int l) {
  SolverContext& ctx = this->ctx_;
  const NearNullspace* B = nullptr;
  if (l == 0) {
    // A nested AMG on another matrix (a coarse solver) has other rows.
    const auto& given = ctx.near_nullspace;
    if (given && !given->empty() && given->rows == levels_[0].rows()) B = given.get();
  } else {
    B = levels_[l - 1].coarsening->coarse_near_nullspace();
  }
  if (!B || B->empty()) return;
  const bool taken = levels_[l].coarsening->set_near_nullspace(*B);
  if (l > 0) return;
  if (!taken) {
    const std::string algorithm = ctx.config.get_string("algorithm", this->scope_);
    const std::string mode =
        algorithm == "AGGREGATION"
            ? ", x_smoothed_aggregation " +
                  std::to_string(ctx.config.get_int("x_smoothed_aggregation", this->scope_))
            : "";
    throw ConfigError("near_nullspace: " + std::to_string(B->cols) +
                      " near-null-space vectors were given but the AMG of scope '" +
                      this->scope_ + "' (algorithm " + algorithm + mode +
                      ") does not use them; set algorithm AGGREGATION, selector x_STANDARD and "
                      "x_smoothed_aggregation 2 in that scope, or pass no near null space");
  }
  ctx.near_nullspace_used = true;
}

template <class T>
std::vector<bool> AmgSolver<T>::transpose_levels(const AmgSolver& src) {
  if (src.levels_.empty() || src.levels_[0].rows() != this->A_->nrows) {
    throw InvalidInput("AMG: the transposed matrix has " + std::to_string(this->A_->nrows) +
                       " rows but the hierarchy was built for " +
                       std::to_string(src.levels_.empty() ? 0 : src.levels_[0].rows()) +
                       "; pass the transpose of the matrix the solver was set up with");
  }
  const double t = now_seconds();
  const std::size_t L = src.levels_.size();
  levels_.clear();
  levels_.resize(L);
  coarse_solver_.reset();
  for (std::size_t l = 0; l < L; ++l) {
    const AmgLevel<T>& S = src.levels_[l];
    AmgLevel<T>& D = levels_[l];
    if (l == 0) {
      D.A = this->A_;
    } else {
      D.owned = std::make_shared<CsrMatrix<T>>(transpose(*S.A));
      D.A = D.owned;
    }
    // (R A P)^T = P^T A^T R^T: the transposed hierarchy restricts with P^T
    // and prolongates with R^T.
    if (S.has_coarser()) {
      if (S.r_is_pt) {
        // R = P^T: P' = R^T = P, and R' = P^T is again implicit.
        D.ops.P = S.ops.P;
        D.r_is_pt = true;
      } else {
        D.ops.P = transpose(S.ops.R);
        D.ops.R = transpose(S.ops.P);
      }
    }
  }
  timings_.galerkin += now_seconds() - t;
  return std::vector<bool>(L, false);
}

template <class T>
void AmgSolver<T>::setup_smoothers(const std::vector<bool>& same) {
  const double t = now_seconds();
  const Config& cfg = this->ctx_.config;
  const std::size_t L = levels_.size();
  AmgLevel<T>& coarsest = levels_.back();
  const SolverRef coarse_ref = cfg.get_solver("coarse_solver", this->scope_);
  bool want_coarse = coarse_ref.name != "NOSOLVER";
  if (coarse_ref.name == "DENSE_LU_SOLVER" && dense_lu_max_rows_ > 0 &&
      coarsest.rows() > dense_lu_max_rows_) {
    want_coarse = false;  // AmgX: too large for a dense factorisation
  }
  if (!want_coarse) {
    coarse_solver_.reset();
  } else {
    if (!coarse_solver_ || !same[L - 1]) coarse_solver_ = this->create_child("coarse_solver");
    if (coarse_solver_) coarse_solver_->setup(coarsest.A, same[L - 1]);
  }
  for (std::size_t l = 0; l < L; ++l) {
    AmgLevel<T>& lev = levels_[l];
    if (l + 1 == L && coarse_solver_) {
      lev.smoother.reset();  // the coarse solver replaces smoothing there
      continue;
    }
    if (!lev.smoother || !same[l]) lev.smoother = this->create_child("smoother");
    if (lev.smoother) lev.smoother->setup(lev.A, same[l]);
  }
  timings_.smoothers += now_seconds() - t;
}

template <class T>
void AmgSolver<T>::allocate_work() {
  const std::size_t L = levels_.size();
  const bool kcycle = cycle_.type == CycleType::kCG || cycle_.type == CycleType::kCGF;
  auto size = [](Vector<T>& v, std::size_t n) {
    if (n == 0) {
      Vector<T>().swap(v);
    } else {
      v.resize(n);
    }
  };
  for (std::size_t l = 0; l < L; ++l) {
    AmgLevel<T>& lev = levels_[l];
    const std::size_t n = lev.rows();
    const bool coarser = l + 1 < L;
    // Level 0 works in the caller's b and x.
    size(lev.b, l > 0 ? n : 0);
    size(lev.x, l > 0 ? n : 0);
    // The residual is stored only for an explicit R or for error scaling;
    // otherwise the cycle forms P^T (b - A x) in one pass.
    size(lev.r, coarser && (!lev.r_is_pt || cycle_.error_scaling >= 2) ? n : 0);
    size(lev.restrict_work,
         coarser && lev.r_is_pt
             ? cpu::restrict_work_size(lev.ops.P, static_cast<int>(omp_get_max_threads()))
             : 0);
    size(lev.e, coarser && cycle_.error_scaling >= 2 ? n : 0);
    size(lev.ae, coarser && cycle_.error_scaling >= 2 ? n : 0);
    // K-cycles run on every level but the finest and the coarsest.
    const std::size_t nk = kcycle && l > 0 && coarser ? n : 0;
    for (Vector<T>* v : {&lev.kr, &lev.kz, &lev.kp, &lev.ky}) size(*v, nk);
    lev.backend = std::make_unique<cpu::VectorBackend<T>>(n, CycleSlots::kCount, nullptr);
    lev.scale_counter = 0;
  }
  work_sized_ = true;
}

template <class T>
IterationResult AmgSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  if (distributed_) {
    distributed_->apply(b, x, x_is_zero, 1);  // one cycle
    return IterationResult::kContinue;
  }
  if (levels_.empty()) {
    throw InvalidInput("AMG (scope '" + this->scope_ + "'): applied before setup; call setup first");
  }
  if (!work_sized_) allocate_work();
  run_cycle(levels_, coarse_solver_.get(), cycle_, b, x, x_is_zero);
  return IterationResult::kContinue;
}

template <class T>
std::unique_ptr<Solver<T>> AmgSolver<T>::make_transposed(
    std::shared_ptr<const CsrMatrix<T>> At) const {
  if (levels_.empty() && !distributed_) {
    throw InvalidInput("AMG: make_transposed called before setup; set the solver up first");
  }
  // A distributed hierarchy hands over to its own make_transposed (setup).
  auto s = std::make_unique<AmgSolver<T>>(this->ctx_, this->scope_);
  this->copy_loop_settings(*s);
  s->transpose_of_ = this;
  s->setup(std::move(At));
  s->transpose_of_ = nullptr;
  return s;
}

template <class T>
const TransferOperators<T>& AmgSolver<T>::transfer(int l) const {
  const AmgLevel<T>& lev = levels_.at(l);
  if (!lev.r_is_pt) return lev.ops;
  if (!lev.shown) {
    lev.shown = std::make_unique<TransferOperators<T>>();
    lev.shown->P = lev.ops.P;
    lev.shown->R = transpose(lev.ops.P);
  }
  return *lev.shown;
}

template <class T>
HierarchyView<T> AmgSolver<T>::view() const {
  if (distributed_) {
    const auto* source = dynamic_cast<const HierarchyViewSource<T>*>(distributed_.get());
    if (!source) throw NotSupported("AMG: the distributed multigrid has no hierarchy view");
    return source->view();
  }
  HierarchyView<T> v;
  v.cycle = cycle_;
  v.coarse_solver = coarse_solver_.get();
  v.levels.resize(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    HierarchyLevelView<T>& L = v.levels[l];
    L.A = levels_[l].A.get();
    L.smoother = levels_[l].smoother.get();
    if (l + 1 < levels_.size()) {
      const TransferOperators<T>& ops = transfer(static_cast<int>(l));
      L.P = &ops.P;
      L.R = &ops.R;
    }
  }
  return v;
}

template <class T>
std::vector<LevelInfo> AmgSolver<T>::hierarchy() const {
  if (distributed_) return distributed_->hierarchy();
  std::vector<LevelInfo> info;
  info.reserve(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const AmgLevel<T>& lev = levels_[l];
    const Index p_nnz = l + 1 < levels_.size() ? lev.ops.P.nnz() : 0;
    info.push_back({lev.rows(), lev.A ? lev.A->nnz() : 0, p_nnz});
  }
  return info;
}

template <class T>
std::string AmgSolver<T>::grid_stats() const {
  std::vector<GridLevelStats> stats;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const AmgLevel<T>& lev = levels_[l];
    // Matrices, transfer operators and work vectors; the
    // smoothers' own data is not included.
    stats.push_back({lev.rows(), lev.A ? lev.A->nnz() : 0, lev.bytes()});
  }
  return format_grid_stats(stats);
}

template <class T>
void AmgSolver<T>::print_setup_stats() const {
  if (distributed_) {
    distributed_->print_setup_stats();
    return;
  }
  if (wants_grid_stats(this->ctx_.config, this->scope_)) this->ctx_.log << grid_stats();
}

template class AmgSolver<float>;
template class AmgSolver<double>;

}  // namespace jaxamg
