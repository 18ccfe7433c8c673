// Scope resolution as AmgX does it (§1.3-§1.4 of the configuration
// contract) and the unused-parameter pass that explains its traps: values
// written where no solver of the resolved tree reads them.
#include <gtest/gtest.h>

#include "config/config.h"
#include "config/registry.h"
#include "config/usage.h"
#include "core/error.h"
#include "test_config_util.h"

namespace jaxamg {
namespace {

using testing::solver_at;
using testing::tree_text;

const std::string kRelaxationReaders =
    "BLOCK_JACOBI, JACOBI_L1, CF_JACOBI, GS, FIXCOLOR_GS, MULTICOLOR_GS, MULTICOLOR_DILU, "
    "MULTICOLOR_ILU, KACZMARZ";

TEST(ConfigQuirks, WorkedExampleResolvesAsAmgx) {
  const Config cfg = Config::parse(R"({ "config_version": 2, "determinism_flag": 1,
    "solver": { "scope": "main", "solver": "PCG", "tolerance": 1e-8, "monitor_residual": 1,
                "convergence": "RELATIVE_INI", "print_solve_stats": 1,
                "preconditioner": { "solver": "AMG", "max_iters": 1, "interpolator": "D2",
                                    "smoother": "JACOBI_L1",
                                    "coarse_solver": { "solver": "BLOCK_JACOBI", "max_iters": 20 } } } })");
  const std::vector<std::string> tree = {
      "0 solver PCG@main <- -@default",
      "1 preconditioner AMG@main_sub_preconditioner <- PCG@main",
      "2 smoother JACOBI_L1@default <- AMG@main_sub_preconditioner",
      "2 coarse_solver BLOCK_JACOBI@main_sub_preconditioner_sub_coarse_solver <- "
      "AMG@main_sub_preconditioner"};
  EXPECT_EQ(tree_text(cfg), tree);
  // PCG: tolerance 1e-8, RELATIVE_INI, monitoring; max_iters and norm defaulted.
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-8);
  EXPECT_EQ(cfg.get_string("convergence", "main"), "RELATIVE_INI");
  EXPECT_EQ(cfg.get_int("monitor_residual", "main"), 1);
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 100);
  EXPECT_EQ(cfg.get_string("norm", "main"), "L2");
  // AMG: one classical PMIS D2 cycle, not monitoring.
  const std::string amg = "main_sub_preconditioner";
  EXPECT_EQ(cfg.get_int("max_iters", amg), 1);
  EXPECT_EQ(cfg.get_string("algorithm", amg), "CLASSICAL");
  EXPECT_EQ(cfg.get_string("selector", amg), "PMIS");
  EXPECT_EQ(cfg.get_string("interpolator", amg), "D2");
  EXPECT_EQ(cfg.get_int("monitor_residual", amg), 0);
  // Smoother in 'default' with the registered omega; determinism from 'default'.
  EXPECT_EQ(cfg.get_double("relaxation_factor", "default"), 0.9);
  EXPECT_EQ(cfg.get_int("determinism_flag", "default"), 1);
  EXPECT_EQ(cfg.get_int("max_iters", amg + "_sub_coarse_solver"), 20);
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigQuirks, StringSmootherDoesNotSeeTheAmgScope) {
  // AmgX's AGGREGATION_JACOBI.json: the 0.75 is ignored, the smoother uses 0.9.
  const Config cfg = Config::parse(R"({"config_version": 2, "determinism_flag": 1,
    "solver": {"scope": "main", "solver": "AMG", "algorithm": "AGGREGATION", "selector": "SIZE_2",
               "presweeps": 2, "smoother": "BLOCK_JACOBI", "relaxation_factor": 0.75}})");
  EXPECT_EQ(solver_at(cfg, "smoother", "main"), "BLOCK_JACOBI@default");
  EXPECT_EQ(cfg.get_double("relaxation_factor", "default"), 0.9);
  EXPECT_EQ(cfg.unused_parameter_warnings(),
            std::vector<std::string>{
                "parameter 'relaxation_factor' = 0.75 in scope 'main' is never read: AMG in scope "
                "'main' does not read it (read by " + kRelaxationReaders + "); the smoother "
                "'BLOCK_JACOBI' of scope 'main' is given as a plain name, so it reads scope "
                "'default' and sees relaxation_factor = 0.9; declare it as an object, "
                "\"smoother\": {\"solver\": \"BLOCK_JACOBI\", \"relaxation_factor\": 0.75}, to "
                "give it this value"});
}

TEST(ConfigQuirks, ExactCoarseSolveAndCommunicatorInsideTheSolverAreNotRead) {
  // JAX-AMG's defaults: exact_coarse_solve next to a string coarse solver, and
  // a communicator that AmgX reads only from 'default'.
  const Config cfg = Config::parse(R"({"config_version": 2,
    "solver": {"solver": "AMG", "coarse_solver": "DENSE_LU_SOLVER", "exact_coarse_solve": 1,
               "communicator": "MPI_DIRECT"}})");
  EXPECT_EQ(cfg.get_int("exact_coarse_solve", "default"), 0);
  EXPECT_EQ(cfg.get_string("communicator", "default"), "MPI");
  const std::vector<std::string> expected = {
      "parameter 'communicator' = \"MPI_DIRECT\" in scope 'default_sub_solver' is never read: "
      "it is read only from the default scope; move it to the outermost object of the config",
      "parameter 'exact_coarse_solve' = 1 in scope 'default_sub_solver' is never read: AMG in "
      "scope 'default_sub_solver' does not read it (read by DENSE_LU_SOLVER); the coarse_solver "
      "'DENSE_LU_SOLVER' of scope 'default_sub_solver' is given as a plain name, so it reads "
      "scope 'default' and sees exact_coarse_solve = 0; declare it as an object, "
      "\"coarse_solver\": {\"solver\": \"DENSE_LU_SOLVER\", \"exact_coarse_solve\": 1}, to give "
      "it this value"};
  EXPECT_EQ(cfg.unused_parameter_warnings(), expected);
}

TEST(ConfigQuirks, CgResolvesAPreconditionerItNeverCreates) {
  // AmgX's CG_DILU.json runs plain CG.
  const Config cfg = Config::parse(R"({"solver": {"scope": "main", "solver": "CG", "max_iters": 20,
      "preconditioner": {"scope": "precond", "solver": "MULTICOLOR_DILU", "max_iters": 1}}})");
  EXPECT_EQ(solver_at(cfg, "preconditioner", "main"), "MULTICOLOR_DILU@precond");
  EXPECT_EQ(tree_text(cfg), std::vector<std::string>{"0 solver CG@main <- -@default"});
  const std::vector<std::string> expected = {
      "parameter 'preconditioner' = \"MULTICOLOR_DILU\" (scope 'precond') in scope 'main' is "
      "never read: CG in scope 'main' does not read it (read by PCG, PCGF, PBICGSTAB, GMRES, "
      "FGMRES, IDR, IDRMSYNC, CHEBYSHEV, CHEBYSHEV_POLY)",
      "parameter 'max_iters' = 1 in scope 'precond' is never read: no solver of the resolved "
      "tree reads scope 'precond'; the preconditioner 'MULTICOLOR_DILU' declared in scope 'main' "
      "is never created: CG takes no preconditioner"};
  EXPECT_EQ(cfg.unused_parameter_warnings(), expected);
}

TEST(ConfigQuirks, ScopesBelowAnUncreatedSolverAreReported) {
  const Config cfg = Config::parse(R"({"solver": {"scope": "main", "solver": "BICGSTAB",
      "preconditioner": {"scope": "amg", "solver": "AMG",
                         "smoother": {"scope": "jac", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.5}}}})");
  const std::vector<std::string> warnings = cfg.unused_parameter_warnings();
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0],
            "parameter 'smoother' = \"BLOCK_JACOBI\" (scope 'jac') in scope 'amg' is never read: "
            "no solver of the resolved tree reads scope 'amg'; the preconditioner 'AMG' declared "
            "in scope 'main' is never created: BICGSTAB takes no preconditioner");
  EXPECT_EQ(warnings[1],
            "parameter 'relaxation_factor' = 0.5 in scope 'jac' is never read: no solver of the "
            "resolved tree reads scope 'jac'; it belongs to the smoother 'BLOCK_JACOBI' declared "
            "in scope 'amg', and no solver reads scope 'amg' either");
  EXPECT_EQ(warnings[2],
            "parameter 'preconditioner' = \"AMG\" (scope 'amg') in scope 'main' is never read: "
            "BICGSTAB in scope 'main' does not read it (read by PCG, PCGF, PBICGSTAB, GMRES, "
            "FGMRES, IDR, IDRMSYNC, CHEBYSHEV, CHEBYSHEV_POLY)");
}

TEST(ConfigQuirks, OuterConvergenceIsNotTakenFromThePreconditioner) {
  // AmgX's PBICGSTAB_W.json: RELATIVE_INI sits on the AMG; the outer solver
  // stays ABSOLUTE with its own tolerance.
  const Config cfg = Config::parse(R"({"solver": {"scope": "main", "solver": "PBICGSTAB",
      "tolerance": 1e-6, "monitor_residual": 1,
      "preconditioner": {"scope": "amg", "solver": "AMG", "convergence": "RELATIVE_INI"}}})");
  EXPECT_EQ(cfg.get_string("convergence", "main"), "ABSOLUTE");
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-6);
  EXPECT_EQ(cfg.get_string("convergence", "amg"), "RELATIVE_INI");
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigQuirks, TopLevelValuesReachNoScopedSolver) {
  const Config cfg = Config::parse(R"({"tolerance": 1e-8,
      "solver": {"scope": "main", "solver": "PCG", "preconditioner": "NOSOLVER"}})");
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-12);
  EXPECT_EQ(tree_text(cfg), std::vector<std::string>{"0 solver PCG@main <- -@default"});
  EXPECT_EQ(cfg.unused_parameter_warnings(),
            std::vector<std::string>{
                "parameter 'tolerance' = 1e-08 in scope 'default' is never read: no solver of "
                "the resolved tree reads scope 'default'; every solver of the tree has a scope "
                "of its own, so top-level values reach none of them"});
}

TEST(ConfigQuirks, FlatConfigsLiveInTheDefaultScope) {
  const Config flat = Config::parse(R"({"max_iters": 5, "tolerance": 1e-8})");
  EXPECT_EQ(tree_text(flat),
            (std::vector<std::string>{"0 solver AMG@default <- -@default",
                                      "1 smoother BLOCK_JACOBI@default <- AMG@default",
                                      "1 coarse_solver DENSE_LU_SOLVER@default <- AMG@default"}));
  EXPECT_EQ(flat.unused_parameter_warnings(), std::vector<std::string>{});
  // A flat preconditioner of its own kind would nest forever; the tree stops.
  const Config loop = Config::parse(R"({"solver": "FGMRES", "preconditioner": "FGMRES"})");
  EXPECT_EQ(tree_text(loop),
            (std::vector<std::string>{"0 solver FGMRES@default <- -@default",
                                      "1 preconditioner FGMRES@default <- FGMRES@default"}));
  const Config wrong = Config::parse(R"({"solver": "AMG", "gmres_n_restart": 10})");
  EXPECT_EQ(wrong.unused_parameter_warnings(),
            std::vector<std::string>{
                "parameter 'gmres_n_restart' = 10 in scope 'default' is never read: AMG, "
                "BLOCK_JACOBI, DENSE_LU_SOLVER in scope 'default' do not read it (read by GMRES, "
                "FGMRES)"});
}

TEST(ConfigQuirks, MisspelledAndNosolverScopes) {
  const Config typo = Config::parse_legacy(
      "config_version=2, solver(main)=PCG, main:preconditioner=BLOCK_JACOBI, mian:max_iters=5");
  EXPECT_EQ(typo.unused_parameter_warnings(),
            std::vector<std::string>{
                "parameter 'max_iters' = 5 in scope 'mian' is never read: no solver of the "
                "resolved tree reads scope 'mian'; no solver is declared with this scope; did you "
                "mean 'main'?"});
  const Config nosolver = Config::parse(R"({"solver": {"scope": "main", "solver": "AMG",
      "coarse_solver": {"scope": "c", "solver": "NOSOLVER", "max_iters": 3}}})");
  EXPECT_EQ(nosolver.unused_parameter_warnings(),
            std::vector<std::string>{
                "parameter 'max_iters' = 3 in scope 'c' is never read: no solver of the resolved "
                "tree reads scope 'c'; it belongs to the coarse_solver 'NOSOLVER' declared in "
                "scope 'main', which reads no parameters"});
}

TEST(ConfigQuirks, ScopedChildGetsPointedToItsScope) {
  const Config cfg = Config::parse(R"({"solver": {"scope": "main", "solver": "AMG",
      "symmetric_GS": 1, "smoother": {"scope": "gs", "solver": "MULTICOLOR_GS"}}})");
  EXPECT_EQ(cfg.unused_parameter_warnings(),
            std::vector<std::string>{
                "parameter 'symmetric_GS' = 1 in scope 'main' is never read: AMG in scope 'main' "
                "does not read it (read by MULTICOLOR_GS, FIXCOLOR_GS, MULTICOLOR_ILU); the "
                "smoother 'MULTICOLOR_GS' reads scope 'gs': set it there"});
}

TEST(ConfigQuirks, EveryRegisteredParameterHasKnownReaders) {
  for (const ParamSpec& p : all_params()) {
    EXPECT_NO_THROW(param_readers(p.name)) << p.name;
  }
  EXPECT_THROW(param_readers("no_such_parameter"), ConfigError);
}

TEST(ConfigQuirks, ChildKeysFollowTheSolverKinds) {
  EXPECT_EQ(child_keys("AMG"), (std::vector<std::string>{"smoother", "coarse_solver"}));
  for (const char* p : {"PCG", "PCGF", "PBICGSTAB", "GMRES", "FGMRES", "IDR", "IDRMSYNC",
                        "CHEBYSHEV", "CHEBYSHEV_POLY"}) {
    EXPECT_EQ(child_keys(p), std::vector<std::string>{"preconditioner"}) << p;
  }
  for (const char* p : {"CG", "BICGSTAB", "BLOCK_JACOBI", "DENSE_LU_SOLVER", "NOSOLVER"}) {
    EXPECT_TRUE(child_keys(p).empty()) << p;
  }
}

}  // namespace
}  // namespace jaxamg
