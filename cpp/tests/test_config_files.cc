// Our equivalents of AmgX's stock configs, shipped in the Python package
// (src/jaxamg/configs/, loadable by name) but for one legacy text file in
// cpp/tests/data/configs/: each
// loads, resolves to the intended solver tree, and yields the intended
// effective values, including the stock configs' scope traps.
#include <gtest/gtest.h>

#include "config/config.h"
#include "core/error.h"
#include "test_config_util.h"

namespace jaxamg {
namespace {

using testing::config_error;
using testing::has_substr;
using testing::tree_text;

Config load(const std::string& name) {
  const bool legacy = name.size() > 7 && name.substr(name.size() - 7) == ".legacy";
  return Config::from_file((legacy ? std::string(JAXAMG_TEST_DATA) + "/configs/"
                                   : std::string(JAXAMG_SHIPPED_CONFIGS) + "/") +
                           name);
}

// The outer-solver settings every stock config shares.
void expect_outer_defaults(const Config& cfg, const std::string& scope) {
  EXPECT_EQ(cfg.get_double("tolerance", scope), 1e-6);
  EXPECT_EQ(cfg.get_string("convergence", scope), "RELATIVE_INI");
  EXPECT_EQ(cfg.get_int("max_iters", scope), 100);
  EXPECT_EQ(cfg.get_int("monitor_residual", scope), 1);
  EXPECT_EQ(cfg.get_int("print_solve_stats", scope), 1);
}

using Tree = std::vector<std::string>;

TEST(ConfigFiles, PcgClassicalVJacobi) {
  const Config cfg = load("PCG_CLASSICAL_V_JACOBI.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver PCG@main <- -@default",
                                  "1 preconditioner AMG@amg <- PCG@main",
                                  "2 smoother BLOCK_JACOBI@jacobi <- AMG@amg",
                                  "2 coarse_solver DENSE_LU_SOLVER@default <- AMG@amg"}));
  expect_outer_defaults(cfg, "main");
  EXPECT_EQ(cfg.get_string("interpolator", "amg"), "D2");
  EXPECT_EQ(cfg.get_int("aggressive_levels", "amg"), 2);
  EXPECT_EQ(cfg.get_int("max_iters", "amg"), 1);
  EXPECT_EQ(cfg.get_double("relaxation_factor", "jacobi"), 0.8);
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigFiles, PcgAggregationJacobi) {
  const Config cfg = load("PCG_AGGREGATION_JACOBI.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver PCG@main <- -@default",
                                  "1 preconditioner AMG@amg <- PCG@main",
                                  "2 smoother BLOCK_JACOBI@jacobi <- AMG@amg"}));
  EXPECT_EQ(cfg.get_solver("coarse_solver", "amg").name, "NOSOLVER");
  EXPECT_EQ(cfg.get_string("algorithm", "amg"), "AGGREGATION");
  EXPECT_EQ(cfg.get_string("selector", "amg"), "SIZE_2");
  EXPECT_EQ(cfg.get_int("presweeps", "amg"), 0);
  EXPECT_EQ(cfg.get_int("postsweeps", "amg"), 3);
  EXPECT_EQ(cfg.get_double("relaxation_factor", "jacobi"), 0.8);
  EXPECT_EQ(cfg.get_int("determinism_flag", "default"), 1);
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigFiles, FgmresAggregationColoringMissesTheStringSmoother) {
  const Config cfg = load("FGMRES_AGGREGATION.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver FGMRES@main <- -@default",
                                  "1 preconditioner AMG@amg <- FGMRES@main",
                                  "2 smoother MULTICOLOR_DILU@default <- AMG@amg",
                                  "2 coarse_solver DENSE_LU_SOLVER@default <- AMG@amg"}));
  expect_outer_defaults(cfg, "main");
  EXPECT_EQ(cfg.get_int("gmres_n_restart", "main"), 10);
  EXPECT_EQ(cfg.get_int("use_scalar_norm", "main"), 1);
  EXPECT_EQ(cfg.get_int("min_coarse_rows", "amg"), 32);
  // The coloring settings sit in the AMG's scope; the smoother reads 'default'.
  EXPECT_EQ(cfg.get_string("matrix_coloring_scheme", "default"), "MIN_MAX");
  EXPECT_EQ(cfg.get_double("max_uncolored_percentage", "default"), 0.15);
  const std::vector<std::string> warnings = cfg.unused_parameter_warnings();
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_TRUE(has_substr(warnings[0], "parameter 'matrix_coloring_scheme' = \"PARALLEL_GREEDY\" "
                                      "in scope 'amg' is never read")) << warnings[0];
  EXPECT_TRUE(has_substr(warnings[1], "the smoother 'MULTICOLOR_DILU' of scope 'amg' is given as "
                                      "a plain name, so it reads scope 'default' and sees "
                                      "max_uncolored_percentage = 0.15")) << warnings[1];
}

TEST(ConfigFiles, PbicgstabClassicalJacobi) {
  const Config cfg = load("PBICGSTAB_CLASSICAL_JACOBI.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver PBICGSTAB@main <- -@default",
                                  "1 preconditioner AMG@amg <- PBICGSTAB@main",
                                  "2 smoother BLOCK_JACOBI@jacobi <- AMG@amg",
                                  "2 coarse_solver DENSE_LU_SOLVER@default <- AMG@amg"}));
  expect_outer_defaults(cfg, "main");
  EXPECT_EQ(cfg.get_string("interpolator", "amg"), "D2");
  EXPECT_EQ(cfg.get_double("relaxation_factor", "jacobi"), 0.9);
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigFiles, GmresAmgD2) {
  const Config cfg = load("GMRES_AMG_D2.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver GMRES@main <- -@default",
                                  "1 preconditioner AMG@amg <- GMRES@main",
                                  "2 smoother JACOBI_L1@default <- AMG@amg",
                                  "2 coarse_solver DENSE_LU_SOLVER@default <- AMG@amg"}));
  expect_outer_defaults(cfg, "main");
  EXPECT_EQ(cfg.get_int("interp_max_elements", "amg"), 4);
  EXPECT_EQ(cfg.get_int("presweeps", "amg"), 2);
  EXPECT_EQ(cfg.get_int("exception_handling", "default"), 1);
  EXPECT_EQ(cfg.get_double("relaxation_factor", "default"), 0.9);  // JACOBI_L1's omega
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigFiles, AmgClassicalPmis) {
  const Config cfg = load("AMG_CLASSICAL_PMIS.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver GMRES@main <- -@default",
                                  "1 preconditioner AMG@amg <- GMRES@main",
                                  "2 smoother JACOBI_L1@l1_jacobi <- AMG@amg",
                                  "2 coarse_solver DENSE_LU_SOLVER@default <- AMG@amg"}));
  EXPECT_EQ(cfg.get_int("aggressive_levels", "amg"), 1);
  EXPECT_EQ(cfg.get_string("selector", "amg"), "PMIS");
  EXPECT_EQ(cfg.get_double("relaxation_factor", "l1_jacobi"), 1.0);
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigFiles, AggregationJacobiIgnoresItsRelaxationFactor) {
  const Config cfg = load("AGGREGATION_JACOBI.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver AMG@main <- -@default",
                                  "1 smoother BLOCK_JACOBI@default <- AMG@main",
                                  "1 coarse_solver DENSE_LU_SOLVER@default <- AMG@main"}));
  expect_outer_defaults(cfg, "main");
  EXPECT_EQ(cfg.get_string("norm", "main"), "L1");
  EXPECT_EQ(cfg.get_int("max_levels", "main"), 50);
  EXPECT_EQ(cfg.get_double("relaxation_factor", "main"), 0.75);
  EXPECT_EQ(cfg.get_double("relaxation_factor", "default"), 0.9);  // what the smoother uses
  const std::vector<std::string> warnings = cfg.unused_parameter_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(has_substr(warnings[0], "parameter 'relaxation_factor' = 0.75 in scope 'main'"));
}

TEST(ConfigFiles, ClassicalCycles) {
  for (const char* cycle : {"V", "W", "F"}) {
    const Config cfg = load(std::string("CLASSICAL_") + cycle + "_CYCLE.json");
    EXPECT_EQ(tree_text(cfg), (Tree{"0 solver AMG@main <- -@default",
                                    "1 smoother BLOCK_JACOBI@default <- AMG@main",
                                    "1 coarse_solver DENSE_LU_SOLVER@default <- AMG@main"}))
        << cycle;
    expect_outer_defaults(cfg, "main");
    EXPECT_EQ(cfg.get_string("cycle", "main"), cycle);
    EXPECT_EQ(cfg.get_string("interpolator", "main"), "D2");
    EXPECT_EQ(cfg.get_int("print_grid_stats", "main"), 1);
    EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{}) << cycle;
  }
}

TEST(ConfigFiles, PcgfClassicalVJacobi) {
  const Config cfg = load("PCGF_CLASSICAL_V_JACOBI.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver PCGF@main <- -@default",
                                  "1 preconditioner AMG@amg <- PCGF@main",
                                  "2 smoother BLOCK_JACOBI@jacobi <- AMG@amg",
                                  "2 coarse_solver DENSE_LU_SOLVER@default <- AMG@amg"}));
  expect_outer_defaults(cfg, "main");
  EXPECT_EQ(cfg.get_double("relaxation_factor", "jacobi"), 0.7);
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigFiles, JacobiAsTheTopSolver) {
  const Config cfg = load("JACOBI.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver BLOCK_JACOBI@main <- -@default"}));
  EXPECT_EQ(cfg.get_double("relaxation_factor", "main"), 0.6);
  EXPECT_EQ(cfg.get_int("max_iters", "main"), 200);
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigFiles, PcgWithoutPreconditioner) {
  const Config cfg = load("PCG_NOPREC.json");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver PCG@main <- -@default"}));
  EXPECT_EQ(cfg.get_solver("preconditioner", "main").name, "NOSOLVER");
  expect_outer_defaults(cfg, "main");
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigFiles, LegacyTextFile) {
  const Config cfg = load("PCG_CLASSICAL_JACOBI.legacy");
  EXPECT_EQ(tree_text(cfg), (Tree{"0 solver PCG@main <- -@default",
                                  "1 preconditioner AMG@amg <- PCG@main",
                                  "2 smoother BLOCK_JACOBI@jacobi <- AMG@amg",
                                  "2 coarse_solver DENSE_LU_SOLVER@default <- AMG@amg"}));
  expect_outer_defaults(cfg, "main");
  EXPECT_EQ(cfg.get_string("interpolator", "amg"), "D2");
  EXPECT_EQ(cfg.get_int("presweeps", "amg"), 2);
  EXPECT_EQ(cfg.get_int("postsweeps", "amg"), 2);
  EXPECT_EQ(cfg.get_double("relaxation_factor", "jacobi"), 0.8);
  EXPECT_EQ(cfg.get_int("determinism_flag", "default"), 1);
  EXPECT_EQ(cfg.unused_parameter_warnings(), std::vector<std::string>{});
}

TEST(ConfigFiles, ErrorsNameTheFile) {
  const std::string missing = std::string(JAXAMG_TEST_DATA) + "/configs/NO_SUCH.json";
  EXPECT_EQ(config_error([&] { Config::from_file(missing); }),
            "cannot open config file '" + missing + "': No such file or directory; check the path");
}

}  // namespace
}  // namespace jaxamg
