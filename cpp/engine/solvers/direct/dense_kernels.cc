#include "solvers/direct/dense_kernels.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace jaxamg::dense {

namespace {

// GCC vector extensions: VB bytes of T, lowered to the registers of the
// target the enclosing function is compiled for.
template <class T, int VB>
struct Vec;
#define JAXAMG_VEC(T, VB) \
  template <>             \
  struct Vec<T, VB> {     \
    typedef T type __attribute__((vector_size(VB))); \
  };
JAXAMG_VEC(float, 16)
JAXAMG_VEC(float, 32)
JAXAMG_VEC(float, 64)
JAXAMG_VEC(double, 16)
JAXAMG_VEC(double, 32)
JAXAMG_VEC(double, 64)
#undef JAXAMG_VEC

constexpr int kMR = 4;     // rows of C per micro tile
constexpr Index kMC = 64;  // rows of C per thread task (A block stays in L2)

template <class T>
struct Job {
  Index m, n, k;
  const T* A;
  Index lda;
  const T* Bp;  // packed B: panels of NR columns, k x NR each, zero padded
  T* C;
  Index ldc;
};

// A kMR x NR tile of C -= (packed A micro panel) (packed B micro panel).
template <class T, int VB>
inline __attribute__((always_inline)) void micro_kernel(Index k, const T* ap, const T* bp, T* c,
                                                        Index ldc, int mr, int nr) {
  using V = typename Vec<T, VB>::type;
  constexpr int L = VB / static_cast<int>(sizeof(T));
  V acc[kMR][2];
  for (int r = 0; r < kMR; ++r) acc[r][0] = acc[r][1] = V{};
  for (Index p = 0; p < k; ++p) {
    V b0, b1;
    std::memcpy(&b0, bp + p * 2 * L, VB);
    std::memcpy(&b1, bp + p * 2 * L + L, VB);
    for (int r = 0; r < kMR; ++r) {
      const T a = ap[p * kMR + r];
      acc[r][0] += a * b0;
      acc[r][1] += a * b1;
    }
  }
  if (mr == kMR && nr == 2 * L) {
    for (int r = 0; r < kMR; ++r) {
      for (int h = 0; h < 2; ++h) {
        V cv;
        std::memcpy(&cv, c + r * ldc + h * L, VB);
        cv -= acc[r][h];
        std::memcpy(c + r * ldc + h * L, &cv, VB);
      }
    }
  } else {
    T tile[kMR][2 * L];
    std::memcpy(tile, acc, sizeof tile);
    for (int r = 0; r < mr; ++r)
      for (int j = 0; j < nr; ++j) c[r * ldc + j] -= tile[r][j];
  }
}

// One task: rows [i0, i0 + kMC) of C against every column panel of B.
template <class T, int VB>
inline __attribute__((always_inline)) void block_task(const Job<T>& job, Index i0, T* ap) {
  constexpr int NR = 2 * VB / static_cast<int>(sizeof(T));
  const Index mc = std::min(kMC, job.m - i0);
  const Index k = job.k;
  const Index panels_m = (mc + kMR - 1) / kMR;
  for (Index ib = 0; ib < panels_m; ++ib) {
    for (Index p = 0; p < k; ++p) {
      for (int r = 0; r < kMR; ++r) {
        const Index i = ib * kMR + r;
        ap[(ib * k + p) * kMR + r] = i < mc ? job.A[(i0 + i) * job.lda + p] : T(0);
      }
    }
  }
  const Index panels_n = (job.n + NR - 1) / NR;
  for (Index jb = 0; jb < panels_n; ++jb) {
    const int nr = static_cast<int>(std::min<Index>(NR, job.n - jb * NR));
    const T* bp = job.Bp + jb * k * NR;
    for (Index ib = 0; ib < panels_m; ++ib) {
      const int mr = static_cast<int>(std::min<Index>(kMR, mc - ib * kMR));
      micro_kernel<T, VB>(k, ap + ib * k * kMR, bp, job.C + (i0 + ib * kMR) * job.ldc + jb * NR,
                          job.ldc, mr, nr);
    }
  }
}

#define JAXAMG_TASK(T, VB, ATTR, NAME) \
  ATTR void NAME(const Job<T>& job, Index i0, T* ap) { block_task<T, VB>(job, i0, ap); }
JAXAMG_TASK(float, 64, __attribute__((target("avx512f"))), task_f512)
JAXAMG_TASK(float, 32, __attribute__((target("avx2,fma"))), task_f256)
JAXAMG_TASK(float, 16, , task_f128)
JAXAMG_TASK(double, 64, __attribute__((target("avx512f"))), task_d512)
JAXAMG_TASK(double, 32, __attribute__((target("avx2,fma"))), task_d256)
JAXAMG_TASK(double, 16, , task_d128)
#undef JAXAMG_TASK

enum class Isa { k512, k256, k128 };

Isa detect() {
  static const Isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return Isa::k512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::k256;
    return Isa::k128;
  }();
  return isa;
}

template <class T>
using Task = void (*)(const Job<T>&, Index, T*);

template <class T>
Task<T> pick_task(int* vector_bytes);

template <>
Task<float> pick_task<float>(int* vb) {
  switch (detect()) {
    case Isa::k512: *vb = 64; return &task_f512;
    case Isa::k256: *vb = 32; return &task_f256;
    default: *vb = 16; return &task_f128;
  }
}

template <>
Task<double> pick_task<double>(int* vb) {
  switch (detect()) {
    case Isa::k512: *vb = 64; return &task_d512;
    case Isa::k256: *vb = 32; return &task_d256;
    default: *vb = 16; return &task_d128;
  }
}

}  // namespace

const char* kernel_isa() {
  switch (detect()) {
    case Isa::k512: return "avx512f";
    case Isa::k256: return "avx2";
    default: return "sse2";
  }
}

template <class T>
void gemm_minus(Index m, Index n, Index k, const T* A, Index lda, const T* B, Index ldb, T* C,
                Index ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  int vb = 16;
  const Task<T> task = pick_task<T>(&vb);
  const Index nr = 2 * vb / static_cast<Index>(sizeof(T));
  const Index panels_n = (n + nr - 1) / nr;
  std::vector<T> bp(static_cast<size_t>(panels_n) * k * nr);
  const Index blocks = (m + kMC - 1) / kMC;
  const bool parallel = static_cast<double>(m) * n * k > 2e6;
#pragma omp parallel if (parallel)
  {
#pragma omp for schedule(static)
    for (Index jb = 0; jb < panels_n; ++jb) {
      for (Index p = 0; p < k; ++p) {
        T* dst = bp.data() + (jb * k + p) * nr;
        for (Index j = 0; j < nr; ++j) {
          const Index col = jb * nr + j;
          dst[j] = col < n ? B[p * ldb + col] : T(0);
        }
      }
    }
    std::vector<T> ap(static_cast<size_t>((kMC + kMR - 1) / kMR) * kMR * k);
    const Job<T> job{m, n, k, A, lda, bp.data(), C, ldc};
#pragma omp for schedule(dynamic)
    for (Index blk = 0; blk < blocks; ++blk) task(job, blk * kMC, ap.data());
  }
}

template void gemm_minus(Index, Index, Index, const float*, Index, const float*, Index, float*,
                         Index);
template void gemm_minus(Index, Index, Index, const double*, Index, const double*, Index, double*,
                         Index);

}  // namespace jaxamg::dense
