#include "dist/row_exchange.h"

#include <mpi.h>

#include "core/error.h"

namespace jaxamg::dist {
namespace {

// Rows grouped by destination: rows [out_off[q], out_off[q+1]) go to
// out_ranks[q]; rows [in_off[q], in_off[q+1]) come from in_ranks[q]. Three
// messages per neighbour: the row lengths, the columns, the values.
template <class V>
RowSet<V> move_rows(const Communicator& comm, const std::vector<int>& out_ranks,
                    const std::vector<int>& out_off, const std::vector<int>& in_ranks,
                    const std::vector<int>& in_off, const RowSet<V>& out) {
  const std::size_t nout = out_off.empty() ? 0 : static_cast<std::size_t>(out_off.back());
  if (out.rows() != nout) {
    throw SetupError("row exchange: " + std::to_string(out.rows()) + " rows for " +
                     std::to_string(nout) + " slots");
  }
  std::vector<int64_t> out_len(nout);
  for (std::size_t r = 0; r < nout; ++r) out_len[r] = out.start[r + 1] - out.start[r];
  const std::size_t nin = in_off.empty() ? 0 : static_cast<std::size_t>(in_off.back());
  std::vector<int64_t> in_len(nin);
  std::vector<MPI_Request> reqs;
  for (std::size_t q = 0; q < in_ranks.size(); ++q) {
    reqs.emplace_back();
    MPI_Irecv(in_len.data() + in_off[q], in_off[q + 1] - in_off[q], MPI_INT64_T, in_ranks[q],
              kHaloTag + 4, comm.comm(), &reqs.back());
  }
  for (std::size_t q = 0; q < out_ranks.size(); ++q) {
    reqs.emplace_back();
    MPI_Isend(out_len.data() + out_off[q], out_off[q + 1] - out_off[q], MPI_INT64_T,
              out_ranks[q], kHaloTag + 4, comm.comm(), &reqs.back());
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  reqs.clear();
  RowSet<V> in;
  in.start.assign(nin + 1, 0);
  for (std::size_t r = 0; r < nin; ++r) in.start[r + 1] = in.start[r] + in_len[r];
  in.col.resize(static_cast<std::size_t>(in.start.back()));
  in.val.resize(in.col.size());
  for (std::size_t q = 0; q < in_ranks.size(); ++q) {
    const int64_t first = in.start[in_off[q]];
    const int count = static_cast<int>(in.start[in_off[q + 1]] - first);
    reqs.emplace_back();
    MPI_Irecv(in.col.data() + first, count, MPI_INT64_T, in_ranks[q], kHaloTag + 5, comm.comm(),
              &reqs.back());
    reqs.emplace_back();
    MPI_Irecv(in.val.data() + first, count, mpi_type<V>(), in_ranks[q], kHaloTag + 6,
              comm.comm(), &reqs.back());
  }
  for (std::size_t q = 0; q < out_ranks.size(); ++q) {
    const int64_t first = out.start[out_off[q]];
    const int count = static_cast<int>(out.start[out_off[q + 1]] - first);
    reqs.emplace_back();
    MPI_Isend(out.col.data() + first, count, MPI_INT64_T, out_ranks[q], kHaloTag + 5,
              comm.comm(), &reqs.back());
    reqs.emplace_back();
    MPI_Isend(out.val.data() + first, count, mpi_type<V>(), out_ranks[q], kHaloTag + 6,
              comm.comm(), &reqs.back());
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  return in;
}

}  // namespace

template <class V>
RowSet<V> rows_to_ghosts(const HaloPlan& plan, const RowSet<V>& out) {
  return move_rows(plan.comm(), plan.send_ranks(), plan.send_offsets(), plan.recv_ranks(),
                   plan.recv_offsets(), out);
}

template <class V>
RowSet<V> rows_to_owners(const HaloPlan& plan, const RowSet<V>& out) {
  return move_rows(plan.comm(), plan.recv_ranks(), plan.recv_offsets(), plan.send_ranks(),
                   plan.send_offsets(), out);
}

#define JAXAMG_INSTANTIATE(V)                                                 \
  template RowSet<V> rows_to_ghosts(const HaloPlan&, const RowSet<V>&);      \
  template RowSet<V> rows_to_owners(const HaloPlan&, const RowSet<V>&);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
JAXAMG_INSTANTIATE(int64_t)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::dist
