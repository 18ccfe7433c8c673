// Which solvers a config creates and which parameters each of them reads,
// following AmgX's rules: a solver reads only its own scope, and creates its
// children from the solver-typed keys of that scope. Used by the unused-
// parameter warnings and the registry description.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"

namespace jaxamg {

// One solver of the resolved tree.
struct SolverNode {
  std::string role;          // the key that created it: solver, preconditioner, smoother, coarse_solver
  SolverRef ref;             // its name and the scope it reads
  std::string parent_scope;  // the scope that key was read from ("default" for the top)
  std::string parent;        // the parent solver's name ("" for the top)
  int depth = 0;             // 0 for the top solver
};

// The solvers AmgX would create, top first, depth first. NOSOLVER children
// are left out (nothing is created for them). A solver already visited in the
// same scope is not expanded again, so flat configs cannot loop.
std::vector<SolverNode> solver_tree(const Config& cfg);

// The solver-typed keys that `solver` reads in its own scope to create its
// children: AMG reads smoother and coarse_solver; the preconditioned Krylov
// methods and CHEBYSHEV read preconditioner; CG and BICGSTAB read none.
std::vector<std::string> child_keys(const std::string& solver);

// Who reads a parameter.
struct ParamReaders {
  enum Use {
    kEverySolver,  // the base solver: stopping, monitoring, printing
    kSolvers,      // only the solvers listed in `solvers`
    kDefaultOnly,  // read by the engine from the default scope only
    kEigen,        // eigensolver parameters (no eigensolver is built)
  } use;
  std::vector<std::string> solvers;  // for kSolvers
};
// Throws ConfigError for an unregistered name, std::logic_error for a
// registered name the tables of usage.cc do not classify.
ParamReaders param_readers(const std::string& name);

}  // namespace jaxamg
