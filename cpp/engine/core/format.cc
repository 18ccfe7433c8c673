#include "core/format.h"

#include <cstdio>
#include <cstdlib>

namespace jaxamg {

std::string format_number(double value) {
  char buf[32];
  // 17 significant digits always read back exactly; fewer usually do.
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

}  // namespace jaxamg
