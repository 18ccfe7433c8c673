// Device edge weights and collapsed graphs (host: amg/aggregation/weight_graph.cc).
// The weights are computed with the host's expressions in double, one row
// per thread, so every weight is bitwise the host's; a collapsed weight is a
// sum over a run of a stable sort, in the host's order (members ascending,
// edges ascending), so it is bitwise the host's sum too.
#include <string>

#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"
#include "core/error.h"
#include "device/setup/device_aggregates.h"

namespace jaxamg::cuda {

namespace {

__global__ void row_of_kernel(Index n, const Index* ptr, Index* row) {
  const Index i = global_id();
  if (i >= n) return;
  for (Index k = ptr[i]; k < ptr[i + 1]; ++k) row[k] = i;
}

// d[i] = a_ii (0 if not stored); *zero_row = the first row with d = 0.
template <class T>
__global__ void diagonal_kernel(Index n, const Index* ptr, const Index* col, const T* val,
                                double* d, int* zero_row) {
  const Index i = global_id();
  if (i >= n) return;
  Index lo = ptr[i], hi = ptr[i + 1];
  const Index end = hi;
  while (lo < hi) {  // lower_bound of i in the sorted row
    const Index mid = lo + (hi - lo) / 2;
    if (col[mid] < i) lo = mid + 1; else hi = mid;
  }
  const double di = (lo < end && col[lo] == i) ? static_cast<double>(val[lo]) : 0.0;
  d[i] = di;
  if (di == 0.0) atomicMin(zero_row, i);
}

__global__ void count_columns(Index nnz, const Index* col, Index* count) {
  const Index k = global_id();
  if (k < nnz) atomicAdd(&count[col[k]], 1);
}

template <class T>
__global__ void gather_transpose(Index nnz, const Index* perm, const Index* row, const T* val,
                                 Index* tcol, double* tval) {
  const Index p = global_id();
  if (p >= nnz) return;
  tcol[p] = row[perm[p]];
  tval[p] = static_cast<double>(val[perm[p]]);
}

// Row i of A merged with row i of A^T, diagonal skipped (for_each_undirected).
// Without `adj` it only counts the edges into count[i].
template <class T>
__global__ void undirected_edges(Index n, const Index* ptr, const Index* col, const T* val,
                                 const Index* tptr, const Index* tcol, const double* tval,
                                 const double* d, int formula, const Index* gptr, Index* count,
                                 Index* adj, double* w) {
  const Index i = global_id();
  if (i >= n) return;
  Index p = ptr[i], pe = ptr[i + 1], q = tptr[i], qe = tptr[i + 1];
  Index c = 0;
  Index k = adj ? gptr[i] : 0;
  while (p < pe || q < qe) {
    const Index cp = p < pe ? col[p] : n;
    const Index cq = q < qe ? tcol[q] : n;
    const Index j = cp < cq ? cp : cq;
    const double aij = cp == j ? static_cast<double>(val[p++]) : 0.0;
    const double aji = cq == j ? tval[q++] : 0.0;
    if (j == i) continue;
    if (!adj) {
      ++c;
      continue;
    }
    double wij;
    if (formula == 0) {
      const double a = fabs(d[i]), b = fabs(d[j]);
      const double den = a < b ? b : a;  // std::max(a, b)
      wij = den > 0 ? 0.5 * (fabs(aij) + fabs(aji)) / den : 0.0;
    } else {
      wij = -0.5 * (aij / d[i] + aji / d[j]);
    }
    adj[k] = j;
    w[k] = wij;
    ++k;
  }
  if (!adj) count[i] = c;
}

// Key (I, J) = I * nc + J of every edge between two aggregates; nc * nc
// (sorted last) for an edge inside one aggregate.
__global__ void collapse_keys(Index m, const Index* row, const Index* adj, const Index* of,
                              Key nc, Key* key, Index* perm) {
  const Index k = global_id();
  if (k >= m) return;
  const Key I = of[row[k]], J = of[adj[k]];
  key[k] = I != J ? I * nc + J : nc * nc;
  perm[k] = k;
}

__global__ void inner_edges(Index m, const Key* key, Key sentinel, Index* inner) {
  const Index k = global_id();
  if (k < m && key[k] == sentinel) atomicAdd(inner, 1);
}

// Sum over each run in the sorted order: the host's order of additions.
__global__ void run_sums(Index runs, const Index* start, const Index* perm, const double* w,
                         double* out) {
  const Index s = global_id();
  if (s >= runs) return;
  double acc = 0.0;
  for (Index q = start[s]; q < start[s + 1]; ++q) acc += w[perm[q]];
  out[s] = acc;
}

// w_IJ = w_JI = the mean of the two sums (collapse's symmetrisation).
__global__ void symmetrise(Index runs, const Key* key, Key nc, const Index* ptr, const Index* adj,
                           const double* w, double* sym) {
  const Index s = global_id();
  if (s >= runs) return;
  const Index I = static_cast<Index>(key[s] / nc), J = adj[s];
  Index lo = ptr[J], hi = ptr[J + 1];
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (adj[mid] < I) lo = mid + 1; else hi = mid;
  }
  sym[s] = 0.5 * (w[s] + w[lo]);
}

}  // namespace

void device_row_of_entries(Index n, const Index* ptr, Index* row) {
  if (n == 0) return;
  row_of_kernel<<<blocks(n), kBlock>>>(n, ptr, row);
  check_launch("row_of_kernel");
}

template <class T>
DeviceGraph device_weight_graph(const DeviceCsrView<T>& A, int weight_formula) {
  if (weight_formula != 0 && weight_formula != 1) {
    throw ConfigError("weight_formula = " + std::to_string(weight_formula) +
                      " is not defined; use 0 (|a_ij| scaled by the larger diagonal) or 1 "
                      "(-a_ij/a_ii, the M-matrix weight)");
  }
  const Index n = A.rows, nnz = A.nnz;
  DeviceGraph g;
  g.n = n;
  g.ptr.resize(static_cast<std::size_t>(n) + 1);
  if (n == 0) {
    check(cudaMemset(g.ptr.data(), 0, sizeof(Index)), "cudaMemset (empty graph)");
    return g;
  }
  DeviceArray<double> d(n);
  DeviceArray<int> zero_row(1);
  const int none = n;
  check(cudaMemcpy(zero_row.data(), &none, sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy");
  diagonal_kernel<T><<<blocks(n), kBlock>>>(n, A.ptr, A.col, A.val, d.data(), zero_row.data());
  check_launch("diagonal_kernel");
  if (weight_formula == 1) {
    int row = n;
    check(cudaMemcpy(&row, zero_row.data(), sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (row < n) {
      throw InvalidInput("aggregation with weight_formula = 1 divides by the diagonal, but row " +
                         std::to_string(row) +
                         " has a zero or missing diagonal entry; use weight_formula = 0 or "
                         "store a nonzero diagonal");
    }
  }

  // A^T by a stable sort of the entries by column: rows stay ascending
  // within each column, as transpose() lists them.
  DeviceArray<Index> row(nnz > 0 ? nnz : 1), keys(nnz > 0 ? nnz : 1), perm(nnz > 0 ? nnz : 1);
  device_row_of_entries(n, A.ptr, row.data());
  DeviceArray<Index> tptr(static_cast<std::size_t>(n) + 1);
  check(cudaMemset(tptr.data(), 0, (static_cast<std::size_t>(n) + 1) * sizeof(Index)), "cudaMemset");
  DeviceArray<Index> tcol(nnz > 0 ? nnz : 1);
  DeviceArray<double> tval(nnz > 0 ? nnz : 1);
  if (nnz > 0) {
    check(cudaMemcpy(keys.data(), A.col, nnz * sizeof(Index), cudaMemcpyDeviceToDevice), "cudaMemcpy");
    iota(perm.data(), nnz);
    stable_sort_pairs(keys, perm, nnz, key_bits(static_cast<Key>(n)));
    count_columns<<<blocks(nnz), kBlock>>>(nnz, A.col, tptr.data());
    check_launch("count_columns");
    gather_transpose<T><<<blocks(nnz), kBlock>>>(nnz, perm.data(), row.data(), A.val, tcol.data(),
                                                 tval.data());
    check_launch("gather_transpose");
  }
  exclusive_scan(tptr.data(), tptr.data(), n);

  undirected_edges<T><<<blocks(n), kBlock>>>(n, A.ptr, A.col, A.val, tptr.data(), tcol.data(),
                                             tval.data(), d.data(), weight_formula, nullptr,
                                             g.ptr.data(), nullptr, nullptr);
  check_launch("undirected_edges (count)");
  const Index edges = exclusive_scan(g.ptr.data(), g.ptr.data(), n);
  g.adj.resize(edges);
  g.w.resize(edges);
  if (edges > 0) {
    undirected_edges<T><<<blocks(n), kBlock>>>(n, A.ptr, A.col, A.val, tptr.data(), tcol.data(),
                                               tval.data(), d.data(), weight_formula, g.ptr.data(),
                                               nullptr, g.adj.data(), g.w.data());
    check_launch("undirected_edges (fill)");
  }
  return g;
}

DeviceGraph device_collapse(const DeviceGraph& g, const DeviceAggregates& agg) {
  const Index m = g.edges();
  const Key nc = static_cast<Key>(agg.count);
  DeviceGraph c;
  c.n = agg.count;
  DeviceArray<Key> key(m > 0 ? m : 1);
  DeviceArray<Index> perm(m > 0 ? m : 1), row(m > 0 ? m : 1);
  Index between = 0;
  if (m > 0) {
    device_row_of_entries(g.n, g.ptr.data(), row.data());
    collapse_keys<<<blocks(m), kBlock>>>(m, row.data(), g.adj.data(), agg.of.data(), nc,
                                         key.data(), perm.data());
    check_launch("collapse_keys");
    stable_sort_pairs(key, perm, m, key_bits(nc * nc));
    DeviceArray<Index> inner(1);
    check(cudaMemset(inner.data(), 0, sizeof(Index)), "cudaMemset");
    inner_edges<<<blocks(m), kBlock>>>(m, key.data(), nc * nc, inner.data());
    check_launch("inner_edges");
    Index n_inner = 0;
    check(cudaMemcpy(&n_inner, inner.data(), sizeof(Index), cudaMemcpyDeviceToHost), "cudaMemcpy");
    between = m - n_inner;
  }
  const KeySegments seg = key_segments(key.data(), between);
  segment_rows(seg, nc, c.n, c.ptr, c.adj);
  c.w.resize(seg.count);
  if (seg.count > 0) {
    DeviceArray<double> sums(seg.count);
    run_sums<<<blocks(seg.count), kBlock>>>(seg.count, seg.start.data(), perm.data(), g.w.data(),
                                            sums.data());
    check_launch("run_sums");
    symmetrise<<<blocks(seg.count), kBlock>>>(seg.count, seg.key.data(), nc, c.ptr.data(),
                                              c.adj.data(), sums.data(), c.w.data());
    check_launch("symmetrise");
  }
  return c;
}

template DeviceGraph device_weight_graph(const DeviceCsrView<float>&, int);
template DeviceGraph device_weight_graph(const DeviceCsrView<double>&, int);

}  // namespace jaxamg::cuda
