#include "amg/aggregation/tentative_prolongator.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace jaxamg::aggregation {

namespace {

// A column whose part orthogonal to the earlier ones is below this fraction
// of its norm is dependent (Gram-Schmidt twice keeps Q orthogonal to
// rounding, so the residual of a dependent column is ~1e-15 of its norm).
constexpr double kDependent = 1e-10;

// Orthogonalises v (length r) against the first `q` columns of Q (r x m,
// column-major); adds the coefficients to h (may be null). Twice, for
// orthogonality to rounding level ("twice is enough").
void orthogonalize(const std::vector<double>& Q, Index r, Index q, std::vector<double>& v,
                   double* h) {
  for (int pass = 0; pass < 2; ++pass) {
    for (Index i = 0; i < q; ++i) {
      const double* qi = Q.data() + static_cast<std::size_t>(i) * r;
      double s = 0;
      for (Index t = 0; t < r; ++t) s += qi[t] * v[t];
      for (Index t = 0; t < r; ++t) v[t] -= s * qi[t];
      if (h) h[i] += s;
    }
  }
}

double norm2(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

}  // namespace

template <class T>
TentativeProlongator tentative_prolongator(const std::vector<Index>& node_of, Index count,
                                           Index block_dim, const NearNullspace& B,
                                           CsrMatrix<T>& P) {
  const Index k = block_dim;
  const Index nn = static_cast<Index>(node_of.size());
  const Index n = nn * k;
  const Index m = B.cols;
  if (B.rows != n || m < 1) {
    throw InvalidInput("smoothed aggregation: the near null space has " + std::to_string(B.rows) +
                       " rows and " + std::to_string(m) + " columns for a level of " +
                       std::to_string(n) + " unknowns; pass an (n, m) array with m >= 1");
  }
  // Members of each aggregate, ascending.
  std::vector<Index> ptr(count + 1, 0), members(nn);
  for (Index i = 0; i < nn; ++i)
    if (node_of[i] >= 0) ++ptr[node_of[i] + 1];
  for (Index a = 0; a < count; ++a) ptr[a + 1] += ptr[a];
  {
    std::vector<Index> next(ptr.begin(), ptr.end() - 1);
    for (Index i = 0; i < nn; ++i)
      if (node_of[i] >= 0) members[next[node_of[i]]++] = i;
  }

  // Per aggregate: the slots kept (B's column index or -1 for a filler) and
  // the Q columns, computed independently (parallel), then placed.
  std::vector<std::vector<double>> Qs(count), Rs(count);
  std::vector<Index> kept(count, 0);
  Index dependent = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : dependent) if (count > 1024)
  for (Index a = 0; a < count; ++a) {
    const Index r = (ptr[a + 1] - ptr[a]) * k;
    std::vector<double>& Q = Qs[a];  // r x m column-major
    std::vector<double>& R = Rs[a];  // m x m row-major: row j = coarse row of slot j
    Q.assign(static_cast<std::size_t>(r) * m, 0.0);
    R.assign(static_cast<std::size_t>(m) * m, 0.0);
    std::vector<double> v(r), h(m);
    std::vector<char> filled(m, 0);
    Index q = 0;  // columns of Q so far
    std::vector<Index> slot_of_q(m, -1);
    for (Index j = 0; j < m; ++j) {
      for (Index t = 0; t < r; ++t) {
        const Index row = members[ptr[a] + t / k] * k + t % k;
        v[t] = B.row(row)[j];
      }
      const double before = norm2(v);
      std::fill(h.begin(), h.end(), 0.0);
      orthogonalize(Q, r, q, v, h.data());
      // h[i] is the coefficient of Q column i, which belongs to slot slot_of_q[i].
      for (Index i = 0; i < q; ++i) R[static_cast<std::size_t>(slot_of_q[i]) * m + j] = h[i];
      const double after = norm2(v);
      if (after > kDependent * before && after > 0.0) {
        for (Index t = 0; t < r; ++t) Q[static_cast<std::size_t>(q) * r + t] = v[t] / after;
        R[static_cast<std::size_t>(j) * m + j] = after;
        slot_of_q[q++] = j;
        filled[j] = 1;
      } else {
        ++dependent;
      }
    }
    // Fill dependent slots with unit vectors while the aggregate has room.
    for (Index j = 0; j < m && q < r; ++j) {
      if (filled[j]) continue;
      Index best = 0;
      double best_left = -1;
      for (Index t = 0; t < r; ++t) {
        double left = 1.0;
        for (Index i = 0; i < q; ++i) {
          const double x = Q[static_cast<std::size_t>(i) * r + t];
          left -= x * x;
        }
        if (left > best_left) {
          best_left = left;
          best = t;
        }
      }
      std::fill(v.begin(), v.end(), 0.0);
      v[best] = 1.0;
      orthogonalize(Q, r, q, v, nullptr);
      const double nv = norm2(v);
      for (Index t = 0; t < r; ++t) Q[static_cast<std::size_t>(q) * r + t] = v[t] / nv;
      slot_of_q[q++] = j;
      filled[j] = 1;
    }
    // Reorder Q's columns by slot so that coarse unknown offset + s is slot s
    // (dropped slots removed), and R's rows to match.
    std::vector<double> Qo(static_cast<std::size_t>(r) * q), Ro(static_cast<std::size_t>(q) * m);
    Index s = 0;
    for (Index j = 0; j < m; ++j) {
      if (!filled[j]) continue;
      const Index i = static_cast<Index>(std::find(slot_of_q.begin(), slot_of_q.begin() + q, j) -
                                         slot_of_q.begin());
      std::copy(Q.begin() + static_cast<std::size_t>(i) * r,
                Q.begin() + static_cast<std::size_t>(i + 1) * r,
                Qo.begin() + static_cast<std::size_t>(s) * r);
      std::copy(R.begin() + static_cast<std::size_t>(j) * m,
                R.begin() + static_cast<std::size_t>(j + 1) * m,
                Ro.begin() + static_cast<std::size_t>(s) * m);
      ++s;
    }
    Q.swap(Qo);
    R.swap(Ro);
    kept[a] = q;
  }

  TentativeProlongator out;
  out.dependent_columns = dependent;
  out.offset.assign(count + 1, 0);
  bool uniform = true;
  for (Index a = 0; a < count; ++a) {
    out.offset[a + 1] = out.offset[a] + kept[a];
    out.dropped_columns += m - kept[a];
    uniform = uniform && kept[a] == m;
  }
  out.coarse_rows = out.offset[count];
  out.coarse_block_dim = uniform ? m : 1;
  out.coarse.rows = out.coarse_rows;
  out.coarse.cols = m;
  out.coarse.val.assign(static_cast<std::size_t>(out.coarse_rows) * m, 0.0);
  for (Index a = 0; a < count; ++a) {
    std::copy(Rs[a].begin(), Rs[a].end(),
              out.coarse.val.begin() + static_cast<std::size_t>(out.offset[a]) * m);
  }

  // P_tent: unknown t of aggregate a (its c-th row) holds row t of Q.
  P = CsrMatrix<T>(n, out.coarse_rows);
  for (Index i = 0; i < nn; ++i) {
    const Index a = node_of[i];
    for (Index c = 0; c < k; ++c) P.row_ptr[i * k + c + 1] = a >= 0 ? kept[a] : 0;
  }
  for (Index i = 0; i < n; ++i) P.row_ptr[i + 1] += P.row_ptr[i];
  P.col.resize(P.row_ptr[n]);
  P.val.resize(P.row_ptr[n]);
  for (Index a = 0; a < count; ++a) {
    const Index r = (ptr[a + 1] - ptr[a]) * k;
    for (Index t = 0; t < r; ++t) {
      const Index row = members[ptr[a] + t / k] * k + t % k;
      Index p = P.row_ptr[row];
      for (Index s = 0; s < kept[a]; ++s, ++p) {
        P.col[p] = out.offset[a] + s;
        P.val[p] = static_cast<T>(Qs[a][static_cast<std::size_t>(s) * r + t]);
      }
    }
  }
  return out;
}

template TentativeProlongator tentative_prolongator(const std::vector<Index>&, Index, Index,
                                                    const NearNullspace&, CsrMatrix<float>&);
template TentativeProlongator tentative_prolongator(const std::vector<Index>&, Index, Index,
                                                    const NearNullspace&, CsrMatrix<double>&);

}  // namespace jaxamg::aggregation
