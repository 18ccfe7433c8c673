// Partitions, halo plans and the distributed product against the serial
// engine, and error agreement: a bad input on one process raises the same
// error on every process (a hang fails by ctest's timeout).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "backend/cpu/blas.h"
#include "dist/dist_linear_solver.h"
#include "dist/dist_matrix.h"
#include "mpi_test_util.h"
#include "problems.h"

namespace jaxamg {
namespace {

using namespace mpitest;

TEST(DistPartition, AcceptsContiguousBlocksInRankOrder) {
  dist::Communicator comm(MPI_COMM_WORLD);
  const auto starts = partition_starts(100, size(), true);
  const auto p = dist::RowPartition::build(comm, starts[rank()], starts[rank() + 1] - starts[rank()], 100);
  EXPECT_EQ(p.nglobal, 100);
  EXPECT_EQ(p.starts, starts);
  for (int64_t g : {int64_t(0), int64_t(37), int64_t(99)}) {
    EXPECT_GE(g, p.starts[p.owner(g)]);
    EXPECT_LT(g, p.starts[p.owner(g) + 1]);
  }
}

// Every process must throw, with the same message.
void expect_agreed_error(const std::function<void()>& f, const std::string& fragment) {
  const std::string msg = error_of(f);
  EXPECT_FALSE(msg.empty()) << "no error on rank " << rank();
  EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  EXPECT_TRUE(same_on_all_ranks(msg)) << msg;
}

TEST(DistPartition, RejectsGapsOverlapsAndMismatchesOnEveryRank) {
  dist::Communicator comm(MPI_COMM_WORLD);
  const int r = rank(), P = size();
  const auto starts = partition_starts(40, P, false);
  const int64_t lo = starts[r], n = starts[r + 1] - starts[r];
  if (P > 1) {
    // The last rank starts one row late: a gap.
    expect_agreed_error([&] { dist::RowPartition::build(comm, r == P - 1 ? lo + 1 : lo, r == P - 1 ? n - 1 : n, 40); }, "a gap");
    // The last rank starts one row early: an overlap.
    expect_agreed_error([&] { dist::RowPartition::build(comm, r == P - 1 ? lo - 1 : lo, r == P - 1 ? n + 1 : n, 40); }, "an overlap");
    // One rank disagrees on nglobal.
    expect_agreed_error([&] { dist::RowPartition::build(comm, lo, n, r == 1 ? 41 : 40); }, "nglobal");
  }
  // Rows that do not add up to nglobal.
  expect_agreed_error([&] { dist::RowPartition::build(comm, lo, n, 43); }, "add up");
  // A process with zero rows.
  expect_agreed_error([&] { dist::RowPartition::build(comm, lo, r == 0 ? 0 : n, 40); }, "at least one row");
  // block_dim that does not divide a block.
  expect_agreed_error([&] { dist::RowPartition::build(comm, lo, n, 40, 3); }, "block_dim");
}

template <class T>
void check_spmv(const CsrMatrix<T>& A, bool unequal) {
  dist::Communicator comm(MPI_COMM_WORLD);
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), unequal);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  const auto part = dist::RowPartition::build(comm, lo, hi - lo, n);
  auto rows = take_rows(A, lo, hi);
  auto local = dist::localize(comm, part, dist::GlobalRows<T>{rows.row_ptr.data(), rows.col.data(),
                                                              rows.val.data(), static_cast<int64_t>(rows.col.size())},
                              1);
  const auto xd = random_vector(n, 7);
  std::vector<T> x(xd.begin(), xd.end()), y(n);
  cpu::spmv(A, x.data(), y.data());
  std::vector<T> yl(hi - lo);
  const uint64_t before = local.plan->bytes_sent();
  local.A->dist->spmv(*local.A, x.data() + lo, yl.data());
  // Only the summation order may differ from the serial product.
  const double tol = std::is_same<T, float>::value ? 1e-5 : 1e-12;
  for (int64_t i = lo; i < hi; ++i) {
    EXPECT_NEAR(yl[i - lo], y[i], tol * (1 + std::abs(y[i]))) << "row " << i;
  }
  // Communication equals the partition boundary: this process sends each
  // owned value once to each other process whose rows reference it.
  std::set<std::pair<int, int>> pairs;  // (destination rank, owned row)
  for (int q = 0; q < size(); ++q) {
    if (q == rank()) continue;
    for (int64_t i = starts[q]; i < starts[q + 1]; ++i) {
      for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
        if (A.col[k] >= lo && A.col[k] < hi) pairs.emplace(q, A.col[k]);
      }
    }
  }
  EXPECT_EQ(local.plan->bytes_sent() - before, pairs.size() * sizeof(T));
}

TEST(DistSpmv, EqualsSerialProductAndSendsOnlyTheBoundary) {
  for (bool unequal : {false, true}) {
    check_spmv(testing::poisson2d<double>(13), unequal);
    check_spmv(random_matrix<double>(97, 5, false, 11), unequal);
    check_spmv(random_matrix<float>(61, 4, true, 12), unequal);
  }
}

// The plan as a device backend uses it (PackedHalo): values packed at
// send_rows() reach their ghosts; the reverse returns each ghost's value to
// the send slot of its owner's row, from the rank that holds the ghost.
TEST(DistHalo, PackedExchangesMatchTheGlobalIds) {
  dist::Communicator comm(MPI_COMM_WORLD);
  const auto A = random_matrix<double>(83, 5, false, 17);
  const auto starts = partition_starts(A.nrows, size(), true);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  const auto part = dist::RowPartition::build(comm, lo, hi - lo, A.nrows);
  auto rows = take_rows(A, lo, hi);
  auto local =
      dist::localize(comm, part,
                     dist::GlobalRows<double>{rows.row_ptr.data(), rows.col.data(), rows.val.data(),
                                              static_cast<int64_t>(rows.col.size())},
                     1);
  const PackedHalo& halo = local.A->dist->packed_halo();
  const dist::HaloPlan& plan = *local.plan;
  const auto id_value = [](int64_t id, int from) { return 0.5 + id + 1000.0 * from; };
  const std::vector<int32_t>& send = halo.send_rows();
  std::vector<double> packed(send.size()), ghost(halo.num_ghosts());
  for (std::size_t s = 0; s < send.size(); ++s) packed[s] = id_value(lo + send[s], 0);
  halo.exchange_packed(packed.data(), ghost.data());
  ASSERT_EQ(ghost.size(), local.ghosts.size());
  for (std::size_t k = 0; k < ghost.size(); ++k) {
    EXPECT_EQ(ghost[k], id_value(local.ghosts[k], 0)) << "ghost " << k;
  }
  for (std::size_t k = 0; k < ghost.size(); ++k) ghost[k] = id_value(local.ghosts[k], rank());
  std::vector<double> back(send.size());
  halo.reverse_packed(ghost.data(), back.data());
  for (std::size_t i = 0; i + 1 < plan.send_offsets().size(); ++i) {
    for (int s = plan.send_offsets()[i]; s < plan.send_offsets()[i + 1]; ++s) {
      EXPECT_EQ(back[s], id_value(lo + send[s], plan.send_ranks()[i])) << "send slot " << s;
    }
  }
}

TEST(DistSolverErrors, BadValueOnOneRankRaisesTheSameErrorEverywhere) {
  const auto A = testing::poisson2d<double>(8);
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), false);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  auto rows = take_rows(A, lo, hi);
  const int bad = size() - 1;
  if (rank() == bad) rows.val[0] = std::nan("");
  const std::string cfg = R"({"config_version": 2, "solver": {"solver": "PCG", "preconditioner": "JACOBI_L1"}})";
  dist::DistLinearSolver<double> s(cfg, MPI_COMM_WORLD);
  expect_agreed_error([&] {
    s.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(), rows.val.data(),
            static_cast<int64_t>(rows.col.size()));
  }, "rank " + std::to_string(bad) + ": A: stored entry 0 is NaN");
  // A column index out of range on rank 0 only.
  rows = take_rows(A, lo, hi);
  if (rank() == 0) rows.col[1] = n + 5;
  expect_agreed_error([&] {
    s.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(), rows.val.data(),
            static_cast<int64_t>(rows.col.size()));
  }, "rank 0: A: global column index");
}

TEST(DistSolverErrors, ZeroRowOnOneRankFailsSmootherSetupEverywhere) {
  // JACOBI_L1 rejects an all-zero row during its own setup, on one process;
  // CHEBYSHEV then runs collectives: the others must not wait for it.
  const auto A = testing::poisson2d<double>(8);
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), false);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  auto rows = take_rows(A, lo, hi);
  if (rank() == size() - 1) {
    for (int32_t k = rows.row_ptr[0]; k < rows.row_ptr[1]; ++k) rows.val[k] = 0;
  }
  const std::string cfg = R"({"config_version": 2, "solver": {"solver": "PCG", "preconditioner":
      {"solver": "CHEBYSHEV", "scope": "cheb", "preconditioner": "JACOBI_L1"}}})";
  dist::DistLinearSolver<double> s(cfg, MPI_COMM_WORLD);
  expect_agreed_error([&] {
    s.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(), rows.val.data(),
            static_cast<int64_t>(rows.col.size()));
  }, "entirely zero");
}

TEST(DistSolverErrors, DifferentConfigsAcrossRanksAreRejected) {
  const std::string a = R"({"config_version": 2, "solver": {"solver": "PCG"}})";
  const std::string b = R"({"config_version": 2, "solver": {"solver": "FGMRES"}})";
  if (size() == 1) GTEST_SKIP() << "needs two processes";
  expect_agreed_error([&] { dist::DistLinearSolver<double> s(rank() == 0 ? a : b, MPI_COMM_WORLD); },
                      "different");
}

}  // namespace
}  // namespace jaxamg
