// truncate_row (amg/classical/truncation.cc) as a device function on one
// row held as parallel arrays of coarse columns and weights, sorted by
// column: the same entries stay and they are rescaled with the same
// arithmetic, so the row equals the host's bit for bit (the file that
// includes this is compiled without fused multiply-adds).
#pragma once
#include <cmath>

#include "core/types.h"

namespace jaxamg::cuda {

// Ties in |w| go to the lower column.
__device__ inline bool larger_entry(double x, Index cx, double y, Index cy) {
  return x > y || (x == y && cx < cy);
}

// The `keep` (<= 8) largest entries with |w| >= cut, by larger_entry; returns
// the smallest of them (the host's short sorted list).
__device__ inline void smallest_of_largest(const Index* col, const double* w, Index len,
                                           Index keep, double cut, double& last_abs,
                                           Index& last_col) {
  double ta[8];
  Index tc[8];
  Index nt = 0;
  for (Index u = 0; u < len; ++u) {
    const double a = fabs(w[u]);
    if (a < cut) continue;
    if (nt == keep && !larger_entry(a, col[u], ta[nt - 1], tc[nt - 1])) continue;
    Index q = nt < keep ? nt++ : nt - 1;
    for (; q > 0 && larger_entry(a, col[u], ta[q - 1], tc[q - 1]); --q) {
      ta[q] = ta[q - 1];
      tc[q] = tc[q - 1];
    }
    ta[q] = a;
    tc[q] = col[u];
  }
  last_abs = ta[keep - 1];
  last_col = tc[keep - 1];
}

// Applies the factor test, keeps the max_elements largest |w| and rescales
// each sign to the full row's sum; returns the new length.
__device__ inline Index truncate_row(Index* col, double* w, Index len, double factor,
                                     int max_elements) {
  const bool by_factor = factor > 0.0 && factor < 1.0;
  if (!(by_factor || max_elements > 0) || len == 0) return len;
  const Index keep = max_elements > 0 ? static_cast<Index>(max_elements) : len;
  if (!by_factor && len <= keep) return len;
  double full_pos = 0, full_neg = 0;
  double wmax = 0;
  for (Index u = 0; u < len; ++u) {
    const double v = w[u];
    if (v > 0) {
      full_pos += v;
    } else {
      full_neg += v;
    }
    const double a = fabs(v);
    if (wmax < a) wmax = a;
  }
  const double cut = by_factor ? factor * wmax : -1.0;  // nothing is below -1
  Index survivors = len;
  if (by_factor) {
    survivors = 0;
    for (Index u = 0; u < len; ++u) survivors += fabs(w[u]) >= cut;
  }
  const bool select = survivors > keep;
  double last_abs = -1.0;
  Index last_col = 0;
  if (select) {
    if (keep <= 8) {
      smallest_of_largest(col, w, len, keep, cut, last_abs, last_col);
    } else {
      // The survivor with exactly keep - 1 larger survivors (the host's
      // nth_element; the order is total, so it is unique).
      for (Index u = 0; u < len; ++u) {
        const double a = fabs(w[u]);
        if (a < cut) continue;
        Index above = 0;
        for (Index v = 0; v < len; ++v) {
          const double b = fabs(w[v]);
          above += b >= cut && larger_entry(b, col[v], a, col[u]);
        }
        if (above == keep - 1) {
          last_abs = a;
          last_col = col[u];
          break;
        }
      }
    }
  }
  double kept_pos = 0, kept_neg = 0;
  Index m = 0;
  for (Index u = 0; u < len; ++u) {
    const double v = w[u];
    const double a = fabs(v);
    const bool stays = a >= cut && (!select || !larger_entry(last_abs, last_col, a, col[u]));
    if (!stays) continue;
    if (v > 0) {
      kept_pos += v;
    } else {
      kept_neg += v;
    }
    col[m] = col[u];
    w[m] = v;
    ++m;
  }
  if (m == len) return len;
  if (kept_pos == 0) {
    full_neg += full_pos;
    full_pos = 0;
  }
  if (kept_neg == 0) {
    full_pos += full_neg;
    full_neg = 0;
  }
  const double scale_pos = kept_pos != 0 ? full_pos / kept_pos : 1.0;
  const double scale_neg = kept_neg != 0 ? full_neg / kept_neg : 1.0;
  for (Index u = 0; u < m; ++u) w[u] *= w[u] > 0 ? scale_pos : scale_neg;
  return m;
}

}  // namespace jaxamg::cuda
