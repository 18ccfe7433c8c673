// One solve of A x = b (or A^T x = b) by the serial engine and by the
// distributed one on this run's processes (equal or unequal partitions),
// compared over the global vector. Shared by the distributed solver tests.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "dist/dist_linear_solver.h"
#include "mpi_test_util.h"

namespace jaxamg::mpitest {

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

  double num[2] = {0, 0};
  for (int64_t i = lo; i < hi; ++i) {
    num[0] += (xl[i - lo] - xs[i]) * (xl[i - lo] - xs[i]);
    num[1] += xs[i] * xs[i];
  }
  MPI_Allreduce(MPI_IN_PLACE, num, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  Outcome o;
  o.rel_diff = std::sqrt(num[0] / num[1]);
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
