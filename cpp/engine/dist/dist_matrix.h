// One process's rows of a distributed matrix as an engine CsrMatrix: the
// columns renumbered to [owned | ghost] local indices, the halo plan of
// those ghosts, and the Distribution (DistOperator) the solvers use for
// products and reductions.
#pragma once
#include <memory>
#include <vector>

#include "core/csr_matrix.h"
#include "dist/halo_plan.h"
#include "dist/partition.h"

namespace jaxamg::dist {

// The Distribution of one matrix structure: the halo exchange plus the
// products, which overlap the exchange with the rows that have no ghost
// column (the interior) and finish the boundary rows when the ghosts are in.
template <class T>
class DistOperator final : public Distribution<T> {
 public:
  DistOperator(std::shared_ptr<const HaloPlan> plan, const RowPartition& part,
               const CsrMatrix<T>& A);

  int64_t row_start() const override { return part_.row_start; }
  int64_t global_rows() const override { return part_.nglobal; }
  void spmv(const CsrMatrix<T>& A, const T* x, T* y) const override;
  void residual(const CsrMatrix<T>& A, const T* x, const T* b, T* r) const override;
  const T* ghost_values(const T* x) const override;
  const PackedHalo& packed_halo() const override { return *plan_; }
  // Gathered on rank 0 (dist/gathered.h).
  std::unique_ptr<GatheredSystem<T>> gather_system(const CsrMatrix<T>& A) const override;
  // Distributed greedy colouring (dist/dist_coloring.h).
  std::vector<int> color_rows(const CsrMatrix<T>& A, Index block_dim,
                              int* num_colors) const override;
  // Distributed aggregation AMG (dist/dist_amg.h).
  std::unique_ptr<Solver<T>> make_multigrid(SolverContext& ctx,
                                            const std::string& scope) const override;

  void sum(double* v, int count) const override { plan_->comm().sum(v, count); }
  double max(double v) const override { return plan_->comm().max(v); }
  void agree(const std::string& e, int kind) const override { plan_->comm().agree(e, kind); }
  int rank() const override { return plan_->comm().rank(); }
  int size() const override { return plan_->comm().size(); }

  const HaloPlan& plan() const { return *plan_; }
  const RowPartition& partition() const { return part_; }

 private:
  // y = b - A x (subtract) or y = A x on the listed rows.
  template <bool Subtract>
  void product(const CsrMatrix<T>& A, const T* x, const T* b, T* y) const;

  std::shared_ptr<const HaloPlan> plan_;
  RowPartition part_;
  std::vector<Index> interior_, boundary_;
  mutable std::vector<T> ghost_;
};

// Collective. The global ids of the ghost columns of a matrix with n owned
// rows distributed by `op`: owners send their row ids along the halo plan.
template <class T>
std::vector<int64_t> ghost_global_ids(const DistOperator<T>& op, Index n);

// The local rows with global column indices, as a caller hands them over.
template <class T>
struct GlobalRows {
  const int32_t* row_ptr = nullptr;  // n_local + 1
  const int32_t* col = nullptr;      // global columns
  const T* val = nullptr;
  int64_t nnz = 0;
};

// The result of localising GlobalRows: the matrix (dist attached), the
// ghosts' global ids, and for value updates the canonical slot of every
// input entry (empty when the input was already canonical).
template <class T>
struct LocalMatrix {
  std::shared_ptr<CsrMatrix<T>> A;
  std::vector<int64_t> ghosts;
  std::vector<Index> value_map;
  std::shared_ptr<const HaloPlan> plan;
};

// Collective. Validates the rows (agreed across processes), renumbers the
// columns, canonicalises (sort, sum duplicates), builds the halo plan and
// attaches the DistOperator. `what` names the matrix in errors.
template <class T>
LocalMatrix<T> localize(const Communicator& comm, const RowPartition& part,
                        const GlobalRows<T>& rows, Index block_dim, const std::string& what = "A");

// Builds the plan and the DistOperator for a local matrix whose columns are
// already [owned | ghost] with the given sorted ghost ids, and attaches it.
template <class T>
std::shared_ptr<const HaloPlan> distribute(const Communicator& comm, const RowPartition& part,
                                           const std::vector<int64_t>& ghosts, CsrMatrix<T>& A);

}  // namespace jaxamg::dist
