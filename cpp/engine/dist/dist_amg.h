// Distributed AMG: the hierarchy and cycles the engine's AMG hands over
// when its matrix is distributed (Distribution::make_multigrid).
//
// - Coarsening is rank-local: each process coarsens its owned square block
//   with the engine's configured algorithm (AGGREGATION, or CLASSICAL with
//   its PMIS/HMIS splitting and interpolation), so P is block diagonal and
//   restriction/prolongation need no communication. Aggregates and C/F
//   splittings never cross processes; for classical AMG and smoothed
//   aggregation the couplings to other processes are lumped onto the
//   diagonal of the coarsened block (PMIS across boundaries is not built).
// - Galerkin A_c = P^T A P is formed row by row on the owning process. A
//   piecewise constant P (aggregation) needs only the coarse ids and P values
//   of ghost rows; a general P (classical, smoothed aggregation) needs the
//   ghost rows of P; both travel through the level's halo plan. A_c gets its
//   own partition and plan.
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
// classical AMG rebuilds P on its splitting and interpolation pattern
// (smoothed aggregation on its aggregates) and forms the products anew.
//
// Cycles: V, W, F and the K-cycles CG and CGF, with the serial AMG's
// recursion (amg/amg_cycle.cc); the K-cycle's inner products are global sums.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "amg/amg_level.h"
#include "amg/coarsening.h"
#include "dist/dist_matrix.h"
#include "solvers/solver.h"

namespace jaxamg::dist {

template <class T>
class DistAmg final : public Solver<T> {
 public:
  DistAmg(SolverContext& ctx, const std::string& scope, const Communicator& comm);
  // Global rows and nonzeros per level, finest first.
  std::vector<LevelInfo> hierarchy() const override;
  // Collective. The solver for A^T (`At`: the distributed transpose of this
  // solver's level-0 matrix) on this hierarchy's transfer operators.
  std::unique_ptr<Solver<T>> make_transposed(std::shared_ptr<const CsrMatrix<T>> At) const override;

 protected:
  bool supports_distribution() const override { return true; }
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;

 private:
  struct Level {
    std::shared_ptr<const CsrMatrix<T>> A;  // distributed (dist attached)
    const DistOperator<T>* op = nullptr;
    CsrMatrix<T> P;          // local rows x local coarse rows (block diagonal)
    // The rank-local coarsening of this level, kept so that a resetup with
    // new values rebuilds P on the same splitting (Coarsening::rebuild).
    std::unique_ptr<Coarsening<T>> coarsening;
    bool piecewise = false;  // at most one entry per row of P on every process
    // Piecewise P: per entry k of A, p_i p_j and its slot in the coarse
    // matrix (-1: none), for value-only resetups.
    std::vector<T> coef;
    std::vector<Index> coarse_slot;
    Index nc = 0;
    std::unique_ptr<Solver<T>> smoother;
    Vector<T> b, x, r;
    Vector<T> kr, kz, kp, ky;  // K-cycle: CG vectors (levels > 0)
    int64_t global_rows = 0, global_nnz = 0;
  };

  // The levels of make_transposed: src's P, transposed coarse matrices.
  void transpose_levels(const DistAmg& src);
  // Work vectors, smoothers and the consolidated coarse solver of the
  // levels built (the end of every setup).
  void finish_levels();
  // A level's coarsening and P from the last setup, for a rebuild.
  struct Kept {
    std::unique_ptr<Coarsening<T>> coarsening;
    CsrMatrix<T> P;
  };
  // Coarsens level l (rebuilding `previous.coarsening` on the pattern of
  // `previous.P` when given); returns false if it should be the coarsest.
  bool coarsen(int l, int64_t min_rows, Kept previous);
  // A_c = P^T A P for a general block-diagonal P (classical, smoothed).
  LocalMatrix<T> galerkin(Level& L, const RowPartition& cpart, Index coarse_block);
  void consolidate();
  // Resetup with the sparsity of the previous setup: new values only.
  void revalue();
  void coarse_solve(const T* b, T* x);
  // One cycle of kind `type` on level l (x = 0 on entry if x_is_zero):
  // pre-smoothing, restriction, the coarser level by dispatch(),
  // prolongation, post-smoothing.
  void fixed(std::size_t l, CycleType type, const T* b, T* x, bool x_is_zero);
  // Level m's system from x = 0: V once, W twice, F an F- then a V-cycle,
  // CG/CGF cycle_iters steps of (flexible) CG preconditioned by the cycle.
  void dispatch(std::size_t m, CycleType type);
  // Global inner product of two level vectors (the same on every process).
  double dot(const Level& L, const T* a, const T* b) const;

  Communicator comm_;
  const DistAmg* transpose_of_ = nullptr;  // set during make_transposed's setup
  std::vector<Level> levels_;
  int presweeps_ = 1, postsweeps_ = 1, coarsest_sweeps_ = 2, cycle_iters_ = 2;
  CycleType type_ = CycleType::kV;
  // Consolidated coarsest level: the solver on rank 0 and the gather layout.
  std::unique_ptr<Solver<T>> coarse_;
  bool consolidated_ = false;
  std::vector<int> counts_, displs_;
  Vector<T> cb_, cx_;
};

}  // namespace jaxamg::dist
