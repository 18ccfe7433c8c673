// Launchers of the CUDA backend's own kernels (kernels.cu): vector updates,
// the smoother sweeps, reductions into device scalars, the dense coarse
// solve and input inspection. All run on the given stream; none
// synchronises.
//
// A device solve's loop keeps its scalars in a small device array of doubles
// (Slot below): the Krylov method's stop flag and the monitored norm, which
// the host reads once per iteration (or a CUDA graph tests on the device).
// The Krylov recurrences keep their own scalars (backend/slots.h).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "core/types.h"

namespace jaxamg::cuda {

enum Slot : int {
  kStop = 0,  // nonzero: the recurrence stopped this iteration (a breakdown or r = 0)
  kNorm,      // the monitored residual norm
  kScratch,   // a free slot (tests, one-off reductions)
  kNumSlots
};

// Number of partial sums a reduction uses (sizes the workspace).
constexpr int kReduceBlocks = 264;

enum class Reduce { kDot, kSumAbs, kMaxAbs, kSumSquaresSqrt };

template <class T>
void fill(std::size_t n, T value, T* x, cudaStream_t s);
// y = a x + b y
template <class T>
void axpby(std::size_t n, T a, const T* x, T b, T* y, cudaStream_t s);
// y = x rounded (or widened) to To: a float32 hierarchy in a float64 solve.
template <class To, class From>
void convert(std::size_t n, const From* x, To* y, cudaStream_t s);
// y += x widened (or rounded) to To.
template <class To, class From>
void add_converted(std::size_t n, const From* x, To* y, cudaStream_t s);
// x = d .* b (a diagonal sweep from a zero guess)
template <class T>
void diag_scale(std::size_t n, const T* d, const T* b, T* x, cudaStream_t s);
// x += d .* r (a diagonal sweep given the residual r)
template <class T>
void diag_update(std::size_t n, const T* d, const T* r, T* x, cudaStream_t s);
// Chebyshev step: p = d .* r + beta p (beta ignored when first), x += alpha p;
// with zero_x: p = d .* r, x = alpha p.
template <class T>
void cheby_step(std::size_t n, const T* d, const T* r, T alpha, T beta, bool first, bool zero_x,
                T* p, T* x, cudaStream_t s);

// scal[slot] = reduction over x (and y for kDot); `work` holds kReduceBlocks doubles.
template <class T>
void reduce(Reduce op, std::size_t n, const T* x, const T* y, double* work, double* scal, int slot,
            cudaStream_t s);

// inv = A^-1 (row-major n x n) from the LU factors of DenseLUSolver (row-major,
// unit L below the diagonal, U on and above; row i swapped with piv[i] at step i).
template <class T>
void dense_inverse(Index n, const T* lu, const Index* piv, T* inv, cudaStream_t s);
// y = M x, M row-major n x n.
template <class T>
void dense_matvec(Index n, const T* M, const T* x, T* y, cudaStream_t s);

// flags[0] |= some a[i] is NaN or infinite; flags[1] |= a differs bitwise
// from `previous` (when given). flags must be zeroed first.
template <class T>
void inspect(std::size_t n, const T* a, const T* previous, int* flags, cudaStream_t s);

// out[0], out[1] = two 64-bit hashes of (n, indptr, indices), each a sum
// over positions of a mixed (position, value) word: order-sensitive and
// independent of the launch shape. For structures traced under jax.jit, so
// that a cached call identifies its matrix without copying it to the host.
void structure_hash(Index n, const Index* indptr, std::size_t nnz, const Index* indices,
                    unsigned long long* out, cudaStream_t s);

}  // namespace jaxamg::cuda
