// Distributed AMG: the hierarchy and cycles the engine's AMG hands over
// when its matrix is distributed (Distribution::make_multigrid).
//
// - Classical AMG (PMIS or HMIS with D1 or D2) coarsens across processes by
//   default (x_dist_coarsening = ACROSS_PROCESSES, dist_classical.h):
//   strength on the full local rows, PMIS with weights from global ids (the
//   serial splitting on any partition), interpolation from C points of any
//   process, so P has ghost coarse columns and its own halo plan.
// - Otherwise coarsening is rank-local: each process coarsens its owned
//   square block with the engine's configured algorithm (AGGREGATION, or
//   CLASSICAL with x_dist_coarsening = RANK_LOCAL or a selector/interpolator
//   not built across processes), so P is block diagonal. Aggregates and C/F
//   splittings then never cross processes; for classical AMG and smoothed
//   aggregation the couplings to other processes are lumped onto the
//   diagonal of the coarsened block.
// - Galerkin A_c = P^T A P is formed row by row on the owning process. A
//   piecewise constant P (aggregation) needs only the coarse ids and P values
//   of ghost rows; a general P (classical, smoothed aggregation) needs the
//   ghost rows of P; both travel through the level's halo plan. With ghost
//   coarse columns the partial rows of other processes' coarse points go to
//   their owners along P's plan (dist_amg_galerkin.cc). A_c gets its own
//   partition and plan. Restriction and prolongation exchange along P's
//   plan (nothing for a block-diagonal P).
// - Every level but the coarsest smooths with the configured smoother,
//   distributed (JACOBI_L1, BLOCK_JACOBI, GS (hybrid), CHEBYSHEV).
// - The coarsest level (global rows <= dense_lu_num_rows with DENSE_LU_SOLVER,
//   else min_coarse_rows, or max_levels reached) is consolidated: its matrix
//   is gathered on rank 0 once at setup and solved there by the configured
//   coarse solver; each cycle gathers the coarse right-hand side and
//   scatters the correction. Only that coarsest level is ever gathered.
//
// The adjoint reuses the setup: make_transposed keeps every level's P (the
// restriction is P^T, so (P^T A P)^T = P^T A^T P is the Galerkin product of
// A^T with the same P) and transposes each coarse matrix along its own halo
// plan (dist_transpose.h); only smoothers and the coarsest factorisation are
// set up anew. The hierarchy has the forward solve's levels and sizes.
//
// A resetup with new values on the same pattern keeps each level's
// coarsening. With a piecewise constant P it keeps aggregates, plans and
// coarse patterns and recomputes the values (one pass per level). Otherwise
// classical AMG rebuilds P on its splitting, strength and interpolation
// pattern (smoothed aggregation on its aggregates) and forms the products
// anew.
//
// Cycles: the one cycle of amg/cycle.h (V, W, F, the K-cycles CG and CGF,
// error scaling) on the distributed levels; its inner products are global
// sums.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "amg/amg_level.h"
#include "amg/coarsening.h"
#include "amg/hierarchy_view.h"
#include "dist/dist_classical.h"
#include "dist/dist_matrix.h"
#include "solvers/solver.h"

namespace jaxamg::dist {

template <class T>
class DistAmg final : public Solver<T>, public HierarchyViewSource<T> {
 public:
  DistAmg(SolverContext& ctx, const std::string& scope, const Communicator& comm);
  // Global rows and nonzeros per level, finest first.
  std::vector<LevelInfo> hierarchy() const override;
  // The grid table (print_grid_stats) of the global hierarchy: rows and
  // nonzeros over every process, the storage summed at setup. Not
  // collective: each process writes it to its own log.
  void print_setup_stats() const override;
  // Collective. The solver for A^T (`At`: the distributed transpose of this
  // solver's level-0 matrix) on this hierarchy's transfer operators.
  std::unique_ptr<Solver<T>> make_transposed(std::shared_ptr<const CsrMatrix<T>> At) const override;
  // The levels, P's halo plans and the consolidated coarse solve, for a
  // device copy of the hierarchy (dist_amg_levels.cc).
  HierarchyView<T> view() const override;

 protected:
  bool supports_distribution() const override { return true; }
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;

 private:
  struct Level {
    std::shared_ptr<const CsrMatrix<T>> A;  // distributed (dist attached)
    const DistOperator<T>* op = nullptr;
    // Local rows x [owned | ghost] coarse columns: block diagonal (no ghost
    // columns) when coarsened rank-locally; classical AMG across processes
    // interpolates from other processes' C points, ghost coarse column k
    // being global coarse row p_ghosts[k].
    CsrMatrix<T> P;
    std::vector<int64_t> p_ghosts;
    // Halo plan of P's ghost coarse columns (on the coarse partition), for
    // prolongation (forward) and restriction (reverse); null for a
    // piecewise constant P, which never has ghost columns.
    std::shared_ptr<const HaloPlan> p_plan;
    std::vector<T> p_halo;  // P's ghost coarse values / partial sums
    std::vector<T> p_back;  // partial sums received for owned coarse rows
    // The coarsening of this level, kept so that a resetup with new values
    // rebuilds P on the same splitting: rank-local (Coarsening::rebuild) or
    // classical across processes (DistClassical::rebuild).
    std::unique_ptr<Coarsening<T>> coarsening;
    std::unique_ptr<DistClassical<T>> classical;
    bool piecewise = false;  // at most one entry per row of P on every process
    // Piecewise P: per entry k of A, p_i p_j and its slot in the coarse
    // matrix (-1: none), for value-only resetups.
    std::vector<T> coef;
    std::vector<Index> coarse_slot;
    Index nc = 0;
    std::unique_ptr<Solver<T>> smoother;
    Vector<T> b, x, r;
    Vector<T> kr, kz, kp, ky;  // K-cycle: CG vectors (levels > 0)
    Vector<T> e, ae;           // error scaling
    // The level's CPU backend (inner products summed over the processes):
    // the K-cycle's scalars and the error scaling's scale (amg/cycle.h).
    std::unique_ptr<cpu::VectorBackend<T>> backend;
    int scale_counter = 0;
    int64_t global_rows = 0, global_nnz = 0;
    int64_t global_bytes = 0;  // the level's storage on every process
  };

  // The levels of make_transposed: src's P, transposed coarse matrices.
  void transpose_levels(const DistAmg& src);
  // Work vectors, smoothers and the consolidated coarse solver of the
  // levels built (the end of every setup).
  void finish_levels();
  // The storage of a level on this process: A, P and the cycle's vectors.
  static std::size_t local_bytes(const Level& L);
  // A level's coarsening and P from the last setup, for a rebuild.
  struct Kept {
    std::unique_ptr<Coarsening<T>> coarsening;
    std::unique_ptr<DistClassical<T>> classical;
    CsrMatrix<T> P;
  };
  // Coarsens level l (rebuilding `previous.coarsening` on the pattern of
  // `previous.P` when given); returns false if it should be the coarsest.
  bool coarsen(int l, int64_t min_rows, Kept previous);
  // Classical coarsening across processes (dist_classical.h) of level l;
  // false if the level should be the coarsest.
  bool coarsen_across(int l, int64_t min_rows, Kept& previous);
  // Whether level l coarsens with classical AMG across processes.
  bool across_processes(int l) const;
  // Whether the coarse level (global_nc rows) is kept, as the serial AMG.
  bool accept_coarse(const Level& L, int64_t global_nc, int64_t min_rows) const;
  // A_c = P^T A P for a general P (classical, smoothed), with or without
  // ghost coarse columns (dist_amg_galerkin.cc).
  LocalMatrix<T> galerkin(Level& L, const RowPartition& cpart, Index coarse_block);
  void consolidate();
  // Resetup with the sparsity of the previous setup: new values only.
  void revalue();
  // The levels as the one cycle of amg/cycle.h sees them
  // (dist_amg_levels.cc): restriction and prolongation exchange along P's
  // plan, the coarsest level is gathered to rank 0 and solved there.
  class CycleLevels;
  // Collective: gathers b, solves on rank 0, scatters x (owned coarsest rows).
  void coarse_solve(const T* b, T* x) const;

  Communicator comm_;
  const DistAmg* transpose_of_ = nullptr;  // set during make_transposed's setup
  std::vector<Level> levels_;
  CycleParams cycle_;
  // Consolidated coarsest level: the gathered system and its solver on rank 0.
  std::unique_ptr<GatheredSystem<T>> gathered_;
  std::unique_ptr<Solver<T>> coarse_;
  bool consolidated_ = false;
  mutable Vector<T> cb_, cx_;  // coarse_solve's gathered vectors
};

}  // namespace jaxamg::dist
