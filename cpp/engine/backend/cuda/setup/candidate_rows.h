// Rows of candidate columns, the scratch form of the classical setup steps
// that collect a set per row (the interpolation set Ĉ_i, the distance-two
// strength of aggressive coarsening): each row gets a segment sized by an
// upper bound. A row whose bound is at most kShortRow is kept sorted and
// unique as it is filled (insert_candidate, by its own thread); a longer
// one is filled with repeats, then sorted per segment (CUB) and made unique
// in place. A global segmented sort of every row cost more than all the
// rest of a classical setup at 256^3.
#pragma once
#include <climits>
#include <string>

#include "backend/cuda/device_array.h"
#include "core/types.h"

namespace jaxamg::cuda {

// An unused slot of a segment: sorts after every column.
constexpr Index kNoCandidate = INT_MAX;

// Rows with at most this many candidate slots are deduplicated as filled.
constexpr Index kShortRow = 64;

#if defined(__CUDACC__)
// Adds c to the sorted, repeat-free seg[0..m) (room for one more).
__device__ inline void insert_candidate(Index* seg, Index& m, Index c) {
  Index p = m;
  while (p > 0 && seg[p - 1] > c) --p;
  if (p > 0 && seg[p - 1] == c) return;
  for (Index q = m; q > p; --q) seg[q] = seg[q - 1];
  seg[p] = c;
  ++m;
}
#endif

// off[0..n) holds each row's bound on entry; on return off[0..n] holds the
// segment offsets and the total is returned. Throws SetupError naming
// `what` when the total exceeds 32-bit offsets.
Index candidate_offsets(Index* off, Index n, const std::string& what);

// Sorts every long segment [off[i], off[i + 1]) of cand (m slots in all;
// long: off[i + 1] - off[i] > kShortRow), removes repeats and kNoCandidate
// slots in place: count[i] = the distinct columns, at the front of the
// segment. Short rows are left as they are (count[i] set by their filler).
void unique_candidate_rows(Index n, const Index* off, Index m, DeviceArray<Index>& cand,
                           Index* count);

// Packs the first count[i] entries of every segment into CSR columns; ptr
// (n + 1) gets the offsets. Returns the number of entries.
Index pack_candidate_rows(Index n, const Index* off, const Index* cand, const Index* count,
                          DeviceArray<Index>& ptr, DeviceArray<Index>& col);

}  // namespace jaxamg::cuda
