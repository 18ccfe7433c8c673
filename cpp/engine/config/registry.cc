#include "config/registry.h"

#include <unordered_map>

namespace jaxamg {

namespace {

ParamSpec I(const char* n, int d) { return {ParamSpec::kInt, n, d, 0.0, "", {}}; }
ParamSpec D(const char* n, double d) { return {ParamSpec::kDouble, n, 0, d, "", {}}; }
ParamSpec S(const char* n, const char* d, std::vector<std::string> allowed = {}) {
  return {ParamSpec::kString, n, 0, 0.0, d, std::move(allowed)};
}
ParamSpec SOLVER(const char* n, const char* d) { return {ParamSpec::kSolver, n, 0, 0.0, d, {}}; }

const std::vector<std::string> kConvergence = {"ABSOLUTE", "RELATIVE_INI", "RELATIVE_INI_CORE",
                                               "RELATIVE_MAX", "RELATIVE_MAX_CORE",
                                               "COMBINED_REL_INI_ABS"};
const std::vector<std::string> kSelectors = {
    "PMIS",   "HMIS",   "AGGRESSIVE_PMIS", "AGGRESSIVE_HMIS", "CR",
    "DUMMY",  "SIZE_2", "SIZE_4",          "SIZE_8",          "MULTI_PAIRWISE",
    "GEO",    "PARALLEL_GREEDY_SELECTOR", "DEFAULT",
    "x_STANDARD"};  // extension: amg/aggregation/near_nullspace_aggregation.h
const std::vector<std::string> kInterpolators = {"D1", "D2", "MULTIPASS", "EM", "D2_TWO_STAGE"};
const std::vector<std::string> kColoring = {
    "MIN_MAX", "MIN_MAX_2RING", "PARALLEL_GREEDY", "ROUND_ROBIN", "MULTI_HASH", "UNIFORM",
    "GREEDY_MIN_MAX_2RING", "SERIAL_GREEDY_BFS", "GREEDY_RECOLOR", "LOCALLY_DOWNWIND"};

std::vector<ParamSpec> build() {
  return {
      // Solvers (solver-typed keys open scopes).
      SOLVER("solver", "AMG"), SOLVER("preconditioner", "AMG"),
      SOLVER("smoother", "BLOCK_JACOBI"), SOLVER("coarse_solver", "DENSE_LU_SOLVER"),
      SOLVER("fine_smoother", "BLOCK_JACOBI"), SOLVER("coarse_smoother", "BLOCK_JACOBI"),
      SOLVER("cpr_first_stage_preconditioner", "AMG"),
      SOLVER("cpr_second_stage_preconditioner", "AMG"),
      SOLVER("eig_solver", "POWER_ITERATION"),
      // Stopping and reporting.
      I("max_iters", 100), D("tolerance", 1e-12), S("convergence", "ABSOLUTE", kConvergence),
      S("norm", "L2", {"L1", "L2", "LMAX", "L1_SCALED"}), I("use_scalar_norm", 0),
      D("alt_rel_tolerance", 1e-12), D("rel_div_tolerance", 1e6), I("monitor_residual", 0),
      I("store_res_history", 0), I("print_solve_stats", 0), I("print_grid_stats", 0),
      I("obtain_timings", 0), I("print_config", 0), I("print_vis_data", 0),
      I("verbosity_level", 3), I("solver_verbose", 0), I("convergence_analysis", 0),
      S("scaling", "NONE", {"NONE", "DIAGONAL_SYMMETRIC", "BINORMALIZATION", "NBINORMALIZATION"}),
      I("exception_handling", 0), I("determinism_flag", 0),
      // Extension: the system has a declared null space; DENSE_LU_SOLVER
      // then pins a zero pivot instead of failing (solvers/direct/dense_lu.h).
      I("x_singular_system", 0),
      // Krylov.
      I("gmres_n_restart", 20), I("gmres_krylov_dim", 0), I("subspace_dim_s", 8),
      // AMG common.
      S("algorithm", "CLASSICAL", {"CLASSICAL", "AGGREGATION", "ENERGYMIN"}),
      S("cycle", "V", {"V", "W", "F", "CG", "CGF"}), I("cycle_iters", 2), I("presweeps", 1),
      I("postsweeps", 1), I("finest_sweeps", -1), I("coarsest_sweeps", 2),
      I("intensive_smoothing", 0), I("max_levels", 100), I("min_coarse_rows", 2),
      I("min_fine_rows", 1), D("coarsen_threshold", 1.0), I("dense_lu_num_rows", 128),
      I("dense_lu_max_rows", 0), I("exact_coarse_solve", 0), I("structure_reuse_levels", 0),
      I("error_scaling", 0), I("reuse_scale", 0), I("scaling_smoother_steps", 2),
      I("amg_host_levels_rows", -1), I("amg_consolidation_flag", 0),
      I("matrix_consolidation_lower_threshold", 0),
      I("matrix_consolidation_upper_threshold", 1000), I("use_sum_stopping_criteria", 0),
      // Classical.
      S("selector", "PMIS", kSelectors), S("interpolator", "D1", kInterpolators),
      S("strength", "AHAT", {"AHAT", "ALL", "AFFINITY"}), D("strength_threshold", 0.25),
      D("max_row_sum", 1.1), D("interp_truncation_factor", 1.1), I("interp_max_elements", -1),
      I("aggressive_levels", 0), S("aggressive_selector", "DEFAULT", kSelectors),
      S("aggressive_interpolator", "MULTIPASS", kInterpolators),
      // extension: dist/dist_classical.h (classical AMG on distributed matrices)
      S("x_dist_coarsening", "ACROSS_PROCESSES", {"ACROSS_PROCESSES", "RANK_LOCAL"}),
      S("energymin_interpolator", "EM", {"EM"}), I("affinity_iterations", 4),
      I("affinity_vectors", 4),
      // Aggregation.
      I("max_matching_iterations", 15), D("max_unassigned_percentage", 0.05),
      I("handshaking_phases", 1), I("weight_formula", 0), I("aggregation_passes", 3),
      I("merge_singletons", 1), I("filter_weights", 0), D("filter_weights_alpha", 0.5),
      I("full_ghost_level", 0), I("notay_weights", 0), I("modified_handshake", 0),
      I("serial_matching", 0), I("ghost_offdiag_limit", 0), I("aggregate_size", 2),
      I("aggregation_edge_weight_component", 0),
      I("x_smoothed_aggregation", 0),  // extension: amg/aggregation/smoothed_aggregation.h
      // extension: amg/aggregation/near_nullspace_aggregation.h (selector x_STANDARD)
      D("x_sa_strength_threshold", 0.0),
      // extension: amg/mixed_precision_amg.h (a float32 hierarchy in a float64 solve)
      S("x_amg_precision", "SAME", {"SAME", "FLOAT"}),
      S("coarseAgenerator", "LOW_DEG", {"LOW_DEG", "THRUST", "HYBRID"}),
      S("coarseAgenerator_coarse", "LOW_DEG", {"LOW_DEG", "THRUST", "HYBRID"}),
      I("fine_levels", -1),
      // Smoothers.
      D("relaxation_factor", 0.9), I("symmetric_GS", 0), I("GS_L1_variant", 0),
      I("jacobi_iters", 5), I("ilu_sparsity_level", 0), I("coloring_level", 1),
      S("matrix_coloring_scheme", "MIN_MAX", kColoring), D("max_uncolored_percentage", 0.15),
      I("max_num_hash", 7), I("num_colors", 10), I("reorder_cols_by_color", 0),
      I("insert_diag_while_reordering", 0),
      S("boundary_coloring", "SYNC_COLORS", {"SYNC_COLORS", "FIRST", "LAST"}),
      S("halo_coloring", "LAST", {"SYNC_COLORS", "FIRST", "LAST"}), I("kpz_order", 3),
      I("kpz_mu", 4), I("chebyshev_polynomial_order", 5), I("chebyshev_lambda_estimate_mode", 0),
      D("cheby_max_lambda", 1.0), D("cheby_min_lambda", 0.125), I("cf_smoothing_mode", 0),
      I("kaczmarz_coloring_needed", 1),
      // System and distributed.
      S("communicator", "MPI", {"MPI", "MPI_DIRECT"}), I("min_rows_latency_hiding", -1),
      I("fine_level_consolidation", 0), I("use_cuda_ipc_consolidation", 0),
      I("device_mem_pool_size", 256 * 1024 * 1024), I("device_mem_pool_max_alloc_size", 20 * 1024 * 1024),
      I("num_streams", 0), I("matrix_halo_exchange", 0),
      S("separation_interior", "INTERIOR", {"INTERIOR", "OWNED", "FULL", "ALL"}),
      S("separation_exterior", "OWNED", {"INTERIOR", "OWNED", "FULL", "ALL"}),
      S("block_format", "ROW_MAJOR", {"ROW_MAJOR", "COL_MAJOR"}), I("block_convert", 0),
      I("complex_conversion", 0), I("rhs_from_a", 0), S("matrix_writer", "matrixmarket"),
      I("use_opt_kernels", 0), I("use_cusparse_spgemm", 0),
      // Eigensolvers (parsed, not solved).
      D("eig_tolerance", 1e-4), D("eig_shift", 0.0), D("eig_damping_factor", 0.8),
      I("eig_max_iters", 100), S("eig_which", "largest"), I("eig_wanted_count", 1),
      I("eig_subspace_size", -1), I("eig_convergence_check_freq", 1), I("eig_eigenvector", 0),
      S("eig_eigenvector_solver", ""),
  };
}

}  // namespace

const std::vector<ParamSpec>& all_params() {
  static const std::vector<ParamSpec> params = build();
  return params;
}

const ParamSpec* find_param(const std::string& name) {
  static const std::unordered_map<std::string, const ParamSpec*> index = [] {
    std::unordered_map<std::string, const ParamSpec*> m;
    for (const ParamSpec& p : all_params()) m[p.name] = &p;
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

const std::vector<std::string>& amgx_solver_names() {
  static const std::vector<std::string> names = {
      "AMG",          "CG",           "PCG",             "PCGF",           "BICGSTAB",
      "PBICGSTAB",    "GMRES",        "FGMRES",          "IDR",            "IDRMSYNC",
      "CHEBYSHEV",    "CHEBYSHEV_POLY", "POLYNOMIAL",    "KPZ_POLYNOMIAL", "BLOCK_JACOBI",
      "JACOBI_L1",    "CF_JACOBI",    "GS",              "FIXCOLOR_GS",    "MULTICOLOR_GS",
      "MULTICOLOR_DILU", "MULTICOLOR_ILU", "KACZMARZ",   "DENSE_LU_SOLVER", "NOSOLVER"};
  return names;
}

const char* refused_amgx_solver(const std::string& name) {
  if (name == "CF_JACOBI") {
    return "it relaxes the C and then the F points of a classical AMG level, and AmgX's own "
           "host version is plain weighted Jacobi; use BLOCK_JACOBI (the same sweep on every "
           "point) or JACOBI_L1";
  }
  if (name == "FIXCOLOR_GS") {
    return "AmgX does not expose it (its multicolour Gauss-Seidel with the colours fixed at 8, "
           "device only); use MULTICOLOR_GS";
  }
  return nullptr;
}

bool default_scope_only(const std::string& name) {
  for (const char* n : {"determinism_flag", "x_singular_system", "block_format",
                        "separation_interior", "separation_exterior", "min_rows_latency_hiding",
                        "fine_level_consolidation", "use_cuda_ipc_consolidation"}) {
    if (name == n) return true;
  }
  return false;
}

std::string join_allowed(const ParamSpec& spec) {
  std::string s;
  for (const std::string& v : spec.allowed) {
    if (!s.empty()) s += ", ";
    s += v;
  }
  return s;
}

}  // namespace jaxamg
