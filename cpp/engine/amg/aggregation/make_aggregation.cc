#include "amg/coarsening.h"
#include "core/error.h"

namespace jaxamg {

template <class T>
std::unique_ptr<Coarsening<T>> make_aggregation_coarsening(const Config&, const std::string& scope, int) {
  throw NotSupported("aggregation AMG is not implemented yet (scope '" + scope + "')");
}

template std::unique_ptr<Coarsening<float>> make_aggregation_coarsening(const Config&, const std::string&, int);
template std::unique_ptr<Coarsening<double>> make_aggregation_coarsening(const Config&, const std::string&, int);

}  // namespace jaxamg
