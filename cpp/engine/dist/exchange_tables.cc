#include "dist/exchange_tables.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.h"
#include "dist/dist_matrix.h"
#include "dist/dist_transpose.h"
#include "dist/halo_plan.h"

namespace jaxamg::dist {

namespace {

std::vector<int32_t> as_int32(const std::vector<int>& v) { return {v.begin(), v.end()}; }

// Offsets (size + 1 entries) of consecutive segments of the given sizes.
std::vector<int32_t> offsets_of(const std::vector<int>& counts) {
  std::vector<int32_t> off(counts.size() + 1, 0);
  for (std::size_t q = 0; q < counts.size(); ++q) off[q + 1] = off[q] + counts[q];
  return off;
}

}  // namespace

HaloTables halo_tables(const Communicator& comm, const RowPartition& part,
                       const std::vector<int64_t>& ghosts) {
  const HaloPlan plan(comm, part, ghosts);
  HaloTables t;
  t.ghosts = ghosts;
  t.recv_ranks = as_int32(plan.recv_ranks());
  t.recv_offsets = as_int32(plan.recv_offsets());
  t.send_ranks = as_int32(plan.send_ranks());
  t.send_offsets = as_int32(plan.send_offsets());
  t.send_index = plan.send_index();
  return t;
}

TransposeTables transpose_tables(const Communicator& comm, const RowPartition& part,
                                 const std::vector<int32_t>& row_ptr,
                                 const std::vector<int32_t>& col) {
  const Index n = static_cast<Index>(part.n_local);
  comm.agree_on([&] {
    if (row_ptr.size() != static_cast<std::size_t>(n) + 1) {
      throw InvalidInput("indptr: this process owns " + std::to_string(n) +
                         " rows, so indptr needs " + std::to_string(n + 1) +
                         " entries; got " + std::to_string(row_ptr.size()));
    }
  });
  const std::vector<double> ones(col.size(), 1.0);
  const GlobalRows<double> rows{row_ptr.data(), col.data(), ones.data(),
                                static_cast<int64_t>(col.size())};
  const LocalMatrix<double> L = localize(comm, part, rows, 1, "A");

  // The input entry behind each canonical entry; a repeated (row, column)
  // would be summed by localize, leaving two inputs for one slot.
  std::vector<int32_t> input_of(static_cast<std::size_t>(L.A->nnz()), -1);
  int64_t repeated = -1;
  for (std::size_t e = 0; e < col.size(); ++e) {
    const Index c = L.value_map.empty() ? static_cast<Index>(e) : L.value_map[e];
    if (input_of[c] >= 0) repeated = static_cast<int64_t>(e);
    input_of[c] = static_cast<int32_t>(e);
  }
  comm.agree_on([&] {
    if (repeated >= 0) {
      throw InvalidInput("A: entry " + std::to_string(repeated) + " repeats global column " +
                         std::to_string(col[repeated]) + " within its row; sum duplicate " +
                         "entries first (SciPy: A.sum_duplicates())");
    }
  });

  TransposeMap map;
  const LocalMatrix<double> At = transpose(comm, part, *L.A, L.ghosts, *L.plan, &map);
  const CsrMatrix<double>& T = *At.A;
  TransposeTables t;
  t.row_ptr.assign(T.row_ptr.begin(), T.row_ptr.end());
  t.col.resize(static_cast<std::size_t>(T.nnz()));
  for (Index s = 0; s < T.nnz(); ++s) {
    const Index c = T.col[s];
    t.col[s] = c < n ? part.row_start + c : At.ghosts[c - n];
  }
  // Canonical order is [owned | ghosts]; callers expect global column order.
  std::vector<int32_t> order(t.col.size()), new_slot(t.col.size());
  std::iota(order.begin(), order.end(), 0);
  for (Index i = 0; i < n; ++i) {
    std::sort(order.begin() + T.row_ptr[i], order.begin() + T.row_ptr[i + 1],
              [&](int32_t a, int32_t b) { return t.col[a] < t.col[b]; });
  }
  std::vector<int64_t> sorted(t.col.size());
  for (std::size_t s = 0; s < order.size(); ++s) {
    sorted[s] = t.col[order[s]];
    new_slot[order[s]] = static_cast<int32_t>(s);
  }
  t.col = std::move(sorted);

  for (std::size_t k = 0; k < map.local_slot.size(); ++k) {
    if (map.local_slot[k] < 0) continue;
    t.local_entry.push_back(input_of[k]);
    t.local_slot.push_back(new_slot[map.local_slot[k]]);
  }
  // transpose() sends to the owners of this process's ghosts (the plan's
  // receive side) and receives from the processes it sends halo values to.
  t.send_ranks = as_int32(L.plan->recv_ranks());
  t.send_offsets = offsets_of(map.send_counts);
  for (const Index k : map.send_entry) t.send_entry.push_back(input_of[k]);
  t.recv_ranks = as_int32(L.plan->send_ranks());
  t.recv_offsets = offsets_of(map.recv_counts);
  for (const Index s : map.recv_slot) t.recv_slot.push_back(new_slot[s]);
  return t;
}

}  // namespace jaxamg::dist
