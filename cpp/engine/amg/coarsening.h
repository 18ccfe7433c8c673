// The interface between the AMG cycle (amg/amg_solver.*) and the algorithms
// that choose coarse grids and build transfer operators (classical/ and
// aggregation/). One Coarsening object lives per level, so that a resetup
// with the same sparsity can reuse its symbolic work.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/csr_matrix.h"
#include "core/near_nullspace.h"

namespace jaxamg {

template <class T>
struct TransferOperators {
  CsrMatrix<T> P;  // prolongation: n_fine x n_coarse
  CsrMatrix<T> R;  // restriction:  n_coarse x n_fine (P^T unless stated)
};

template <class T>
class Coarsening {
 public:
  virtual ~Coarsening() = default;
  // Full setup of one level: choose the coarse points or aggregates and
  // build P and R. Produces P with 0 columns if A cannot be coarsened.
  virtual void build(const CsrMatrix<T>& A, TransferOperators<T>& ops) = 0;
  // A has the sparsity seen by build(): keep the splitting/aggregates and
  // P's pattern, recompute the values of P and R.
  virtual void rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) { build(A, ops); }
  // True if the R built is exactly P^T: the AMG level then keeps only P once
  // the coarse matrix is built, and restricts with P^T.
  virtual bool restriction_is_transpose() const { return false; }
  // Aggregation builds A_c without a general SpGEMM; classical returns false
  // and the AMG level computes R A P.
  virtual bool builds_coarse_matrix() const { return false; }
  virtual void coarse_matrix(const CsrMatrix<T>& /*A*/, const TransferOperators<T>& /*ops*/,
                             CsrMatrix<T>& /*Ac*/) {}
  // Near-null-space vectors of this level, given before build(); returns
  // false if the algorithm does not use them (classical, unsmoothed
  // aggregation). A coarsening that uses them hands the coarse level's
  // vectors after build() (nullptr: the coarse level gets none).
  virtual bool set_near_nullspace(const NearNullspace& /*B*/) { return false; }
  virtual const NearNullspace* coarse_near_nullspace() const { return nullptr; }
  // Block size of the coarse matrix (smoothed aggregation with m vectors: m;
  // classical AMG on a block system: 1, its levels being unknown-based).
  virtual Index coarse_block_dim(Index fine_block_dim) const { return fine_block_dim; }
  // m > 1 when P is made of (fine block) x m blocks worth forming the
  // Galerkin product on (backend/cpu/block_galerkin.h: smoothed aggregation
  // with m vectors); 1 for the scalar product.
  virtual Index galerkin_block() const { return 1; }
  // The function (the kind of unknown: x, y or z displacement, ...) of each
  // row of a level below the finest, given before build(); the finest
  // level's follow from its block_dim (row i: i mod block_dim). A
  // coarsening that uses them (classical AMG) hands the coarse level's after
  // build(); the others ignore them and return nullptr.
  virtual void set_functions(const std::vector<Index>& /*functions*/) {}
  virtual const std::vector<Index>* coarse_functions() const { return nullptr; }
  // Wall-clock seconds of the phases of the last build/rebuild, by name
  // (statistics only; empty if the algorithm does not time itself).
  virtual std::vector<std::pair<std::string, double>> phase_seconds() const { return {}; }
};

// Chooses the algorithm from `algorithm` (CLASSICAL | AGGREGATION) in the
// AMG scope; `level` lets classical AMG use aggressive coarsening on the
// first aggressive_levels levels. Throws ConfigError for a selector that
// does not belong to the algorithm (as AmgX does).
template <class T>
std::unique_ptr<Coarsening<T>> make_coarsening(const Config& cfg, const std::string& scope,
                                               int level);

// Implemented in classical/ and aggregation/.
template <class T>
std::unique_ptr<Coarsening<T>> make_classical_coarsening(const Config& cfg,
                                                         const std::string& scope, int level);
template <class T>
std::unique_ptr<Coarsening<T>> make_aggregation_coarsening(const Config& cfg,
                                                           const std::string& scope, int level);

}  // namespace jaxamg
