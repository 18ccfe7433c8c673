// A solver that reads the caller's CSR arrays in place
// (LinearSolver::setup_borrowed, core/csr_array.h) must give exactly what a
// solver on a copy gives, never write into those arrays, and hold them only
// as long as it reads them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "api/linear_solver.h"
#include "core/csr_array.h"
#include "core/error.h"
#include "problems.h"

namespace jaxamg {
namespace {

using testing::dense_solve;
using testing::random_vector;

// The caller's arrays, as plain vectors (what a binding or a driver holds).
struct UserCsr {
  Index n = 0;
  std::vector<Index> row_ptr, col;
  std::vector<double> val;
  Index nnz() const { return static_cast<Index>(col.size()); }
};

UserCsr user_copy(const CsrMatrix<double>& A) {
  return {A.nrows, std::vector<Index>(A.row_ptr.begin(), A.row_ptr.end()),
          std::vector<Index>(A.col.begin(), A.col.end()),
          std::vector<double>(A.val.begin(), A.val.end())};
}

// Every row's entries in a random order and one entry split in two: the
// same matrix, not canonical.
UserCsr shuffled_with_duplicate(const UserCsr& u, unsigned seed) {
  std::mt19937 gen(seed);
  UserCsr s;
  s.n = u.n;
  s.row_ptr.push_back(0);
  for (Index i = 0; i < u.n; ++i) {
    std::vector<std::pair<Index, double>> row;
    for (Index k = u.row_ptr[i]; k < u.row_ptr[i + 1]; ++k) row.emplace_back(u.col[k], u.val[k]);
    if (i == u.n / 2) {  // split the diagonal entry of one row
      for (auto& e : row) {
        if (e.first == i) {
          e.second *= 0.25;
          row.emplace_back(i, 3 * e.second);
          break;
        }
      }
    }
    std::shuffle(row.begin(), row.end(), gen);
    for (const auto& e : row) {
      s.col.push_back(e.first);
      s.val.push_back(e.second);
    }
    s.row_ptr.push_back(static_cast<Index>(s.col.size()));
  }
  return s;
}

const char* kClassicalPcg = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "PCG", "max_iters": 200, "tolerance": 1e-10,
  "convergence": "RELATIVE_INI_CORE", "monitor_residual": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
    "selector": "PMIS", "interpolator": "D2", "max_iters": 1, "cycle": "V",
    "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32,
    "smoother": {"scope": "s", "solver": "JACOBI_L1"}}}})";

const char* kAggregationFgmres = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "FGMRES", "gmres_n_restart": 10, "max_iters": 200,
  "tolerance": 1e-10, "convergence": "RELATIVE_INI_CORE", "monitor_residual": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
    "selector": "SIZE_2", "max_iters": 1, "cycle": "V",
    "smoother": {"scope": "s", "solver": "MULTICOLOR_GS"}}}})";

std::vector<double> solve(LinearSolver<double>& s, const std::vector<double>& b,
                          bool transpose = false) {
  std::vector<double> x(b.size(), 0.0);
  const SolveResult r = s.solve(b.data(), x.data(), static_cast<Index>(b.size()), false, transpose);
  EXPECT_EQ(r.status, Status::kSuccess);
  return x;
}

TEST(CsrArray, BorrowReadsInPlaceAndCopiesOnFirstWrite) {
  const std::vector<double> user = random_vector<double>(50, 1);
  CsrArray<double> a = CsrArray<double>::borrow(user.data(), user.size(), nullptr);
  EXPECT_TRUE(a.borrowed());
  const CsrArray<double>& ca = a;
  EXPECT_EQ(ca.data(), user.data());
  EXPECT_EQ(ca.size(), user.size());
  EXPECT_EQ(ca[7], user[7]);

  CsrArray<double> copy = a;  // a copy owns its values
  EXPECT_FALSE(copy.borrowed());
  EXPECT_NE(std::as_const(copy).data(), user.data());
  EXPECT_TRUE(copy == a);

  CsrArray<double> moved = std::move(a);  // a move keeps the view
  EXPECT_TRUE(moved.borrowed());
  EXPECT_EQ(std::as_const(moved).data(), user.data());

  moved[3] = -1.0;  // the first write copies; the caller's array is untouched
  EXPECT_FALSE(moved.borrowed());
  EXPECT_EQ(moved[3], -1.0);
  EXPECT_NE(user[3], -1.0);
  EXPECT_EQ(moved[4], user[4]);
}

TEST(CsrArray, ReleasesWhatItHoldsWithTheView) {
  auto owner = std::make_shared<std::vector<Index>>(std::vector<Index>{0, 2, 5});
  std::weak_ptr<std::vector<Index>> watch = owner;
  CsrArray<Index> a = CsrArray<Index>::borrow(owner->data(), owner->size(), owner);
  owner.reset();
  EXPECT_FALSE(watch.expired());  // the view keeps its memory alive
  a.push_back(7);                  // owns now: the borrowed memory is released
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(a.to_vector(), (std::vector<Index>{0, 2, 5, 7}));
}

class BorrowedSetup : public ::testing::TestWithParam<const char*> {};

TEST_P(BorrowedSetup, SameSolutionAsACopyAndNoWrites) {
  const UserCsr u = user_copy(testing::poisson3d<double>(9));
  const UserCsr before = u;
  const std::vector<double> b = random_vector<double>(u.n, 3);

  LinearSolver<double> copied(GetParam());
  copied.setup(u.n, u.row_ptr.data(), u.col.data(), u.val.data(), u.nnz());
  LinearSolver<double> borrowed(GetParam());
  borrowed.setup_borrowed(u.n, u.row_ptr.data(), u.col.data(), u.val.data(), u.nnz(), nullptr);
  EXPECT_FALSE(copied.matrix_borrowed());
  ASSERT_TRUE(borrowed.matrix_borrowed());
  EXPECT_EQ(borrowed.matrix().val.data(), u.val.data());  // read in place, no copy
  EXPECT_EQ(borrowed.matrix().col.data(), u.col.data());

  const std::vector<double> xc = solve(copied, b);
  const std::vector<double> xb = solve(borrowed, b);
  EXPECT_EQ(xb, xc);  // bit for bit
  // and right: against a dense LU solve of the same system
  const CsrMatrix<double> A = make_csr<double>(u.n, u.n, u.row_ptr.data(), u.col.data(),
                                               u.val.data(), u.nnz());
  const std::vector<double> ref = dense_solve(A, b);
  EXPECT_LT(testing::relative_residual(A, xb, b), 1e-9);
  double err = 0, den = 0;
  for (Index i = 0; i < u.n; ++i) {
    err = std::max(err, std::abs(xb[i] - ref[i]));
    den = std::max(den, std::abs(ref[i]));
  }
  EXPECT_LT(err / den, 1e-7);
  EXPECT_EQ(solve(borrowed, b, true), solve(copied, b, true));  // A^T x = b

  // New values: the solver works on its own copy, never on the caller's.
  std::vector<double> scaled = u.val;
  for (double& v : scaled) v *= 1.5;
  copied.replace_values(scaled.data(), u.nnz());
  borrowed.replace_values(scaled.data(), u.nnz());
  EXPECT_EQ(solve(borrowed, b), solve(copied, b));
  copied.resetup(scaled.data(), u.nnz());
  borrowed.resetup(scaled.data(), u.nnz());
  EXPECT_EQ(solve(borrowed, b), solve(copied, b));
  EXPECT_EQ(u.row_ptr, before.row_ptr);
  EXPECT_EQ(u.col, before.col);
  EXPECT_EQ(u.val, before.val);
}

INSTANTIATE_TEST_SUITE_P(Configs, BorrowedSetup,
                         ::testing::Values(kClassicalPcg, kAggregationFgmres));

TEST(BorrowedSetupTest, NonCanonicalInputIsCopiedAndGivesTheSameSolution) {
  const UserCsr u = user_copy(testing::poisson2d<double>(20));
  const UserCsr s = shuffled_with_duplicate(u, 5);
  const UserCsr before = s;
  const std::vector<double> b = random_vector<double>(u.n, 8);

  LinearSolver<double> copied(kClassicalPcg);
  copied.setup(s.n, s.row_ptr.data(), s.col.data(), s.val.data(), s.nnz());
  LinearSolver<double> borrowed(kClassicalPcg);
  borrowed.setup_borrowed(s.n, s.row_ptr.data(), s.col.data(), s.val.data(), s.nnz(), nullptr);
  EXPECT_FALSE(borrowed.matrix_borrowed());  // it had to sort and merge
  EXPECT_EQ(solve(borrowed, b), solve(copied, b));
  EXPECT_EQ(s.col, before.col);
  EXPECT_EQ(s.val, before.val);

  // New values in the caller's (unsorted) order are mapped the same way.
  std::vector<double> scaled = s.val;
  for (double& v : scaled) v *= 2.0;
  copied.resetup(scaled.data(), s.nnz());
  borrowed.resetup(scaled.data(), s.nnz());
  EXPECT_EQ(solve(borrowed, b), solve(copied, b));
}

TEST(BorrowedSetupTest, HoldsTheCallersArraysUntilTheNextSetup) {
  auto first = std::make_shared<UserCsr>(user_copy(testing::poisson2d<double>(10)));
  std::weak_ptr<UserCsr> watch = first;
  LinearSolver<double> s(kClassicalPcg);
  s.setup_borrowed(first->n, first->row_ptr.data(), first->col.data(), first->val.data(),
                   first->nnz(), first);
  const UserCsr u = *first;
  first.reset();
  EXPECT_FALSE(watch.expired());
  const std::vector<double> b = random_vector<double>(u.n, 2);
  const std::vector<double> x = solve(s, b);
  EXPECT_LT(testing::relative_residual(s.matrix(), x, b), 1e-9);
  s.setup(u.n, u.row_ptr.data(), u.col.data(), u.val.data(), u.nnz());  // a copy now
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(solve(s, b), x);
}

TEST(BorrowedSetupTest, BadInputIsReportedAsForACopy) {
  UserCsr u = user_copy(testing::poisson1d<double>(6));
  u.col[3] = 9;  // out of range
  LinearSolver<double> s(kClassicalPcg);
  try {
    s.setup_borrowed(u.n, u.row_ptr.data(), u.col.data(), u.val.data(), u.nnz(), nullptr);
    FAIL() << "an out-of-range column was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("column index 9"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace jaxamg
