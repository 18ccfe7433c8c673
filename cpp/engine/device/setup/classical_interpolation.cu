// Classical interpolation on the device (host: interpolation_direct.cc,
// interpolation_extended.cc, assemble.h). One thread builds one row, in the
// host's order of operations, in a scratch segment sized by an upper bound:
//  1. bound[i]: 1 for a C row; for an F row its strong C neighbours (D1) or,
//     for D2, one per strong C neighbour plus the strong dependencies of
//     each strong F neighbour (a superset of their strong C neighbours);
//  2. the candidate coarse columns of each F row (D2: with repeats, then
//     sorted per row and made unique: the set Ĉ_i in column order);
//  3. the weights, accumulated in the host's order, then truncate_row;
//  4. the rows packed into P.
// This file is compiled without fused multiply-adds (CMakeLists.txt), so
// every weight is the host's bit for bit.
#include <string>

#include "amg/classical/splitting.h"
#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"
#include "core/error.h"
#include "device/setup/candidate_rows.h"
#include "device/setup/device_classical.h"
#include "device/setup/truncate_row.cuh"

namespace jaxamg::cuda {

namespace {

using classical::Interpolator;
using classical::kCoarse;

// Rows with skip[i] set (skip may be null) are F rows left empty.
__device__ inline bool skipped(const uint8_t* skip, Index i) { return skip && skip[i]; }

__global__ void row_bounds(Index n, const Index* __restrict__ ptr, const Index* __restrict__ col,
                           const uint8_t* __restrict__ strong, const int8_t* __restrict__ cf,
                           const Index* __restrict__ depends, bool distance_two,
                           const uint8_t* __restrict__ skip, Index* __restrict__ bound) {
  const Index i = global_id();
  if (i >= n) return;
  Index b = 1;
  if (cf[i] != kCoarse) {
    b = 0;
    for (Index k = ptr[i]; k < ptr[i + 1] && !skipped(skip, i); ++k) {
      if (!strong[k]) continue;
      const Index j = col[k];
      if (cf[j] == kCoarse) {
        ++b;
      } else if (distance_two) {
        b += depends[j];
      }
    }
  }
  bound[i] = b;
}

// The strong C neighbours of F row i (D1; in column order, unique) or
// those and the strong C neighbours of its strong F neighbours (D2; sorted
// and unique: candidate_rows.h).
__global__ void gather_candidates(Index n, const Index* __restrict__ ptr,
                                  const Index* __restrict__ col,
                                  const uint8_t* __restrict__ strong, const int8_t* __restrict__ cf,
                                  const Index* __restrict__ cidx, const Index* __restrict__ off,
                                  bool distance_two, const uint8_t* __restrict__ skip,
                                  Index* __restrict__ cand, Index* __restrict__ count) {
  const Index i = global_id();
  if (i >= n) return;
  // D2 candidates repeat: the row collects them without repeats.
  Index* seg = cand + off[i];
  CandidateRow row(seg, distance_two ? off[i + 1] - off[i] : 0);
  Index p = 0;
  auto add = [&](Index c) {
    if (distance_two) {
      row.add(c);
    } else {
      seg[p++] = c;
    }
  };
  if (cf[i] != kCoarse && !skipped(skip, i)) {
    for (Index k = ptr[i]; k < ptr[i + 1]; ++k) {
      if (!strong[k]) continue;
      const Index j = col[k];
      if (cf[j] == kCoarse) {
        add(cidx[j]);
      } else if (distance_two) {
        for (Index l = ptr[j]; l < ptr[j + 1]; ++l) {
          const Index m = col[l];
          if (m != j && cf[m] == kCoarse && strong[l]) add(cidx[m]);
        }
      }
    }
  }
  count[i] = distance_two ? row.finish() : p;
}

// Position of coarse column c in the sorted list, -1 if absent.
__device__ inline Index find_column(const Index* list, Index len, Index c) {
  Index lo = 0, hi = len;
  while (lo < hi) {
    const Index m = lo + (hi - lo) / 2;
    if (list[m] < c) {
      lo = m + 1;
    } else {
      hi = m;
    }
  }
  return lo < len && list[lo] == c ? lo : -1;
}

// Position of column i in row j of A (columns ascending), -1 if absent.
__device__ inline Index find_entry(const Index* ptr, const Index* col, Index j, Index i) {
  const Index p = find_column(col + ptr[j], ptr[j + 1] - ptr[j], i);
  return p < 0 ? -1 : ptr[j] + p;
}

struct RowArgs {
  Index n;
  const Index* ptr;
  const Index* col;
  const uint8_t* strong;
  const Index* dpos;
  const int8_t* cf;
  const Index* cidx;
  const Index* off;
  const Index* count;
  Index* cand;
  double* w;
  Index* len;
  double trunc_factor;
  int max_elements;
  const uint8_t* skip;
};

// Extended+i weights of F row i (the host's ExtIBuilder::distribute).
template <class T>
__device__ Index extended_i_row(const RowArgs& r, const T* __restrict__ val, Index i) {
  const Index base = r.off[i];
  const Index nt = r.count[i];
  const Index* list = r.cand + base;
  double* w = r.w + base;
  if (nt == 0) return 0;
  for (Index u = 0; u < nt; ++u) w[u] = 0.0;
  double diag = r.dpos[i] >= 0 ? static_cast<double>(val[r.dpos[i]]) : 0.0;
  for (Index k = r.ptr[i]; k < r.ptr[i + 1]; ++k) {
    const Index j = r.col[k];
    if (j == i) continue;
    const double a = static_cast<double>(val[k]);
    if (r.cf[j] == kCoarse) {
      const Index u = find_column(list, nt, r.cidx[j]);
      if (u >= 0) {
        w[u] += a;
      } else {
        diag += a;
      }
    } else if (r.strong[k]) {
      // â_jl: the couplings of row j of sign opposite to a_jj.
      const bool neg = r.dpos[j] >= 0 && val[r.dpos[j]] < T(0);
      const Index at = find_entry(r.ptr, r.col, j, i);
      double a_ji = 0.0;
      if (at >= 0) {
        const T v = val[at];
        if (neg ? v > T(0) : v < T(0)) a_ji = static_cast<double>(v);
      }
      double sum = 0;
      for (Index l = r.ptr[j]; l < r.ptr[j + 1]; ++l) {
        const Index m = r.col[l];
        if (m == j || r.cf[m] != kCoarse) continue;
        const T v = val[l];
        if (!(neg ? v > T(0) : v < T(0))) continue;
        if (find_column(list, nt, r.cidx[m]) >= 0) sum += static_cast<double>(v);
      }
      sum += a_ji;
      if (sum == 0) {
        diag += a;
        continue;
      }
      const double d = a / sum;
      for (Index l = r.ptr[j]; l < r.ptr[j + 1]; ++l) {
        const Index m = r.col[l];
        if (m == j || r.cf[m] != kCoarse) continue;
        const T v = val[l];
        if (!(neg ? v > T(0) : v < T(0))) continue;
        const Index u = find_column(list, nt, r.cidx[m]);
        if (u >= 0) w[u] += d * static_cast<double>(v);
      }
      diag += d * a_ji;
    } else {
      diag += a;
    }
  }
  if (diag == 0) return 0;
  for (Index u = 0; u < nt; ++u) w[u] = -w[u] / diag;
  return nt;
}

// Direct weights of F row i (the host's direct_weights with use = strong C).
template <class T>
__device__ Index direct_row(const RowArgs& r, const T* __restrict__ val, Index i) {
  const Index base = r.off[i];
  double* w = r.w + base;
  const double aii = r.dpos[i] >= 0 ? static_cast<double>(val[r.dpos[i]]) : 0.0;
  const double s = aii < 0 ? -1.0 : 1.0;
  double neg_all = 0, pos_all = 0, neg_c = 0, pos_c = 0;
  bool any = false;
  for (Index k = r.ptr[i]; k < r.ptr[i + 1]; ++k) {
    const Index j = r.col[k];
    if (j == i) continue;
    const double v = s * static_cast<double>(val[k]);
    const bool interp = r.strong[k] && r.cf[j] == kCoarse;
    any |= interp;
    if (v < 0) {
      neg_all += v;
      if (interp) neg_c += v;
    } else {
      pos_all += v;
      if (interp) pos_c += v;
    }
  }
  if (!any) return 0;
  double diag = s * aii;
  if (neg_c == 0) diag += neg_all;
  if (pos_c == 0) diag += pos_all;
  if (diag == 0) return 0;
  const double alpha = neg_c != 0 ? -neg_all / (neg_c * diag) : 0.0;
  const double beta = pos_c != 0 ? -pos_all / (pos_c * diag) : 0.0;
  Index u = 0;  // the candidates are these columns, in this order
  for (Index k = r.ptr[i]; k < r.ptr[i + 1]; ++k) {
    const Index j = r.col[k];
    if (j == i || !(r.strong[k] && r.cf[j] == kCoarse)) continue;
    const double v = s * static_cast<double>(val[k]);
    w[u++] = v * (v < 0 ? alpha : beta);
  }
  return u;
}

template <class T>
__global__ void weight_rows(RowArgs r, const T* __restrict__ val, bool distance_two) {
  const Index i = global_id();
  if (i >= r.n) return;
  const Index base = r.off[i];
  if (r.cf[i] == kCoarse) {
    r.cand[base] = r.cidx[i];
    r.w[base] = 1.0;
    r.len[i] = 1;
    return;
  }
  if (skipped(r.skip, i)) {
    r.len[i] = 0;
    return;
  }
  const Index m = distance_two ? extended_i_row(r, val, i) : direct_row(r, val, i);
  r.len[i] = truncate_row(r.cand + base, r.w + base, m, r.trunc_factor, r.max_elements);
}

}  // namespace

template <class T, class V>
void device_interpolation(const DeviceCsrView<T>& A, const DeviceStrength& S,
                          const DeviceSplitting& split, Interpolator kind,
                          const classical::Truncation& trunc, DeviceArray<Index>& ptr,
                          DeviceArray<Index>& col, DeviceArray<V>& val, const uint8_t* skip) {
  if (kind != Interpolator::kD1 && kind != Interpolator::kD2) {
    throw NotSupported("device classical setup: only the D1 and D2 interpolators are built on "
                       "the GPU; use the host setup for MULTIPASS and D2_TWO_STAGE");
  }
  const bool d2 = kind == Interpolator::kD2;
  const Index n = A.rows;
  ptr.resize(static_cast<std::size_t>(n) + 1);
  if (n == 0) {
    check(cudaMemsetAsync(ptr.data(), 0, sizeof(Index)), "cudaMemsetAsync (interpolation)");
    col.resize(0);
    val.resize(0);
    return;
  }
  DeviceArray<Index> off(static_cast<std::size_t>(n) + 1), count(n), len(n);
  row_bounds<<<blocks(n), kBlock>>>(n, A.ptr, A.col, S.strong.data(), split.cf.data(),
                                    S.depends.data(), d2, skip, off.data());
  check_launch("row_bounds");
  const Index m = candidate_offsets(off.data(), n, "the interpolation");
  DeviceArray<Index> cand(m > 0 ? m : 1);
  DeviceArray<double> w(m > 0 ? m : 1);
  gather_candidates<<<blocks(n), kBlock>>>(n, A.ptr, A.col, S.strong.data(), split.cf.data(),
                                           split.coarse_index.data(), off.data(), d2, skip,
                                           cand.data(), count.data());
  check_launch("gather_candidates");
  const RowArgs args{n,
                     A.ptr,
                     A.col,
                     S.strong.data(),
                     S.diag_pos.data(),
                     split.cf.data(),
                     split.coarse_index.data(),
                     off.data(),
                     count.data(),
                     cand.data(),
                     w.data(),
                     len.data(),
                     trunc.factor,
                     trunc.max_elements,
                     skip};
  weight_rows<T><<<blocks(n), kBlock>>>(args, A.val, d2);
  check_launch("weight_rows");
  pack_weighted_rows(n, off.data(), cand.data(), w.data(), len.data(), ptr, col, val);
}

#define JAXAMG_INTERPOLATION(T, V)                                                           \
  template void device_interpolation<T, V>(const DeviceCsrView<T>&, const DeviceStrength&,     \
                                           const DeviceSplitting&, Interpolator,               \
                                           const classical::Truncation&, DeviceArray<Index>&,  \
                                           DeviceArray<Index>&, DeviceArray<V>&, const uint8_t*);
JAXAMG_INTERPOLATION(float, float)
JAXAMG_INTERPOLATION(float, double)
JAXAMG_INTERPOLATION(double, double)
#undef JAXAMG_INTERPOLATION

}  // namespace jaxamg::cuda
