// AmgX's legacy text config: "config_version=2, solver(main)=PCG, main:max_iters=10".
#include "config/config.h"
#include "core/error.h"

namespace jaxamg {

Config Config::parse_legacy(const std::string& text) {
  throw ConfigError("config is not valid JSON and the legacy key=value form is not supported yet: " +
                    text.substr(0, 80));
}

}  // namespace jaxamg
