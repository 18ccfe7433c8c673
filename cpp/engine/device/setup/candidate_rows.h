// Rows of candidate columns, the scratch form of the classical setup steps
// that collect a set per row (the interpolation set Ĉ_i, the distance-two
// strength of aggressive coarsening): each row gets a segment sized by an
// upper bound on its candidates, and its own thread removes the repeats
// (frequent: a point reaches most distance-two neighbours several times)
// as it collects them. A segment of at most kShortRow slots is kept as a
// sorted list (insert_candidate); a longer one is used as an
// open-addressing hash set and compacted to the sorted distinct columns at
// the front (hash_candidate, compact_candidates). On 3-D Poisson 256^3 a
// CUB segmented sort of every row's raw candidates cost more than the rest
// of the setup; hashing every row cost the finest level's short rows 30 %
// more than the sorted lists.
#pragma once
#include <climits>
#include <string>

#include "backend/cuda/device_array.h"
#include "core/types.h"

namespace jaxamg::cuda {

// An unused slot of a segment: sorts after every column.
constexpr Index kNoCandidate = INT_MAX;

// Segments up to this many slots are kept as sorted lists.
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

// Collects one row's candidates into its segment of cap slots: a sorted
// list or a hash set (see the file comment); finish() returns the number of
// distinct columns, sorted at the front.
struct CandidateRow {
  Index* seg;
  Index cap;
  Index m = 0;
  __device__ CandidateRow(Index* s, Index c) : seg(s), cap(c) {
    if (cap > kShortRow) {
      for (Index q = 0; q < cap; ++q) seg[q] = kNoCandidate;
    }
  }
  __device__ void add(Index c);
  __device__ Index finish();
};

// Adds c to the hash set in seg[0..cap) (empty slots: kNoCandidate; there
// is room for every distinct candidate of the row).
__device__ inline void hash_candidate(Index* seg, Index cap, Index c) {
  Index h = static_cast<Index>((static_cast<unsigned>(c) * 2654435761u) % static_cast<unsigned>(cap));
  for (;;) {
    const Index v = seg[h];
    if (v == c) return;
    if (v == kNoCandidate) {
      seg[h] = c;
      return;
    }
    h = h + 1 == cap ? 0 : h + 1;
  }
}

// Moves the set's entries to seg[0..m) in ascending order (the rest of the
// segment is left kNoCandidate); returns m. Slot q is emptied before the
// sorted prefix, which never reaches past q, can grow into it.
__device__ inline Index compact_candidates(Index* seg, Index cap) {
  Index m = 0;
  for (Index q = 0; q < cap; ++q) {
    const Index c = seg[q];
    if (c == kNoCandidate) continue;
    seg[q] = kNoCandidate;
    Index p = m;
    for (; p > 0 && seg[p - 1] > c; --p) seg[p] = seg[p - 1];
    seg[p] = c;
    ++m;
  }
  return m;
}

__device__ inline void CandidateRow::add(Index c) {
  if (cap > kShortRow) {
    hash_candidate(seg, cap, c);
  } else {
    insert_candidate(seg, m, c);
  }
}

__device__ inline Index CandidateRow::finish() {
  return cap > kShortRow ? compact_candidates(seg, cap) : m;
}
#endif

// off[0..n) holds each row's bound on entry; on return off[0..n] holds the
// segment offsets and the total is returned. Throws SetupError naming
// `what` when the total exceeds 32-bit offsets.
Index candidate_offsets(Index* off, Index n, const std::string& what);

// Packs the first count[i] entries of every segment into CSR columns; ptr
// (n + 1) gets the offsets. Returns the number of entries.
Index pack_candidate_rows(Index n, const Index* off, const Index* cand, const Index* count,
                          DeviceArray<Index>& ptr, DeviceArray<Index>& col);

// P's CSR arrays from rows of (column, weight) pairs: row i's first len[i]
// entries of its segment at off[i] (weights in double, stored as V).
template <class V>
void pack_weighted_rows(Index n, const Index* off, const Index* cand, const double* w,
                        const Index* len, DeviceArray<Index>& ptr, DeviceArray<Index>& col,
                        DeviceArray<V>& val);

}  // namespace jaxamg::cuda
