// The legacy text reader (§1.1 of the configuration contract): entry shapes,
// separators, comments, versions 1 and 2 with the version-1 conversion, the
// character and structure rules, typed values and every error message.
#include <gtest/gtest.h>

#include "config/config.h"
#include "core/error.h"
#include "test_config_util.h"

namespace jaxamg {
namespace {

using testing::config_error;
using testing::solver_at;

TEST(ConfigLegacy, Version2EntryShapes) {
  const Config cfg = Config::parse_legacy(
      "config_version=2, solver(main)=PCG, main:max_iters=10; main:preconditioner(amg)=AMG,"
      "amg:smoother=JACOBI_L1, amg:max_iters=1, main:tolerance=1e-8, "
      "main:convergence=RELATIVE_INI, determinism_flag=1, amg:coarse_solver(lu)=DENSE_LU_SOLVER");
  EXPECT_EQ(solver_at(cfg, "solver", "default"), "PCG@main");
  EXPECT_EQ(solver_at(cfg, "preconditioner", "main"), "AMG@amg");
  EXPECT_EQ(solver_at(cfg, "smoother", "amg"), "JACOBI_L1@default");
  EXPECT_EQ(solver_at(cfg, "coarse_solver", "amg"), "DENSE_LU_SOLVER@lu");
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 10);
  EXPECT_EQ(cfg.get_int("max_iters", "amg"), 1);
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-8);
  EXPECT_EQ(cfg.get_string("convergence", "main"), "RELATIVE_INI");
  EXPECT_EQ(cfg.get_int("determinism_flag", "default"), 1);
  EXPECT_FALSE(cfg.is_set("config_version", "default"));
}

TEST(ConfigLegacy, DefaultPrefixIsTheDefaultScope) {
  const Config cfg = Config::parse_legacy(
      "default:config_version=2, default:solver(main)=FGMRES, main:gmres_n_restart=10, "
      "default:max_iters=3");
  EXPECT_EQ(solver_at(cfg, "solver", "default"), "FGMRES@main");
  EXPECT_EQ(cfg.get_int("gmres_n_restart", "main"), 10);
  EXPECT_EQ(cfg.get_int("max_iters", "default"), 3);
}

TEST(ConfigLegacy, LinesAreTrimmedCommentsSkippedAndJoined) {
  const Config cfg = Config::parse_legacy(
      "# a comment line\r\n"
      "   config_version = 2   \r\n"
      "\n"
      "solver(main)=PCG\n"
      "   # another comment\n"
      "main:max_iters=7;main:tolerance=1e-6,\n"
      "main:monitor_residual=1\n");
  EXPECT_EQ(solver_at(cfg, "solver", "default"), "PCG@main");
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 7);
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-6);
  EXPECT_EQ(cfg.get_int("monitor_residual", "main"), 1);
}

TEST(ConfigLegacy, EmptyEntriesAreSkipped) {
  const Config cfg = Config::parse_legacy("config_version=2,,solver=PCG,;max_iters=4,");
  EXPECT_EQ(cfg.canonical(), "default:max_iters=4;default:solver=PCG(default);");
  EXPECT_EQ(Config::parse("").canonical(), "");
}

TEST(ConfigLegacy, ParseFallsBackToLegacyText) {
  const std::string text = "config_version=2, solver(main)=PCG, main:max_iters=10";
  EXPECT_EQ(Config::parse(text).canonical(), Config::parse_legacy(text).canonical());
  EXPECT_EQ(Config::parse(text).canonical(), "default:solver=PCG(main);main:max_iters=10;");
}

TEST(ConfigLegacy, Version1ConvertsOldNames) {
  for (const char* text :
       {"solver=PCG, preconditioner=BLOCK_JACOBI, max_iters=5, smoother_weight=0.7, "
        "min_block_rows=16, smoother=JACOBI, coarse_solver=JACOBI_NO_CUSP",
        "config_version=1, solver=PCG, preconditioner=BLOCK_JACOBI, max_iters=5, "
        "smoother_weight=0.7, min_block_rows=16, smoother=JACOBI, coarse_solver=JACOBI_NO_CUSP"}) {
    const Config cfg = Config::parse_legacy(text);
    EXPECT_EQ(cfg.canonical(),
              "default:coarse_solver=BLOCK_JACOBI(default);default:max_iters=5;"
              "default:min_coarse_rows=16;default:preconditioner=BLOCK_JACOBI(default);"
              "default:relaxation_factor=0.69999999999999996;default:smoother=BLOCK_JACOBI(default);"
              "default:solver=PCG(default);")
        << text;
  }
}

TEST(ConfigLegacy, Version1HasNoScopes) {
  EXPECT_EQ(config_error([] { Config::parse_legacy("solver(main)=PCG"); }),
            "legacy config entry 'solver(main)=PCG': scope syntax needs version 2; put "
            "config_version=2 as the first entry");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=1, main:max_iters=3"); }),
            "legacy config entry 'main:max_iters=3': scope syntax needs version 2; put "
            "config_version=2 as the first entry");
}

TEST(ConfigLegacy, Version2KeepsNoVersion1Names) {
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, smoother=JACOBI"); }),
            "legacy config entry 'smoother=JACOBI': unknown solver 'JACOBI' for 'smoother' "
            "(scope 'default'); 'JACOBI' is the version-1 name of 'BLOCK_JACOBI'; valid AmgX "
            "solvers: AMG, CG, PCG, PCGF, BICGSTAB, PBICGSTAB, GMRES, FGMRES, IDR, IDRMSYNC, "
            "CHEBYSHEV, CHEBYSHEV_POLY, POLYNOMIAL, KPZ_POLYNOMIAL, BLOCK_JACOBI, JACOBI_L1, "
            "CF_JACOBI, GS, FIXCOLOR_GS, MULTICOLOR_GS, MULTICOLOR_DILU, MULTICOLOR_ILU, KACZMARZ, "
            "DENSE_LU_SOLVER, NOSOLVER");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, min_block_rows=4"); }),
            "legacy config entry 'min_block_rows=4': unknown parameter 'min_block_rows' (scope "
            "'default'); 'min_block_rows' is the version-1 name of 'min_coarse_rows'; use that "
            "name (legacy text without config_version=2 converts it).");
}

TEST(ConfigLegacy, VersionEntryComesFirstAndIsOneOrTwo) {
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, solver=PCG, config_version=2"); }),
            "legacy config entry 'config_version=2': config_version must be the first entry; "
            "move it to the front");
  EXPECT_EQ(config_error([] { Config::parse_legacy("solver=PCG, config_version=2"); }),
            "legacy config entry 'config_version=2': config_version must be the first entry; "
            "move it to the front");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=3, solver=PCG"); }),
            "legacy config entry 'config_version=3': config_version must be 1 or 2, got '3'");
}

TEST(ConfigLegacy, OnlyAllowedCharacters) {
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, max_iters=1/2"); }),
            "legacy config entry 'max_iters=1/2': character '/' is not allowed; names and values "
            "use letters, digits and _ . - +");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, matrix_writer=\"x\""); }),
            "legacy config entry 'matrix_writer=\"x\"': character '\"' is not allowed; names and "
            "values use letters, digits and _ . - +");
}

TEST(ConfigLegacy, ExactlyOneEqualsSign) {
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, max_iters=1=2"); }),
            "legacy config entry 'max_iters=1=2': needs exactly one '=' (name=value), found 2");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, max_iters"); }),
            "legacy config entry 'max_iters': needs exactly one '=' (name=value), found 0");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, max_iters="); }),
            "legacy config entry 'max_iters=': has no value after '='; write name=value");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, =5"); }),
            "legacy config entry '=5': has no parameter name before '='");
}

TEST(ConfigLegacy, AtMostOneScopeAndOneNewScope) {
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, a:b:max_iters=1"); }),
            "legacy config entry 'a:b:max_iters=1': has more than one ':'; write scope:name=value");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, solver(a)(b)=PCG"); }),
            "legacy config entry 'solver(a)(b)=PCG': has more than one '(...)'; write "
            "name(new_scope)=SOLVER");
  const std::string shape =
      "a new scope is written name(new_scope)=SOLVER, with a non-empty name in the "
      "parentheses at the end of the left-hand side";
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, solver(main=PCG"); }),
            "legacy config entry 'solver(main=PCG': " + shape);
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, solver()=PCG"); }),
            "legacy config entry 'solver()=PCG': " + shape);
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, :max_iters=1"); }),
            "legacy config entry ':max_iters=1': has an empty scope before ':'; write "
            "scope:name=value");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, solver=main:PCG"); }),
            "legacy config entry 'solver=main:PCG': the value 'main:PCG' may not contain ':' or "
            "parentheses; write scope:name(new_scope)=value");
}

TEST(ConfigLegacy, NewScopeRules) {
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, solver(default)=PCG"); }),
            "legacy config entry 'solver(default)=PCG': 'default' cannot be used as a new scope "
            "name (for 'solver' (scope 'default')); choose another name, or give the solver as a "
            "plain string to have it read the default scope");
  EXPECT_EQ(config_error([] {
              Config::parse_legacy("config_version=2, solver(main)=PCG, main:preconditioner(p)=AMG,"
                                   "p:coarse_solver(p2)=BLOCK_JACOBI, p:smoother(p2)=JACOBI_L1");
            }),
            "legacy config entry 'p:smoother(p2)=JACOBI_L1': scope 'p2' for 'smoother' (scope "
            "'p') is already defined (by 'coarse_solver' in scope 'p'; AmgX: new scope already "
            "defined); give each nested solver its own scope name");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, max_iters(x)=5"); }),
            "legacy config entry 'max_iters(x)=5': 'max_iters' (scope 'default') cannot open a "
            "nested solver scope; only solver, preconditioner, smoother, coarse_solver, "
            "cpr_first_stage_preconditioner, cpr_second_stage_preconditioner can");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, solver(main)=PCGG"); }),
            "legacy config entry 'solver(main)=PCGG': unknown solver 'PCGG' for 'solver' (scope "
            "'default'); did you mean 'PCG' or 'PCGF'? valid AmgX solvers: AMG, CG, PCG, PCGF, "
            "BICGSTAB, PBICGSTAB, GMRES, FGMRES, IDR, IDRMSYNC, CHEBYSHEV, CHEBYSHEV_POLY, "
            "POLYNOMIAL, KPZ_POLYNOMIAL, BLOCK_JACOBI, JACOBI_L1, CF_JACOBI, GS, FIXCOLOR_GS, "
            "MULTICOLOR_GS, MULTICOLOR_DILU, MULTICOLOR_ILU, KACZMARZ, DENSE_LU_SOLVER, NOSOLVER");
}

TEST(ConfigLegacy, ValuesTakeTheRegisteredType) {
  const Config cfg = Config::parse_legacy(
      "config_version=2, max_iters=1e3, tolerance=1e-8, alt_rel_tolerance=3, "
      "convergence=RELATIVE_MAX, cheby_min_lambda=-0.5, presweeps=+2, matrix_writer=123");
  EXPECT_EQ(cfg.get_int("max_iters", "default"), 1000);
  EXPECT_EQ(cfg.get_double("tolerance", "default"), 1e-8);
  EXPECT_EQ(cfg.get_double("alt_rel_tolerance", "default"), 3.0);
  EXPECT_EQ(cfg.get_string("convergence", "default"), "RELATIVE_MAX");
  EXPECT_EQ(cfg.get_double("cheby_min_lambda", "default"), -0.5);
  EXPECT_EQ(cfg.get_int("presweeps", "default"), 2);
  EXPECT_EQ(cfg.get_string("matrix_writer", "default"), "123");
}

TEST(ConfigLegacy, BadValuesNameEntryParameterAndFix) {
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, max_iters=abc"); }),
            "legacy config entry 'max_iters=abc': parameter 'max_iters' (scope 'default') takes "
            "an integer, got 'abc'; give a whole number");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, max_iters=2.5"); }),
            "legacy config entry 'max_iters=2.5': parameter 'max_iters' (scope 'default') takes "
            "an integer, got the number 2.5; give a whole number");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, tolerance=0x10"); }),
            "legacy config entry 'tolerance=0x10': parameter 'tolerance' (scope 'default') takes "
            "a number, got '0x10'");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, norm=L3"); }),
            "legacy config entry 'norm=L3': parameter 'norm' (scope 'default'): unknown value "
            "'L3'; did you mean 'L1' or 'L2'? valid: L1, L2, LMAX, L1_SCALED");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, main:determinism_flag=1"); }),
            "legacy config entry 'main:determinism_flag=1': parameter 'determinism_flag' may "
            "only be set in the default (top-level) scope, found in scope 'main'; move it to the "
            "outermost object of the config");
  EXPECT_EQ(config_error([] { Config::parse_legacy("config_version=2, main:max_iter=1"); }),
            "legacy config entry 'main:max_iter=1': unknown parameter 'max_iter' (scope 'main'); "
            "did you mean 'max_iters'?");
}

}  // namespace
}  // namespace jaxamg
