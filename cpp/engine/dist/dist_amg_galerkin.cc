// The Galerkin product A_c = P^T A P of the distributed AMG (dist_amg.h) for
// a general P, whose columns are [owned | ghost] coarse points (no ghost
// columns when the coarsening was rank-local).
//
// Row I of P^T A P sums p_iI (A P)_i over the fine rows i with an entry in
// column I. Each process forms, for its fine rows, the rows of P^T A P of
// every coarse column its P touches: (A P)_i needs the rows of P for A's
// ghost columns, which come from their owners along A's halo plan; the rows
// for ghost coarse columns go to their owners along P's plan (the reverse
// direction), which add them to their own. Only boundary rows travel.
#include <algorithm>
#include <utility>
#include <vector>

#include "dist/dist_amg.h"
#include "dist/row_exchange.h"

namespace jaxamg::dist {

template <class T>
LocalMatrix<T> DistAmg<T>::galerkin(Level& L, const RowPartition& cpart, Index coarse_block) {
  const CsrMatrix<T>& A = *L.A;
  const CsrMatrix<T>& P = L.P;
  const Index n = A.nrows;
  const Index nc = L.nc;
  const Index npg = static_cast<Index>(L.p_ghosts.size());
  auto coarse_gid = [&](Index c) { return c < nc ? cpart.row_start + c : L.p_ghosts[c - nc]; };
  // The rows of P for A's ghost columns, with global coarse columns.
  const HaloPlan& plan = L.op->plan();
  RowSet<T> out;
  for (int32_t i : plan.send_index()) {
    for (Index k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
      out.push(coarse_gid(P.col[k]), P.val[k]);
    }
    out.end_row();
  }
  const RowSet<T> in = rows_to_ghosts(plan, out);
  // Compact coarse columns: [0, nc) owned, nc + k the k-th non-owned coarse
  // id (sorted) among P's ghost columns and the received rows.
  std::vector<int64_t> cghost(L.p_ghosts);
  for (int64_t c : in.col) {
    if (!cpart.owns(c)) cghost.push_back(c);
  }
  std::sort(cghost.begin(), cghost.end());
  cghost.erase(std::unique(cghost.begin(), cghost.end()), cghost.end());
  auto compact = [&](int64_t g) {
    if (cpart.owns(g)) return static_cast<Index>(g - cpart.row_start);
    return nc + static_cast<Index>(std::lower_bound(cghost.begin(), cghost.end(), g) -
                                   cghost.begin());
  };
  std::vector<Index> in_cc(in.col.size()), p_cc(P.col.size());
  for (std::size_t q = 0; q < in.col.size(); ++q) in_cc[q] = compact(in.col[q]);
  for (std::size_t q = 0; q < P.col.size(); ++q) p_cc[q] = compact(coarse_gid(P.col[q]));
  // P^T by rows (local; rows nc.. are the ghost coarse columns), then row I
  // = sum over i in P^T(I) of p_iI sum_c a_ic P(c, :), accumulated with a
  // marker (a row-wise SpGEMM).
  const Index nrows_t = nc + npg;
  std::vector<Index> pt_ptr(static_cast<std::size_t>(nrows_t) + 1, 0), pt_row(P.col.size());
  std::vector<T> pt_val(P.col.size());
  for (Index c : P.col) ++pt_ptr[c + 1];
  for (Index I = 0; I < nrows_t; ++I) pt_ptr[I + 1] += pt_ptr[I];
  {
    std::vector<Index> fill(pt_ptr.begin(), pt_ptr.end() - 1);
    for (Index i = 0; i < n; ++i) {
      for (Index k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
        const Index slot = fill[P.col[k]]++;
        pt_row[slot] = i;
        pt_val[slot] = P.val[k];
      }
    }
  }
  const std::size_t width = static_cast<std::size_t>(nc) + cghost.size();
  std::vector<Index> marker(width, -1), row_cols;
  std::vector<T> acc(width, T(0));
  auto add = [&](Index I, Index J, T v) {
    if (marker[J] != I) {
      marker[J] = I;
      acc[J] = v;
      row_cols.push_back(J);
    } else {
      acc[J] += v;
    }
  };
  auto gid_of = [&](Index J) { return J < nc ? cpart.row_start + J : cghost[J - nc]; };
  // The serial product's order of operations (cpu::GalerkinProduct): row I
  // of P^T A merged over the fine points first (in the order they are
  // reached, A's rows walked in global column order), then each (P^T A)_Ic
  // times row c of P. On one process every sum is then formed in the serial
  // order, so the coarse matrix is the serial one bit for bit.
  // split[i]: the first ghost column of row i with a global id above the
  // owned block (ghost ids are sorted, owned columns precede ghosts).
  const int64_t lo = L.op->row_start();
  std::vector<int64_t> fine_ghost_gid(plan.num_ghosts());
  {
    std::vector<int64_t> ids(n);
    for (Index i = 0; i < n; ++i) ids[i] = lo + i;
    plan.exchange(ids.data(), fine_ghost_gid.data());
  }
  std::vector<Index> split(n);
  for (Index i = 0; i < n; ++i) {
    Index k = A.row_ptr[i];
    while (k < A.row_ptr[i + 1] && A.col[k] < n) ++k;  // owned columns
    while (k < A.row_ptr[i + 1] && fine_ghost_gid[A.col[k] - n] < lo) ++k;
    split[i] = k;
  }
  const std::size_t fine_width = static_cast<std::size_t>(n) + fine_ghost_gid.size();
  std::vector<Index> fmark(fine_width, -1), flist;
  std::vector<T> facc(fine_width, T(0));
  auto reach = [&](Index I, Index c, T v) {
    if (fmark[c] != I) {
      fmark[c] = I;
      facc[c] = v;
      flist.push_back(c);
    } else {
      facc[c] += v;
    }
  };
  // Owned coarse rows straight into CSR (global columns, sorted), the ghost
  // ones as rows for their owners.
  std::vector<int32_t> rp(static_cast<std::size_t>(nc) + 1, 0), cols;
  std::vector<T> vals;
  RowSet<T> partial;
  for (Index I = 0; I < nrows_t; ++I) {
    row_cols.clear();
    flist.clear();
    for (Index t = pt_ptr[I]; t < pt_ptr[I + 1]; ++t) {
      const Index i = pt_row[t];
      const T p = pt_val[t];
      const Index b = A.row_ptr[i], e = A.row_ptr[i + 1];
      Index owned_end = b;
      while (owned_end < e && A.col[owned_end] < n) ++owned_end;
      // Global order: ghosts below the owned block, owned, ghosts above.
      for (Index k = owned_end; k < split[i]; ++k) reach(I, A.col[k], p * A.val[k]);
      for (Index k = b; k < owned_end; ++k) reach(I, A.col[k], p * A.val[k]);
      for (Index k = split[i]; k < e; ++k) reach(I, A.col[k], p * A.val[k]);
    }
    for (Index c : flist) {
      const T ra = facc[c];
      if (c < n) {
        for (Index q = P.row_ptr[c]; q < P.row_ptr[c + 1]; ++q) add(I, p_cc[q], ra * P.val[q]);
      } else {
        for (int64_t q = in.start[c - n]; q < in.start[c - n + 1]; ++q) {
          add(I, in_cc[q], ra * in.val[q]);
        }
      }
    }
    std::sort(row_cols.begin(), row_cols.end());
    for (Index J : row_cols) {
      if (I < nc) {
        cols.push_back(static_cast<int32_t>(gid_of(J)));
        vals.push_back(acc[J]);
      } else {
        partial.push(gid_of(J), acc[J]);
      }
    }
    if (I < nc) {
      rp[I + 1] = static_cast<int32_t>(cols.size());
    } else {
      partial.end_row();
    }
  }
  // Partial rows of other processes' coarse points: to their owners, which
  // merge them into their rows (only rows on a process boundary).
  if (L.p_plan) {
    const RowSet<T> got = rows_to_owners(*L.p_plan, partial);
    if (!got.col.empty()) {
      const auto& sidx = L.p_plan->send_index();
      std::vector<std::vector<std::size_t>> from(static_cast<std::size_t>(nc));  // rows of got
      for (std::size_t r = 0; r < sidx.size(); ++r) {
        if (got.start[r + 1] > got.start[r]) from[sidx[r]].push_back(r);
      }
      std::vector<int32_t> rp2(rp.size(), 0), cols2;
      std::vector<T> vals2;
      std::vector<std::pair<int64_t, T>> row;
      for (Index I = 0; I < nc; ++I) {
        if (from[I].empty()) {
          cols2.insert(cols2.end(), cols.begin() + rp[I], cols.begin() + rp[I + 1]);
          vals2.insert(vals2.end(), vals.begin() + rp[I], vals.begin() + rp[I + 1]);
        } else {
          // Own part first, then the received parts in arrival order; the
          // stable sort keeps that order of the summands.
          row.clear();
          for (int32_t k = rp[I]; k < rp[I + 1]; ++k) row.emplace_back(cols[k], vals[k]);
          for (std::size_t r : from[I]) {
            for (int64_t q = got.start[r]; q < got.start[r + 1]; ++q) {
              row.emplace_back(got.col[q], got.val[q]);
            }
          }
          std::stable_sort(row.begin(), row.end(),
                           [](const auto& a, const auto& b) { return a.first < b.first; });
          for (std::size_t e = 0; e < row.size(); ++e) {
            if (e > 0 && row[e - 1].first == row[e].first) {
              vals2.back() += row[e].second;
            } else {
              cols2.push_back(static_cast<int32_t>(row[e].first));
              vals2.push_back(row[e].second);
            }
          }
        }
        rp2[I + 1] = static_cast<int32_t>(cols2.size());
      }
      rp.swap(rp2);
      cols.swap(cols2);
      vals.swap(vals2);
    }
  }
  return localize(comm_, cpart, GlobalRows<T>{rp.data(), cols.data(), vals.data(),
                                              static_cast<int64_t>(cols.size())},
                  coarse_block, "coarse A");
}

template LocalMatrix<float> DistAmg<float>::galerkin(Level&, const RowPartition&, Index);
template LocalMatrix<double> DistAmg<double>::galerkin(Level&, const RowPartition&, Index);

}  // namespace jaxamg::dist
