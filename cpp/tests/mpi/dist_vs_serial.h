// The distributed engine against the serial one: the relative difference of
// two solutions over the global vector, one solve of A x = b (or A^T x = b)
// by both on this run's processes (equal or unequal partitions), and the
// matrix and configuration variations the distributed tests share.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "dist/dist_linear_solver.h"
#include "mpi_test_util.h"

namespace jaxamg::mpitest {

// ||x_dist - x_serial|| / ||x_serial|| over the global vector, the same on
// every process: `local` is this process's block of the distributed solution,
// rows [lo, lo + local.size()), and `global` the whole serial solution.
// Summed in double, float32 solutions too.
template <class T>
double global_relative_difference(const std::vector<T>& local, const std::vector<T>& global,
                                  int64_t lo) {
  double num[2] = {0, 0};
  for (std::size_t i = 0; i < local.size(); ++i) {
    const double d = local[i] - global[lo + i];
    num[0] += d * d;
    num[1] += double(global[lo + i]) * global[lo + i];
  }
  MPI_Allreduce(MPI_IN_PLACE, num, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(num[0] / num[1]);
}

// A with its off-diagonal entries weakened by a factor in [0.5, 1] that
// varies from entry to entry (symmetric in i and j): new values on A's
// pattern, symmetric and diagonally dominant when A is.
inline CsrMatrix<double> perturbed(const CsrMatrix<double>& A) {
  CsrMatrix<double> B = A;
  for (Index i = 0; i < B.nrows; ++i) {
    for (Index k = B.row_ptr[i]; k < B.row_ptr[i + 1]; ++k) {
      const Index j = B.col[k];
      const double s = std::sin(0.7 * std::min(i, j) + 1.3 * std::max(i, j));
      if (j != i) B.val[k] *= 1.0 - 0.5 * s * s;
    }
  }
  return B;
}

// `cfg` with its V-cycle ("cycle": "V") replaced by `cycle`.
inline std::string with_cycle(std::string cfg, const std::string& cycle) {
  const std::string v = R"("cycle": "V")";
  cfg.replace(cfg.find(v), v.size(), R"("cycle": ")" + cycle + R"(")");
  return cfg;
}

struct Outcome {
  double rel_diff = 0;  // ||x_dist - x_serial|| / ||x_serial|| over the global vector
  int dist_iters = 0, serial_iters = 0;
  Status dist_status = Status::kFailed, serial_status = Status::kFailed;
};

inline Outcome compare(const CsrMatrix<double>& A, const std::string& cfg, bool unequal,
                       bool transpose, Index block_dim, unsigned seed) {
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), unequal, block_dim);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  const auto b = random_vector(n, seed);

  LinearSolver<double> serial(cfg);
  serial.setup(n, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), block_dim);
  std::vector<double> xs(n, 0.0);
  const SolveResult rs = serial.solve(b.data(), xs.data(), n, false, transpose);

  auto rows = take_rows(A, lo, hi);
  dist::DistLinearSolver<double> ds(cfg, MPI_COMM_WORLD);
  ds.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
           rows.val.data(), static_cast<int64_t>(rows.col.size()), block_dim);
  std::vector<double> xl(hi - lo, 0.0);
  const SolveResult rd = ds.solve(b.data() + lo, xl.data(), static_cast<Index>(hi - lo), false, transpose);

  Outcome o;
  o.rel_diff = global_relative_difference(xl, xs, lo);
  o.dist_iters = rd.iterations;
  o.serial_iters = rs.iterations;
  o.dist_status = rd.status;
  o.serial_status = rs.status;
  // Status, iterations and residual are identical on every process.
  EXPECT_TRUE(same_on_all_ranks(std::to_string(rd.iterations) + " " + std::to_string(rd.residual) +
                                " " + std::to_string(static_cast<int>(rd.status))));
  return o;
}

}  // namespace jaxamg::mpitest
