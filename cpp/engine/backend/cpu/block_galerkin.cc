#include "backend/cpu/block_galerkin.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "core/node_cursor.h"
#include "core/parallel.h"

namespace jaxamg::cpu {

namespace {

// A matrix on node blocks: its rows in groups of rb, its columns in groups
// of cb. Block g of node row I has node column col[ptr[I] + g] and its
// values, row-major, at val[(ptr[I] + g) * rb * cb]. Entries the scalar
// matrix does not store are zeros of the block (an elasticity stiffness
// matrix drops the couplings that vanish on its mesh).
struct BlockRows {
  Index nodes = 0;
  std::vector<Index> ptr;  // nodes + 1
  std::vector<Index> col;
  std::vector<double> val;
};

template <class T>
BlockRows to_blocks(const CsrMatrix<T>& M, Index rb, Index cb) {
  BlockRows out;
  const Index nodes = M.nrows / rb;
  out.nodes = nodes;
  out.ptr.assign(static_cast<std::size_t>(nodes) + 1, 0);
  const Index* rp = M.row_ptr.data();
  const Index* ci = M.col.data();
  const bool parallel = M.nrows > kParallelRows;
  // The node columns of node row I, ascending, those of its rows merged;
  // seen[J] = I once node column J is listed, at[J] its place in the list.
  auto node_columns = [&](Index I, std::vector<Index>& seen, std::vector<Index>& at,
                          std::vector<Index>& cols) {
    cols.clear();
    NodeCursor node_of(cb);
    for (Index q = rp[I * rb]; q < rp[I * rb + rb]; ++q) {
      const Index J = node_of(ci[q]);
      if (seen[J] != I) {
        seen[J] = I;
        cols.push_back(J);
      }
    }
    std::sort(cols.begin(), cols.end());
    for (std::size_t g = 0; g < cols.size(); ++g) at[cols[g]] = static_cast<Index>(g);
  };
  const std::size_t col_nodes = static_cast<std::size_t>(M.ncols / cb);
#pragma omp parallel if (parallel)
  {
    std::vector<Index> seen(col_nodes, -1), at(col_nodes), cols;
#pragma omp for schedule(static)
    for (Index I = 0; I < nodes; ++I) {
      node_columns(I, seen, at, cols);
      out.ptr[I + 1] = static_cast<Index>(cols.size());
    }
  }
  std::partial_sum(out.ptr.begin(), out.ptr.end(), out.ptr.begin());
  out.col.resize(out.ptr[nodes]);
  out.val.assign(static_cast<std::size_t>(out.ptr[nodes]) * rb * cb, 0.0);
#pragma omp parallel if (parallel)
  {
    std::vector<Index> seen(col_nodes, -1), at(col_nodes), cols;
#pragma omp for schedule(static)
    for (Index I = 0; I < nodes; ++I) {
      node_columns(I, seen, at, cols);
      std::copy(cols.begin(), cols.end(), out.col.begin() + out.ptr[I]);
      double* blocks = out.val.data() + static_cast<std::size_t>(out.ptr[I]) * rb * cb;
      NodeCursor node_of(cb);
      for (Index r = 0; r < rb; ++r) {
        for (Index q = rp[I * rb + r]; q < rp[I * rb + r + 1]; ++q) {
          const Index J = node_of(ci[q]);
          blocks[(static_cast<std::size_t>(at[J]) * rb + r) * cb + (ci[q] - J * cb)] =
              static_cast<double>(M.val[q]);
        }
      }
    }
  }
  return out;
}

// The blocks of P by coarse node: for coarse node J, the fine nodes I whose
// row has a block in column J (ascending) and that block's index g there.
struct Transposed {
  std::vector<Index> ptr, fine, block;
};

Transposed transpose_nodes(const BlockRows& P, Index coarse_nodes) {
  Transposed t;
  t.ptr.assign(static_cast<std::size_t>(coarse_nodes) + 1, 0);
  for (Index J : P.col) ++t.ptr[J + 1];
  std::partial_sum(t.ptr.begin(), t.ptr.end(), t.ptr.begin());
  t.fine.resize(P.col.size());
  t.block.resize(P.col.size());
  std::vector<Index> next(t.ptr.begin(), t.ptr.end() - 1);
  for (Index I = 0; I < P.nodes; ++I) {
    for (Index q = P.ptr[I]; q < P.ptr[I + 1]; ++q) {
      const Index at = next[P.col[q]]++;
      t.fine[at] = I;
      t.block[at] = q - P.ptr[I];
    }
  }
  return t;
}

// The columns one row of a product reaches, each with a dense block:
// seen[j] is the last row that reached column j, slot[j] its place in
// `list`, and its block sits at that place in `acc`.
struct Reached {
  std::vector<Index> seen, slot, list;
  std::vector<double> acc;
  explicit Reached(Index columns) : seen(columns, -1), slot(columns) {}
  // Lists column j for `row` if it is new there (with a zeroed block of
  // `size` entries when `values`); returns its place.
  Index reach(Index j, Index row, std::size_t size, bool values) {
    if (seen[j] != row) {
      seen[j] = row;
      slot[j] = static_cast<Index>(list.size());
      list.push_back(j);
      if (values) {
        if (acc.size() < list.size() * size) acc.resize(2 * list.size() * size);
        std::fill_n(acc.data() + (list.size() - 1) * size, size, 0.0);
      }
    }
    return slot[j];
  }
};

// One thread's work arrays: the fine nodes row J of P^T A reaches (m x k
// blocks) and the coarse columns of row J of Ac (m x m blocks).
struct Workspace {
  Reached fine, coarse;
  Workspace(Index fine_nodes, Index coarse_nodes) : fine(fine_nodes), coarse(coarse_nodes) {}
};

struct BlockProduct {
  const BlockRows& a;  // A, k x k blocks
  const BlockRows& p;  // P, k x m blocks
  const Transposed& pt;
  Index k, m;

  // The fine nodes row J of P^T A reaches, then the coarse columns of row J
  // of Ac; with kValues, also their blocks. KC and MC, when
  // not 0, are k and m known at compile time: the block loops then unroll.
  template <bool kValues, int KC = 0, int MC = 0>
  void row(Index J, Workspace& w) const {
    const Index k = KC ? KC : this->k, m = MC ? MC : this->m;
    w.fine.list.clear();
    w.coarse.list.clear();
    const std::size_t kk = static_cast<std::size_t>(k) * k, mk = static_cast<std::size_t>(m) * k,
                      mm = static_cast<std::size_t>(m) * m;
    for (Index t = pt.ptr[J]; t < pt.ptr[J + 1]; ++t) {
      const Index I = pt.fine[t];
      // The block of P at (I, J): k x m, row-major.
      const double* pij = p.val.data() + (p.ptr[I] + pt.block[t]) * mk;
      for (Index q = a.ptr[I]; q < a.ptr[I + 1]; ++q) {
        const Index u = w.fine.reach(a.col[q], J, mk, kValues);
        if constexpr (kValues) {
          // block of K (m x k) += (block of P at (I, J))^T (block of A at (I, K)).
          double* acc = w.fine.acc.data() + u * mk;
          const double* aik = a.val.data() + q * kk;
          for (Index r = 0; r < k; ++r) {
            for (Index c = 0; c < m; ++c) {
              const double v = pij[r * m + c];
              for (Index s = 0; s < k; ++s) acc[c * k + s] += v * aik[r * k + s];
            }
          }
        }
      }
    }
    for (std::size_t u = 0; u < w.fine.list.size(); ++u) {
      const Index K = w.fine.list[u];
      for (Index q = p.ptr[K]; q < p.ptr[K + 1]; ++q) {
        const Index v = w.coarse.reach(p.col[q], J, mm, kValues);
        if constexpr (kValues) {
          // block of L (m x m) += block of K (block of P at (K, L)).
          const double* acc = w.fine.acc.data() + u * mk;
          const double* pkl = p.val.data() + q * mk;
          double* out = w.coarse.acc.data() + v * mm;
          for (Index c = 0; c < m; ++c) {
            for (Index s = 0; s < k; ++s) {
              const double f = acc[c * k + s];
              for (Index b = 0; b < m; ++b) out[c * m + b] += f * pkl[s * m + b];
            }
          }
        }
      }
    }
  }
};

// A and P read on blocks, for one product. read_blocks returns false when
// the shapes do not divide (k < 2, rows not a multiple of k, P's columns not
// a multiple of m).
struct BlockOperands {
  BlockRows a, p;
  Transposed pt;
  Index k, m, coarse_nodes;
  bool parallel;
};

template <class T>
bool read_blocks(const CsrMatrix<T>& A, const CsrMatrix<T>& P, Index m, BlockOperands& out) {
  const Index k = A.block_dim;
  if (k < 2 || m < 1 || A.nrows != A.ncols || A.nrows % k != 0 || P.nrows != A.nrows ||
      P.ncols % m != 0) {
    return false;
  }
  out.a = to_blocks(A, k, k);
  out.p = to_blocks(P, k, m);
  out.k = k;
  out.m = m;
  out.coarse_nodes = P.ncols / m;
  out.pt = transpose_nodes(out.p, out.coarse_nodes);
  out.parallel = A.nrows > kParallelRows;
  return true;
}

// The value pass: each coarse node's m rows of Ac into `val`, their coarse
// columns ascending. With kPattern the columns are written to C.col too
// (C.row_ptr is set); without it they must equal the kept C.col, and the
// pass returns false at the first row where they do not.
template <bool kPattern, class T>
bool block_values(const BlockOperands& ops, CsrMatrix<T>& C, T* val) {
  const Index k = ops.k, m = ops.m;
  const BlockProduct prod{ops.a, ops.p, ops.pt, k, m};
  bool same = true;
#pragma omp parallel if (ops.parallel) reduction(&& : same)
  {
    Workspace w(ops.a.nodes, ops.coarse_nodes);
#pragma omp for schedule(dynamic, 16)
    for (Index J = 0; J < ops.coarse_nodes; ++J) {
      if (!same) continue;
      // Elasticity's shapes (3D: 3 x 6 on the finest level, 6 x 6 below it;
      // 2D: 2 x 3) at compile time.
      if (k == 3 && m == 6) {
        prod.row<true, 3, 6>(J, w);
      } else if (k == 6 && m == 6) {
        prod.row<true, 6, 6>(J, w);
      } else if (k == 2 && m == 3) {
        prod.row<true, 2, 3>(J, w);
      } else {
        prod.row<true>(J, w);
      }
      std::sort(w.coarse.list.begin(), w.coarse.list.end());
      const Index len = static_cast<Index>(w.coarse.list.size()) * m;
      for (Index c = 0; c < m && same; ++c) {
        Index pos = C.row_ptr[J * m + c];
        if (!kPattern && C.row_ptr[J * m + c + 1] - pos != len) {
          same = false;
          break;
        }
        for (Index L : w.coarse.list) {
          const double* blk =
              w.coarse.acc.data() + static_cast<std::size_t>(w.coarse.slot[L]) * m * m;
          for (Index b = 0; b < m; ++b, ++pos) {
            if constexpr (kPattern) {
              C.col[pos] = L * m + b;
            } else if (C.col[pos] != L * m + b) {
              same = false;
            }
            val[pos] = static_cast<T>(blk[c * m + b]);
          }
        }
      }
    }
  }
  return same;
}

}  // namespace

template <class T>
bool block_galerkin(const CsrMatrix<T>& A, const CsrMatrix<T>& P, Index m, CsrMatrix<T>& Ac) {
  BlockOperands ops;
  if (!read_blocks(A, P, m, ops)) return false;
  const BlockProduct prod{ops.a, ops.p, ops.pt, ops.k, m};
  const Index coarse_nodes = ops.coarse_nodes;

  // Pattern: the number of coarse columns of each coarse node's rows.
  CsrMatrix<T> C(P.ncols, P.ncols);
  std::vector<Index> count(static_cast<std::size_t>(coarse_nodes) + 1, 0);
#pragma omp parallel if (ops.parallel)
  {
    Workspace w(ops.a.nodes, coarse_nodes);
#pragma omp for schedule(dynamic, 16)
    for (Index J = 0; J < coarse_nodes; ++J) {
      prod.row<false>(J, w);
      count[J + 1] = static_cast<Index>(w.coarse.list.size());
    }
  }
  std::int64_t total = 0;
  for (Index J = 0; J < coarse_nodes; ++J) total += static_cast<std::int64_t>(count[J + 1]) * m * m;
  // Too large for 32-bit indices: the scalar product reports it.
  if (total > std::numeric_limits<Index>::max()) return false;
  for (Index J = 0; J < coarse_nodes; ++J) {
    for (Index c = 0; c < m; ++c)
      C.row_ptr[J * m + c + 1] = C.row_ptr[J * m + c] + count[J + 1] * m;
  }
  C.col.resize(C.row_ptr[C.nrows]);
  C.val.resize(C.row_ptr[C.nrows]);
  block_values<true>(ops, C, C.val.data());
  C.find_diagonal();
  Ac = std::move(C);
  return true;
}

template <class T>
bool block_galerkin_values(const CsrMatrix<T>& A, const CsrMatrix<T>& P, Index m,
                           CsrMatrix<T>& Ac) {
  BlockOperands ops;
  if (Ac.nrows != P.ncols || Ac.ncols != P.ncols || !read_blocks(A, P, m, ops)) return false;
  CsrArray<T> val(Ac.val.size());
  if (!block_values<false>(ops, Ac, val.data())) return false;
  Ac.val = std::move(val);
  return true;
}

template bool block_galerkin(const CsrMatrix<float>&, const CsrMatrix<float>&, Index,
                             CsrMatrix<float>&);
template bool block_galerkin(const CsrMatrix<double>&, const CsrMatrix<double>&, Index,
                             CsrMatrix<double>&);
template bool block_galerkin_values(const CsrMatrix<float>&, const CsrMatrix<float>&, Index,
                                    CsrMatrix<float>&);
template bool block_galerkin_values(const CsrMatrix<double>&, const CsrMatrix<double>&, Index,
                                    CsrMatrix<double>&);

}  // namespace jaxamg::cpu
