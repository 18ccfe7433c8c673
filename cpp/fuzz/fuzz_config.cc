// libFuzzer target: arbitrary bytes as configuration text.
//
// The input is parsed with Config::parse (JSON, else legacy name=value text)
// and, separately, with Config::parse_legacy; an optional second part after a
// "\n---\n" line is applied to the parsed config with merge_patch. The
// canonical text and the unused-parameter warnings (which resolve the solver
// tree) are computed, and the top solver is created with create_solver<double>
// (no setup). The engine may reject the text only with its own error types;
// any other exception, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "config/config.h"
#include "core/error.h"
#include "solvers/factory.h"
#include "solvers/solver.h"

namespace {

template <class F>
void expect_engine_errors_only(F&& f) {
  try {
    f();
  } catch (const jaxamg::ConfigError&) {
  } catch (const jaxamg::NotSupported&) {
  } catch (const jaxamg::InvalidInput&) {
  } catch (const std::invalid_argument&) {
  }
  // Anything else propagates out of LLVMFuzzerTestOneInput: libFuzzer reports
  // the uncaught exception (std::terminate) as a crash.
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t sep = input.find("\n---\n");
  const std::string text = input.substr(0, sep);

  expect_engine_errors_only([&] {
    jaxamg::SolverContext ctx;
    ctx.config = jaxamg::Config::parse(text);
    if (sep != std::string::npos) ctx.config.merge_patch(input.substr(sep + 5));
    (void)ctx.config.canonical();
    (void)ctx.config.unused_parameter_warnings();
    std::unique_ptr<jaxamg::Solver<double>> top =
        jaxamg::create_solver<double>(ctx, ctx.config.top_solver());
    (void)top->name();
  });
  expect_engine_errors_only([&] {
    jaxamg::Config legacy = jaxamg::Config::parse_legacy(text);
    (void)legacy.canonical();
  });
  return 0;
}
