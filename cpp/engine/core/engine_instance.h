// Which copy of the engine a caller is linked to. The Python modules load the
// engine as one shared library, so within a process every module answers the
// same address; a module that carried its own copy (a static link) would
// answer another, and a config validated by one copy would be solved by a
// different one.
#pragma once
#include <cstdint>

namespace jaxamg {

// The address of a variable that lives in the engine library.
std::uintptr_t engine_instance();

}  // namespace jaxamg
