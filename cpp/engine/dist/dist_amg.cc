#include "dist/dist_amg.h"

#include "amg/cycle.h"

#include <algorithm>

#include "amg/classical/classical_coarsening.h"
#include "amg/coarsening.h"
#include "amg/grid_stats.h"
#include "core/error.h"
#include "dist/dist_transpose.h"
#include "dist/gathered.h"

namespace jaxamg::dist {
template <class T>
DistAmg<T>::DistAmg(SolverContext& ctx, const std::string& scope, const Communicator& comm)
    : Solver<T>(ctx, scope, "AMG"), comm_(comm) {
  // The serial AmgSolver around this one has already checked them.
  cycle_ = read_cycle_params(ctx.config, scope);
}

template <class T>
void DistAmg<T>::revalue() {
  // Same structure, new values: A_c = sum of coef_k a_k into the kept slots,
  // level by level; aggregates, plans and coarse patterns stay.
  levels_[0].A = this->A_;
  for (std::size_t l = 0; l + 1 < levels_.size(); ++l) {
    Level& L = levels_[l];
    auto Ac = std::make_shared<CsrMatrix<T>>(*levels_[l + 1].A);  // keeps its plan
    std::fill(Ac->val.begin(), Ac->val.end(), T(0));
    const CsrMatrix<T>& A = *L.A;
    for (std::size_t k = 0; k < A.val.size(); ++k) {
      if (L.coarse_slot[k] >= 0) Ac->val[L.coarse_slot[k]] += L.coef[k] * A.val[k];
    }
    levels_[l + 1].A = Ac;
  }
  for (Level& L : levels_) {
    if (L.smoother) L.smoother->setup(L.A, true);
  }
  if (consolidated_) consolidate();
}

template <class T>
void DistAmg<T>::solver_setup(bool reuse_structure) {
  if (transpose_of_ != nullptr) {
    transpose_levels(*transpose_of_);
    return;
  }
  const bool same_pattern = reuse_structure && !levels_.empty() && levels_[0].A &&
                            levels_[0].A->nnz() == this->A_->nnz();
  // The processes must take the same path (different collectives otherwise).
  const bool reuse = comm_.min_int(same_pattern ? 1 : 0) == 1;
  bool piecewise = reuse;
  for (std::size_t l = 0; l + 1 < levels_.size(); ++l) piecewise = piecewise && levels_[l].piecewise;
  if (comm_.min_int(piecewise ? 1 : 0) == 1) {
    revalue();
    return;
  }
  // Interpolation weights of classical AMG (and smoothed aggregation) depend
  // on the values: each level's coarsening is kept and rebuilds P with its
  // splitting (or aggregates) from the new values; the products follow.
  std::vector<Kept> kept;
  if (reuse) {
    for (Level& L : levels_) {
      kept.push_back({std::move(L.coarsening), std::move(L.classical), std::move(L.P)});
    }
  }
  const Config& cfg = this->ctx_.config;
  const std::string& scope = this->scope_;
  const int max_levels = this->param_int("max_levels");
  const SolverRef coarse_ref = cfg.get_solver("coarse_solver", scope);
  const bool dense_lu = coarse_ref.name == "DENSE_LU_SOLVER";
  const int64_t min_rows = dense_lu ? this->param_int("dense_lu_num_rows")
                                    : this->param_int("min_coarse_rows");
  levels_.clear();
  coarse_.reset();
  consolidated_ = false;
  levels_.emplace_back();
  levels_[0].A = this->A_;
  for (int l = 0;; ++l) {
    Level& L = levels_[l];
    L.op = dynamic_cast<const DistOperator<T>*>(L.A->dist.get());
    if (L.op == nullptr) throw SetupError("AMG: a level of the distributed hierarchy has no halo plan");
    L.global_rows = comm_.sum_int(L.A->nrows);
    L.global_nnz = comm_.sum_int(L.A->nnz());
    Kept previous = static_cast<std::size_t>(l) < kept.size() ? std::move(kept[l]) : Kept();
    if (l + 1 >= max_levels || L.global_rows <= min_rows ||
        !coarsen(l, min_rows, std::move(previous))) {
      break;
    }
  }
  finish_levels();
}

template <class T>
void DistAmg<T>::finish_levels() {
  const Config& cfg = this->ctx_.config;
  const SolverRef coarse_ref = cfg.get_solver("coarse_solver", this->scope_);
  const bool dense_lu = coarse_ref.name == "DENSE_LU_SOLVER";
  // Smoothers on every level; on the coarsest only without a coarse solver.
  // As the serial AMG, a coarsest level beyond dense_lu_max_rows is smoothed
  // rather than factorised (and then not gathered either).
  const int64_t max_dense = this->param_int("dense_lu_max_rows");
  const bool want_coarse =
      coarse_ref.name != "NOSOLVER" &&
      !(dense_lu && max_dense > 0 && levels_.back().global_rows > max_dense);
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    Level& L = levels_[l];
    const std::size_t n = static_cast<std::size_t>(L.A->nrows);
    const bool coarser = l + 1 < levels_.size();
    const bool kcycle = cycle_.type == CycleType::kCG || cycle_.type == CycleType::kCGF;
    const bool scaling = cycle_.error_scaling >= 2;
    if (l > 0) {
      L.b.assign(n, T(0));
      L.x.assign(n, T(0));
      if (kcycle && coarser) {
        for (Vector<T>* v : {&L.kr, &L.kz, &L.kp, &L.ky}) v->assign(n, T(0));
      }
    }
    L.r.assign(n, T(0));
    L.e.assign(scaling && coarser ? n : 0, T(0));
    L.ae.assign(scaling && coarser ? n : 0, T(0));
    // Inner products on the level are sums over the processes.
    L.backend = std::make_unique<cpu::VectorBackend<T>>(n, CycleSlots::kCount, &comm_);
    L.scale_counter = 0;
    if (l + 1 == levels_.size() && want_coarse) continue;
    comm_.agree_on([&] { L.smoother = this->create_child("smoother"); });
    if (L.smoother) L.smoother->setup(L.A, false);
  }
  if (want_coarse) consolidate();
  for (Level& L : levels_) L.global_bytes = comm_.sum_int(static_cast<int64_t>(local_bytes(L)));
}

template <class T>
std::size_t DistAmg<T>::local_bytes(const Level& L) {
  std::size_t total = L.A->storage_bytes() + L.P.storage_bytes();
  for (const Vector<T>* v : {&L.b, &L.x, &L.r, &L.kr, &L.kz, &L.kp, &L.ky, &L.e, &L.ae}) {
    total += v->size() * sizeof(T);
  }
  return total;
}

template <class T>
void DistAmg<T>::print_setup_stats() const {
  if (!wants_grid_stats(this->ctx_.config, this->scope_)) return;
  std::vector<GridLevelStats> stats;
  for (const Level& L : levels_) {
    stats.push_back({static_cast<Index>(L.global_rows), static_cast<Index>(L.global_nnz),
                     static_cast<std::size_t>(L.global_bytes), comm_.size()});
  }
  this->ctx_.log << format_grid_stats(stats);
}

template <class T>
std::unique_ptr<Solver<T>> DistAmg<T>::make_transposed(
    std::shared_ptr<const CsrMatrix<T>> At) const {
  if (levels_.empty()) {
    throw InvalidInput("AMG: make_transposed called before setup; set the solver up first");
  }
  auto s = std::make_unique<DistAmg<T>>(this->ctx_, this->scope_, comm_);
  this->copy_loop_settings(*s);
  s->transpose_of_ = this;
  s->setup(std::move(At));
  s->transpose_of_ = nullptr;
  return s;
}

template <class T>
void DistAmg<T>::transpose_levels(const DistAmg& src) {
  if (this->A_->nrows != src.levels_[0].A->nrows) {
    throw InvalidInput("AMG: the transposed matrix has " + std::to_string(this->A_->nrows) +
                       " local rows, the set-up one " + std::to_string(src.levels_[0].A->nrows) +
                       "; pass the transpose of the matrix the solver was set up with");
  }
  levels_.clear();
  coarse_.reset();
  consolidated_ = false;
  for (std::size_t l = 0; l < src.levels_.size(); ++l) {
    const Level& S = src.levels_[l];
    levels_.emplace_back();
    Level& D = levels_.back();
    if (l == 0) {
      D.A = this->A_;
    } else {
      // (P^T A P)^T moves along the coarse level's own plan: entries in
      // ghost columns go to the columns' owners, nothing else travels.
      const std::vector<int64_t> ghosts = ghost_global_ids(*S.op, S.A->nrows);
      D.A = transpose(comm_, S.op->partition(), *S.A, ghosts, S.op->plan()).A;
    }
    D.op = dynamic_cast<const DistOperator<T>*>(D.A->dist.get());
    if (D.op == nullptr) throw SetupError("AMG: a level of the transposed hierarchy has no halo plan");
    D.global_rows = S.global_rows;
    D.global_nnz = S.global_nnz;
    if (l + 1 < src.levels_.size()) {
      D.P = S.P;  // the same P on A^T (restriction P^T, prolongation P)
      D.p_ghosts = S.p_ghosts;
      D.p_plan = S.p_plan;
      D.p_halo.assign(S.p_ghosts.size(), T(0));
      D.nc = S.nc;
      D.piecewise = false;  // no value-only resetup: a new A^T gets a new transposed solver
    }
  }
  finish_levels();
}

template <class T>
bool DistAmg<T>::across_processes(int l) const {
  if (this->param_string("algorithm") != "CLASSICAL" ||
      this->param_string("x_dist_coarsening") != "ACROSS_PROCESSES") {
    return false;
  }
  // The same answer on every process: the config is the same everywhere.
  return DistClassical<T>::supports(
      classical::classical_params(this->ctx_.config, this->scope_, l));
}

template <class T>
bool DistAmg<T>::accept_coarse(const Level& L, int64_t global_nc, int64_t min_rows) const {
  // As the serial AMG: keep the coarse level only if it is smaller and not
  // below the coarsest size.
  const double threshold = this->param_double("coarsen_threshold");
  return !(global_nc == 0 || global_nc >= L.global_rows ||
           static_cast<double>(global_nc) > threshold * static_cast<double>(L.global_rows) ||
           global_nc < min_rows);
}

template <class T>
bool DistAmg<T>::coarsen_across(int l, int64_t min_rows, Kept& previous) {
  Level& L = levels_[l];
  const CsrMatrix<T>& A = *L.A;
  std::unique_ptr<DistClassical<T>> dc = std::move(previous.classical);
  // A rebuild exchanges with the neighbours: every process must take it.
  const bool fits = dc != nullptr && dc->fits(A);
  DistProlongation<T> dp;
  if (comm_.min_int(fits ? 1 : 0) == 1) {
    dc->rebuild(*L.op, A, dp);
  } else {
    dc = std::make_unique<DistClassical<T>>(
        classical::classical_params(this->ctx_.config, this->scope_, l));
    dc->build(*L.op, A, dp);
  }
  if (!accept_coarse(L, comm_.sum_int(dp.nc), min_rows)) return false;
  L.nc = dp.nc;
  L.P = std::move(dp.P);
  L.p_ghosts = std::move(dp.ghosts);
  L.classical = std::move(dc);
  L.coarsening.reset();
  L.piecewise = false;
  L.coef.clear();
  L.coarse_slot.clear();
  const RowPartition cpart = RowPartition::from_counts(comm_, L.nc);
  L.p_plan = std::make_shared<const HaloPlan>(comm_, cpart, L.p_ghosts);
  L.p_halo.assign(L.p_ghosts.size(), T(0));
  LocalMatrix<T> coarse = galerkin(L, cpart, A.block_dim);
  levels_.emplace_back();
  levels_.back().A = coarse.A;
  return true;
}

template <class T>
bool DistAmg<T>::coarsen(int l, int64_t min_rows, Kept previous) {
  if (across_processes(l)) return coarsen_across(l, min_rows, previous);
  Level& L = levels_[l];
  const CsrMatrix<T>& A = *L.A;
  const Index n = A.nrows;
  // The owned square block: coarsening never looks across processes. For
  // classical AMG and smoothed aggregation the couplings to other processes
  // are lumped onto the diagonal, so that interpolation at the process
  // boundary still reproduces what the full rows do to a constant (dropping
  // them would make those rows look like a Dirichlet boundary).
  const bool lump = this->param_string("algorithm") == "CLASSICAL" ||
                    this->param_int("x_smoothed_aggregation") != 0;
  CsrMatrix<T> own(n, n);
  own.block_dim = A.block_dim;
  for (Index i = 0; i < n; ++i) {
    T dropped = 0;
    Index diag = -1;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (A.col[k] >= n) {
        dropped += A.val[k];
        continue;
      }
      if (A.col[k] == i) diag = static_cast<Index>(own.col.size());
      own.col.push_back(A.col[k]);
      own.val.push_back(A.val[k]);
    }
    if (lump && diag >= 0) own.val[diag] += dropped;
    own.row_ptr[i + 1] = static_cast<Index>(own.col.size());
  }
  own.find_diagonal();
  std::unique_ptr<Coarsening<T>> coarsening = std::move(previous.coarsening);
  TransferOperators<T> ops;
  ops.P = std::move(previous.P);  // the pattern a rebuild keeps
  Index coarse_block = A.block_dim;
  comm_.agree_on([&] {
    // Coarsening is rank-local, so each process may rebuild or build on its
    // own: a kept splitting whose pattern no longer fits is built anew.
    bool rebuilt = false;
    if (coarsening) {
      try {
        coarsening->rebuild(own, ops);
        rebuilt = true;
      } catch (const InvalidInput&) {
        coarsening.reset();
      }
    }
    if (!rebuilt) {
      ops = TransferOperators<T>();
      coarsening = make_coarsening<T>(this->ctx_.config, this->scope_, l);
      coarsening->build(own, ops);
    }
    coarse_block = coarsening->coarse_block_dim(A.block_dim);
  });
  const Index nc = ops.P.ncols;
  if (!accept_coarse(L, comm_.sum_int(nc), min_rows)) return false;
  L.nc = nc;
  L.P = std::move(ops.P);
  L.p_ghosts.clear();
  L.p_plan.reset();
  L.p_halo.clear();
  L.coarsening = std::move(coarsening);
  L.classical.reset();
  const RowPartition cpart = RowPartition::from_counts(comm_, nc);
  // Piecewise constant P (aggregation): the fast path with value-only
  // resetup. Any process with a longer row sends everyone the general way.
  bool multi = false;
  for (Index i = 0; i < n && !multi; ++i) multi = L.P.row_ptr[i + 1] - L.P.row_ptr[i] > 1;
  L.piecewise = comm_.max_int(multi ? 1 : 0) == 0;
  if (!L.piecewise) {
    L.coef.clear();
    L.coarse_slot.clear();
    // Block diagonal: a plan without ghosts (the Galerkin product and the
    // cycle treat every general P alike).
    L.p_plan = std::make_shared<const HaloPlan>(comm_, cpart, L.p_ghosts);
    LocalMatrix<T> coarse = galerkin(L, cpart, coarse_block);
    levels_.emplace_back();
    levels_.back().A = coarse.A;
    return true;
  }
  // A row of P without an entry (a point left out of every aggregate, e.g.
  // one with no coupling inside this process) gets no coarse correction.
  std::vector<Index> agg(n);
  std::vector<T> pval(n);
  for (Index i = 0; i < n; ++i) {
    const bool in_aggregate = L.P.row_ptr[i + 1] > L.P.row_ptr[i];
    agg[i] = in_aggregate ? L.P.col[L.P.row_ptr[i]] : -1;
    pval[i] = in_aggregate ? L.P.val[L.P.row_ptr[i]] : T(0);
  }
  // Coarse global ids and P values of the ghost rows, through the halo plan.
  const HaloPlan& plan = L.op->plan();
  std::vector<int64_t> gid(n), ghost_gid(plan.num_ghosts());
  for (Index i = 0; i < n; ++i) gid[i] = agg[i] < 0 ? -1 : cpart.row_start + agg[i];
  plan.exchange(gid.data(), ghost_gid.data());
  std::vector<T> ghost_p(plan.num_ghosts());
  plan.exchange(pval.data(), ghost_p.data());
  // A_c(I, J) = sum over fine i in I, j in J of p_i a_ij p_j, built on the
  // owner of I with global coarse columns. Each entry k of A keeps its
  // factor p_i p_j and its slot in A_c, so a resetup is one pass.
  struct Contribution {
    Index I;
    int64_t J;
    Index k;
  };
  std::vector<Contribution> entries;
  entries.reserve(A.val.size());
  L.coef.assign(A.val.size(), T(0));
  L.coarse_slot.assign(A.val.size(), -1);
  for (Index i = 0; i < n; ++i) {
    if (agg[i] < 0) continue;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const Index c = A.col[k];
      const int64_t J = c < n ? gid[c] : ghost_gid[c - n];
      if (J < 0) continue;
      L.coef[k] = pval[i] * (c < n ? pval[c] : ghost_p[c - n]);
      entries.push_back({agg[i], J, k});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Contribution& a, const Contribution& b) {
    return a.I != b.I ? a.I < b.I : (a.J != b.J ? a.J < b.J : a.k < b.k);
  });
  std::vector<int32_t> rp(static_cast<std::size_t>(nc) + 1, 0), cols;
  std::vector<T> vals;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const Contribution& c = entries[e];
    const T v = L.coef[c.k] * A.val[c.k];
    if (e == 0 || entries[e - 1].I != c.I || entries[e - 1].J != c.J) {
      cols.push_back(static_cast<int32_t>(c.J));
      vals.push_back(T(0));
      ++rp[c.I + 1];
    }
    vals.back() += v;
    L.coarse_slot[c.k] = static_cast<Index>(vals.size()) - 1;
  }
  for (Index I = 0; I < nc; ++I) rp[I + 1] += rp[I];
  LocalMatrix<T> coarse = localize(comm_, cpart, GlobalRows<T>{rp.data(), cols.data(), vals.data(),
                                                               static_cast<int64_t>(cols.size())},
                                   coarse_block, "coarse A");
  if (!coarse.value_map.empty()) {
    for (Index& slot : L.coarse_slot) {
      if (slot >= 0) slot = coarse.value_map[slot];
    }
  }
  levels_.emplace_back();
  levels_.back().A = coarse.A;
  return true;
}

template <class T>
void DistAmg<T>::consolidate() {
  // The coarsest matrix's rows (global columns) travel to rank 0, once.
  Level& C = levels_.back();
  gathered_ = std::make_unique<Gathered<T>>(*C.op, *C.A, "coarsest A");
  comm_.agree_on([&] {
    std::shared_ptr<const CsrMatrix<T>> M = gathered_->matrix();
    if (!M) return;
    coarse_ = this->create_child("coarse_solver");
    coarse_->setup(M, false);
    cb_.assign(M->nrows, T(0));
    cx_.assign(M->nrows, T(0));
  });
  consolidated_ = true;
}

template <class T>
std::vector<LevelInfo> DistAmg<T>::hierarchy() const {
  std::vector<LevelInfo> info;
  for (const Level& L : levels_) {
    info.push_back({static_cast<Index>(L.global_rows), static_cast<Index>(L.global_nnz)});
  }
  return info;
}

template class DistAmg<float>;
template class DistAmg<double>;

}  // namespace jaxamg::dist
