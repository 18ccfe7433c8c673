// Exception types of the engine. Every error names what was wrong, the value
// seen and the fix; the FFI layer maps the kind to an XLA error code.
#pragma once
#include <stdexcept>
#include <string>

namespace jaxamg {

// Bad user input: a malformed matrix, a vector of the wrong size, ...
class InvalidInput : public std::invalid_argument {
 public:
  explicit InvalidInput(const std::string& msg) : std::invalid_argument(msg) {}
};

// A configuration that cannot be parsed or names an unknown solver,
// parameter or value (AmgX's BAD_CONFIGURATION).
class ConfigError : public std::invalid_argument {
 public:
  explicit ConfigError(const std::string& msg) : std::invalid_argument(msg) {}
};

// A valid request the engine does not implement (e.g. an AmgX solver name we
// recognise but do not provide).
class NotSupported : public std::runtime_error {
 public:
  explicit NotSupported(const std::string& msg) : std::runtime_error(msg) {}
};

// A numerical failure during setup (e.g. a singular coarse matrix).
class SetupError : public std::runtime_error {
 public:
  explicit SetupError(const std::string& msg) : std::runtime_error(msg) {}
};

}  // namespace jaxamg
