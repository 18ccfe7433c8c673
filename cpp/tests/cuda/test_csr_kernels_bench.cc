// Timing of the CSR products on 3D 7-point Poisson (the 256^3 fine level of
// the benchmarks): cuSPARSE's SpMV against the own kernel at every lane
// count, and the fused residual and Jacobi sweep, as effective bandwidth
// over the bytes they must move. Run with --gtest_also_run_disabled_tests
// --gtest_filter='CsrKernelsBench*'; JAXAMG_BENCH_N sets the grid edge.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backend/cuda/csr_kernels.h"
#include "backend/cuda/device_array.h"
#include "backend/cuda/device_csr.h"
#include "cuda/gpu_testing.h"
#include "problems.h"

namespace jaxamg {
namespace {

// Median milliseconds of `reps` runs of `fn` on the default stream.
double median_ms(const std::function<void()>& fn, int reps = 15) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  fn();  // warm up
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a, nullptr);
    fn();
    cudaEventRecord(b, nullptr);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

template <class T>
void bench(int m) {
  const CsrMatrix<T> A = testing::poisson3d<T>(m);
  const Index n = A.nrows;
  const std::vector<T> xh = testing::random_vector<T>(n, 1);
  cusparseHandle_t h = nullptr;
  cuda::check(cusparseCreate(&h), "cusparseCreate");
  cuda::DeviceArray<T> x, y, b, d, out;
  x.assign(xh);
  b.assign(testing::random_vector<T>(n, 2));
  d.assign(testing::random_vector<T>(n, 3));
  y.resize(n);
  out.resize(n);
  const double vec = static_cast<double>(n) * sizeof(T);
  cuda::DeviceCsr<T> own, cus;
  own.upload(h, A);
  setenv("JAXAMG_SPMV", "cusparse", 1);
  cus.upload(h, A);
  unsetenv("JAXAMG_SPMV");
  const double spmv = own.spmv_bytes();
  auto report = [&](const std::string& what, double ms, double bytes) {
    std::printf("%-8s n=%d^3 %-34s %8.3f ms %7.2f TB/s\n", sizeof(T) == 8 ? "float64" : "float32",
                m, what.c_str(), ms, bytes / (ms * 1e-3) / 1e12);
  };
  report("cuSPARSE SpMV (CSR_ALG2)",
         median_ms([&] { cus.spmv(h, T(1), x.data(), T(0), y.data()); }), spmv);
  std::printf("automatic lanes per row: %d\n", own.ref().lanes);
  for (int lanes : {1, 2, 4, 8, 16}) {
    cuda::CsrRef<T> r = own.ref();
    r.lanes = lanes;
    report("own SpMV, lanes " + std::to_string(lanes),
           median_ms([&] { cuda::csr_axpby(r, T(1), x.data(), T(0), y.data(), nullptr); }), spmv);
  }
  const cuda::CsrRef<T> r = own.ref();
  report("own residual (lanes " + std::to_string(r.lanes) + ")",
         median_ms([&] { cuda::csr_residual(r, x.data(), b.data(), y.data(), nullptr); }),
         spmv + vec);
  report("own Jacobi sweep",
         median_ms([&] { cuda::csr_jacobi(r, d.data(), x.data(), b.data(), out.data(), nullptr); }),
         spmv + 2 * vec);
  report("cuSPARSE residual (copy + SpMV)", median_ms([&] {
           cudaMemcpyAsync(y.data(), b.data(), n * sizeof(T), cudaMemcpyDeviceToDevice, nullptr);
           cus.spmv(h, T(-1), x.data(), T(1), y.data());
         }),
         spmv + vec);
  report("device copy (read + write)", median_ms([&] {
           cudaMemcpyAsync(y.data(), b.data(), n * sizeof(T), cudaMemcpyDeviceToDevice, nullptr);
         }),
         2 * vec);
  cusparseDestroy(h);
}

TEST(CsrKernelsBench, DISABLED_Poisson3d) {
  REQUIRE_GPU();
  const char* v = std::getenv("JAXAMG_BENCH_N");
  const int m = v ? std::atoi(v) : 256;
  bench<float>(m);
  bench<double>(m);
}

}  // namespace
}  // namespace jaxamg
