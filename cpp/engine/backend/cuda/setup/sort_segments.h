// Sorting and segment primitives shared by the device setup steps that group
// entries by a key (collapsed graph, Galerkin pattern, aggregate members).
// Sorting is CUB's stable radix sort, so entries with equal keys keep their
// input order: a sum over a segment then adds in the order the host's serial
// loop adds, and the result is bitwise the host's.
#pragma once
#include <cstdint>

#include "backend/cuda/device_array.h"
#include "core/types.h"

namespace jaxamg::cuda {

using Key = unsigned long long;

// Bits needed for keys in [0, max_key].
int key_bits(Key max_key);

// Sorts (keys, values) by key, stably, on the low `bits` bits; m pairs.
void stable_sort_pairs(DeviceArray<Key>& keys, DeviceArray<Index>& values, Index m, int bits);
void stable_sort_pairs(DeviceArray<Index>& keys, DeviceArray<Index>& values, Index m, int bits);

// values[k] = k for k < m.
void iota(Index* values, Index m);

// ptr[0..n] = exclusive prefix sum of counts[0..n) (ptr[n] = total); counts
// and ptr may alias. Returns the total (a host read).
Index exclusive_scan(const Index* counts, Index* ptr, Index n);

// The runs of equal keys among the first m sorted keys (m may be 0).
struct KeySegments {
  Index count = 0;
  DeviceArray<Index> start;  // count + 1: first position of each run, then m
  DeviceArray<Key> key;      // count: the key of each run
};
KeySegments key_segments(const Key* sorted, Index m);

// CSR row pointers (rows + 1) of the runs whose keys are row * cols + col,
// and their column indices (count).
void segment_rows(const KeySegments& seg, Key cols, Index rows, DeviceArray<Index>& ptr,
                  DeviceArray<Index>& col);

}  // namespace jaxamg::cuda
