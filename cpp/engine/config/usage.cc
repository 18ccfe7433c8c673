// The solver tree of a config and the table of which solvers read each
// registered parameter (AmgX's solvers, core.cu and the solver sources, as
// summarised in the configuration contract, §1.5 and §1.7).
#include "config/usage.h"

#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "config/internal.h"
#include "config/registry.h"
#include "core/error.h"

namespace jaxamg {

namespace {

using Names = std::vector<std::string>;

const Names kPreconditioned = {"PCG", "PCGF", "PBICGSTAB", "GMRES", "FGMRES",
                               "IDR", "IDRMSYNC", "CHEBYSHEV", "CHEBYSHEV_POLY"};
const Names kRelaxation = {"BLOCK_JACOBI", "JACOBI_L1", "CF_JACOBI", "GS", "FIXCOLOR_GS",
                           "MULTICOLOR_GS", "MULTICOLOR_DILU", "MULTICOLOR_ILU", "KACZMARZ"};
const Names kColored = {"MULTICOLOR_GS", "FIXCOLOR_GS", "MULTICOLOR_DILU", "MULTICOLOR_ILU",
                        "KACZMARZ"};
const Names kGsFamily = {"MULTICOLOR_GS", "FIXCOLOR_GS", "MULTICOLOR_ILU"};

// Parameters read by the AMG solver (AMG, classical and aggregation groups).
const std::set<std::string> kAmg = {
    "algorithm", "cycle", "cycle_iters", "presweeps", "postsweeps", "finest_sweeps",
    "coarsest_sweeps", "intensive_smoothing", "max_levels", "min_coarse_rows", "min_fine_rows",
    "coarsen_threshold", "structure_reuse_levels", "error_scaling", "amg_host_levels_rows",
    "amg_consolidation_flag", "matrix_consolidation_lower_threshold",
    "matrix_consolidation_upper_threshold", "use_sum_stopping_criteria", "selector",
    "interpolator", "strength", "strength_threshold", "max_row_sum", "interp_truncation_factor",
    "interp_max_elements", "aggressive_levels", "aggressive_selector", "aggressive_interpolator",
    "energymin_interpolator", "affinity_iterations", "affinity_vectors",
    "max_matching_iterations", "max_unassigned_percentage", "handshaking_phases",
    "weight_formula", "aggregation_passes", "merge_singletons", "filter_weights",
    "filter_weights_alpha", "full_ghost_level", "notay_weights", "modified_handshake",
    "serial_matching", "ghost_offdiag_limit", "aggregate_size",
    "aggregation_edge_weight_component", "x_smoothed_aggregation", "x_sa_strength_threshold",
    "x_dist_coarsening",
    "x_amg_precision",
    "coarseAgenerator",
    "coarseAgenerator_coarse",
    "fine_levels"};

// Parameters read by particular solvers.
const std::map<std::string, Names>& explicit_readers() {
  static const std::map<std::string, Names> table = {
      {"preconditioner", kPreconditioned},
      {"smoother", {"AMG"}},
      {"coarse_solver", {"AMG"}},
      {"fine_smoother", {"AMG"}},
      {"coarse_smoother", {"AMG"}},
      // No CPR solver exists, so nothing reads these.
      {"cpr_first_stage_preconditioner", {}},
      {"cpr_second_stage_preconditioner", {}},
      {"gmres_n_restart", {"GMRES", "FGMRES"}},
      {"gmres_krylov_dim", {"GMRES", "FGMRES"}},
      {"subspace_dim_s", {"IDR", "IDRMSYNC"}},
      // The AMG reads the dense-LU sizes to stop coarsening; the dense LU
      // itself reads them too, and alone reads exact_coarse_solve.
      {"dense_lu_num_rows", {"AMG", "DENSE_LU_SOLVER"}},
      {"dense_lu_max_rows", {"AMG", "DENSE_LU_SOLVER"}},
      {"exact_coarse_solve", {"DENSE_LU_SOLVER"}},
      {"relaxation_factor", kRelaxation},
      {"symmetric_GS", kGsFamily},
      {"GS_L1_variant", {"MULTICOLOR_GS", "FIXCOLOR_GS"}},
      {"jacobi_iters", kGsFamily},
      {"ilu_sparsity_level", {"MULTICOLOR_ILU"}},
      {"coloring_level", kColored},
      {"matrix_coloring_scheme", kColored},
      {"max_uncolored_percentage", kColored},
      {"max_num_hash", kColored},
      {"num_colors", kColored},
      {"reorder_cols_by_color", kColored},
      {"insert_diag_while_reordering", kColored},
      {"boundary_coloring", kColored},
      {"halo_coloring", kColored},
      {"kpz_order", {"POLYNOMIAL", "KPZ_POLYNOMIAL"}},
      {"kpz_mu", {"POLYNOMIAL", "KPZ_POLYNOMIAL"}},
      {"chebyshev_polynomial_order", {"CHEBYSHEV", "CHEBYSHEV_POLY"}},
      {"chebyshev_lambda_estimate_mode", {"CHEBYSHEV"}},
      {"cheby_max_lambda", {"CHEBYSHEV"}},
      {"cheby_min_lambda", {"CHEBYSHEV"}},
      {"cf_smoothing_mode", {"CF_JACOBI"}},
      {"kaczmarz_coloring_needed", {"KACZMARZ"}},
      {"print_grid_stats", {"AMG"}},
  };
  return table;
}

// Read by the base of every solver (stopping rule, monitoring, printing,
// scaling).
const std::set<std::string> kEvery = {
    "max_iters",        "tolerance",         "convergence",        "norm",
    "use_scalar_norm",  "alt_rel_tolerance", "rel_div_tolerance",  "monitor_residual",
    "store_res_history", "print_solve_stats", "obtain_timings",    "print_vis_data",
    "verbosity_level",  "solver_verbose",    "convergence_analysis", "scaling",
    "reuse_scale",      "scaling_smoother_steps"};

// Read from the default scope by the engine (resources, matrix layout,
// distribution) rather than by a solver; "solver" in the default scope names
// the top solver.
const std::set<std::string> kDefault = {
    "solver",           "determinism_flag",  "communicator",     "block_format",
    "separation_interior", "separation_exterior", "min_rows_latency_hiding",
    "fine_level_consolidation", "use_cuda_ipc_consolidation", "device_mem_pool_size",
    "device_mem_pool_max_alloc_size", "num_streams", "matrix_halo_exchange", "block_convert",
    "complex_conversion", "rhs_from_a", "matrix_writer", "use_opt_kernels",
    "use_cusparse_spgemm", "exception_handling", "print_config", "x_singular_system"};

// Depth first with an explicit stack, not recursion: a legacy chain
// s0:preconditioner(s1)=PCG, s1:preconditioner(s2)=PCG, ... is as long as the
// text, and recursing along it overflowed the stack.
void visit(const Config& cfg, const SolverNode& root,
           std::set<std::pair<std::string, std::string>>& seen, std::vector<SolverNode>& out) {
  std::vector<SolverNode> todo{root};
  while (!todo.empty()) {
    const SolverNode node = std::move(todo.back());
    todo.pop_back();
    if (node.ref.name == "NOSOLVER") continue;
    out.push_back(node);
    if (!seen.insert({node.ref.scope, node.ref.name}).second) continue;
    const std::vector<std::string> keys = child_keys(node.ref.name);
    // Pushed last to first, so the first key's subtree comes out first.
    for (auto key = keys.rbegin(); key != keys.rend(); ++key) {
      todo.push_back({*key, cfg.get_solver(*key, node.ref.scope), node.ref.scope, node.ref.name,
                      node.depth + 1});
    }
  }
}

}  // namespace

std::vector<std::string> child_keys(const std::string& solver) {
  if (solver == "AMG") return {"smoother", "coarse_solver"};
  for (const std::string& p : kPreconditioned) {
    if (solver == p) return {"preconditioner"};
  }
  return {};
}

std::vector<SolverNode> solver_tree(const Config& cfg) {
  std::vector<SolverNode> out;
  std::set<std::pair<std::string, std::string>> seen;
  visit(cfg, {"solver", cfg.top_solver(), "default", "", 0}, seen, out);
  return out;
}

ParamReaders param_readers(const std::string& name) {
  config_internal::require_param(name, "default");
  if (name.rfind("eig_", 0) == 0) return {ParamReaders::kEigen, {}};
  if (kDefault.count(name)) return {ParamReaders::kDefaultOnly, {}};
  if (kEvery.count(name)) return {ParamReaders::kEverySolver, {}};
  if (kAmg.count(name)) return {ParamReaders::kSolvers, {"AMG"}};
  auto it = explicit_readers().find(name);
  if (it != explicit_readers().end()) return {ParamReaders::kSolvers, it->second};
  // A registered name missing from these tables is a gap in this file.
  throw std::logic_error("param_readers: parameter '" + name +
                         "' is registered but not classified; add it to a table in "
                         "config/usage.cc");
}

}  // namespace jaxamg
