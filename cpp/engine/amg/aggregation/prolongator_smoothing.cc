#include "amg/aggregation/prolongator_smoothing.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "core/error.h"
#include "core/node_cursor.h"

namespace jaxamg::aggregation {

namespace {

constexpr Index kParallelRows = 4096;

// Number of eigenvalues below x of the symmetric tridiagonal (a, b) (Sturm).
int sturm_count(const std::vector<double>& a, const std::vector<double>& b, double x) {
  int count = 0;
  double d = 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = a[i] - x - (i > 0 ? b[i - 1] * b[i - 1] / d : 0.0);
    if (d == 0) d = -1e-300;
    if (d < 0) ++count;
  }
  return count;
}

double largest_tridiagonal_eigenvalue(const std::vector<double>& a, const std::vector<double>& b) {
  double lo = a[0], hi = a[0];
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double r = (i > 0 ? std::abs(b[i - 1]) : 0.0) + (i < b.size() ? std::abs(b[i]) : 0.0);
    lo = std::min(lo, a[i] - r);
    hi = std::max(hi, a[i] + r);
  }
  const int n = static_cast<int>(a.size());
  for (int it = 0; it < 200 && hi - lo > 1e-14 * std::max(std::abs(lo), std::abs(hi)); ++it) {
    const double mid = 0.5 * (lo + hi);
    if (sturm_count(a, b, mid) >= n) {
      hi = mid;  // every eigenvalue lies below mid
    } else {
      lo = mid;
    }
  }
  return hi;
}

// True if the k rows of every node of M list the same columns.
template <class T>
bool node_rows_share_columns(const CsrMatrix<T>& M, Index k) {
  for (Index I = 0; I < M.nrows / k; ++I) {
    const Index first = I * k;
    const Index len = M.row_ptr[first + 1] - M.row_ptr[first];
    for (Index row = first + 1; row < first + k; ++row) {
      if (M.row_ptr[row + 1] - M.row_ptr[row] != len ||
          !std::equal(M.col.begin() + M.row_ptr[row], M.col.begin() + M.row_ptr[row + 1],
                      M.col.begin() + M.row_ptr[first])) {
        return false;
      }
    }
  }
  return true;
}

// y = blockdiag(M) x with M row-major k x k per node.
void apply_blocks(const std::vector<double>& M, Index k, const std::vector<double>& x,
                  std::vector<double>& y) {
  const Index nodes = static_cast<Index>(x.size()) / k;
#pragma omp parallel for schedule(static) if (nodes > kParallelRows)
  for (Index I = 0; I < nodes; ++I) {
    const double* b = M.data() + static_cast<std::size_t>(I) * k * k;
    for (Index r = 0; r < k; ++r) {
      double s = 0;
      for (Index c = 0; c < k; ++c) s += b[r * k + c] * x[I * k + c];
      y[I * k + r] = s;
    }
  }
}

double dot(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s) if (x.size() > kParallelRows)
  for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

}  // namespace

template <class T>
std::vector<double> inverse_diagonal_blocks(const CsrMatrix<T>& A) {
  const Index k = A.block_dim;
  const Index nodes = A.nrows / k;
  std::vector<double> inv(static_cast<std::size_t>(A.nrows) * k, 0.0);
  Index bad = -1;
#pragma omp parallel for schedule(static) reduction(max : bad) if (nodes > kParallelRows)
  for (Index I = 0; I < nodes; ++I) {
    // Gauss-Jordan with partial pivoting on [D_I | I].
    std::vector<double> a(static_cast<std::size_t>(k) * k, 0.0), e(static_cast<std::size_t>(k) * k, 0.0);
    double scale = 0;
    for (Index r = 0; r < k; ++r) {
      e[r * k + r] = 1.0;
      const Index row = I * k + r;
      for (Index p = A.row_ptr[row]; p < A.row_ptr[row + 1]; ++p) {
        const Index c = A.col[p] - I * k;
        if (c >= 0 && c < k) a[r * k + c] = static_cast<double>(A.val[p]);
        scale = std::max(scale, std::abs(static_cast<double>(A.val[p])));
      }
    }
    bool singular = false;
    for (Index c = 0; c < k && !singular; ++c) {
      Index piv = c;
      for (Index r = c + 1; r < k; ++r)
        if (std::abs(a[r * k + c]) > std::abs(a[piv * k + c])) piv = r;
      if (!(std::abs(a[piv * k + c]) > 1e-14 * scale)) {
        singular = true;
        break;
      }
      for (Index t = 0; t < k; ++t) {
        std::swap(a[c * k + t], a[piv * k + t]);
        std::swap(e[c * k + t], e[piv * k + t]);
      }
      const double d = a[c * k + c];
      for (Index t = 0; t < k; ++t) {
        a[c * k + t] /= d;
        e[c * k + t] /= d;
      }
      for (Index r = 0; r < k; ++r) {
        if (r == c) continue;
        const double f = a[r * k + c];
        if (f == 0) continue;
        for (Index t = 0; t < k; ++t) {
          a[r * k + t] -= f * a[c * k + t];
          e[r * k + t] -= f * e[c * k + t];
        }
      }
    }
    if (singular) {
      bad = std::max(bad, I);
      continue;
    }
    std::copy(e.begin(), e.end(), inv.begin() + static_cast<std::size_t>(I) * k * k);
  }
  if (bad >= 0) {
    throw InvalidInput("smoothed aggregation: the " + std::to_string(k) + " x " +
                       std::to_string(k) + " diagonal block of node " + std::to_string(bad) +
                       " is singular, so the Jacobi smoothing of the prolongation is undefined; "
                       "check that A has a nonsingular diagonal (block) for every node");
  }
  return inv;
}

template <class T>
double block_jacobi_spectral_radius(const CsrMatrix<T>& A, const std::vector<double>& Dinv,
                                    int steps) {
  const Index n = A.nrows;
  const Index k = A.block_dim;
  if (n == 0) return 0;
  // D itself, to measure D-norms.
  std::vector<double> D(static_cast<std::size_t>(n) * k, 0.0);
  for (Index row = 0; row < n; ++row) {
    const Index I = row / k, r = row % k;
    for (Index p = A.row_ptr[row]; p < A.row_ptr[row + 1]; ++p) {
      const Index c = A.col[p] - I * k;
      if (c >= 0 && c < k) D[static_cast<std::size_t>(I) * k * k + r * k + c] = A.val[p];
    }
  }
  std::mt19937 gen(20241202u);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> q(n), q_prev(n, 0.0), u(n), w(n), Dw(n);
  for (double& x : q) x = dist(gen);
  apply_blocks(D, k, q, Dw);
  double nq = std::sqrt(dot(q, Dw));
  for (double& x : q) x /= nq;
  std::vector<double> alpha, beta;
  const int m = static_cast<int>(std::min<Index>(steps, n));
  for (int j = 0; j < m; ++j) {
#pragma omp parallel for schedule(static) if (n > kParallelRows)
    for (Index i = 0; i < n; ++i) {
      double s = 0;
      for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
        s += static_cast<double>(A.val[p]) * q[A.col[p]];
      u[i] = s;
    }
    const double a = dot(q, u);  // q^T A q with q D-normalised
    alpha.push_back(a);
    apply_blocks(Dinv, k, u, w);
    const double b_prev = beta.empty() ? 0.0 : beta.back();
    for (Index i = 0; i < n; ++i) w[i] -= a * q[i] + b_prev * q_prev[i];
    apply_blocks(D, k, w, Dw);
    const double b = std::sqrt(std::max(0.0, dot(w, Dw)));
    if (j + 1 == m || !(b > 1e-12 * std::abs(a))) break;
    beta.push_back(b);
    q_prev.swap(q);
    for (Index i = 0; i < n; ++i) q[i] = w[i] / b;
  }
  beta.resize(alpha.size() - 1);
  return largest_tridiagonal_eigenvalue(alpha, beta);
}

template <class T>
double smooth_prolongator(const CsrMatrix<T>& A, const CsrMatrix<T>& Pt, CsrMatrix<T>& P) {
  const Index n = A.nrows;
  const Index k = A.block_dim;
  const Index nodes = n / k;
  const Index nc = Pt.ncols;
  const std::vector<double> Dinv = inverse_diagonal_blocks(A);
  const double rho = block_jacobi_spectral_radius(A, Dinv);
  const double omega = rho > 0 ? (4.0 / 3.0) / rho : 0.0;

  // Node I's rows of P share one pattern: the columns of P_tent reached from
  // any of its rows through A (and its own P_tent columns). When the k rows
  // of every node of P_tent share their columns (a near null space's
  // tentative prolongator: a node's rows span its aggregate's columns), the
  // first row of each node reached stands for the node, and A's entries of
  // one node (adjacent: ascending columns) visit it once per row.
  P = CsrMatrix<T>(n, nc);
  const bool shared = k > 1 && node_rows_share_columns(Pt, k);
  auto node_columns = [&](Index I, std::vector<Index>& mark, std::vector<Index>& cols) {
    cols.clear();
    auto visit = [&](Index row) {
      for (Index q = Pt.row_ptr[row]; q < Pt.row_ptr[row + 1]; ++q) {
        if (mark[Pt.col[q]] != I) {
          mark[Pt.col[q]] = I;
          cols.push_back(Pt.col[q]);
        }
      }
    };
    NodeCursor node_of(k);
    for (Index row = I * k; row < (I + 1) * k; ++row) {
      if (!shared || row == I * k) visit(row);
      Index last = -1;
      for (Index p = A.row_ptr[row]; p < A.row_ptr[row + 1]; ++p) {
        const Index j = A.col[p];
        if (!shared) {
          visit(j);
        } else if (const Index J = node_of(j); J != last) {
          last = J;
          visit(J * k);
        }
      }
    }
    std::sort(cols.begin(), cols.end());
  };
  // One parallel region: the first loop lists each node's columns (kept by
  // the thread that found them), the second fills the node's rows. Both are
  // static schedules over the same nodes, so each thread meets its own nodes
  // again, in the same order.
#pragma omp parallel if (nodes > kParallelRows)
  {
    std::vector<Index> mark(nc, -1), cols, found, slot(nc, -1);
#pragma omp for schedule(static)
    for (Index I = 0; I < nodes; ++I) {
      node_columns(I, mark, cols);
      for (Index r = 0; r < k; ++r) P.row_ptr[I * k + r + 1] = static_cast<Index>(cols.size());
      found.insert(found.end(), cols.begin(), cols.end());
    }
#pragma omp single
    {
      for (Index i = 0; i < n; ++i) P.row_ptr[i + 1] += P.row_ptr[i];
      P.col.resize(P.row_ptr[n]);
      P.val.resize(P.row_ptr[n]);
    }
    std::vector<double> ap, v;  // (A P_tent) rows of the node, k x |cols|
    std::size_t next = 0;       // this thread's next node in `found`
#pragma omp for schedule(static)
    for (Index I = 0; I < nodes; ++I) {
      const Index w = P.row_ptr[I * k + 1] - P.row_ptr[I * k];
      const Index* node_cols = found.data() + next;
      next += static_cast<std::size_t>(w);
      for (Index s = 0; s < w; ++s) slot[node_cols[s]] = s;
      ap.assign(static_cast<std::size_t>(k) * w, 0.0);
      for (Index r = 0; r < k; ++r) {
        const Index row = I * k + r;
        for (Index p = A.row_ptr[row]; p < A.row_ptr[row + 1]; ++p) {
          const double a = static_cast<double>(A.val[p]);
          const Index j = A.col[p];
          for (Index q = Pt.row_ptr[j]; q < Pt.row_ptr[j + 1]; ++q)
            ap[static_cast<std::size_t>(r) * w + slot[Pt.col[q]]] += a * Pt.val[q];
        }
      }
      const double* di = Dinv.data() + static_cast<std::size_t>(I) * k * k;
      for (Index r = 0; r < k; ++r) {
        const Index row = I * k + r;
        v.assign(w, 0.0);
        for (Index q = Pt.row_ptr[row]; q < Pt.row_ptr[row + 1]; ++q)
          v[slot[Pt.col[q]]] += Pt.val[q];
        for (Index c = 0; c < k; ++c) {
          const double f = omega * di[r * k + c];
          if (f == 0) continue;
          for (Index s = 0; s < w; ++s) v[s] -= f * ap[static_cast<std::size_t>(c) * w + s];
        }
        Index p = P.row_ptr[row];
        for (Index s = 0; s < w; ++s, ++p) {
          P.col[p] = node_cols[s];
          P.val[p] = static_cast<T>(v[s]);
        }
      }
    }
  }
  return omega;
}

#define JAXAMG_INSTANTIATE(T)                                                            \
  template std::vector<double> inverse_diagonal_blocks(const CsrMatrix<T>&);             \
  template double block_jacobi_spectral_radius(const CsrMatrix<T>&,                      \
                                               const std::vector<double>&, int);         \
  template double smooth_prolongator(const CsrMatrix<T>&, const CsrMatrix<T>&, CsrMatrix<T>&);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::aggregation
