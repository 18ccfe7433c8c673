#include "amg/mixed_precision_amg.h"

#include <cfloat>
#include <cmath>

#include "backend/cpu/blas.h"
#include "backend/cpu/precision.h"
#include "core/error.h"
#include "core/format.h"

namespace jaxamg {

namespace {

// A float32 copy of A; throws InvalidInput if a value overflows float32
// (the hierarchy would hold infinities).
std::shared_ptr<const CsrMatrix<float>> to_float(const CsrMatrix<double>& A,
                                                 const std::string& scope) {
  auto Af = std::make_shared<CsrMatrix<float>>(convert_values<float>(A));
  if (!cpu::all_finite(Af->val.size(), Af->val.data())) {
    for (std::size_t k = 0; k < A.val.size(); ++k) {
      if (std::abs(A.val[k]) > FLT_MAX) {
        throw InvalidInput("A: value " + std::to_string(k) + " = " + format_number(A.val[k]) +
                           " does not fit float32, which the AMG of scope '" + scope +
                           "' uses (x_amg_precision FLOAT); scale the system or set "
                           "x_amg_precision to SAME");
      }
    }
  }
  return Af;
}

}  // namespace

bool float_hierarchy_requested(const Config& cfg, const std::string& scope) {
  return cfg.get_string("x_amg_precision", scope) == "FLOAT";
}

MixedPrecisionAmg::MixedPrecisionAmg(SolverContext& ctx, const std::string& scope)
    : Solver<double>(ctx, scope, "AMG"), amg_(std::make_unique<AmgSolver<float>>(ctx, scope)) {}

const AmgSolver<float>& MixedPrecisionAmg::float_amg() const {
  // amg_ is made as an AmgSolver<float> or by its make_transposed, which
  // returns one.
  return static_cast<const AmgSolver<float>&>(*amg_);
}

void MixedPrecisionAmg::solver_setup(bool reuse_structure) {
  if (A_->dist) {
    throw NotSupported("AMG (scope '" + scope_ + "'): x_amg_precision FLOAT does not run on a "
                       "matrix distributed over several processes; set x_amg_precision to SAME");
  }
  if (amg_ready_) {
    amg_ready_ = false;
  } else {
    // A fresh float32 matrix at every setup: the levels of the previous
    // hierarchy may still point at the old one while they are rebuilt.
    Af_ = to_float(*A_, scope_);
    amg_->setup(Af_, reuse_structure);
  }
  const std::size_t n = static_cast<std::size_t>(A_->nrows);
  b_lo_.resize(n);
  x_lo_.resize(n);
  Vector<double>().swap(r_hi_);  // sized by the first refinement step
}

IterationResult MixedPrecisionAmg::solve_iteration(const double* b, double* x, bool x_is_zero) {
  const std::size_t n = rows();
  if (x_is_zero) {
    cpu::convert(n, b, b_lo_.data());
    amg_->apply(b_lo_.data(), x_lo_.data(), /*x_is_zero=*/true, 1);
    cpu::convert(n, x_lo_.data(), x);
    return IterationResult::kContinue;
  }
  // Refinement: the residual in float64, the correction from a float32
  // cycle. A preconditioner applied once from zero never gets here.
  if (r_hi_.size() != n) r_hi_.resize(n);
  residual_of(x, b, r_hi_.data());
  cpu::convert(n, r_hi_.data(), b_lo_.data());
  amg_->apply(b_lo_.data(), x_lo_.data(), /*x_is_zero=*/true, 1);
  cpu::add_converted(n, x_lo_.data(), x);
  return IterationResult::kContinue;
}

std::vector<LevelInfo> MixedPrecisionAmg::hierarchy() const { return amg_->hierarchy(); }

std::unique_ptr<Solver<double>> MixedPrecisionAmg::make_transposed(
    std::shared_ptr<const CsrMatrix<double>> At) const {
  if (!Af_) {
    throw InvalidInput("AMG: make_transposed called before setup; set the solver up first");
  }
  auto s = std::make_unique<MixedPrecisionAmg>(ctx_, scope_);
  copy_loop_settings(*s);
  s->Af_ = to_float(*At, scope_);
  s->amg_ = amg_->make_transposed(s->Af_);
  s->amg_ready_ = true;
  s->setup(std::move(At));
  return s;
}

}  // namespace jaxamg
