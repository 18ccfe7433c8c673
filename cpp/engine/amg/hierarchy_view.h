// A hierarchy held in host memory, as a backend whose vectors live
// elsewhere (the CUDA backend) copies it: each level's matrix, transfers and
// set-up smoother, and for a distributed hierarchy the halo exchanges of its
// transfers, the reductions over processes and the coarsest level's solve.
// The serial AMG solver (AmgSolver) and the distributed one (dist/DistAmg)
// both describe themselves this way, so that one device hierarchy serves
// both.
#pragma once
#include <functional>
#include <vector>

#include "amg/amg_level.h"
#include "core/csr_matrix.h"
#include "core/distribution.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
struct HierarchyLevelView {
  // The level matrix; with a Distribution (A->dist) its columns are
  // [owned | ghost] and its products exchange ghosts along
  // A->dist->packed_halo().
  const CsrMatrix<T>* A = nullptr;
  // To the next level (nullptr on the coarsest). R nullptr: R = P^T.
  const CsrMatrix<T>* P = nullptr;
  const CsrMatrix<T>* R = nullptr;
  // P's ghost coarse columns (distributed, coarsened across processes):
  // their exchange over the next level's owned rows, forward for
  // prolongation and reverse for restriction; nullptr when P has none.
  const PackedHalo* p_halo = nullptr;
  const Solver<T>* smoother = nullptr;  // nullptr: not smoothed
};

template <class T>
struct HierarchyView {
  CycleParams cycle;
  std::vector<HierarchyLevelView<T>> levels;
  // The coarsest level's solver on one process (a dense LU, or nullptr: the
  // coarsest level is smoothed).
  const Solver<T>* coarse_solver = nullptr;
  // Distributed: the inner products' sum over processes, and the
  // consolidated coarsest solve on host vectors of the coarsest level's
  // owned rows (collective; empty when the coarsest level is smoothed).
  const Reducer* reducer = nullptr;
  std::function<void(const T* b, T* x)> host_coarse;
};

// What a distributed multigrid (Distribution::make_multigrid) implements
// besides Solver<T>, so that the AMG solver holding it can describe it.
template <class T>
class HierarchyViewSource {
 public:
  virtual ~HierarchyViewSource() = default;
  // The set-up hierarchy; valid until the next setup.
  virtual HierarchyView<T> view() const = 0;
};

}  // namespace jaxamg
