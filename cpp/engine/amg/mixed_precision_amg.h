// AMG with a float32 hierarchy inside a float64 solve (an extension,
// "x_amg_precision": "FLOAT" in an AMG scope; AmgX calls this mode dDFI:
// double vectors, float matrix). The AMG cycle is memory bound, so a float32
// copy of every level halves the bytes a preconditioner application moves,
// while the outer Krylov method keeps float64 vectors and the float64 fine
// matrix and still reaches float64 tolerances: a preconditioner only has to
// approximate A^-1. A fixed number of float32 V-cycles is still a fixed
// linear operator, so PCG stays valid; the flexible methods (PCGF, FGMRES)
// take it as well.
//
// Setup converts A to float32 and builds an ordinary AmgSolver<float> on it
// (same scope, same parameters); a resetup converts the new values and lets
// that solver reuse its structure. A solve iteration is one float32 cycle:
// from a zero guess, x = C(b) with b rounded to float32; from a nonzero x,
// the residual b - A x is formed in float64 with the fine float64 matrix,
// rounded, cycled from zero and the correction added in float64 (iterative
// refinement), so AMG used as the solver itself also converges to float64
// accuracy. make_transposed transposes the float32 hierarchy (AmgSolver's
// own make_transposed), as the adjoint of a gradient needs.
//
// In a float32 solve the setting changes nothing (the factory builds the
// ordinary AMG). Not on a distributed matrix (setup throws NotSupported).
// With replace_values (reuse_setup) the float32 hierarchy keeps the values
// of its setup, as a float64 hierarchy keeps its coarse levels.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "amg/amg_solver.h"
#include "solvers/solver.h"

namespace jaxamg {

// True if the AMG scope `scope` asks for a float32 hierarchy.
bool float_hierarchy_requested(const Config& cfg, const std::string& scope);

class MixedPrecisionAmg final : public Solver<double> {
 public:
  MixedPrecisionAmg(SolverContext& ctx, const std::string& scope);

  std::unique_ptr<Solver<double>> make_transposed(
      std::shared_ptr<const CsrMatrix<double>> At) const override;
  std::vector<LevelInfo> hierarchy() const override;
  void print_setup_stats() const override {
    if (amg_) amg_->print_setup_stats();
  }

  // The float32 AMG solver that holds the hierarchy (read by the CUDA
  // backend, which uploads it, and by reports).
  const AmgSolver<float>& float_amg() const;

 protected:
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const double* b, double* x, bool x_is_zero) override;
  // Accepted here so that setup can reject a distributed matrix with a
  // message naming this setting (solver_setup throws).
  bool supports_distribution() const override { return true; }

 private:
  std::unique_ptr<Solver<float>> amg_;          // an AmgSolver<float>
  std::shared_ptr<const CsrMatrix<float>> Af_;  // float32 copy of the fine matrix
  Vector<float> b_lo_, x_lo_;                   // the cycle's right-hand side and result
  Vector<double> r_hi_;                         // float64 residual (refinement steps only)
  // Set by make_transposed: amg_ arrives set up on A^T.
  bool amg_ready_ = false;
};

}  // namespace jaxamg
