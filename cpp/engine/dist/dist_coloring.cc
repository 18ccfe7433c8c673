#include "dist/dist_coloring.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "dist/row_exchange.h"

namespace jaxamg::dist {
namespace {

// The priority of a global node id (splitmix64): a fixed pseudo-random
// order, with the id itself breaking ties.
std::pair<uint64_t, int64_t> priority(int64_t node) {
  uint64_t z = static_cast<uint64_t>(node) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return {z ^ (z >> 31), node};
}

// Node adjacency: node I's neighbours are adj[ptr[I], ptr[I+1]), a local
// node J as J, the e-th extended ghost row as nodes + e.
struct Adjacency {
  std::vector<Index> ptr, adj;
};

Adjacency build_adjacency(Index nodes, std::vector<std::pair<Index, Index>>& edges) {
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  Adjacency g;
  g.ptr.assign(nodes + 1, 0);
  for (const auto& e : edges) ++g.ptr[e.first + 1];
  for (Index I = 0; I < nodes; ++I) g.ptr[I + 1] += g.ptr[I];
  g.adj.resize(edges.size());
  for (std::size_t q = 0; q < edges.size(); ++q) g.adj[q] = edges[q].second;
  return g;
}

}  // namespace

template <class T>
std::vector<int> distributed_coloring(const DistOperator<T>& op, const CsrMatrix<T>& A,
                                      Index block_dim, int* num_colors) {
  const HaloPlan& plan = op.plan();
  const Communicator& comm = plan.comm();
  const Index n = A.nrows;
  const Index k = std::max<Index>(block_dim, 1);
  const Index nodes = n / k;
  const int64_t start = op.row_start();
  const std::vector<int64_t> ghosts = ghost_global_ids(op, n);

  // Couplings stored on this side only reach the other side: for every
  // ghost slot, the ids of the owned rows that read it go to its owner.
  std::vector<std::vector<int64_t>> readers(ghosts.size());
  for (Index i = 0; i < n; ++i)
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
      if (A.col[p] >= n) readers[A.col[p] - n].push_back(start + i);
  RowSet<int64_t> out;
  for (const auto& r : readers) {
    for (int64_t g : r) out.push(g, 0);
    out.end_row();
  }
  const RowSet<int64_t> in = rows_to_owners(plan, out);
  const std::vector<int32_t>& sidx = plan.send_index();

  // The union of both sides' ghosts, with its own plan.
  std::vector<int64_t> ext(ghosts);
  ext.insert(ext.end(), in.col.begin(), in.col.end());
  std::sort(ext.begin(), ext.end());
  ext.erase(std::unique(ext.begin(), ext.end()), ext.end());
  const HaloPlan ext_plan(comm, op.partition(), ext);
  auto ext_index = [&](int64_t g) {
    return nodes + static_cast<Index>(std::lower_bound(ext.begin(), ext.end(), g) - ext.begin());
  };

  std::vector<std::pair<Index, Index>> edges;
  for (Index i = 0; i < n; ++i) {
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      const Index j = A.col[p];
      if (j >= n) {
        edges.emplace_back(i / k, ext_index(ghosts[j - n]));
      } else if (j / k != i / k) {
        edges.emplace_back(i / k, j / k);
        edges.emplace_back(j / k, i / k);
      }
    }
  }
  for (std::size_t s = 0; s < sidx.size(); ++s)
    for (int64_t q = in.start[s]; q < in.start[s + 1]; ++q)
      edges.emplace_back(sidx[s] / k, ext_index(in.col[q]));
  const Adjacency g = build_adjacency(nodes, edges);
  std::vector<std::pair<Index, Index>>().swap(edges);

  std::vector<std::pair<uint64_t, int64_t>> ext_priority(ext.size());
  for (std::size_t e = 0; e < ext.size(); ++e) ext_priority[e] = priority(ext[e] / k);
  std::vector<int64_t> row_color(n, -1), ext_color(ext.size(), -1);
  std::vector<int> node_color(nodes, -1);
  std::vector<Index> mark;  // mark[c] == I: colour c is taken by a neighbour of I
  int64_t left = comm.sum_int(nodes);
  while (left > 0) {
    ext_plan.exchange(row_color.data(), ext_color.data());
    for (Index I = 0; I < nodes; ++I) {
      if (node_color[I] >= 0) continue;
      const auto mine = priority(start / k + I);
      bool eligible = true;
      for (Index q = g.ptr[I]; q < g.ptr[I + 1] && eligible; ++q) {
        const Index J = g.adj[q];
        if (J >= nodes) eligible = ext_color[J - nodes] >= 0 || ext_priority[J - nodes] < mine;
      }
      if (!eligible) continue;
      for (Index q = g.ptr[I]; q < g.ptr[I + 1]; ++q) {
        const Index J = g.adj[q];
        const int64_t c = J < nodes ? node_color[J] : ext_color[J - nodes];
        if (c < 0) continue;
        if (static_cast<std::size_t>(c) >= mark.size()) mark.resize(c + 1, -1);
        mark[c] = I;
      }
      int c = 0;
      while (static_cast<std::size_t>(c) < mark.size() && mark[c] == I) ++c;
      node_color[I] = c;
      for (Index i = I * k; i < (I + 1) * k; ++i) row_color[i] = c;
    }
    left = comm.sum_int(std::count(node_color.begin(), node_color.end(), -1));
  }
  int local_max = -1;
  for (int c : node_color) local_max = std::max(local_max, c);
  *num_colors = static_cast<int>(comm.max_int(local_max)) + 1;
  return std::vector<int>(row_color.begin(), row_color.end());
}

#define JAXAMG_INSTANTIATE(T)                                                                \
  template std::vector<int> distributed_coloring(const DistOperator<T>&, const CsrMatrix<T>&, \
                                                 Index, int*);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::dist
