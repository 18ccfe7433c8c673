// The JSON reader and typed access (AmgX's import_json_object rules, §1.2 of
// the configuration contract): scope naming, lookups without inheritance,
// duplicates, type coercion, ignored values and every error message.
#include <gtest/gtest.h>

#include <limits>

#include "config/config.h"
#include "core/error.h"
#include "test_config_util.h"

namespace jaxamg {
namespace {

using testing::config_error;
using testing::has_substr;
using testing::solver_at;

// {"config_version": 2, "solver": {"scope": "main", "solver": "PCG", BODY}}
std::string pcg_main(const std::string& body) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG", )" + body + "}}";
}

TEST(ConfigJson, NoSolverGivesAmgWithRegistryDefaults) {
  for (const char* text : {"{}", R"({"config_version": 2})"}) {
    const Config cfg = Config::parse(text);
    EXPECT_EQ(solver_at(cfg, "solver", "default"), "AMG@default");
    EXPECT_EQ(cfg.get_int("max_iters", "default"), 100);
    EXPECT_EQ(cfg.get_double("tolerance", "default"), 1e-12);
    EXPECT_EQ(cfg.get_string("convergence", "default"), "ABSOLUTE");
    EXPECT_EQ(cfg.get_int("monitor_residual", "default"), 0);
    EXPECT_EQ(cfg.get_string("algorithm", "default"), "CLASSICAL");
    EXPECT_EQ(cfg.get_string("selector", "default"), "PMIS");
    EXPECT_EQ(cfg.get_string("interpolator", "default"), "D1");
    EXPECT_EQ(solver_at(cfg, "smoother", "default"), "BLOCK_JACOBI@default");
    EXPECT_EQ(cfg.get_double("relaxation_factor", "default"), 0.9);
    EXPECT_EQ(solver_at(cfg, "coarse_solver", "default"), "DENSE_LU_SOLVER@default");
    EXPECT_EQ(cfg.canonical(), "");  // config_version is not a stored parameter
  }
}

TEST(ConfigJson, NestedObjectsNameTheirScopes) {
  const Config cfg = Config::parse(R"({
    "solver": {"solver": "FGMRES",
               "preconditioner": {"solver": "AMG",
                                  "coarse_solver": {"scope": "lu", "solver": "DENSE_LU_SOLVER"}}}})");
  EXPECT_EQ(solver_at(cfg, "solver", "default"), "FGMRES@default_sub_solver");
  EXPECT_EQ(solver_at(cfg, "preconditioner", "default_sub_solver"),
            "AMG@default_sub_solver_sub_preconditioner");
  EXPECT_EQ(solver_at(cfg, "coarse_solver", "default_sub_solver_sub_preconditioner"), "DENSE_LU_SOLVER@lu");
  // The nested "solver" entries are the parents' types, not parameters.
  EXPECT_FALSE(cfg.is_set("solver", "default_sub_solver"));
  EXPECT_FALSE(cfg.is_set("solver", "lu"));
}

TEST(ConfigJson, LookupsDoNotInheritFromParentOrDefault) {
  const Config cfg = Config::parse(R"({"tolerance": 1e-3, "max_iters": 7,
    "solver": {"scope": "main", "solver": "PCG", "max_iters": 50, "relaxation_factor": 0.5,
               "preconditioner": {"scope": "amg", "solver": "AMG"}}})");
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1e-12);  // not 1e-3 from default
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 50);
  EXPECT_EQ(cfg.get_int("max_iters", "amg"), 100);  // not 50 from its parent
  EXPECT_EQ(cfg.get_int("max_iters", "default"), 7);
  EXPECT_EQ(cfg.get_double("relaxation_factor", "amg"), 0.9);
  EXPECT_TRUE(cfg.is_set("relaxation_factor", "main"));
  EXPECT_FALSE(cfg.is_set("relaxation_factor", "amg"));
}

TEST(ConfigJson, SolverGivenAsStringReadsDefaultScope) {
  const Config cfg = Config::parse(pcg_main(R"("preconditioner": "MULTICOLOR_DILU")"));
  EXPECT_EQ(solver_at(cfg, "preconditioner", "main"), "MULTICOLOR_DILU@default");
  // An unset solver key names the registered default, also in 'default'.
  EXPECT_EQ(solver_at(cfg, "smoother", "main"), "BLOCK_JACOBI@default");
}

TEST(ConfigJson, DuplicateKeysLastOneWins) {
  // AmgX walks every member and the last assignment stays; the stock
  // AMG_CLASSICAL_AGGRESSIVE_CHEB_L1_TRUNC.json repeats print_grid_stats.
  Config cfg = Config::parse(pcg_main(R"("max_iters": 5, "print_grid_stats": 1, "max_iters": 7)"));
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 7);
  EXPECT_EQ(cfg.get_int("print_grid_stats", "main"), 1);
  cfg = Config::parse(pcg_main(R"("preconditioner": {"scope": "a", "solver": "AMG", "max_iters": 3},
                                  "preconditioner": {"scope": "b", "solver": "BLOCK_JACOBI"})"));
  EXPECT_EQ(solver_at(cfg, "preconditioner", "main"), "BLOCK_JACOBI@b");
  EXPECT_FALSE(cfg.is_set("max_iters", "a"));
}

TEST(ConfigJson, IntegersAndDoublesConvertBothWays) {
  const Config cfg = Config::parse(pcg_main(R"("tolerance": 1, "max_iters": 20.0,
                                               "gmres_n_restart": 1e1, "cheby_max_lambda": -2)"));
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 1.0);
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 20);
  EXPECT_EQ(cfg.get_int("gmres_n_restart", "main"), 10);
  EXPECT_EQ(cfg.get_double("cheby_max_lambda", "main"), -2.0);
}

TEST(ConfigJson, FractionalNumberForIntegerIsAnError) {
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("max_iters": 2.5)")); }),
            "parameter 'max_iters' (scope 'main') takes an integer, got the number 2.5; give a "
            "whole number");
}

TEST(ConfigJson, IntegerOutOfRangeIsAnError) {
  const std::string range = " does not fit a 32-bit integer; give a value in [-2147483648, 2147483647]";
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("max_iters": 10000000000)")); }),
            "parameter 'max_iters' (scope 'main'): 10000000000" + range);
  // A JSON double is printed in its shortest exact form.
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("max_iters": 1e10)")); }),
            "parameter 'max_iters' (scope 'main'): 1e+10" + range);
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("max_iters": 18446744073709551615)")); }),
            "parameter 'max_iters' (scope 'main'): 18446744073709551615 is out of range; give a "
            "value that fits a 32-bit integer");
}

TEST(ConfigJson, StringForNumericParameterIsAnError) {
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("max_iters": "10")")); }),
            "parameter 'max_iters' (scope 'main') takes an integer, got the string \"10\"; write "
            "the number without quotes");
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("tolerance": "1e-6")")); }),
            "parameter 'tolerance' (scope 'main') takes a number, got the string \"1e-6\"; write "
            "the number without quotes");
}

TEST(ConfigJson, NumberForStringOrSolverIsAnError) {
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("convergence": 1)")); }),
            "parameter 'convergence' (scope 'main') takes a string, got the number 1; give one "
            "of: ABSOLUTE, RELATIVE_INI, RELATIVE_INI_CORE, RELATIVE_MAX, RELATIVE_MAX_CORE, "
            "COMBINED_REL_INI_ABS");
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("preconditioner": 3)")); }),
            "parameter 'preconditioner' (scope 'main') names a solver, got the number 3; give a "
            "solver name such as \"AMG\" or an object with a \"solver\" entry");
}

TEST(ConfigJson, BooleanNullAndArrayAreIgnoredWithANote) {
  const Config cfg =
      Config::parse(pcg_main(R"("monitor_residual": true, "foo": null, "bar": [1, 2])"));
  EXPECT_FALSE(cfg.is_set("monitor_residual", "main"));
  EXPECT_EQ(cfg.get_int("monitor_residual", "main"), 0);
  const std::vector<std::string> expected = {
      "parameter 'bar' in scope 'main' is a JSON array ([1,2]) and is ignored, as AmgX does; "
      "write a number or a string (and 'bar' is not a registered parameter)",
      "parameter 'foo' in scope 'main' is a JSON null (null) and is ignored, as AmgX does; write "
      "a number or a string (and 'foo' is not a registered parameter)",
      "parameter 'monitor_residual' in scope 'main' is a JSON boolean (true) and is ignored, as "
      "AmgX does; write 1 or 0"};
  EXPECT_EQ(cfg.reader_notes(), expected);
  EXPECT_EQ(cfg.unused_parameter_warnings(), expected);
}

TEST(ConfigJson, UnknownParameterSuggestsTheClosestNames) {
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("max_iter": 5)")); }),
            "unknown parameter 'max_iter' (scope 'main'); did you mean 'max_iters'?");
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("tolerence": 1e-6)")); }),
            "unknown parameter 'tolerence' (scope 'main'); did you mean 'tolerance'?");
  EXPECT_EQ(config_error([] { Config::parse(R"({"MAX_ITERS": 5})"); }),
            "unknown parameter 'MAX_ITERS' (scope 'default'); did you mean 'max_iters' (names are "
            "case-sensitive)?");
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("relaxation": 0.5)")); }),
            "unknown parameter 'relaxation' (scope 'main'); did you mean 'relaxation_factor'?");
  EXPECT_EQ(config_error([] { Config::parse(R"({"qqqqqqqq": 5})"); }),
            "unknown parameter 'qqqqqqqq' (scope 'default'); it is not an AmgX parameter "
            "(describe_parameters() lists them all)");
  EXPECT_EQ(config_error([] { Config::parse(R"({"smoother_weight": 0.8})"); }),
            "unknown parameter 'smoother_weight' (scope 'default'); 'smoother_weight' is the "
            "version-1 name of 'relaxation_factor'; use that name (legacy text without "
            "config_version=2 converts it).");
  // An unknown name holding an object is reported as unknown, not as a
  // misplaced object.
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("precondtioner": {"solver": "AMG"})")); }),
            "unknown parameter 'precondtioner' (scope 'main'); did you mean 'preconditioner'?");
}

const char* kValidSolvers =
    "valid AmgX solvers: AMG, CG, PCG, PCGF, BICGSTAB, PBICGSTAB, GMRES, FGMRES, IDR, IDRMSYNC, "
    "CHEBYSHEV, CHEBYSHEV_POLY, POLYNOMIAL, KPZ_POLYNOMIAL, BLOCK_JACOBI, JACOBI_L1, CF_JACOBI, "
    "GS, FIXCOLOR_GS, MULTICOLOR_GS, MULTICOLOR_DILU, MULTICOLOR_ILU, KACZMARZ, "
    "DENSE_LU_SOLVER, NOSOLVER";

TEST(ConfigJson, UnknownSolverNameListsTheValidOnes) {
  EXPECT_EQ(config_error([] { Config::parse(R"({"solver": "PCGX"})"); }),
            std::string("unknown solver 'PCGX' for 'solver' (scope 'default'); did you mean 'PCG' "
                        "or 'PCGF'? ") + kValidSolvers);
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("preconditioner": {"solver": "AMGX"})")); }),
            std::string("unknown solver 'AMGX' for 'preconditioner' (scope 'main'); did you mean "
                        "'AMG'? ") + kValidSolvers);
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("smoother": "multicolor_dilu")")); }),
            std::string("unknown solver 'multicolor_dilu' for 'smoother' (scope 'main'); did you "
                        "mean 'MULTICOLOR_DILU' (names are case-sensitive)? ") + kValidSolvers);
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("smoother": "JACOBI")")); }),
            std::string("unknown solver 'JACOBI' for 'smoother' (scope 'main'); 'JACOBI' is the "
                        "version-1 name of 'BLOCK_JACOBI'; ") + kValidSolvers);
  EXPECT_EQ(config_error([] { Config::parse(R"({"solver": "XYZZY"})"); }),
            std::string("unknown solver 'XYZZY' for 'solver' (scope 'default'); ") + kValidSolvers);
}

TEST(ConfigJson, EnumValuesAreCaseSensitive) {
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("convergence": "relative_ini")")); }),
            "parameter 'convergence' (scope 'main'): unknown value 'relative_ini'; did you mean "
            "'RELATIVE_INI' (names are case-sensitive)? valid: ABSOLUTE, RELATIVE_INI, "
            "RELATIVE_INI_CORE, RELATIVE_MAX, RELATIVE_MAX_CORE, COMBINED_REL_INI_ABS");
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("cycle": "X")")); }),
            "parameter 'cycle' (scope 'main'): unknown value 'X'; valid: V, W, F, CG, CGF");
}

TEST(ConfigJson, ReusingAScopeNameIsAnError) {
  EXPECT_EQ(config_error([] {
              Config::parse(pcg_main(R"("preconditioner": {"scope": "amg", "solver": "AMG",
                  "smoother": {"scope": "main", "solver": "BLOCK_JACOBI"}})"));
            }),
            "scope 'main' for 'smoother' (scope 'amg') is already defined (by 'solver' in scope "
            "'default'; AmgX: new scope already defined); give each nested solver its own scope "
            "name");
  // Siblings: members are visited in key order, so coarse_solver comes first.
  EXPECT_EQ(config_error([] {
              Config::parse(pcg_main(R"("preconditioner": {"scope": "amg", "solver": "AMG",
                  "smoother": {"scope": "s", "solver": "BLOCK_JACOBI"},
                  "coarse_solver": {"scope": "s", "solver": "BLOCK_JACOBI"}})"));
            }),
            "scope 's' for 'smoother' (scope 'amg') is already defined (by 'coarse_solver' in "
            "scope 'amg'; AmgX: new scope already defined); give each nested solver its own "
            "scope name");
}

TEST(ConfigJson, DefaultIsNotANewScopeName) {
  EXPECT_EQ(config_error([] { Config::parse(R"({"solver": {"scope": "default", "solver": "PCG"}})"); }),
            "'default' cannot be used as a new scope name (for 'solver' (scope 'default')); "
            "choose another name, or give the solver as a plain string to have it read the "
            "default scope");
  EXPECT_EQ(config_error([] { Config::parse(R"({"solver": {"scope": "", "solver": "PCG"}})"); }),
            "the scope name for 'solver' (scope 'default') is empty; give a non-empty name");
  EXPECT_EQ(config_error([] { Config::parse(R"({"solver": {"scope": 3, "solver": "PCG"}})"); }),
            "\"scope\" in the object for 'solver' (scope 'default') must be a string, got 3");
}

TEST(ConfigJson, SomeParametersOnlyInTheDefaultScope) {
  const std::vector<std::pair<std::string, std::string>> only_default = {
      {"determinism_flag", "1"},         {"block_format", "\"COL_MAJOR\""},
      {"separation_interior", "\"OWNED\""}, {"separation_exterior", "\"FULL\""},
      {"min_rows_latency_hiding", "100"}, {"fine_level_consolidation", "1"},
      {"use_cuda_ipc_consolidation", "1"}};
  for (const auto& [name, value] : only_default) {
    EXPECT_EQ(config_error([&] { Config::parse(pcg_main("\"" + name + "\": " + value)); }),
              "parameter '" + name + "' may only be set in the default (top-level) scope, found "
              "in scope 'main'; move it to the outermost object of the config");
    const Config top = Config::parse("{\"" + name + "\": " + value + "}");
    EXPECT_TRUE(top.is_set(name, "default")) << name;
  }
}

TEST(ConfigJson, ObjectsOnlyForSolverKeys) {
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("tolerance": {"solver": "AMG"})")); }),
            "parameter 'tolerance' (scope 'main') cannot hold an object; only solver, "
            "preconditioner, smoother, coarse_solver, cpr_first_stage_preconditioner, "
            "cpr_second_stage_preconditioner open a nested solver scope");
  // AmgX issue #116: a nested object must name its solver; patching is
  // merge_patch's job.
  EXPECT_EQ(config_error([] { Config::parse(R"({"solver": {"tolerance": 1e-9}})"); }),
            "the object for 'solver' (scope 'default') has no \"solver\" entry; name the solver, "
            "e.g. \"solver\": {\"solver\": \"AMG\", ...}, or use Config::merge_patch to change "
            "the solver already there");
  EXPECT_EQ(config_error([] { Config::parse(pcg_main(R"("preconditioner": {"solver": 1})")); }),
            "\"solver\" in the object for 'preconditioner' (scope 'main') must be a solver name "
            "string, got 1");
}

TEST(ConfigJson, DocumentMustBeAnObject) {
  EXPECT_EQ(config_error([] { Config::parse("[1, 2]"); }),
            "a JSON config must be an object {...}, got array [1,2]");
  const std::string broken = config_error([] { Config::parse(R"({"solver": })"); });
  EXPECT_EQ(broken.rfind("config is not valid JSON: ", 0), 0u) << broken;
  EXPECT_TRUE(has_substr(broken, "; fix the JSON syntax (legacy name=value text does not start "
                                 "with '{')")) << broken;
}

TEST(ConfigJson, TopLevelScopeMemberIsNotAParameter) {
  const Config cfg = Config::parse(R"({"scope": "ignored", "max_iters": 3})");
  EXPECT_EQ(cfg.canonical(), "default:max_iters=3;");
}

TEST(ConfigJson, CanonicalTextIsIndependentOfMemberOrder) {
  const Config a = Config::parse(pcg_main(R"("tolerance": 1e-8, "max_iters": 10)"));
  const Config b = Config::parse(
      R"({"solver": {"max_iters": 10, "solver": "PCG", "tolerance": 1e-8, "scope": "main"}})");
  EXPECT_EQ(a.canonical(), b.canonical());
  EXPECT_EQ(a.canonical(),
            "default:solver=PCG(main);main:max_iters=10;main:tolerance=1e-08;");
}

TEST(ConfigJson, TypedAccessorsCheckTheType) {
  const Config cfg;
  EXPECT_EQ(config_error([&] { cfg.get_double("max_iters", "main"); }),
            "get_double: parameter 'max_iters' holds an integer, not a number; use get_int");
  EXPECT_EQ(config_error([&] { cfg.get_string("smoother", "main"); }),
            "get_string: parameter 'smoother' holds a solver name, not a string; use get_solver");
  EXPECT_EQ(config_error([&] { cfg.get_int("max_iterations", "main"); }),
            "unknown parameter 'max_iterations' (scope 'main'); did you mean 'max_iters'?");
}

TEST(ConfigJson, SettersValidateLikeTheReaders) {
  Config cfg;
  cfg.set_int("tolerance", "main", 2);  // an int for a double parameter
  EXPECT_EQ(cfg.get_double("tolerance", "main"), 2.0);
  cfg.set_double("max_iters", "main", 4.0);
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 4);
  EXPECT_EQ(config_error([&] { cfg.set_double("tolerance", "main", std::numeric_limits<double>::infinity()); }),
            "parameter 'tolerance' (scope 'main') got inf; give a finite number");
  EXPECT_EQ(config_error([&] { cfg.set_int("determinism_flag", "main", 1); }),
            "parameter 'determinism_flag' may only be set in the default (top-level) scope, found "
            "in scope 'main'; move it to the outermost object of the config");
  cfg.set_string("eig_solver", "default", "LANCZOS");  // eigensolver names are not checked here
  EXPECT_EQ(cfg.get_solver("eig_solver", "default").name, "LANCZOS");
}

}  // namespace
}  // namespace jaxamg
