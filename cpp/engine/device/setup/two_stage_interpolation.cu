// D2_TWO_STAGE on the device (host: two_stage_interpolation in
// interpolation_extended.cc). With C1 the first-stage and C2 the final C
// points: P1 is extended+i to C1 (truncated rows, weights kept in double),
// P2 the extended+i rows of C1 \ C2 to C2 (identity on C2), and row i of P
// is the row of P2 for i in C1 \ C2, else the product of P1's row with the
// rows of P2 it names, merged in order of appearance, sorted and truncated
// again. One thread per row; compiled without fused multiply-adds.
#include "amg/classical/splitting.h"
#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"
#include "device/setup/candidate_rows.h"
#include "device/setup/device_classical.h"
#include "device/setup/truncate_row.cuh"

namespace jaxamg::cuda {

namespace {

using classical::Interpolator;
using classical::kCoarse;

struct ProductArgs {
  Index n;
  const int8_t* cf;   // final splitting
  const Index* cidx;  // final coarse numbering
  const int8_t* cf1;  // first-stage splitting
  const Index* points1;
  const Index *p1_ptr, *p1_col;
  const double* p1_val;
  const Index *p2_ptr, *p2_col;  // P2 by fine row (empty outside C1)
  const Index* off;
  Index* cand;
  double* w;
  Index* len;
  double trunc_factor;
  int max_elements;
};

__global__ void product_bounds(ProductArgs a, Index* __restrict__ bound) {
  const Index i = global_id();
  if (i >= a.n) return;
  Index b = 1;
  if (a.cf[i] != kCoarse) {
    if (a.cf1[i] == kCoarse) {
      b = a.p2_ptr[i + 1] - a.p2_ptr[i];
    } else {
      b = 0;
      for (Index q = a.p1_ptr[i]; q < a.p1_ptr[i + 1]; ++q) {
        const Index c = a.points1[a.p1_col[q]];
        b += a.p2_ptr[c + 1] - a.p2_ptr[c];
      }
    }
  }
  bound[i] = b;
}

template <class T>
__global__ void product_rows(ProductArgs a, const T* __restrict__ p2_val) {
  const Index i = global_id();
  if (i >= a.n) return;
  const Index base = a.off[i];
  Index* col = a.cand + base;
  double* w = a.w + base;
  if (a.cf[i] == kCoarse) {
    col[0] = a.cidx[i];
    w[0] = 1.0;
    a.len[i] = 1;
    return;
  }
  Index m = 0;
  if (a.cf1[i] == kCoarse) {
    for (Index t = a.p2_ptr[i]; t < a.p2_ptr[i + 1]; ++t) {
      col[m] = a.p2_col[t];
      w[m++] = static_cast<double>(p2_val[t]);
    }
  } else {
    for (Index q = a.p1_ptr[i]; q < a.p1_ptr[i + 1]; ++q) {
      const double wq = a.p1_val[q];
      const Index c = a.points1[a.p1_col[q]];
      for (Index t = a.p2_ptr[c]; t < a.p2_ptr[c + 1]; ++t) {
        const Index j = a.p2_col[t];
        const double v = wq * static_cast<double>(p2_val[t]);
        Index u = 0;
        while (u < m && col[u] != j) ++u;
        if (u == m) {
          col[m] = j;
          w[m++] = v;
        } else {
          w[u] += v;
        }
      }
    }
  }
  // Sorted by column (rows are short), then truncated as every row is.
  for (Index u = 1; u < m; ++u) {
    const Index cu = col[u];
    const double wu = w[u];
    Index v = u;
    for (; v > 0 && col[v - 1] > cu; --v) {
      col[v] = col[v - 1];
      w[v] = w[v - 1];
    }
    col[v] = cu;
    w[v] = wu;
  }
  a.len[i] = truncate_row(col, w, m, a.trunc_factor, a.max_elements);
}

__global__ void outside_first_stage(Index n, const int8_t* __restrict__ cf1,
                                    uint8_t* __restrict__ skip) {
  const Index i = global_id();
  if (i < n) skip[i] = cf1[i] != kCoarse;
}

}  // namespace

template <class T>
void device_two_stage_interpolation(const DeviceCsrView<T>& A, const DeviceStrength& S,
                                    const DeviceSplitting& first, const DeviceSplitting& split,
                                    const classical::Truncation& trunc, DeviceArray<Index>& ptr,
                                    DeviceArray<Index>& col, DeviceArray<T>& val) {
  const Index n = A.rows;
  // P1 in double (the host multiplies its rows before rounding).
  DeviceArray<Index> p1_ptr, p1_col;
  DeviceArray<double> p1_val;
  device_interpolation<T, double>(A, S, first, Interpolator::kD2, trunc, p1_ptr, p1_col, p1_val);
  // P2 on the rows of C1 only, stored as T (the host keeps P2 as a matrix).
  DeviceArray<uint8_t> skip(n > 0 ? n : 1);
  if (n > 0) {
    outside_first_stage<<<blocks(n), kBlock>>>(n, first.cf.data(), skip.data());
    check_launch("outside_first_stage");
  }
  DeviceArray<Index> p2_ptr, p2_col;
  DeviceArray<T> p2_val;
  device_interpolation<T, T>(A, S, split, Interpolator::kD2, trunc, p2_ptr, p2_col, p2_val,
                             skip.data());
  skip = DeviceArray<uint8_t>();
  DeviceArray<Index> points1;
  device_list_points(first, n, points1);

  DeviceArray<Index> off(static_cast<std::size_t>(n) + 1), len(n > 0 ? n : 1);
  ProductArgs a{n,
                split.cf.data(),
                split.coarse_index.data(),
                first.cf.data(),
                points1.data(),
                p1_ptr.data(),
                p1_col.data(),
                p1_val.data(),
                p2_ptr.data(),
                p2_col.data(),
                off.data(),
                nullptr,
                nullptr,
                len.data(),
                trunc.factor,
                trunc.max_elements};
  if (n > 0) {
    product_bounds<<<blocks(n), kBlock>>>(a, off.data());
    check_launch("product_bounds");
  }
  const Index m = candidate_offsets(off.data(), n, "the two-stage interpolation");
  DeviceArray<Index> cand(m > 0 ? m : 1);
  DeviceArray<double> w(m > 0 ? m : 1);
  a.cand = cand.data();
  a.w = w.data();
  if (n > 0) {
    product_rows<T><<<blocks(n), kBlock>>>(a, p2_val.data());
    check_launch("product_rows");
  }
  pack_weighted_rows(n, off.data(), cand.data(), w.data(), len.data(), ptr, col, val);
}

template void device_two_stage_interpolation(const DeviceCsrView<float>&, const DeviceStrength&,
                                             const DeviceSplitting&, const DeviceSplitting&,
                                             const classical::Truncation&, DeviceArray<Index>&,
                                             DeviceArray<Index>&, DeviceArray<float>&);
template void device_two_stage_interpolation(const DeviceCsrView<double>&, const DeviceStrength&,
                                             const DeviceSplitting&, const DeviceSplitting&,
                                             const classical::Truncation&, DeviceArray<Index>&,
                                             DeviceArray<Index>&, DeviceArray<double>&);

}  // namespace jaxamg::cuda
