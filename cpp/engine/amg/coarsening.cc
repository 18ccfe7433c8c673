#include "amg/coarsening.h"

#include "core/error.h"

namespace jaxamg {

template <class T>
std::unique_ptr<Coarsening<T>> make_coarsening(const Config& cfg, const std::string& scope,
                                               int level) {
  const std::string algorithm = cfg.get_string("algorithm", scope);
  if (algorithm == "CLASSICAL") return make_classical_coarsening<T>(cfg, scope, level);
  if (algorithm == "AGGREGATION") return make_aggregation_coarsening<T>(cfg, scope, level);
  throw NotSupported("algorithm '" + algorithm + "' (scope '" + scope +
                     "') is not implemented; use CLASSICAL or AGGREGATION");
}

template std::unique_ptr<Coarsening<float>> make_coarsening(const Config&, const std::string&, int);
template std::unique_ptr<Coarsening<double>> make_coarsening(const Config&, const std::string&, int);

}  // namespace jaxamg
