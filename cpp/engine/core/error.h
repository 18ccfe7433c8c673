// Exception types of the engine. Every error names what was wrong, the value
// seen and the fix; the FFI layer maps the kind to an XLA error code.
#pragma once
#include <exception>
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

// The kind a failure keeps across every boundary: the FFI handlers turn it
// into one XLA error code, the Python bindings into one exception class, and
// the distributed layer sends it to the processes that agree on a failure.
enum class ErrorKind : int {
  kInvalidInput = 0,  // InvalidInput
  kConfig = 1,        // ConfigError
  kNotSupported = 2,  // NotSupported
  kNumerical = 3,     // SetupError
  kInternal = 4,      // any other exception: a defect of the engine
};

struct Failure {
  ErrorKind kind;
  std::string message;
};

// The one mapping from an exception to its kind (for `catch (...)` blocks:
// pass std::current_exception()).
inline Failure classify(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const InvalidInput& e) {
    return {ErrorKind::kInvalidInput, e.what()};
  } catch (const ConfigError& e) {
    return {ErrorKind::kConfig, e.what()};
  } catch (const NotSupported& e) {
    return {ErrorKind::kNotSupported, e.what()};
  } catch (const SetupError& e) {
    return {ErrorKind::kNumerical, e.what()};
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return {ErrorKind::kInternal, what.empty() ? std::string("unknown error") : what};
  } catch (...) {
    return {ErrorKind::kInternal, "unknown C++ exception"};
  }
}

// The exception of `kind` with `message` (the inverse of classify).
[[noreturn]] inline void throw_error_of_kind(ErrorKind kind, const std::string& message) {
  switch (kind) {
    case ErrorKind::kInvalidInput: throw InvalidInput(message);
    case ErrorKind::kConfig: throw ConfigError(message);
    case ErrorKind::kNotSupported: throw NotSupported(message);
    case ErrorKind::kNumerical: throw SetupError(message);
    case ErrorKind::kInternal: break;
  }
  throw std::runtime_error(message);
}

}  // namespace jaxamg
