// Test problems shared by the C++ tests: finite-difference Poisson in 1-3D,
// anisotropic and jumping coefficients, convection-diffusion, random vectors,
// and a dense reference solve.
#pragma once
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/blas.h"
#include "core/csr_matrix.h"

namespace jaxamg::testing {

// 7-point (3D) / 5-point (2D) / 3-point (1D) operator on an nx*ny*nz grid
// with Dirichlet boundaries; coefficient kx, ky, kz per axis; `coef(i)`
// multiplies every coupling of cell i (harmonic average across faces).
template <class T, class Coef>
CsrMatrix<T> stencil_matrix(int nx, int ny, int nz, double kx, double ky, double kz, Coef coef) {
  const int n = nx * ny * nz;
  CsrMatrix<T> A(n, n);
  A.col.reserve(7 * n);
  A.val.reserve(7 * n);
  auto id = [&](int i, int j, int k) { return (k * ny + j) * nx + i; };
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const int row = id(i, j, k);
        const double c0 = coef(row);
        double diag = 0;
        std::vector<std::pair<int, double>> entries;
        auto link = [&](int ii, int jj, int kk, double w, bool exists) {
          if (w == 0) return;
          double cw = w;
          if (exists) {
            const int nb = id(ii, jj, kk);
            const double c1 = coef(nb);
            cw *= 2 * c0 * c1 / (c0 + c1);
            entries.emplace_back(nb, -cw);
          } else {
            cw *= c0;
          }
          diag += cw;
        };
        if (nx > 1 || kx != 0) { link(i - 1, j, k, kx, i > 0); link(i + 1, j, k, kx, i < nx - 1); }
        if (ny > 1) { link(i, j - 1, k, ky, j > 0); link(i, j + 1, k, ky, j < ny - 1); }
        if (nz > 1) { link(i, j, k - 1, kz, k > 0); link(i, j, k + 1, kz, k < nz - 1); }
        entries.emplace_back(row, diag);
        std::sort(entries.begin(), entries.end());
        for (auto& [c, v] : entries) { A.col.push_back(c); A.val.push_back(static_cast<T>(v)); }
        A.row_ptr[row + 1] = static_cast<Index>(A.col.size());
      }
  A.find_diagonal();
  return A;
}

template <class T>
CsrMatrix<T> poisson1d(int n) { return stencil_matrix<T>(n, 1, 1, 1, 0, 0, [](int) { return 1.0; }); }
template <class T>
CsrMatrix<T> poisson2d(int n) { return stencil_matrix<T>(n, n, 1, 1, 1, 0, [](int) { return 1.0; }); }
template <class T>
CsrMatrix<T> poisson3d(int n) { return stencil_matrix<T>(n, n, n, 1, 1, 1, [](int) { return 1.0; }); }
// -eps u_xx - u_yy
template <class T>
CsrMatrix<T> anisotropic2d(int n, double eps) {
  return stencil_matrix<T>(n, n, 1, eps, 1, 0, [](int) { return 1.0; });
}
// 3D Poisson whose coefficient is `jump` in the central cube, 1 elsewhere.
template <class T>
CsrMatrix<T> jump3d(int n, double jump) {
  return stencil_matrix<T>(n, n, n, 1, 1, 1, [n, jump](int id) {
    const int i = id % n, j = (id / n) % n, k = id / (n * n);
    const bool inside = i >= n / 4 && i < 3 * n / 4 && j >= n / 4 && j < 3 * n / 4 &&
                        k >= n / 4 && k < 3 * n / 4;
    return inside ? jump : 1.0;
  });
}

// -eps Laplace(u) + (cos t, sin t) . grad(u), first-order upwind, h = 1/(n+1).
template <class T>
CsrMatrix<T> convection_diffusion2d(int n, double eps, double theta = 0.3) {
  const double h = 1.0 / (n + 1);
  const double vx = std::cos(theta), vy = std::sin(theta);
  const int N = n * n;
  CsrMatrix<T> A(N, N);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const int row = j * n + i;
      std::vector<std::pair<int, double>> e;
      double diag = 4 * eps / (h * h) + (std::abs(vx) + std::abs(vy)) / h;
      auto add = [&](int ii, int jj, double w) {
        if (ii >= 0 && ii < n && jj >= 0 && jj < n) e.emplace_back(jj * n + ii, w);
      };
      add(i - 1, j, -eps / (h * h) - std::max(vx, 0.0) / h);
      add(i + 1, j, -eps / (h * h) + std::min(vx, 0.0) / h);
      add(i, j - 1, -eps / (h * h) - std::max(vy, 0.0) / h);
      add(i, j + 1, -eps / (h * h) + std::min(vy, 0.0) / h);
      e.emplace_back(row, diag);
      std::sort(e.begin(), e.end());
      for (auto& [c, v] : e) { A.col.push_back(c); A.val.push_back(static_cast<T>(v)); }
      A.row_ptr[row + 1] = static_cast<Index>(A.col.size());
    }
  A.find_diagonal();
  return A;
}

// New values on the same pattern, as a resetup gets them: each value of M
// scaled by a factor drawn from [0.5, 1.5).
template <class T>
void scale_values_randomly(CsrMatrix<T>& M, std::mt19937& gen) {
  std::uniform_real_distribution<double> factor(0.5, 1.5);
  for (auto& v : M.val) v = static_cast<T>(v * factor(gen));
}

template <class T>
std::vector<T> random_vector(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(gen));
  return v;
}

// ||b - A x||_2 / ||b||_2, accumulated in double.
template <class T>
double relative_residual(const CsrMatrix<T>& A, const std::vector<T>& x, const std::vector<T>& b) {
  std::vector<T> r(b.size());
  cpu::residual(A, x.data(), b.data(), r.data());
  return cpu::norm(r.size(), r.data(), NormType::kL2) / cpu::norm(b.size(), b.data(), NormType::kL2);
}

// Dense Gaussian elimination with partial pivoting (small references only).
template <class T>
std::vector<double> dense_solve(const CsrMatrix<T>& A, const std::vector<T>& b) {
  const int n = A.nrows;
  std::vector<double> M(static_cast<size_t>(n) * n, 0.0), x(b.begin(), b.end());
  for (int i = 0; i < n; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) M[static_cast<size_t>(i) * n + A.col[k]] += A.val[k];
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int r = c + 1; r < n; ++r) if (std::abs(M[r * n + c]) > std::abs(M[p * n + c])) p = r;
    for (int k = 0; k < n; ++k) std::swap(M[c * n + k], M[p * n + k]);
    std::swap(x[c], x[p]);
    for (int r = c + 1; r < n; ++r) {
      const double f = M[r * n + c] / M[c * n + c];
      for (int k = c; k < n; ++k) M[r * n + k] -= f * M[c * n + k];
      x[r] -= f * x[c];
    }
  }
  for (int c = n - 1; c >= 0; --c) {
    for (int k = c + 1; k < n; ++k) x[c] -= M[c * n + k] * x[k];
    x[c] /= M[c * n + c];
  }
  return x;
}

}  // namespace jaxamg::testing
