// The engine's bad-input catalogue: every way a caller can hand
// LinearSolver<T> (api/linear_solver.h) a malformed matrix, right-hand side or
// configuration, each with the exact error it must raise. Inputs the engine
// repairs (unsorted or duplicate column indices) are checked against the
// repaired matrix. The regressions found by fuzzing (cpp/fuzz,
// docs/reliability.md) are at the end.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "config/config.h"
#include "config/registry.h"
#include "core/error.h"
#include "solvers/factory.h"

namespace jaxamg {
namespace {

// A CSR matrix as a caller passes it: raw arrays, no invariants.
struct RawCsr {
  Index nrows;
  std::vector<Index> row_ptr, col;
  std::vector<double> val;
  Index nnz() const { return static_cast<Index>(col.size()); }
};

// 3 x 3 tridiagonal (4, -1), rows sorted.
RawCsr tridiag3() { return {3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2}, {4, -1, -1, 4, -1, -1, 4}}; }

const char* const kPcgJacobi =
    R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG", "max_iters": 50,
        "tolerance": 1e-10, "convergence": "RELATIVE_INI", "monitor_residual": 1,
        "preconditioner": {"scope": "jacobi", "solver": "BLOCK_JACOBI"}}})";

std::string config_with_preconditioner(const std::string& prec) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG", "max_iters": 20,
             "monitor_residual": 1, "preconditioner": {"scope": "p", "solver": ")" +
         prec + "\"}}}";
}

void setup(LinearSolver<double>& s, const RawCsr& A) {
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
}

// The message of the exception of type E that `f` throws; a test failure
// (and "") if it throws nothing or something else.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "nothing was thrown";
  return "";
}

template <class E>
std::string setup_error(const std::string& config, const RawCsr& A) {
  return error_of<E>([&] {
    LinearSolver<double> s(config);
    setup(s, A);
  });
}

const std::string kNoDivide =
    "; use a smoother that does not divide by it (e.g. JACOBI_L1) or fix the matrix";

// ---- matrix shape and offsets ------------------------------------------------

TEST(BadInput, EmptyMatrix) {
  const RawCsr A{0, {0}, {}, {}};
  EXPECT_EQ(setup_error<InvalidInput>(kPcgJacobi, A),
            "A: the matrix has 0 rows; pass a non-empty square matrix");
}

TEST(BadInput, NegativeRowCount) {
  const RawCsr A{-2, {0}, {}, {}};
  EXPECT_EQ(setup_error<InvalidInput>(kPcgJacobi, A),
            "A: the matrix has -2 rows; pass a non-empty square matrix");
}

TEST(BadInput, RowOffsetsNotFromZero) {
  RawCsr A = tridiag3();
  A.row_ptr[0] = 1;
  EXPECT_EQ(setup_error<InvalidInput>(kPcgJacobi, A),
            "A: row offsets must run from 0 to nnz = 7, got 1 to 7");
}

TEST(BadInput, RowOffsetsDisagreeWithNnz) {
  RawCsr A = tridiag3();
  EXPECT_EQ(error_of<InvalidInput>([&] {
              LinearSolver<double> s(kPcgJacobi);
              s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), 6);
            }),
            "A: row offsets must run from 0 to nnz = 6, got 0 to 7");
}

TEST(BadInput, RowOffsetsDecreasing) {
  RawCsr A = tridiag3();
  A.row_ptr = {0, 5, 2, 7};
  EXPECT_EQ(setup_error<InvalidInput>(kPcgJacobi, A),
            "A: row offsets must be non-decreasing; row 1 has offsets 5 > 2");
}

TEST(BadInput, NonSquare) {
  // The API takes square matrices only: a 2 x 3 matrix given as 2 rows shows
  // up as a column index past the last column.
  const RawCsr wide{2, {0, 2, 4}, {0, 2, 1, 2}, {1, 2, 3, 4}};
  EXPECT_EQ(setup_error<InvalidInput>(kPcgJacobi, wide),
            "A: column index 2 in row 0 is out of range [0, 2); pass 0-based column indices");
  // A solver set up directly on a non-square matrix refuses it.
  LinearSolver<double> s(kPcgJacobi);
  setup(s, tridiag3());
  auto rect = std::make_shared<CsrMatrix<double>>(
      make_csr<double>(2, 3, wide.row_ptr.data(), wide.col.data(), wide.val.data(), 4));
  EXPECT_EQ(error_of<InvalidInput>([&] { s.solver().setup(rect); }),
            "A: the matrix must be square, got 2 x 3");
}

// ---- column indices --------------------------------------------------------------

TEST(BadInput, ColumnIndexTooLarge) {
  RawCsr A = tridiag3();
  A.col[4] = 3;
  EXPECT_EQ(setup_error<InvalidInput>(kPcgJacobi, A),
            "A: column index 3 in row 1 is out of range [0, 3); pass 0-based column indices");
}

TEST(BadInput, ColumnIndexNegative) {
  RawCsr A = tridiag3();
  A.col[5] = -1;
  EXPECT_EQ(setup_error<InvalidInput>(kPcgJacobi, A),
            "A: column index -1 in row 2 is out of range [0, 3); pass 0-based column indices");
}

TEST(BadInput, UnsortedAndDuplicateColumnsAreSortedAndSummed) {
  // Row 0: (2, -1) (0, 3) (0, 1)      -> (0, 4) (2, -1)
  // Row 1: (1, 2) (0, -0.5) (1, 2) (0, -0.5) -> (0, -1) (1, 4)
  // Row 2: (2, 1) (0, -1) (2, 3)      -> (0, -1) (2, 4)
  const RawCsr A{3,
                 {0, 3, 7, 10},
                 {2, 0, 0, 1, 0, 1, 0, 2, 0, 2},
                 {-1, 3, 1, 2, -0.5, 2, -0.5, 1, -1, 3}};
  LinearSolver<double> s(kPcgJacobi);
  setup(s, A);
  const CsrMatrix<double>& C = s.matrix();
  EXPECT_EQ(C.row_ptr, (std::vector<Index>{0, 2, 4, 6}));
  EXPECT_EQ(C.col, (std::vector<Index>{0, 2, 0, 1, 0, 2}));
  EXPECT_EQ(C.val, (std::vector<double>{4, -1, -1, 4, -1, 4}));
  EXPECT_EQ(C.diag_pos, (std::vector<Index>{0, 3, 5}));
  EXPECT_EQ(s.nnz(), 10);  // the caller's layout, for resetup

  // The summed matrix is the operator: A x = b for x = (1, 2, 3).
  const std::vector<double> b = {4 * 1 - 3, -1 + 4 * 2, -1 + 4 * 3};
  std::vector<double> x(3, 0.0);
  const SolveResult r = s.solve(b.data(), x.data(), 3, false);
  EXPECT_EQ(r.status, Status::kSuccess);
  EXPECT_NEAR(x[0], 1, 1e-8);
  EXPECT_NEAR(x[1], 2, 1e-8);
  EXPECT_NEAR(x[2], 3, 1e-8);

  // New values in the caller's order are summed into the same slots.
  std::vector<double> doubled(A.val);
  for (double& v : doubled) v *= 2;
  s.resetup(doubled.data(), 10);
  EXPECT_EQ(s.matrix().val, (std::vector<double>{8, -2, -2, 8, -2, 8}));
  s.replace_values(A.val.data(), 10);
  EXPECT_EQ(s.matrix().val, (std::vector<double>{4, -1, -1, 4, -1, 4}));
}

// ---- values ------------------------------------------------------------------------

TEST(BadInput, NaNValue) {
  RawCsr A = tridiag3();
  A.val[4] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(setup_error<InvalidInput>(kPcgJacobi, A),
            "A: entry (1, 2) is NaN or infinite; pass finite matrix values");
}

TEST(BadInput, InfiniteValue) {
  RawCsr A = tridiag3();
  A.val[0] = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(setup_error<InvalidInput>(kPcgJacobi, A),
            "A: entry (0, 0) is NaN or infinite; pass finite matrix values");
}

TEST(BadInput, NaNInNewValues) {
  const RawCsr A = tridiag3();
  LinearSolver<double> s(kPcgJacobi);
  setup(s, A);
  std::vector<double> v(A.val);
  v[3] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of<InvalidInput>([&] { s.resetup(v.data(), A.nnz()); }),
            "A: value 3 is NaN or infinite; pass finite values");
  v[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_of<InvalidInput>([&] { s.replace_values(v.data(), A.nnz()); }),
            "A: value 3 is NaN or infinite; pass finite values");
  // The failed updates left the matrix as it was.
  EXPECT_EQ(s.matrix().val, A.val);
}

TEST(BadInput, NewValuesOfTheWrongCount) {
  const RawCsr A = tridiag3();
  LinearSolver<double> s(kPcgJacobi);
  setup(s, A);
  EXPECT_EQ(error_of<InvalidInput>([&] { s.resetup(A.val.data(), 6); }),
            "A: new values have 6 entries but the matrix was set up with 7; pass values for "
            "the same sparsity pattern");
}

// ---- diagonal ------------------------------------------------------------------------

TEST(BadInput, ZeroDiagonalForSmoothersThatDivide) {
  RawCsr A = tridiag3();
  A.val[3] = 0;  // (1, 1)
  for (const char* smoother : {"BLOCK_JACOBI", "GS", "MULTICOLOR_GS", "MULTICOLOR_DILU",
                               "MULTICOLOR_ILU"}) {
    SCOPED_TRACE(smoother);
    EXPECT_EQ(setup_error<InvalidInput>(config_with_preconditioner(smoother), A),
              std::string(smoother) + " smoother divides by the diagonal, but row 1 has a "
              "zero diagonal" + kNoDivide);
  }
}

TEST(BadInput, MissingDiagonalForSmoothersThatDivide) {
  // Row 2 stores (2, 1) only.
  const RawCsr A{3, {0, 2, 5, 6}, {0, 1, 0, 1, 2, 1}, {4, -1, -1, 4, -1, -1}};
  for (const char* smoother : {"BLOCK_JACOBI", "GS", "MULTICOLOR_DILU"}) {
    SCOPED_TRACE(smoother);
    EXPECT_EQ(setup_error<InvalidInput>(config_with_preconditioner(smoother), A),
              std::string(smoother) + " smoother divides by the diagonal, but row 2 has no "
              "stored diagonal" + kNoDivide);
  }
}

TEST(BadInput, JacobiL1AcceptsAZeroDiagonalButNotAZeroRow) {
  RawCsr A = tridiag3();
  A.val[3] = 0;
  LinearSolver<double> ok(config_with_preconditioner("JACOBI_L1"));
  EXPECT_NO_THROW(setup(ok, A));
  const RawCsr zero_row{3, {0, 2, 2, 4}, {0, 2, 0, 2}, {4, -1, -1, 4}};
  EXPECT_EQ(setup_error<InvalidInput>(config_with_preconditioner("JACOBI_L1"), zero_row),
            "JACOBI_L1 smoother: row 1 of the 3-row matrix is entirely zero (l1 norm 0), so "
            "the row cannot be relaxed; remove the empty row or put a nonzero on its diagonal");
}

// ---- right-hand side and call order ------------------------------------------

TEST(BadInput, RhsOfTheWrongSize) {
  LinearSolver<double> s(kPcgJacobi);
  setup(s, tridiag3());
  std::vector<double> b(4, 1.0), x(4, 0.0);
  EXPECT_EQ(error_of<InvalidInput>([&] { s.solve(b.data(), x.data(), 2, false); }),
            "b: has 2 entries but A has 3 rows; pass one entry per row");
  EXPECT_EQ(error_of<InvalidInput>([&] { s.solve(b.data(), x.data(), 4, false, true); }),
            "b: has 4 entries but A has 3 rows; pass one entry per row");
}

TEST(BadInput, NonFiniteRhs) {
  LinearSolver<double> s(kPcgJacobi);
  setup(s, tridiag3());
  std::vector<double> b = {1, std::numeric_limits<double>::quiet_NaN(), 1}, x(3, 0.0);
  EXPECT_EQ(error_of<InvalidInput>([&] { s.solve(b.data(), x.data(), 3, false); }),
            "b: entry 1 is NaN or infinite; pass finite values");
}

TEST(BadInput, CallsBeforeSetup) {
  LinearSolver<double> s(kPcgJacobi);
  std::vector<double> b(3, 1.0), x(3, 0.0);
  EXPECT_EQ(error_of<InvalidInput>([&] { s.solve(b.data(), x.data(), 3, false); }),
            "solve called before setup");
  EXPECT_EQ(error_of<InvalidInput>([&] { s.resetup(b.data(), 3); }),
            "resetup called before setup");
  EXPECT_EQ(error_of<InvalidInput>([&] { s.replace_values(b.data(), 3); }),
            "replace_values called before setup");
}

// ---- configurations ------------------------------------------------------------------

TEST(BadInput, UnknownSolver) {
  std::string valid;
  for (const std::string& n : amgx_solver_names()) valid += (valid.empty() ? "" : ", ") + n;
  EXPECT_EQ(error_of<ConfigError>([] { LinearSolver<double> s(R"({"solver": "PCGG"})"); }),
            "unknown solver 'PCGG' for 'solver' (scope 'default'); did you mean 'PCG' or "
            "'PCGF'? valid AmgX solvers: " + valid);
}

TEST(BadInput, NotImplementedSolverNamesTheNearestChoice) {
  EXPECT_EQ(error_of<ConfigError>([] { LinearSolver<double> s(R"({"solver": "FIXCOLOR_GS"})"); }),
            "solver 'FIXCOLOR_GS' for 'solver' (scope 'default') is an AmgX solver that jaxamg "
            "does not implement: AmgX does not expose it (its multicolour Gauss-Seidel with the "
            "colours fixed at 8, device only); use MULTICOLOR_GS");
}

TEST(BadInput, IluFillLevelAboveZeroNamesTheNearestChoice) {
  EXPECT_EQ(setup_error<ConfigError>(
                R"({"solver": {"solver": "MULTICOLOR_ILU", "scope": "s", "ilu_sparsity_level": 1}})",
                tridiag3()),
            "MULTICOLOR_ILU: ilu_sparsity_level = 1 in scope 's' is not implemented; only ILU(0) "
            "is. Set ilu_sparsity_level to 0 (the nearest) or use MULTICOLOR_DILU");
}

TEST(BadInput, UnknownParameter) {
  EXPECT_EQ(error_of<ConfigError>([] {
              LinearSolver<double> s(R"({"solver": {"solver": "PCG", "max_itres": 5}})");
            }),
            "unknown parameter 'max_itres' (scope 'default_sub_solver'); did you mean "
            "'max_iters'?");
}

TEST(BadInput, UnknownValue) {
  EXPECT_EQ(error_of<ConfigError>([] {
              LinearSolver<double> s(R"({"solver": {"solver": "AMG", "cycle": "Z"}})");
            }),
            "parameter 'cycle' (scope 'default_sub_solver'): unknown value 'Z'; valid: V, W, "
            "F, CG, CGF");
}

TEST(BadInput, WrongValueType) {
  EXPECT_EQ(error_of<ConfigError>([] {
              LinearSolver<double> s(R"({"solver": {"solver": "PCG", "max_iters": "ten"}})");
            }),
            "parameter 'max_iters' (scope 'default_sub_solver') takes an integer, got the "
            "string \"ten\"; write the number without quotes");
  EXPECT_EQ(error_of<ConfigError>([] { LinearSolver<double> s("max_iters=2.5"); }),
            "legacy config entry 'max_iters=2.5': parameter 'max_iters' (scope 'default') "
            "takes an integer, got the number 2.5; give a whole number");
  EXPECT_EQ(error_of<ConfigError>([] { LinearSolver<double> s("max_iters=1e12"); }),
            "legacy config entry 'max_iters=1e12': parameter 'max_iters' (scope 'default'): "
            "1e+12 does not fit a 32-bit integer; give a value in [-2147483648, "
            "2147483647]");
}

TEST(BadInput, InvalidValueAtSetup) {
  EXPECT_EQ(setup_error<ConfigError>(
                R"({"solver": {"solver": "GMRES", "scope": "g", "gmres_n_restart": 0}})",
                tridiag3()),
            "gmres_n_restart: GMRES (scope 'g') needs a positive value, got 0; set "
            "gmres_n_restart to 1 or more");
}

TEST(BadInput, MalformedText) {
  EXPECT_EQ(error_of<ConfigError>([] { LinearSolver<double> s(R"({"solver": "PCG",)"); }),
            "config is not valid JSON: [json.exception.parse_error.101] parse error at line 1, "
            "column 18: syntax error while parsing object key - unexpected end of input; "
            "expected string literal; fix the JSON syntax (legacy name=value text does not "
            "start with '{')");
  EXPECT_EQ(error_of<ConfigError>([] { LinearSolver<double> s("[1, 2]"); }),
            "a JSON config must be an object {...}, got array [1,2]");
  EXPECT_EQ(error_of<ConfigError>([] { LinearSolver<double> s("max_iters"); }),
            "legacy config entry 'max_iters': needs exactly one '=' (name=value), found 0");
  EXPECT_EQ(error_of<ConfigError>([] { LinearSolver<double> s("max_iters=5{"); }),
            "legacy config entry 'max_iters=5{': character '{' is not allowed; names and "
            "values use letters, digits and _ . - +");
}

// ---- regressions found by the fuzzers and the sanitizers ---------------------

// fuzz_config: a number too large for a double made nlohmann throw its
// out_of_range (not a parse_error), which escaped Config::parse.
TEST(BadInputRegression, JsonNumberOverflow) {
  EXPECT_EQ(error_of<ConfigError>([] { Config::parse(R"({"tolerance": 1e999})"); }),
            "config is not valid JSON: [json.exception.out_of_range.406] number overflow "
            "parsing '1e999'; fix the JSON syntax (legacy name=value text does not start "
            "with '{')");
}

// A JSON value nested a million levels deep overflowed the stack when the
// error message printed it (json::dump recurses once per level).
TEST(BadInputRegression, DeeplyNestedJsonValue) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_EQ(error_of<ConfigError>([&] { Config::parse(deep); }),
            "a JSON config must be an object {...}, got array [...] nested more than 16 "
            "levels deep");
  const Config cfg = Config::parse(R"({"solver": {"solver": "PCG", "foo": )" + deep + "}}");
  ASSERT_EQ(cfg.reader_notes().size(), 1u);
  EXPECT_EQ(cfg.reader_notes()[0],
            "parameter 'foo' in scope 'default_sub_solver' is a JSON array ([...] nested more "
            "than 16 levels deep) and is ignored, as AmgX does; write a number or a string "
            "(and 'foo' is not a registered parameter)");
}

// Nested solver objects were walked recursively without a bound.
TEST(BadInputRegression, DeeplyNestedSolverObjects) {
  const int levels = 100000;
  std::string text = R"({"solver": {"solver": "PCG", "scope": "s0")";
  for (int i = 1; i < levels; ++i) {
    text += R"(, "preconditioner": {"solver": "PCG", "scope": "s)" + std::to_string(i) + "\"";
  }
  text += std::string(levels + 1, '}');
  EXPECT_EQ(error_of<ConfigError>([&] { Config::parse(text); }),
            "the object for 'preconditioner' (scope 's63') nests solvers more than 64 levels "
            "deep; flatten the config");
}

// A CHEBYSHEV whose preconditioner is CHEBYSHEV in the same (default) scope
// created itself until the stack overflowed (fuzz_config); so did two scopes
// naming each other, one level per setup.
TEST(BadInputRegression, SolverScopesThatLoop) {
  EXPECT_EQ(setup_error<ConfigError>("solver=CHEBYSHEV, preconditioner=CHEBYSHEV", tridiag3()),
            "the solver tree is deeper than 32 levels at CHEBYSHEV (scope 'default'), the "
            "preconditioner of CHEBYSHEV (scope 'default'): the config's scopes form a loop; "
            "give each nested solver a scope of its own");
  EXPECT_EQ(setup_error<ConfigError>(
                "config_version=2, solver=CHEBYSHEV, preconditioner(a)=PCG, "
                "a:preconditioner=CHEBYSHEV",
                tridiag3()),
            "the solver tree is deeper than 32 levels at PCG (scope 'a'), the preconditioner "
            "of CHEBYSHEV (scope 'default'): the config's scopes form a loop; give each "
            "nested solver a scope of its own");
  // A patch may re-use scope names, so it can close a loop between two scopes.
  Config cfg = Config::parse("config_version=2, solver(a)=PCG, a:preconditioner(b)=PCG");
  cfg.merge_patch("config_version=2, b:preconditioner(a)=PCG");
  EXPECT_EQ(error_of<ConfigError>([&] {
              LinearSolver<double> s(cfg);
              setup(s, tridiag3());
            }),
            "the solver tree is deeper than 32 levels at PCG (scope 'b'), the preconditioner "
            "of PCG (scope 'a'): the config's scopes form a loop; give each nested solver a "
            "scope of its own");
}

// unused_parameter_warnings recursed along the whole of a long legacy chain
// (a stack overflow at 20000 links under ASan; 5000 keep the test fast, as
// parsing such a chain is quadratic).
TEST(BadInputRegression, LongLegacyChainWarnings) {
  const int links = 5000;
  std::string text = "config_version=2, solver(s0)=PCG";
  for (int i = 0; i < links; ++i) {
    text += ", s" + std::to_string(i) + ":preconditioner(s" + std::to_string(i + 1) + ")=PCG";
  }
  text += ", s" + std::to_string(links) + ":max_iters=3, s" + std::to_string(links) +
          ":relaxation_factor=0.5";
  const Config cfg = Config::parse(text);
  // max_iters at the end of the chain is read (the whole chain is resolved);
  // relaxation_factor there is not.
  const std::vector<std::string> warnings = cfg.unused_parameter_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "parameter 'relaxation_factor' = 0.5 in scope 's5000' is never read: PCG in scope "
            "'s5000' does not read it (read by BLOCK_JACOBI, JACOBI_L1, CF_JACOBI, GS, "
            "FIXCOLOR_GS, MULTICOLOR_GS, MULTICOLOR_DILU, MULTICOLOR_ILU, KACZMARZ)");
}

}  // namespace
}  // namespace jaxamg
