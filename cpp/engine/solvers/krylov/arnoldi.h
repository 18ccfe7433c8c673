// Vector kernels of the GMRES-type methods, built from the backend's BLAS:
// Gram-Schmidt against a set of basis vectors and linear combinations of
// them. The basis is passed as pointers so that a ring buffer (truncated
// FGMRES) and a contiguous block (GMRES) use the same code.
#pragma once
#include <cstddef>

#include "core/distribution.h"

namespace jaxamg::krylov {

// Modified Gram-Schmidt: for each basis[i] (orthonormal), h[i] = <w, basis[i]>
// and w -= h[i] basis[i], with a second pass when cancellation was severe.
// Returns ||w||_2 afterwards. With a reducer (distributed vectors) every
// inner product is summed over the processes.
template <class T>
double orthogonalize(std::size_t n, const T* const* basis, int count, double* h, T* w,
                     const Reducer* reduce = nullptr);

// out += sum_i y[i] basis[i], two vectors per pass.
template <class T>
void add_combination(std::size_t n, const T* const* basis, int count, const double* y, T* out);

}  // namespace jaxamg::krylov
