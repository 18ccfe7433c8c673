// A NumPy array that takes over a std::vector's buffer (no copy); the
// vector is freed when Python drops the array.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <utility>
#include <vector>

namespace jaxamg::bindings {

template <class T>
nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<1>> owned_array(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  nanobind::capsule owner(heap,
                          [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<1>>(heap->data(), {heap->size()},
                                                                  owner);
}

}  // namespace jaxamg::bindings
