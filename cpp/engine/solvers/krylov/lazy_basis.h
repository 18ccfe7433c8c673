// Storage for the n-vectors of a Krylov basis (GMRES's V, FGMRES's V and
// Z), each allocated when an Arnoldi step first reaches it. A restart
// length of m reserves m + 1 slots, but a solve that converges in k < m
// steps allocates only the k + 1 vectors it uses; later solves reuse them.
// Nothing is allocated at setup.
#pragma once
#include <cstddef>
#include <vector>

#include "core/types.h"

namespace jaxamg::krylov {

template <class T>
class LazyBasis {
 public:
  // `slots` vectors of n entries. Vectors already allocated for the same n
  // are kept (their values are not: callers write a vector before reading
  // it); a new n drops them all.
  void shape(std::size_t slots, std::size_t n) {
    if (n != n_) {
      slots_.clear();
      n_ = n;
    }
    slots_.resize(slots);
    slots_.shrink_to_fit();
  }

  // Vector i, allocated (zero) on first use. The pointer stays valid until
  // the next shape() with another size or fewer slots.
  T* operator[](std::size_t i) {
    Vector<T>& v = slots_[i];
    if (v.empty()) v.assign(n_, T(0));
    return v.data();
  }

  std::size_t slots() const { return slots_.size(); }
  // How many vectors have been allocated.
  std::size_t allocated() const {
    std::size_t k = 0;
    for (const Vector<T>& v : slots_) k += v.empty() ? 0 : 1;
    return k;
  }

 private:
  std::vector<Vector<T>> slots_;
  std::size_t n_ = 0;
};

}  // namespace jaxamg::krylov
