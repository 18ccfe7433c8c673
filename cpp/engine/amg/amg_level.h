// One level of an AMG hierarchy and the cycle parameters, shared by the
// setup (amg_solver.cc) and the cycles (amg_cycle.cc).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "amg/coarsening.h"
#include "backend/cpu/vector_backend.h"
#include "backend/cpu/spgemm.h"
#include "core/csr_matrix.h"
#include "core/types.h"
#include "solvers/solver.h"

namespace jaxamg {

enum class CycleType { kV, kW, kF, kCG, kCGF };

// The AMG-scope parameters the cycle reads (AmgX names in comments).
struct CycleParams {
  CycleType type = CycleType::kV;  // cycle
  int presweeps = 1;               // presweeps
  int postsweeps = 1;              // postsweeps
  int finest_sweeps = -1;          // finest_sweeps: replaces pre/post on level 0
  int coarsest_sweeps = 2;         // coarsest_sweeps: without a coarse solver
  bool intensive_smoothing = false;
  int cycle_iters = 2;             // CG/CGF steps per coarse level
  int error_scaling = 0;           // 0, 2 (residual 2-norm) or 3 (error A-norm)
  int reuse_scale = 0;             // keep a computed scale for this many cycles
  int scaling_smoother_steps = 2;  // sweeps on the correction before scaling

  // Sweeps on level l for a configured count n. AmgX: finest_sweeps
  // replaces a nonzero pre/post count on level 0; intensive_smoothing adds
  // (level - 2) sweeps to nonzero counts.
  int sweeps(int l, int n) const {
    if (l == 0 && finest_sweeps != -1) return n == 0 ? 0 : finest_sweeps;
    if (n != 0 && intensive_smoothing) return n + l - 2 > 0 ? n + l - 2 : 0;
    return n;
  }
};

// The cycle parameters of the AMG scope `scope`, checked (ConfigError
// naming the parameter, its value and the fix).
CycleParams read_cycle_params(const Config& config, const std::string& scope);
// Throws the ConfigError "AMG (scope 'scope'): name = value is invalid; fix"
// unless ok.
void require_amg_param(bool ok, const std::string& scope, const std::string& name, double value,
                       const std::string& fix);

template <class T>
struct AmgLevel {
  // The operator of this level. Level 0 shares the user's matrix; coarse
  // levels own theirs (`owned` points to the same object, writable so that a
  // resetup can refresh the values in place).
  std::shared_ptr<const CsrMatrix<T>> A;
  std::shared_ptr<CsrMatrix<T>> owned;

  // Transfer to the next coarser level (empty on the coarsest). With
  // r_is_pt, R = P^T is not stored (ops.R is empty) and the cycle restricts
  // with P^T; `shown` holds both operators once AmgSolver::transfer asks.
  std::unique_ptr<Coarsening<T>> coarsening;
  TransferOperators<T> ops;
  bool r_is_pt = false;
  mutable std::unique_ptr<TransferOperators<T>> shown;
  cpu::GalerkinProduct<T> galerkin;

  std::unique_ptr<Solver<T>> smoother;  // nullptr: no smoothing on this level

  // Work vectors, sized by the first cycle after a setup (AmgSolver::
  // allocate_work); later cycles never allocate.
  Vector<T> b, x;           // right-hand side and iterate (levels > 0)
  Vector<T> r;              // residual (with a stored R, or error scaling)
  Vector<T> restrict_work;  // r_is_pt: per-thread partial sums of P^T r
  Vector<T> e, ae;          // error scaling: smoothed correction and A e
  Vector<T> kr, kz, kp, ky;  // K-cycle: CG vectors (levels > 0)

  // The level's CPU backend: its slots hold the K-cycle's scalars and the
  // error scaling's last scale (amg/cycle.h).
  std::unique_ptr<cpu::VectorBackend<T>> backend;
  // error_scaling: how many more cycles may reuse the last scale.
  int scale_counter = 0;

  Index rows() const { return A ? A->nrows : 0; }
  bool has_coarser() const { return ops.P.ncols > 0; }
  // Bytes of this level's matrices, transfer operators and work vectors.
  std::size_t bytes() const;
};

// One cycle on `levels` starting at level 0: b and x are level 0's vectors;
// x is overwritten if x_is_zero. `coarse` solves on the coarsest level
// (nullptr: coarsest_sweeps smoother sweeps there).
template <class T>
void run_cycle(std::vector<AmgLevel<T>>& levels, Solver<T>* coarse, const CycleParams& params,
               const T* b, T* x, bool x_is_zero);

}  // namespace jaxamg
