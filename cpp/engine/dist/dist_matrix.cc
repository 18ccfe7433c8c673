#include "dist/dist_matrix.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/parallel.h"
#include "dist/dist_amg.h"
#include "dist/dist_coloring.h"
#include "dist/gathered.h"

namespace jaxamg::dist {

template <class T>
DistOperator<T>::DistOperator(std::shared_ptr<const HaloPlan> plan, const RowPartition& part,
                              const CsrMatrix<T>& A)
    : plan_(std::move(plan)), part_(part) {
  ghost_.resize(static_cast<std::size_t>(plan_->num_ghosts()));
  for (Index i = 0; i < A.nrows; ++i) {
    bool has_ghost = false;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1] && !has_ghost; ++k) {
      has_ghost = A.col[k] >= A.nrows;
    }
    (has_ghost ? boundary_ : interior_).push_back(i);
  }
}

template <class T>
template <bool Subtract>
void DistOperator<T>::product(const CsrMatrix<T>& A, const T* x, const T* b, T* y) const {
  const Index n = A.nrows;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  const T* g = ghost_.data();
  plan_->begin(x, ghost_.data());
  // Interior rows read owned values only: computed while messages travel.
  const Index ni = static_cast<Index>(interior_.size());
  const Index* rows = interior_.data();
#pragma omp parallel for schedule(static) if (ni > kParallelRows)
  for (Index q = 0; q < ni; ++q) {
    const Index i = rows[q];
    T s = 0;
    for (Index k = rp[i]; k < rp[i + 1]; ++k) s += v[k] * x[ci[k]];
    y[i] = Subtract ? b[i] - s : s;
  }
  plan_->end();
  const Index nb = static_cast<Index>(boundary_.size());
  const Index* brows = boundary_.data();
#pragma omp parallel for schedule(static) if (nb > kParallelRows)
  for (Index q = 0; q < nb; ++q) {
    const Index i = brows[q];
    T s = 0;
    for (Index k = rp[i]; k < rp[i + 1]; ++k) {
      const Index c = ci[k];
      s += v[k] * (c < n ? x[c] : g[c - n]);
    }
    y[i] = Subtract ? b[i] - s : s;
  }
}

template <class T>
void DistOperator<T>::spmv(const CsrMatrix<T>& A, const T* x, T* y) const {
  product<false>(A, x, nullptr, y);
}

template <class T>
void DistOperator<T>::residual(const CsrMatrix<T>& A, const T* x, const T* b, T* r) const {
  product<true>(A, x, b, r);
}

template <class T>
const T* DistOperator<T>::ghost_values(const T* x) const {
  plan_->exchange(x, ghost_.data());
  return ghost_.data();
}

template <class T>
std::unique_ptr<GatheredSystem<T>> DistOperator<T>::gather_system(const CsrMatrix<T>& A) const {
  return std::make_unique<Gathered<T>>(*this, A, "A");
}

template <class T>
std::vector<int> DistOperator<T>::color_rows(const CsrMatrix<T>& A, Index block_dim,
                                             int* num_colors) const {
  return distributed_coloring(*this, A, block_dim, num_colors);
}

template <class T>
std::vector<int64_t> ghost_global_ids(const DistOperator<T>& op, Index n) {
  std::vector<int64_t> ids(n), ghosts(op.plan().num_ghosts());
  for (Index i = 0; i < n; ++i) ids[i] = op.row_start() + i;
  op.plan().exchange(ids.data(), ghosts.data());
  return ghosts;
}

template <class T>
std::unique_ptr<Solver<T>> DistOperator<T>::make_multigrid(SolverContext& ctx,
                                                           const std::string& scope) const {
  return std::make_unique<DistAmg<T>>(ctx, scope, plan_->comm());
}

template <class T>
std::shared_ptr<const HaloPlan> distribute(const Communicator& comm, const RowPartition& part,
                                           const std::vector<int64_t>& ghosts, CsrMatrix<T>& A) {
  auto plan = std::make_shared<const HaloPlan>(comm, part, ghosts);
  A.dist = std::make_shared<const DistOperator<T>>(plan, part, A);
  return plan;
}

template <class T>
LocalMatrix<T> localize(const Communicator& comm, const RowPartition& part,
                        const GlobalRows<T>& rows, Index block_dim, const std::string& what) {
  const Index n = static_cast<Index>(part.n_local);
  const int32_t* rp = rows.row_ptr;
  const int32_t* ci = rows.col;
  const int64_t lo = part.row_start, hi = part.row_start + part.n_local;
  LocalMatrix<T> out;
  comm.agree_on([&] {
    if (rp[0] != 0 || rp[n] != rows.nnz) {
      throw InvalidInput(what + ": row offsets must run from 0 to nnz = " +
                         std::to_string(rows.nnz) + ", got " + std::to_string(rp[0]) + " to " +
                         std::to_string(rp[n]));
    }
    for (Index i = 0; i < n; ++i) {
      if (rp[i + 1] < rp[i]) {
        throw InvalidInput(what + ": row offsets must be non-decreasing; local row " +
                           std::to_string(i) + " has offsets " + std::to_string(rp[i]) + " > " +
                           std::to_string(rp[i + 1]));
      }
    }
    for (int64_t k = 0; k < rows.nnz; ++k) {
      if (ci[k] < 0 || ci[k] >= part.nglobal) {
        throw InvalidInput(what + ": global column index " + std::to_string(ci[k]) +
                           " is out of range [0, nglobal = " + std::to_string(part.nglobal) +
                           "); pass global 0-based column indices");
      }
      if (!std::isfinite(static_cast<double>(rows.val[k]))) {
        throw InvalidInput(what + ": stored entry " + std::to_string(k) +
                           " is NaN or infinite; pass finite matrix values");
      }
    }
  });
  // Ghosts: the columns outside the owned range, sorted (hence grouped by
  // owner) and unique.
  std::vector<int64_t>& ghosts = out.ghosts;
  for (int64_t k = 0; k < rows.nnz; ++k) {
    if (ci[k] < lo || ci[k] >= hi) ghosts.push_back(ci[k]);
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  auto A = std::make_shared<CsrMatrix<T>>();
  A->nrows = n;
  A->ncols = n + static_cast<Index>(ghosts.size());
  A->block_dim = block_dim;
  A->row_ptr.assign(rp, rp + n + 1);
  A->col.resize(static_cast<std::size_t>(rows.nnz));
  A->val.assign(rows.val, rows.val + rows.nnz);
  bool sorted = true;
  for (Index i = 0; i < n; ++i) {
    for (int32_t k = rp[i]; k < rp[i + 1]; ++k) {
      const int64_t g = ci[k];
      A->col[k] = (g >= lo && g < hi)
                      ? static_cast<Index>(g - lo)
                      : n + static_cast<Index>(std::lower_bound(ghosts.begin(), ghosts.end(), g) -
                                               ghosts.begin());
      if (k > rp[i] && A->col[k] <= A->col[k - 1]) sorted = false;
    }
  }
  // Local renumbering keeps global order within owned and within ghost
  // columns, so canonical order is [owned sorted | ghosts sorted].
  std::vector<Index> input_col;
  if (!sorted) input_col = A->col.to_vector();
  canonicalize(*A, what);
  if (!sorted) {
    out.value_map.resize(static_cast<std::size_t>(rows.nnz));
    for (Index i = 0; i < n; ++i) {
      const Index* b = A->col.data() + A->row_ptr[i];
      const Index* e = A->col.data() + A->row_ptr[i + 1];
      for (int32_t k = rp[i]; k < rp[i + 1]; ++k) {
        out.value_map[k] = static_cast<Index>(std::lower_bound(b, e, input_col[k]) - A->col.data());
      }
    }
  }
  out.plan = distribute(comm, part, ghosts, *A);
  out.A = std::move(A);
  return out;
}

#define JAXAMG_INSTANTIATE(T)                                                                  \
  template class DistOperator<T>;                                                              \
  template std::vector<int64_t> ghost_global_ids(const DistOperator<T>&, Index);               \
  template std::shared_ptr<const HaloPlan> distribute(const Communicator&, const RowPartition&, \
                                                      const std::vector<int64_t>&,              \
                                                      CsrMatrix<T>&);                           \
  template LocalMatrix<T> localize(const Communicator&, const RowPartition&,                   \
                                   const GlobalRows<T>&, Index, const std::string&);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::dist
