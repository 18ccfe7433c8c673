// The one mapping from engine exceptions to error kinds (core/error.h):
// every exception type classifies to its kind with its message, the kind
// thrown back is the same type, and capture_error (what the distributed
// processes agree on) carries the same kind.
#include <gtest/gtest.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "core/distribution.h"
#include "core/error.h"

namespace jaxamg {
namespace {

std::exception_ptr thrown(ErrorKind kind, const std::string& message) {
  try {
    throw_error_of_kind(kind, message);
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

TEST(ErrorKinds, EveryKindSurvivesARoundTrip) {
  for (ErrorKind kind : {ErrorKind::kInvalidInput, ErrorKind::kConfig, ErrorKind::kNotSupported,
                         ErrorKind::kNumerical, ErrorKind::kInternal}) {
    const std::string message = "message of kind " + std::to_string(static_cast<int>(kind));
    const Failure failure = classify(thrown(kind, message));
    EXPECT_EQ(failure.kind, kind);
    EXPECT_EQ(failure.message, message);
  }
}

TEST(ErrorKinds, ExceptionTypesMapToTheirKinds) {
  auto kind_of = [](auto&& f) {
    try {
      f();
    } catch (...) {
      return classify(std::current_exception()).kind;
    }
    ADD_FAILURE() << "no exception";
    return ErrorKind::kInternal;
  };
  EXPECT_EQ(kind_of([] { throw InvalidInput("x"); }), ErrorKind::kInvalidInput);
  EXPECT_EQ(kind_of([] { throw ConfigError("x"); }), ErrorKind::kConfig);
  EXPECT_EQ(kind_of([] { throw NotSupported("x"); }), ErrorKind::kNotSupported);
  EXPECT_EQ(kind_of([] { throw SetupError("x"); }), ErrorKind::kNumerical);
  // Standard exceptions that are not the engine's own are internal failures,
  // even where they share a base class with one (invalid_argument).
  EXPECT_EQ(kind_of([] { throw std::invalid_argument("x"); }), ErrorKind::kInternal);
  EXPECT_EQ(kind_of([] { throw std::bad_alloc(); }), ErrorKind::kInternal);
  EXPECT_EQ(kind_of([] { throw 3; }), ErrorKind::kInternal);
}

TEST(ErrorKinds, CaptureErrorCarriesTheKindAsData) {
  int kind = -1;
  EXPECT_EQ(capture_error([] {}, &kind), "");
  EXPECT_EQ(kind, -1);
  EXPECT_EQ(capture_error([] { throw NotSupported("not here"); }, &kind), "not here");
  EXPECT_EQ(kind, static_cast<int>(ErrorKind::kNotSupported));
  EXPECT_THROW(throw_error_of_kind(kind, "again"), NotSupported);
  EXPECT_EQ(capture_error([] { throw std::runtime_error(""); }, &kind), "unknown error");
  EXPECT_EQ(kind, static_cast<int>(ErrorKind::kInternal));
  // An unknown kind number (a corrupt message) still throws, as internal.
  EXPECT_THROW(throw_error_of_kind(99, "corrupt"), std::runtime_error);
}

}  // namespace
}  // namespace jaxamg
