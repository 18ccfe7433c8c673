// The AMG solver ("AMG" in configs), AmgX semantics: setup builds the
// hierarchy level by level through the Coarsening interface (P, R and, unless
// the coarsening builds it, Ac = R A P by the Galerkin product), one smoother
// per level and the coarse solver; one solve iteration is one cycle (V, W, F,
// or the K-cycles CG and CGF).
//
// Hierarchy stop rule (AmgX's setup loop): a level is the coarsest when
// num_levels reaches max_levels or it has at most min_rows rows (min_rows =
// min_coarse_rows, or dense_lu_num_rows when the coarse solver is
// DENSE_LU_SOLVER). Otherwise it is coarsened, and the coarse level is kept
// only if it has at least min_rows rows, is not larger than coarsen_threshold
// times this level and is smaller than it (a P without columns stalls too).
// A dense LU coarse solver on more than a nonzero dense_lu_max_rows rows is
// dropped for coarsest_sweeps smoother sweeps.
//
// Structure reuse: setup(A, true) keeps the sparsity of the first
// structure_reuse_levels levels (every level if -1; re-read at every setup):
// their coarsenings rebuild() (same splitting/aggregates and P pattern, new
// values) and their Galerkin products recompute values on the kept plan.
// Deeper levels are rebuilt. Smoothers and the coarse solver are set up
// again, with reuse_structure where their level kept its sparsity. (AmgX
// keeps P and R as they were; recomputing their values is more accurate for
// changed coefficients.)
//
// Beyond AmgX: error_scaling applies on every level (AmgX reads it only on
// aggregation levels); make_transposed() builds the solver for A^T from this
// hierarchy (P' = R^T, R' = P^T, A_l' = A_l^T) without coarsening again.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "amg/amg_level.h"
#include "amg/coarsening.h"
#include "amg/hierarchy_view.h"
#include "solvers/solver.h"

namespace jaxamg {

// Wall-clock seconds of the last setup, by phase.
struct AmgSetupTimings {
  double coarsening = 0;   // Coarsening::build/rebuild (splitting, P, R)
  double galerkin = 0;     // Ac = R A P (or the coarsening's own generator)
  double smoothers = 0;    // smoother and coarse-solver setups
  double total = 0;
  // The same per coarsened level (level l -> l + 1), with the coarsening's
  // own phases (Coarsening::phase_seconds).
  struct Level {
    double coarsening = 0, galerkin = 0;
    std::vector<std::pair<std::string, double>> phases;
  };
  std::vector<Level> levels;
};

template <class T>
class AmgSolver : public Solver<T> {
 public:
  AmgSolver(SolverContext& ctx, const std::string& scope);

  std::unique_ptr<Solver<T>> make_transposed(
      std::shared_ptr<const CsrMatrix<T>> At) const override;
  std::vector<LevelInfo> hierarchy() const override;
  // The grid table (print_grid_stats).
  void print_setup_stats() const override;

  int num_levels() const { return static_cast<int>(levels_.size()); }
  const CsrMatrix<T>& level_matrix(int l) const { return *levels_.at(l).A; }
  // Transfer operators from level l to l + 1 (empty on the coarsest). An R
  // that is P^T is not kept by the hierarchy; it is formed on this call.
  const TransferOperators<T>& transfer(int l) const;
  // The coarse solver, or nullptr when the coarsest level is smoothed.
  const Solver<T>* coarse_solver() const { return coarse_solver_.get(); }
  const AmgSetupTimings& setup_timings() const { return timings_; }
  // The set-up hierarchy as a backend copies it: the distributed
  // multigrid's on a distributed matrix, else this solver's levels.
  HierarchyView<T> view() const;
  // The hierarchy and cycle parameters, read by the multi-vector cycle
  // (batched/).
  const std::vector<AmgLevel<T>>& levels() const { return levels_; }
  const CycleParams& cycle_params() const { return cycle_; }
  // The "AMG Grid:" table of the current hierarchy (print_grid_stats).
  std::string grid_stats() const;

  // Replaces make_coarsening for every AmgSolver<T> built afterwards (tests
  // use it to drive the cycle with a known coarsening); an empty function
  // restores the configured algorithms.
  using CoarseningFactory = std::function<std::unique_ptr<Coarsening<T>>(
      const Config& cfg, const std::string& scope, int level)>;
  static void set_coarsening_factory(CoarseningFactory factory);

 protected:
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;
  // On a distributed matrix the hierarchy and cycles are the distribution's
  // multigrid (A_->dist->make_multigrid), held in distributed_.
  bool supports_distribution() const override { return true; }

 private:
  // Builds levels 1.. by coarsening; returns, per level, whether its matrix
  // kept the sparsity of the previous setup.
  std::vector<bool> build_levels(bool reuse_structure);
  // Hands level l's coarsening its near-null-space vectors: on level 0 the
  // ones given to the solver tree, below those of the coarsening above.
  void give_near_nullspace(int l);
  // Copies the transposed hierarchy of `src` (make_transposed).
  std::vector<bool> transpose_levels(const AmgSolver& src);
  void setup_smoothers(const std::vector<bool>& same_structure);
  // Sizes the cycle's work vectors of every level. Run by the first cycle
  // after a setup rather than by the setup, as the Krylov bases are: the
  // setup's peak memory then holds the hierarchy and not the vectors of a
  // solve (about two coarse-grid vectors per level).
  void allocate_work();

  std::unique_ptr<Solver<T>> distributed_;
  CycleParams cycle_;
  int max_levels_;
  int min_coarse_rows_;
  double coarsen_threshold_;
  int dense_lu_num_rows_;
  int dense_lu_max_rows_;

  std::vector<AmgLevel<T>> levels_;
  std::unique_ptr<Solver<T>> coarse_solver_;
  AmgSetupTimings timings_;
  const AmgSolver* transpose_of_ = nullptr;  // set only inside make_transposed
  bool work_sized_ = false;                   // allocate_work ran since the last setup
};

}  // namespace jaxamg
