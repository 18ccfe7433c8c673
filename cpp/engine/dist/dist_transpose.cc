#include "dist/dist_transpose.h"

#include <mpi.h>

namespace jaxamg::dist {

template <class T>
LocalMatrix<T> transpose(const Communicator& comm, const RowPartition& part,
                         const CsrMatrix<T>& A, const std::vector<int64_t>& ghosts,
                         const HaloPlan& plan, TransposeMap* map) {
  const Index n = A.nrows;
  const auto& to_ranks = plan.recv_ranks();    // owners of our ghost columns
  const auto& to_off = plan.recv_offsets();    // ghost slots per owner
  const auto& from_ranks = plan.send_ranks();  // processes with entries in our columns
  // Entries (row of A^T = ghost column, column of A^T = our global row, value)
  // grouped by destination: ghost slot order is owner order.
  std::vector<int> per_slot(ghosts.size() + 1, 0);
  for (Index k = 0; k < A.nnz(); ++k) {
    if (A.col[k] >= n) ++per_slot[A.col[k] - n + 1];
  }
  for (std::size_t s = 0; s < ghosts.size(); ++s) per_slot[s + 1] += per_slot[s];
  const int nout = per_slot.back();
  std::vector<int64_t> out_ij(2 * static_cast<std::size_t>(nout));
  std::vector<T> out_v(static_cast<std::size_t>(nout));
  std::vector<int> fill(per_slot.begin(), per_slot.end() - 1);
  if (map) {
    map->send_entry.assign(static_cast<std::size_t>(nout), -1);
    map->local_slot.assign(static_cast<std::size_t>(A.nnz()), -1);
  }
  for (Index i = 0; i < n; ++i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (A.col[k] < n) continue;
      const int pos = fill[A.col[k] - n]++;
      out_ij[2 * pos] = ghosts[A.col[k] - n];
      out_ij[2 * pos + 1] = part.row_start + i;
      out_v[pos] = A.val[k];
      if (map) map->send_entry[pos] = k;
    }
  }
  // Entry counts to each owner, then the entries, neighbour to neighbour.
  std::vector<int> send_n(to_ranks.size()), recv_n(from_ranks.size());
  for (std::size_t q = 0; q < to_ranks.size(); ++q) {
    send_n[q] = per_slot[to_off[q + 1]] - per_slot[to_off[q]];
  }
  std::vector<MPI_Request> reqs;
  for (std::size_t q = 0; q < from_ranks.size(); ++q) {
    reqs.emplace_back();
    MPI_Irecv(&recv_n[q], 1, MPI_INT, from_ranks[q], kHaloTag, comm.comm(), &reqs.back());
  }
  for (std::size_t q = 0; q < to_ranks.size(); ++q) {
    reqs.emplace_back();
    MPI_Isend(&send_n[q], 1, MPI_INT, to_ranks[q], kHaloTag, comm.comm(), &reqs.back());
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  reqs.clear();
  std::vector<int> recv_off(from_ranks.size() + 1, 0);
  for (std::size_t q = 0; q < from_ranks.size(); ++q) recv_off[q + 1] = recv_off[q] + recv_n[q];
  const int nin = recv_off.back();
  std::vector<int64_t> in_ij(2 * static_cast<std::size_t>(nin));
  std::vector<T> in_v(static_cast<std::size_t>(nin));
  for (std::size_t q = 0; q < from_ranks.size(); ++q) {
    reqs.emplace_back();
    MPI_Irecv(in_ij.data() + 2 * recv_off[q], 2 * recv_n[q], MPI_INT64_T, from_ranks[q],
              kHaloTag, comm.comm(), &reqs.back());
    reqs.emplace_back();
    MPI_Irecv(in_v.data() + recv_off[q], recv_n[q], mpi_type<T>(), from_ranks[q], kHaloTag + 1,
              comm.comm(), &reqs.back());
  }
  for (std::size_t q = 0; q < to_ranks.size(); ++q) {
    const int first = per_slot[to_off[q]];
    reqs.emplace_back();
    MPI_Isend(out_ij.data() + 2 * first, 2 * send_n[q], MPI_INT64_T, to_ranks[q], kHaloTag,
              comm.comm(), &reqs.back());
    reqs.emplace_back();
    MPI_Isend(out_v.data() + first, send_n[q], mpi_type<T>(), to_ranks[q], kHaloTag + 1,
              comm.comm(), &reqs.back());
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);

  // Rows of A^T with global columns: local entries (j, i) plus received ones.
  std::vector<int32_t> row_ptr(static_cast<std::size_t>(n) + 1, 0);
  for (Index k = 0; k < A.nnz(); ++k) {
    if (A.col[k] < n) ++row_ptr[A.col[k] + 1];
  }
  for (int e = 0; e < nin; ++e) ++row_ptr[in_ij[2 * e] - part.row_start + 1];
  for (Index i = 0; i < n; ++i) row_ptr[i + 1] += row_ptr[i];
  const int32_t nnz = row_ptr[n];
  std::vector<int32_t> col(static_cast<std::size_t>(nnz));
  std::vector<T> val(static_cast<std::size_t>(nnz));
  std::vector<int32_t> pos(row_ptr.begin(), row_ptr.end() - 1);
  std::vector<int32_t> input_pos_local(static_cast<std::size_t>(A.nnz()), -1), input_pos_in(nin);
  for (Index i = 0; i < n; ++i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (A.col[k] >= n) continue;
      const int32_t p = pos[A.col[k]]++;
      col[p] = static_cast<int32_t>(part.row_start + i);
      val[p] = A.val[k];
      input_pos_local[k] = p;
    }
  }
  for (int e = 0; e < nin; ++e) {
    const int32_t p = pos[in_ij[2 * e] - part.row_start]++;
    col[p] = static_cast<int32_t>(in_ij[2 * e + 1]);
    val[p] = in_v[e];
    input_pos_in[e] = p;
  }
  GlobalRows<T> rows{row_ptr.data(), col.data(), val.data(), nnz};
  LocalMatrix<T> At = localize(comm, part, rows, A.block_dim, "A^T");
  if (map) {
    // Input positions -> canonical slots of A^T.
    auto slot = [&](int32_t p) { return At.value_map.empty() ? p : At.value_map[p]; };
    for (Index k = 0; k < A.nnz(); ++k) {
      if (input_pos_local[k] >= 0) map->local_slot[k] = slot(input_pos_local[k]);
    }
    map->recv_slot.resize(static_cast<std::size_t>(nin));
    for (int e = 0; e < nin; ++e) map->recv_slot[e] = slot(input_pos_in[e]);
    map->send_counts = send_n;
    map->recv_counts = recv_n;
  }
  return At;
}

template <class T>
void transpose_values(const Communicator& comm, const HaloPlan& plan, const TransposeMap& map,
                      const CsrMatrix<T>& A, CsrMatrix<T>& At) {
  for (Index k = 0; k < A.nnz(); ++k) {
    if (map.local_slot[k] >= 0) At.val[map.local_slot[k]] = A.val[k];
  }
  std::vector<T> out(map.send_entry.size()), in(map.recv_slot.size());
  for (std::size_t p = 0; p < out.size(); ++p) out[p] = A.val[map.send_entry[p]];
  std::vector<MPI_Request> reqs;
  int offset = 0;
  for (std::size_t q = 0; q < plan.send_ranks().size(); ++q) {
    reqs.emplace_back();
    MPI_Irecv(in.data() + offset, map.recv_counts[q], mpi_type<T>(), plan.send_ranks()[q],
              kHaloTag + 1, comm.comm(), &reqs.back());
    offset += map.recv_counts[q];
  }
  offset = 0;
  for (std::size_t q = 0; q < plan.recv_ranks().size(); ++q) {
    reqs.emplace_back();
    MPI_Isend(out.data() + offset, map.send_counts[q], mpi_type<T>(), plan.recv_ranks()[q],
              kHaloTag + 1, comm.comm(), &reqs.back());
    offset += map.send_counts[q];
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  for (std::size_t e = 0; e < in.size(); ++e) At.val[map.recv_slot[e]] = in[e];
}

#define JAXAMG_INSTANTIATE(T)                                                                  \
  template LocalMatrix<T> transpose(const Communicator&, const RowPartition&,                  \
                                    const CsrMatrix<T>&, const std::vector<int64_t>&,          \
                                    const HaloPlan&, TransposeMap*);                           \
  template void transpose_values(const Communicator&, const HaloPlan&, const TransposeMap&,    \
                                 const CsrMatrix<T>&, CsrMatrix<T>&);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::dist
