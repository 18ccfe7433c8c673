// Classical (Ruge-Stueben family) coarsening of one level: strength of
// connection, C/F splitting (PMIS, HMIS, their aggressive variants) and
// interpolation (D1, D2 = extended+i, MULTIPASS), with R = P^T.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "amg/classical/strength.h"
#include "amg/classical/truncation.h"
#include "amg/coarsening.h"

namespace jaxamg::classical {

enum class Selector { kPmis, kHmis, kAggressivePmis, kAggressiveHmis };
// kTwoStageD2: two-stage extended+i on aggressive levels (D2 elsewhere).
enum class Interpolator { kD1, kD2, kMultipass, kTwoStageD2 };

struct ClassicalParams {
  Selector selector = Selector::kPmis;
  Interpolator interpolator = Interpolator::kD1;
  StrengthParams strength;
  Truncation truncation;
  uint64_t seed = 0x5eed;  // PMIS tie-breaking; results depend on nothing else
};

// Wall-clock seconds of the last build or rebuild, by phase.
struct ClassicalTimings {
  double strength = 0, selection = 0, interpolation = 0, transpose = 0;
};

// The parameters make_classical_coarsening reads from an AMG scope for
// `level` (aggressive_* on the first aggressive_levels levels). Throws
// ConfigError / NotSupported naming the parameter, the value and the choices.
ClassicalParams classical_params(const Config& cfg, const std::string& scope, int level);

template <class T>
class ClassicalCoarsening : public Coarsening<T> {
 public:
  explicit ClassicalCoarsening(const ClassicalParams& p) : p_(p) {}

  void build(const CsrMatrix<T>& A, TransferOperators<T>& ops) override;
  // Keeps the strength mask, the splitting and P's pattern; recomputes the
  // weights from A's new values. Throws InvalidInput if A's shape or number
  // of entries differs from the last build.
  void rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) override;

  bool restriction_is_transpose() const override { return true; }

  // Block systems (block_dim k > 1, or functions given for a coarse level)
  // are coarsened unknown by unknown, as hypre's num_functions: strength
  // and interpolation see only the couplings between unknowns of the same
  // function (the others are dropped, not lumped), so every coarse point
  // interpolates its own function. The coarse matrix R A P keeps every
  // coupling; its levels are scalar, each point tagged with its function.
  void set_functions(const std::vector<Index>& functions) override { functions_ = functions; }
  const std::vector<Index>* coarse_functions() const override {
    return coarse_functions_.empty() ? nullptr : &coarse_functions_;
  }
  Index coarse_block_dim(Index /*fine_block_dim*/) const override { return 1; }

  const ClassicalParams& params() const { return p_; }
  // kCoarse / kFine per fine point, from the last build.
  const std::vector<int8_t>& splitting() const { return cf_; }
  Index num_coarse() const { return n_coarse_; }
  const ClassicalTimings& timings() const { return timings_; }
  std::vector<std::pair<std::string, double>> phase_seconds() const override {
    return {{"strength", timings_.strength},
            {"selection", timings_.selection},
            {"interpolation", timings_.interpolation},
            {"transpose", timings_.transpose}};
  }

 private:
  void interpolate(const CsrMatrix<T>& A, const std::vector<Index>& diag_pos,
                   const CsrMatrix<T>* pattern, TransferOperators<T>& ops);
  // A itself, or (with several functions) its couplings within a function,
  // stored in `filtered`.
  const CsrMatrix<T>& within_functions(const CsrMatrix<T>& A, CsrMatrix<T>& filtered);

  ClassicalParams p_;
  void pack_strong();
  void unpack_strong();

  // Strength mask on A's pattern: one byte per entry while (re)building,
  // kept as bits for a rebuild.
  std::vector<uint8_t> strong_;
  std::vector<uint64_t> strong_bits_;
  std::size_t strong_nnz_ = 0;
  std::vector<int8_t> cf_;
  std::vector<int8_t> cf_first_;  // first-stage splitting (two-stage interpolation)
  Index n_coarse_ = 0;
  Index built_rows_ = -1, built_nnz_ = -1;
  std::vector<Index> functions_, coarse_functions_;  // empty: one function
  ClassicalTimings timings_;
};

}  // namespace jaxamg::classical
