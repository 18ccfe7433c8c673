// Finiteness checks of operands, made once per solve call (the FFI handlers
// check A's values, b and x0; LinearSolver::solve checks b).
//
// They run serially, without OpenMP: on the 10^4-entry vectors of a small
// solve, waking the thread team costs more than the loop. Each block is
// branch-free bit arithmetic (an entry is NaN or infinite exactly when its
// exponent bits are all ones), which compilers vectorize where a loop that
// returns at the first std::isfinite failure stays scalar; and it holds
// under -ffast-math, where std::isfinite may be assumed true.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace jaxamg {

// Index of the first NaN or infinite entry of x[0, n), or n if all are finite.
template <class T>
std::int64_t first_non_finite(const T* x, std::int64_t n) {
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                "first_non_finite: float or double");
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  constexpr Bits kExponent = sizeof(T) == 8 ? Bits(0x7ff0000000000000ull) : Bits(0x7f800000u);
  constexpr Bits kExponentOne = kExponent & ~(kExponent << 1);  // lowest exponent bit
  constexpr Bits kSign = Bits(1) << (8 * sizeof(T) - 1);
  constexpr std::int64_t kBlock = 2048;  // a prompt exit without losing the vector loop
  for (std::int64_t start = 0; start < n; start += kBlock) {
    const std::int64_t end = std::min(n, start + kBlock);
    // (u & kExponent) + kExponentOne carries into the sign bit exactly when
    // the exponent is all ones: and, add, or (no compare), so the loop
    // vectorizes with the baseline instruction set too (SSE2 has no 64-bit
    // integer compare).
    // Eight independent accumulators: no loop-carried chain through one register.
    Bits lanes[8] = {};
    std::int64_t i = start;
    for (; i + 8 <= end; i += 8) {
      for (int l = 0; l < 8; ++l) {
        Bits u;
        std::memcpy(&u, x + i + l, sizeof u);
        lanes[l] |= (u & kExponent) + kExponentOne;
      }
    }
    Bits bad = 0;
    for (; i < end; ++i) {
      Bits u;
      std::memcpy(&u, x + i, sizeof u);
      bad |= (u & kExponent) + kExponentOne;
    }
    for (Bits lane : lanes) bad |= lane;
    if ((bad & kSign) != 0) {
      for (std::int64_t i = start; i < end; ++i) {
        Bits u;
        std::memcpy(&u, x + i, sizeof u);
        if ((u & kExponent) == kExponent) return i;
      }
    }
  }
  return n;
}

template <class T>
bool all_entries_finite(const T* x, std::int64_t n) {
  return first_non_finite(x, n) == n;
}

}  // namespace jaxamg
