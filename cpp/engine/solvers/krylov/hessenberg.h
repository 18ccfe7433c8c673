// The small dense part of GMRES-type methods: the least-squares problem
// min || beta e1 - H y || on the (j+1) x j Hessenberg matrix, kept in
// triangular form by Givens rotations as columns arrive. Always in double,
// whatever the vector type: it is tiny and its accuracy bounds the method's.
#pragma once
#include <cmath>
#include <vector>

namespace jaxamg::krylov {

// One plane rotation [c s; -s c] acting on two consecutive rows.
struct Givens {
  double c = 1, s = 0;
  void apply(double& a, double& b) const {
    const double t = c * a + s * b;
    b = -s * a + c * b;
    a = t;
  }
};

// Builds the rotation that zeroes b against a; a becomes the rotated
// diagonal. Returns false if both are zero (no rotation exists).
inline bool make_givens(double& a, double b, Givens& g) {
  const double d = std::hypot(a, b);
  if (d == 0.0 || !std::isfinite(d)) return false;
  g.c = a / d;
  g.s = b / d;
  a = d;
  return true;
}

// Solves R y = g for the leading k x k upper triangle of R (column-major,
// leading dimension ld), in place in g.
inline void back_substitute(const std::vector<double>& R, int ld, int k, std::vector<double>& g) {
  for (int i = k - 1; i >= 0; --i) {
    double s = g[i];
    for (int j = i + 1; j < k; ++j) s -= R[i + static_cast<std::size_t>(j) * ld] * g[j];
    g[i] = s / R[i + static_cast<std::size_t>(i) * ld];
  }
}

}  // namespace jaxamg::krylov
