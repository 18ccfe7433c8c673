// The backend's own CSR kernels (csr_kernels.h) against products computed on
// the host in double: every lane count, rectangular matrices with empty and
// long rows, float32 and float64, repeatable bits; DeviceCsr's own SpMV
// against cuSPARSE's (JAXAMG_SPMV=cusparse); and whole AMG solves with the
// fused smoother sweeps against the same solves on cuSPARSE products. Every
// GPU test skips where no GPU is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "backend/cuda/csr_kernels.h"
#include "backend/cuda/device_array.h"
#include "backend/cuda/device_csr.h"
#include "core/error.h"
#include "cuda/gpu_testing.h"
#include "device/device_solver.h"
#include "problems.h"

namespace jaxamg {
namespace {

// rows x cols with row lengths drawn from 0..8, every seventh row 20..70
// long (wider than a warp), columns and values random.
template <class T>
CsrMatrix<T> random_csr(Index rows, Index cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> short_len(0, 8), long_len(20, 70);
  std::uniform_int_distribution<Index> column(0, cols - 1);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<T> A;
  A.nrows = rows;
  A.ncols = cols;
  A.row_ptr.assign(1, 0);
  for (Index i = 0; i < rows; ++i) {
    const int len = i % 7 == 3 ? long_len(gen) : short_len(gen);
    for (int k = 0; k < len; ++k) {
      A.col.push_back(column(gen));
      A.val.push_back(static_cast<T>(value(gen)));
    }
    A.row_ptr.push_back(static_cast<Index>(A.col.size()));
  }
  return A;
}

template <class T>
std::vector<T> to_host(const cuda::DeviceArray<T>& d, std::size_t n) {
  std::vector<T> h(n);
  cuda::check(cudaMemcpy(h.data(), d.data(), n * sizeof(T), cudaMemcpyDeviceToHost), "copy");
  return h;
}

// A x in double, and for each row a bound on the rounding error of the
// device's sum: (row length + 4) eps sum_j |a_ij x_j| (a recursive-summation
// bound, loose enough for any order of the sum).
template <class T>
void host_product(const CsrMatrix<T>& A, const std::vector<T>& x, std::vector<double>* ax,
                  std::vector<double>* bound) {
  ax->assign(A.nrows, 0.0);
  bound->assign(A.nrows, 0.0);
  const double eps = std::numeric_limits<T>::epsilon();
  for (Index i = 0; i < A.nrows; ++i) {
    double mag = 0;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const double t = static_cast<double>(A.val[k]) * x[A.col[k]];
      (*ax)[i] += t;
      mag += std::abs(t);
    }
    (*bound)[i] = (A.row_ptr[i + 1] - A.row_ptr[i] + 4) * eps * mag;
  }
}

// The rounding bound of a few more operations on values of size `v`.
template <class T>
double ops(double v) {
  return 4 * std::numeric_limits<T>::epsilon() * std::abs(v);
}

template <class T>
class CsrKernels : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CsrKernels, ValueTypes);

TYPED_TEST(CsrKernels, EveryLaneCountMatchesHostProducts) {
  using T = TypeParam;
  REQUIRE_GPU();
  const Index rows = 1500, cols = 1100;
  const CsrMatrix<T> A = random_csr<T>(rows, cols, 3);
  const std::vector<T> x = testing::random_vector<T>(cols, 4);
  const std::vector<T> xr = testing::random_vector<T>(rows, 5);  // a row-sized iterate
  const std::vector<T> b = testing::random_vector<T>(rows, 6);
  const std::vector<T> y0 = testing::random_vector<T>(rows, 7);
  const std::vector<T> p0 = testing::random_vector<T>(rows, 8);
  const std::vector<T> d = testing::random_vector<T>(rows, 9);
  std::vector<double> ax, mag, axr, magr;
  host_product(A, x, &ax, &mag);
  // Jacobi and Chebyshev multiply a square operator; use the leading block.
  CsrMatrix<T> S = random_csr<T>(rows, rows, 10);
  host_product(S, xr, &axr, &magr);

  cuda::DeviceArray<Index> ptr, col, sptr, scol;
  cuda::DeviceArray<T> val, sval, dx, dxr, db, dd, dy, dp, dout;
  ptr.assign(A.row_ptr);
  col.assign(A.col);
  val.assign(A.val);
  sptr.assign(S.row_ptr);
  scol.assign(S.col);
  sval.assign(S.val);
  dx.assign(x);
  dxr.assign(xr);
  db.assign(b);
  dd.assign(d);
  const T alpha = T(-0.75), beta = T(1.5);
  for (int lanes : {1, 2, 4, 8, 16, 32}) {
    SCOPED_TRACE("lanes " + std::to_string(lanes));
    const cuda::CsrRef<T> ref{rows, ptr.data(), col.data(), val.data(), lanes};
    const cuda::CsrRef<T> sq{rows, sptr.data(), scol.data(), sval.data(), lanes};

    // y = alpha A x with y holding NaN: beta = 0 must not read y.
    dy.assign(std::vector<T>(rows, std::numeric_limits<T>::quiet_NaN()));
    cuda::csr_axpby(ref, alpha, dx.data(), T(0), dy.data(), nullptr);
    std::vector<T> y = to_host(dy, rows);
    for (Index i = 0; i < rows; ++i) {
      ASSERT_NEAR(y[i], alpha * ax[i], std::abs(alpha) * mag[i] + 1e-30) << i;
    }
    // y = alpha A x + beta y, twice: the same bits.
    std::vector<T> first;
    for (int run = 0; run < 2; ++run) {
      dy.assign(y0);
      cuda::csr_axpby(ref, alpha, dx.data(), beta, dy.data(), nullptr);
      y = to_host(dy, rows);
      if (run == 0) first = y;
    }
    EXPECT_EQ(y, first);
    for (Index i = 0; i < rows; ++i) {
      const double want = alpha * ax[i] + beta * static_cast<double>(y0[i]);
      ASSERT_NEAR(y[i], want, std::abs(alpha) * mag[i] + ops<T>(want) + ops<T>(beta * y0[i]))
          << i;
    }
    // r = b - A x.
    dy.resize(rows);
    cuda::csr_residual(ref, dx.data(), db.data(), dy.data(), nullptr);
    y = to_host(dy, rows);
    for (Index i = 0; i < rows; ++i) {
      ASSERT_NEAR(y[i], b[i] - ax[i], mag[i] + ops<T>(b[i]) + 1e-30) << i;
    }
    // x_out = x + d (b - S x).
    dout.resize(rows);
    cuda::csr_jacobi(sq, dd.data(), dxr.data(), db.data(), dout.data(), nullptr);
    y = to_host(dout, rows);
    for (Index i = 0; i < rows; ++i) {
      const double want = xr[i] + d[i] * (b[i] - axr[i]);
      const double bound =
          ops<T>(xr[i]) + std::abs(d[i]) * (magr[i] + ops<T>(b[i]) + ops<T>(b[i] - axr[i]));
      ASSERT_NEAR(y[i], want, bound) << i;
    }
    // Chebyshev: p = d (b - S x) [+ beta p], x_out = x + alpha p.
    for (bool first_step : {true, false}) {
      dp.assign(p0);
      cuda::csr_chebyshev(sq, dd.data(), dxr.data(), db.data(), alpha, beta, first_step,
                          dp.data(), dout.data(), nullptr);
      const std::vector<T> p = to_host(dp, rows);
      y = to_host(dout, rows);
      for (Index i = 0; i < rows; ++i) {
        const double dr = d[i] * (b[i] - axr[i]);
        const double want_p = first_step ? dr : dr + beta * static_cast<double>(p0[i]);
        const double bound = std::abs(d[i]) * (magr[i] + ops<T>(b[i]) + ops<T>(b[i] - axr[i])) +
                             ops<T>(beta * p0[i]) + ops<T>(want_p);
        ASSERT_NEAR(p[i], want_p, bound) << i;
        ASSERT_NEAR(y[i], xr[i] + alpha * want_p,
                    ops<T>(xr[i]) + std::abs(alpha) * bound + ops<T>(alpha * want_p))
            << i;
      }
    }
  }
}

TEST(CsrLanes, FollowTheMeanRowLength) {
  EXPECT_EQ(cuda::csr_lanes(100, 0), 1);
  EXPECT_EQ(cuda::csr_lanes(100, 700), 1);    // 7-point stencil: a thread per row
  EXPECT_EQ(cuda::csr_lanes(100, 1199), 1);
  EXPECT_EQ(cuda::csr_lanes(100, 1200), 2);   // 12 entries: two threads of 6
  EXPECT_EQ(cuda::csr_lanes(100, 2700), 4);   // 27-point stencil
  EXPECT_EQ(cuda::csr_lanes(100, 19200), 32);
  EXPECT_EQ(cuda::csr_lanes(100, 1000000), 32);
  EXPECT_EQ(cuda::csr_lanes(0, 0), 1);
}

// JAXAMG_SPMV set for the lifetime of the object.
struct SpmvChoice {
  explicit SpmvChoice(const char* v) { setenv("JAXAMG_SPMV", v, 1); }
  ~SpmvChoice() { unsetenv("JAXAMG_SPMV"); }
};

template <class T>
std::vector<T> device_spmv(const CsrMatrix<T>& A, const std::vector<T>& x, const char* choice,
                           bool* cusparse) {
  SpmvChoice env(choice);
  cusparseHandle_t h = nullptr;
  cuda::check(cusparseCreate(&h), "cusparseCreate");
  cuda::DeviceCsr<T> M;
  M.upload(h, A);
  *cusparse = M.uses_cusparse();
  cuda::DeviceArray<T> dx, dy;
  dx.assign(x);
  dy.resize(A.nrows);
  M.spmv(h, T(1), dx.data(), T(0), dy.data());
  std::vector<T> y = to_host(dy, A.nrows);
  cusparseDestroy(h);
  return y;
}

TEST(DeviceCsrSpmv, OwnKernelAgreesWithCusparse) {
  REQUIRE_GPU();
  const CsrMatrix<double> A = random_csr<double>(3000, 2500, 21);
  const std::vector<double> x = testing::random_vector<double>(2500, 22);
  bool own_is_cusparse = true, cusparse_is_cusparse = false;
  const std::vector<double> own = device_spmv(A, x, "own", &own_is_cusparse);
  const std::vector<double> cus = device_spmv(A, x, "cusparse", &cusparse_is_cusparse);
  EXPECT_FALSE(own_is_cusparse);
  EXPECT_TRUE(cusparse_is_cusparse);
  std::vector<double> ax, mag;
  host_product(A, x, &ax, &mag);
  for (Index i = 0; i < A.nrows; ++i) {
    ASSERT_NEAR(own[i], cus[i], 2 * mag[i] + 1e-300) << i;
  }
}

TEST(DeviceCsrSpmv, UnknownChoiceNamesTheVariable) {
  REQUIRE_GPU();
  SpmvChoice env("fast");
  cusparseHandle_t h = nullptr;
  cuda::check(cusparseCreate(&h), "cusparseCreate");
  cuda::DeviceCsr<double> M;
  try {
    M.upload(h, testing::poisson1d<double>(10));
    ADD_FAILURE() << "JAXAMG_SPMV=fast was accepted";
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("JAXAMG_SPMV='fast'"), std::string::npos) << what;
    EXPECT_NE(what.find("cusparse"), std::string::npos) << what;
  }
  cusparseDestroy(h);
}

// A PCG + AMG solve on the device with fused sweeps and on cuSPARSE
// products: the same arithmetic up to summation order.
template <class T>
void expect_fused_equals_cusparse(const std::string& config, const CsrMatrix<T>& A, double tol) {
  LinearSolver<T> s(config);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const std::vector<T> b = testing::random_vector<T>(A.nrows, 31);
  std::vector<std::vector<T>> x;
  std::vector<SolveResult> res;
  for (const char* choice : {"own", "cusparse"}) {
    SpmvChoice env(choice);
    cuda::DeviceSolver<T> dev(s.solver());
    cuda::DeviceArray<T> db, dx;
    db.assign(b);
    dx.resize(A.nrows);
    res.push_back(dev.solve(db.data(), dx.data(), false, nullptr));
    x.push_back(to_host(dx, A.nrows));
  }
  EXPECT_EQ(res[0].status, Status::kSuccess);
  EXPECT_EQ(res[1].status, Status::kSuccess);
  EXPECT_GT(res[0].iterations, 2);
  EXPECT_LE(std::abs(res[0].iterations - res[1].iterations), 1);
  EXPECT_LT(testing::relative_residual(A, x[0], b), tol * 1.01);
  EXPECT_LT(testing::relative_residual(A, x[1], b), tol * 1.01);
  ASSERT_FALSE(res[0].history.empty());
  EXPECT_NEAR(res[0].history[1], res[1].history[1], 1e-3 * res[1].history[1]);
}

std::string pcg_amg(const std::string& amg_body, const std::string& tol) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG",
    "max_iters": 100, "tolerance": )" + tol + R"(, "convergence": "RELATIVE_INI_CORE",
    "norm": "L2", "monitor_residual": 1, "store_res_history": 1,
    "preconditioner": {"scope": "amg", "solver": "AMG", "max_iters": 1, "cycle": "V", )" +
         amg_body + "}}}";
}

TEST(FusedSweeps, ClassicalChebyshevEqualsCusparsePath) {
  REQUIRE_GPU();
  const std::string amg = R"("algorithm": "CLASSICAL", "presweeps": 1, "postsweeps": 2,
    "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32,
    "smoother": {"scope": "cheby", "solver": "CHEBYSHEV", "chebyshev_polynomial_order": 2,
      "chebyshev_lambda_estimate_mode": 3, "cheby_max_lambda": 1.0, "cheby_min_lambda": 0.25,
      "preconditioner": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 1.0}})";
  expect_fused_equals_cusparse(pcg_amg(amg, "1e-8"), testing::jump3d<double>(18, 1e2), 1e-8);
}

TEST(FusedSweeps, AggregationJacobiOddSweepsEqualsCusparsePath) {
  REQUIRE_GPU();
  // Three post-sweeps end on the spare buffer, which is then copied back.
  const std::string amg = R"("algorithm": "AGGREGATION", "selector": "SIZE_4",
    "presweeps": 2, "postsweeps": 3, "coarse_solver": "DENSE_LU_SOLVER",
    "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9})";
  expect_fused_equals_cusparse(pcg_amg(amg, "1e-8"), testing::poisson3d<double>(20), 1e-8);
  expect_fused_equals_cusparse(pcg_amg(amg, "1e-5"), testing::poisson3d<float>(16), 1e-5);
}

}  // namespace
}  // namespace jaxamg
