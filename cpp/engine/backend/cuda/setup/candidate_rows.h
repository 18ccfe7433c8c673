// Rows of candidate columns, the scratch form of the classical setup steps
// that collect a set per row (the interpolation set Ĉ_i, the distance-two
// strength of aggressive coarsening): each row gets a segment sized by an
// upper bound, is filled with repeats, then sorted and made unique in place.
#pragma once
#include <climits>
#include <string>

#include "backend/cuda/device_array.h"
#include "core/types.h"

namespace jaxamg::cuda {

// An unused slot of a segment: sorts after every column.
constexpr Index kNoCandidate = INT_MAX;

// off[0..n) holds each row's bound on entry; on return off[0..n] holds the
// segment offsets and the total is returned. Throws SetupError naming
// `what` when the total exceeds 32-bit offsets.
Index candidate_offsets(Index* off, Index n, const std::string& what);

// Sorts every segment [off[i], off[i + 1]) of cand (m slots), removes
// repeats and kNoCandidate slots in place: count[i] = the distinct columns,
// at the front of the segment.
void unique_candidate_rows(Index n, const Index* off, Index m, DeviceArray<Index>& cand,
                           Index* count);

// Packs the first count[i] entries of every segment into CSR columns; ptr
// (n + 1) gets the offsets. Returns the number of entries.
Index pack_candidate_rows(Index n, const Index* off, const Index* cand, const Index* count,
                          DeviceArray<Index>& ptr, DeviceArray<Index>& col);

}  // namespace jaxamg::cuda
