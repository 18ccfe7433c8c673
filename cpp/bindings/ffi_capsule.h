// An XLA FFI handler as the PyCapsule jax.ffi.register_ffi_target expects.
#pragma once
#include <nanobind/nanobind.h>

#include <type_traits>

#include "xla/ffi/api/c_api.h"

namespace jaxamg::bindings {

template <class T>
nanobind::capsule encapsulate(T* fn) {
  static_assert(std::is_invocable_r_v<XLA_FFI_Error*, T, XLA_FFI_CallFrame*>,
                "not an XLA FFI handler");
  return nanobind::capsule(reinterpret_cast<void*>(fn));
}

}  // namespace jaxamg::bindings
