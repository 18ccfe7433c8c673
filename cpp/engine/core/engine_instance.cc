#include "core/engine_instance.h"

namespace jaxamg {

namespace {
// Its address identifies the library it lives in; the value is unused.
const char kEngineTag = 0;
}  // namespace

std::uintptr_t engine_instance() { return reinterpret_cast<std::uintptr_t>(&kEngineTag); }

}  // namespace jaxamg
