#include "batched/batched_node.h"

#include "amg/amg_solver.h"
#include "batched/batched_amg.h"
#include "batched/batched_smoothers.h"

namespace jaxamg::batched {

template <class T>
bool prints_statistics(const Solver<T>& s) {
  const Config& cfg = s.context().config;
  if (cfg.get_int("verbosity_level", s.scope()) < 3) return false;
  return cfg.get_int("print_solve_stats", s.scope()) != 0 || s.obtains_timings();
}

template <class T>
std::unique_ptr<Node<T>> make_node(const Solver<T>& s, int max_lanes, bool as_solve) {
  if (s.matrix().dist) return nullptr;  // distributed solves stay per lane
  if (as_solve && (s.monitors_residual() || prints_statistics(s))) return nullptr;
  if (auto* amg = dynamic_cast<const AmgSolver<T>*>(&s)) return make_amg_node(*amg, max_lanes);
  return make_smoother_node(s, max_lanes);
}

template bool prints_statistics(const Solver<float>&);
template bool prints_statistics(const Solver<double>&);
template std::unique_ptr<Node<float>> make_node(const Solver<float>&, int, bool);
template std::unique_ptr<Node<double>> make_node(const Solver<double>&, int, bool);

}  // namespace jaxamg::batched
