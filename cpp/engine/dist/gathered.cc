#include "dist/gathered.h"

namespace jaxamg::dist {

template <class T>
Gathered<T>::Gathered(const DistOperator<T>& op, const CsrMatrix<T>& A, const std::string& what)
    : comm_(op.plan().comm()), n_local_(A.nrows) {
  const Index n = A.nrows;
  const int64_t row_start = op.row_start();
  std::vector<int32_t> gcol(A.col.size());
  const std::vector<int64_t> ghost_ids = ghost_global_ids(op, n);
  for (std::size_t k = 0; k < A.col.size(); ++k) {
    gcol[k] = static_cast<int32_t>(A.col[k] < n ? row_start + A.col[k] : ghost_ids[A.col[k] - n]);
  }
  const int P = comm_.size();
  const bool root = comm_.rank() == 0;
  std::vector<int> rows(P), nnzs(P);
  int my_rows = n, my_nnz = A.nnz();
  MPI_Gather(&my_rows, 1, MPI_INT, rows.data(), 1, MPI_INT, 0, comm_.comm());
  MPI_Gather(&my_nnz, 1, MPI_INT, nnzs.data(), 1, MPI_INT, 0, comm_.comm());
  std::vector<int> row_displs(P + 1, 0), nnz_displs(P + 1, 0);
  for (int r = 0; r < P; ++r) {
    row_displs[r + 1] = row_displs[r] + rows[r];
    nnz_displs[r + 1] = nnz_displs[r] + nnzs[r];
  }
  std::vector<int32_t> counts_per_row(n), all_counts(root ? row_displs[P] : 0);
  for (Index i = 0; i < n; ++i) counts_per_row[i] = A.row_ptr[i + 1] - A.row_ptr[i];
  std::vector<int32_t> all_cols(root ? nnz_displs[P] : 0);
  std::vector<T> all_vals(root ? nnz_displs[P] : 0);
  MPI_Gatherv(counts_per_row.data(), n, MPI_INT32_T, all_counts.data(), rows.data(),
              row_displs.data(), MPI_INT32_T, 0, comm_.comm());
  MPI_Gatherv(gcol.data(), my_nnz, MPI_INT32_T, all_cols.data(), nnzs.data(), nnz_displs.data(),
              MPI_INT32_T, 0, comm_.comm());
  MPI_Gatherv(A.val.data(), my_nnz, mpi_type<T>(), all_vals.data(), nnzs.data(),
              nnz_displs.data(), mpi_type<T>(), 0, comm_.comm());
  counts_.assign(rows.begin(), rows.end());
  displs_.assign(row_displs.begin(), row_displs.end() - 1);
  comm_.agree_on([&] {
    if (!root) return;
    const Index N = row_displs[P];
    auto M = std::make_shared<CsrMatrix<T>>(N, N);
    M->block_dim = A.block_dim;
    for (Index i = 0; i < N; ++i) M->row_ptr[i + 1] = M->row_ptr[i] + all_counts[i];
    M->col.assign(all_cols.begin(), all_cols.end());
    M->val.assign(all_vals.begin(), all_vals.end());
    canonicalize(*M, what);
    matrix_ = std::move(M);
  });
}

template <class T>
void Gathered<T>::gather(const T* local, T* global) const {
  MPI_Gatherv(local, n_local_, mpi_type<T>(), global, counts_.data(), displs_.data(),
              mpi_type<T>(), 0, comm_.comm());
}

template <class T>
void Gathered<T>::scatter(const T* global, T* local) const {
  MPI_Scatterv(global, counts_.data(), displs_.data(), mpi_type<T>(), local, n_local_,
               mpi_type<T>(), 0, comm_.comm());
}

template class Gathered<float>;
template class Gathered<double>;

}  // namespace jaxamg::dist
