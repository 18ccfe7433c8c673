// Device counterparts of the classical setup's steps (amg/classical), each
// mirroring its host function so that the device splitting and
// interpolation equal the host's entry for entry:
//   device_strength      <-> strength_graph (the mask and the counts)
//   device_pmis          <-> pmis, coarse_numbering
//   device_aggressive_pmis <-> aggressive_splitting (PMIS stages)
//   device_interpolation <-> direct_interpolation (D1),
//                            extended_i_interpolation (D2), truncate_row
//   device_two_stage_interpolation <-> two_stage_interpolation (to rounding:
//                            the host truncates the first stage's rows in
//                            the order it builds them, this file in column
//                            order, so the rescaled weights may differ in
//                            the last bit)
// All work runs on the default stream; a launcher synchronises only where it
// reads a count back.
#pragma once
#include <cstdint>

#include "amg/classical/classical_coarsening.h"
#include "backend/cuda/device_array.h"
#include "device/setup/device_aggregates.h"

namespace jaxamg::cuda {

struct DeviceStrength {
  DeviceArray<Index> diag_pos;    // rows: position of a_ii in A, -1 where absent
  DeviceArray<uint8_t> strong;    // nnz: 1 where the entry is a strong dependence
  DeviceArray<Index> depends;     // rows: |S_i|, the points i strongly depends on
  DeviceArray<Index> influences;  // rows: |S^T_i|, the points that depend on i
};

// The strength mask of A (square, canonical pattern) and its counts.
template <class T>
DeviceStrength device_strength(const DeviceCsrView<T>& A, const classical::StrengthParams& p);

struct DeviceSplitting {
  Index n_coarse = 0;
  DeviceArray<int8_t> cf;           // classical::kCoarse / kFine per point
  DeviceArray<Index> coarse_index;  // coarse number of each C point, -1 for F
};

// PMIS on the strength graph of A (A's pattern, S's mask) with the host's
// weights and tie-breaking (point_hash with `seed`): the host's splitting.
// Points with no strong connection become F, or C with `isolated_coarse`
// (the second stage of aggressive coarsening).
template <class T>
DeviceSplitting device_pmis(const DeviceCsrView<T>& A, const DeviceStrength& S, uint64_t seed,
                            bool isolated_coarse = false);

// Fills split.coarse_index (n + 1 entries, -1 for F) and n_coarse from
// split.cf: C points numbered in point order (coarse_numbering).
void device_number_coarse(Index n, DeviceSplitting& split);

// points[c] = the point with coarse index c (the C points in order).
void device_list_points(const DeviceSplitting& split, Index n, DeviceArray<Index>& points);

// Aggressive PMIS: PMIS, then PMIS (seed ^ 0xa5a5a5a5) on the distance-two
// strength graph of its C points; the first-stage splitting goes to
// `first_stage` when it is not null.
template <class T>
DeviceSplitting device_aggressive_pmis(const DeviceCsrView<T>& A, const DeviceStrength& S,
                                       uint64_t seed, DeviceSplitting* first_stage);

// P (A.rows x split.n_coarse) for the D1 or D2 interpolator with the
// truncation applied to every F row; C rows are identity rows, F rows with
// skip[i] != 0 (skip may be null) empty rows. The weights are computed in
// double and stored as V (T, or double for an intermediate P). Throws
// NotSupported for other interpolators.
template <class T, class V = T>
void device_interpolation(const DeviceCsrView<T>& A, const DeviceStrength& S,
                          const DeviceSplitting& split, classical::Interpolator kind,
                          const classical::Truncation& trunc, DeviceArray<Index>& ptr,
                          DeviceArray<Index>& col, DeviceArray<V>& val,
                          const uint8_t* skip = nullptr);

// D2_TWO_STAGE on an aggressive splitting: P = P1 P2 formed row by row with
// the truncation of P1's rows and of the product (two_stage_interpolation).
template <class T>
void device_two_stage_interpolation(const DeviceCsrView<T>& A, const DeviceStrength& S,
                                    const DeviceSplitting& first, const DeviceSplitting& split,
                                    const classical::Truncation& trunc, DeviceArray<Index>& ptr,
                                    DeviceArray<Index>& col, DeviceArray<T>& val);

}  // namespace jaxamg::cuda
