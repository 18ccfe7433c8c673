// The registry against the contract's tables (§1.7) and its JSON
// description (AMGX_write_parameters_description).
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/registry.h"

namespace jaxamg {
namespace {

using json = nlohmann::json;

TEST(ConfigRegistry, CodeDefaultsMatchTheContract) {
  const Config cfg;
  const std::vector<std::pair<const char*, int>> ints = {
      {"max_iters", 100}, {"use_scalar_norm", 0}, {"monitor_residual", 0},
      {"verbosity_level", 3}, {"gmres_n_restart", 20}, {"gmres_krylov_dim", 0},
      {"subspace_dim_s", 8}, {"cycle_iters", 2}, {"presweeps", 1}, {"postsweeps", 1},
      {"finest_sweeps", -1}, {"coarsest_sweeps", 2}, {"max_levels", 100},
      {"min_coarse_rows", 2}, {"min_fine_rows", 1}, {"dense_lu_num_rows", 128},
      {"dense_lu_max_rows", 0}, {"structure_reuse_levels", 0}, {"error_scaling", 0},
      {"interp_max_elements", -1}, {"aggressive_levels", 0}, {"max_matching_iterations", 15},
      {"aggregation_passes", 3}, {"merge_singletons", 1}, {"coloring_level", 1},
      {"max_num_hash", 7}, {"num_colors", 10}, {"kpz_order", 3}, {"kpz_mu", 4},
      {"chebyshev_polynomial_order", 5}, {"kaczmarz_coloring_needed", 1},
      {"min_rows_latency_hiding", -1}, {"matrix_consolidation_upper_threshold", 1000},
      {"eig_max_iters", 100}, {"affinity_iterations", 4}, {"affinity_vectors", 4}};
  for (const auto& [name, value] : ints) EXPECT_EQ(cfg.get_int(name, "x"), value) << name;
  const std::vector<std::pair<const char*, double>> doubles = {
      {"tolerance", 1e-12}, {"alt_rel_tolerance", 1e-12}, {"rel_div_tolerance", 1e6},
      {"coarsen_threshold", 1.0}, {"strength_threshold", 0.25}, {"max_row_sum", 1.1},
      {"interp_truncation_factor", 1.1}, {"max_unassigned_percentage", 0.05},
      {"filter_weights_alpha", 0.5}, {"relaxation_factor", 0.9},
      {"max_uncolored_percentage", 0.15}, {"cheby_max_lambda", 1.0},
      {"cheby_min_lambda", 0.125}, {"eig_tolerance", 1e-4}, {"eig_damping_factor", 0.8}};
  for (const auto& [name, value] : doubles) EXPECT_EQ(cfg.get_double(name, "x"), value) << name;
  const std::vector<std::pair<const char*, const char*>> strings = {
      {"convergence", "ABSOLUTE"}, {"norm", "L2"}, {"scaling", "NONE"},
      {"algorithm", "CLASSICAL"}, {"cycle", "V"}, {"selector", "PMIS"},
      {"interpolator", "D1"}, {"strength", "AHAT"}, {"aggressive_interpolator", "MULTIPASS"},
      {"coarseAgenerator", "LOW_DEG"}, {"matrix_coloring_scheme", "MIN_MAX"},
      {"communicator", "MPI"}, {"block_format", "ROW_MAJOR"},
      {"separation_interior", "INTERIOR"}, {"separation_exterior", "OWNED"},
      {"boundary_coloring", "SYNC_COLORS"}, {"halo_coloring", "LAST"}, {"eig_which", "largest"}};
  for (const auto& [name, value] : strings) EXPECT_EQ(cfg.get_string(name, "x"), value) << name;
  const std::vector<std::pair<const char*, const char*>> solvers = {
      {"solver", "AMG"}, {"preconditioner", "AMG"}, {"smoother", "BLOCK_JACOBI"},
      {"coarse_solver", "DENSE_LU_SOLVER"}, {"fine_smoother", "BLOCK_JACOBI"},
      {"coarse_smoother", "BLOCK_JACOBI"}, {"eig_solver", "POWER_ITERATION"}};
  for (const auto& [name, value] : solvers) {
    EXPECT_EQ(cfg.get_solver(name, "x").name, value) << name;
  }
}

TEST(ConfigDescribe, ListsEveryParameterWithTypeDefaultAndChoices) {
  const json doc = json::parse(describe_parameters());
  EXPECT_EQ(doc["config_version"], 2);
  const json& params = doc["parameters"];
  EXPECT_EQ(params.size(), all_params().size());
  for (const ParamSpec& p : all_params()) EXPECT_TRUE(params.contains(p.name)) << p.name;

  EXPECT_EQ(params["max_iters"],
            json::parse(R"({"type": "int", "default": 100, "read_by": "every solver"})"));
  EXPECT_EQ(params["tolerance"]["type"], "double");
  EXPECT_EQ(params["tolerance"]["default"], 1e-12);
  EXPECT_EQ(params["relaxation_factor"]["default"], 0.9);
  const json& readers = params["relaxation_factor"]["read_by"];
  EXPECT_NE(std::find(readers.begin(), readers.end(), "BLOCK_JACOBI"), readers.end());
  EXPECT_EQ(std::find(readers.begin(), readers.end(), "AMG"), readers.end());
  EXPECT_EQ(params["convergence"]["allowed"],
            json::parse(R"(["ABSOLUTE", "RELATIVE_INI", "RELATIVE_INI_CORE", "RELATIVE_MAX",
                            "RELATIVE_MAX_CORE", "COMBINED_REL_INI_ABS"])"));
  EXPECT_EQ(params["communicator"]["allowed"], json::parse(R"(["MPI", "MPI_DIRECT"])"));

  const json& solver = params["solver"];
  EXPECT_EQ(solver["type"], "solver");
  EXPECT_EQ(solver["default"], "AMG");
  EXPECT_EQ(solver["opens_scope"], true);
  EXPECT_EQ(solver["allowed"].size(), 25u);
  EXPECT_EQ(solver["allowed"].front(), "AMG");
  EXPECT_EQ(solver["allowed"].back(), "NOSOLVER");
  EXPECT_EQ(params["smoother"]["opens_scope"], true);
  EXPECT_FALSE(params["fine_smoother"].contains("opens_scope"));
  EXPECT_FALSE(params["eig_solver"].contains("allowed"));
  EXPECT_EQ(params["eig_solver"]["read_by"], "eigensolvers");

  EXPECT_EQ(params["determinism_flag"]["default_scope_only"], true);
  EXPECT_EQ(params["determinism_flag"]["read_by"], "engine (default scope)");
  EXPECT_FALSE(params["max_iters"].contains("default_scope_only"));
  EXPECT_EQ(params["exact_coarse_solve"]["read_by"], json::parse(R"(["DENSE_LU_SOLVER"])"));
}

}  // namespace
}  // namespace jaxamg
