// Config::merge_patch: per-solve overrides applied to existing scopes (the
// patch mode AmgX issue #116 asks for), in JSON and in legacy text.
#include <gtest/gtest.h>

#include "config/config.h"
#include "core/error.h"
#include "test_config_util.h"

namespace jaxamg {
namespace {

using testing::config_error;
using testing::solver_at;

const char* kPcgAmg = R"({"config_version": 2, "solver": {
    "scope": "main", "solver": "PCG", "tolerance": 1e-6, "max_iters": 50,
    "preconditioner": {"scope": "amg", "solver": "AMG", "max_iters": 1,
                       "smoother": "BLOCK_JACOBI"}}})";

TEST(ConfigPatch, ObjectWithoutSolverPatchesTheTopSolversScope) {
  Config cfg = Config::parse(kPcgAmg);
  cfg.merge_patch(R"({"solver": {"tolerance": 1e-9}})");
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-9);
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 50);  // the rest stays
  EXPECT_EQ(solver_at(cfg, "solver", "default"), "PCG@main");
  EXPECT_EQ(solver_at(cfg, "preconditioner", "main"), "AMG@amg");
  EXPECT_FALSE(cfg.is_set("tolerance", "default"));
}

TEST(ConfigPatch, NestedObjectsFollowTheExistingTree) {
  Config cfg = Config::parse(kPcgAmg);
  cfg.merge_patch(R"({"solver": {"preconditioner": {"max_iters": 2, "cycle": "W"}}})");
  EXPECT_EQ(cfg.get_int("max_iters", "amg"), 2);
  EXPECT_EQ(cfg.get_string("cycle", "amg"), "W");
  // The string-declared smoother lives in 'default': patching it writes there.
  cfg.merge_patch(R"({"solver": {"preconditioner": {"smoother": {"relaxation_factor": 0.6}}}})");
  EXPECT_EQ(cfg.get_double("relaxation_factor", "default"), 0.6);
  EXPECT_FALSE(cfg.is_set("relaxation_factor", "amg"));
}

TEST(ConfigPatch, FlatConfigIsPatchedInTheDefaultScope) {
  Config cfg = Config::parse(R"({"solver": "PCG", "preconditioner": "BLOCK_JACOBI"})");
  cfg.merge_patch(R"({"solver": {"tolerance": 1e-9}, "max_iters": 12})");
  EXPECT_EQ(cfg.get_double("tolerance", "default"), 1e-9);
  EXPECT_EQ(cfg.get_int("max_iters", "default"), 12);
  EXPECT_EQ(solver_at(cfg, "solver", "default"), "PCG@default");
}

TEST(ConfigPatch, SameSolverNameKeepsItsScope) {
  Config cfg = Config::parse(kPcgAmg);
  cfg.merge_patch(R"({"solver": {"solver": "PCG", "max_iters": 7}})");
  EXPECT_EQ(solver_at(cfg, "solver", "default"), "PCG@main");
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 7);
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-6);
}

TEST(ConfigPatch, AnotherSolverNameDefinesANewScope) {
  Config cfg = Config::parse(kPcgAmg);
  cfg.merge_patch(R"({"solver": {"solver": "FGMRES", "gmres_n_restart": 30}})");
  EXPECT_EQ(solver_at(cfg, "solver", "default"), "FGMRES@default_sub_solver");
  EXPECT_EQ(cfg.get_int("gmres_n_restart", "default_sub_solver"), 30);
  EXPECT_EQ(cfg.get_double("tolerance", "default_sub_solver"), 1e-12);
}

TEST(ConfigPatch, StringSmootherCanBeGivenItsOwnScope) {
  // The fix for AGGREGATION_JACOBI's ignored relaxation_factor.
  Config cfg = Config::parse(R"({"solver": {"scope": "main", "solver": "AMG",
      "smoother": "BLOCK_JACOBI", "relaxation_factor": 0.75}})");
  EXPECT_EQ(cfg.get_double("relaxation_factor", "default"), 0.9);
  cfg.merge_patch(
      R"({"solver": {"smoother": {"solver": "BLOCK_JACOBI", "relaxation_factor": 0.75}}})");
  EXPECT_EQ(solver_at(cfg, "smoother", "main"), "BLOCK_JACOBI@main_sub_smoother");
  EXPECT_EQ(cfg.get_double("relaxation_factor", "main_sub_smoother"), 0.75);
}

TEST(ConfigPatch, ScopeNamesMayBeReused) {
  Config cfg = Config::parse(kPcgAmg);
  cfg.merge_patch(R"({"solver": {"preconditioner": {"scope": "amg", "solver": "MULTICOLOR_DILU"}}})");
  EXPECT_EQ(solver_at(cfg, "preconditioner", "main"), "MULTICOLOR_DILU@amg");
  cfg.merge_patch("config_version=2, solver(main)=FGMRES, main:gmres_n_restart=15");
  EXPECT_EQ(solver_at(cfg, "solver", "default"), "FGMRES@main");
  EXPECT_EQ(cfg.get_int("gmres_n_restart", "main"), 15);
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-6);  // kept from the first definition
}

TEST(ConfigPatch, LegacyTextPatchesScopes) {
  Config cfg = Config::parse(kPcgAmg);
  cfg.merge_patch("config_version=2; main:tolerance=1e-10; amg:presweeps=3");
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-10);
  EXPECT_EQ(cfg.get_int("presweeps", "amg"), 3);
}

TEST(ConfigPatch, ScopeThatDoesNotMatchTheSolverIsAnError) {
  Config cfg = Config::parse(kPcgAmg);
  EXPECT_EQ(config_error([&] { cfg.merge_patch(R"({"solver": {"scope": "other", "tolerance": 1}})"); }),
            "patch: the solver of scope 'default' (PCG) reads scope 'main', not 'other'; drop "
            "\"scope\", or add \"solver\" to define a new solver");
  cfg.merge_patch(R"({"solver": {"scope": "main", "tolerance": 1e-7}})");
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-7);
}

TEST(ConfigPatch, AFailingPatchChangesNothing) {
  Config cfg = Config::parse(kPcgAmg);
  const std::string before = cfg.canonical();
  EXPECT_EQ(config_error([&] {
              cfg.merge_patch(R"({"solver": {"max_iters": 3, "tolerance": "tight"}})");
            }),
            "parameter 'tolerance' (scope 'main') takes a number, got the string \"tight\"; write "
            "the number without quotes");
  EXPECT_EQ(cfg.canonical(), before);
  EXPECT_EQ(config_error([&] { cfg.merge_patch("config_version=2, main:max_iters=3, main:max_iter=4"); }),
            "legacy config entry 'main:max_iter=4': unknown parameter 'max_iter' (scope 'main'); "
            "did you mean 'max_iters'?");
  EXPECT_EQ(cfg.canonical(), before);
}

TEST(ConfigPatch, PatchesObeyTheParseRules) {
  Config cfg = Config::parse(kPcgAmg);
  EXPECT_EQ(config_error([&] { cfg.merge_patch(R"({"solver": {"determinism_flag": 1}})"); }),
            "parameter 'determinism_flag' may only be set in the default (top-level) scope, found "
            "in scope 'main'; move it to the outermost object of the config");
  EXPECT_EQ(config_error([&] { cfg.merge_patch(R"({"solver": {"preconditioner": {"solver": "ILU"}}})"); }),
            "unknown solver 'ILU' for 'preconditioner' (scope 'main'); valid AmgX solvers: AMG, "
            "CG, PCG, PCGF, BICGSTAB, PBICGSTAB, GMRES, FGMRES, IDR, IDRMSYNC, CHEBYSHEV, "
            "CHEBYSHEV_POLY, POLYNOMIAL, KPZ_POLYNOMIAL, BLOCK_JACOBI, JACOBI_L1, CF_JACOBI, GS, "
            "FIXCOLOR_GS, MULTICOLOR_GS, MULTICOLOR_DILU, MULTICOLOR_ILU, KACZMARZ, "
            "DENSE_LU_SOLVER, NOSOLVER");
  cfg.merge_patch(R"({"determinism_flag": 1})");
  EXPECT_EQ(cfg.get_int("determinism_flag", "default"), 1);
}

}  // namespace
}  // namespace jaxamg
