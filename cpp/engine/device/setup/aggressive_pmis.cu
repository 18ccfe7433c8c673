// Aggressive PMIS on the device (host: amg/classical/aggressive.cc): a first
// PMIS, the distance-two strength graph of its C points (c depends on c' if
// c' is in S_c or in S_m for some m in S_c), PMIS on that graph with a second
// seed, and the first-stage C points that lose become F. The graph's rows
// are collected as candidate rows (candidate_rows.h); PMIS does not depend
// on their order, so the splitting is the host's.
#include "amg/classical/splitting.h"
#include "backend/cuda/setup/launch.cuh"
#include "device/setup/candidate_rows.h"
#include "device/setup/device_classical.h"

namespace jaxamg::cuda {

namespace {

using classical::kCoarse;
using classical::kFine;

// Row r (C point c): one slot per strong dependence m of c and per strong
// dependence of each such m.
__global__ void distance_two_bounds(Index n1, const Index* __restrict__ points,
                                    const Index* __restrict__ ptr, const Index* __restrict__ col,
                                    const uint8_t* __restrict__ strong,
                                    const Index* __restrict__ depends, Index* __restrict__ bound) {
  const Index r = global_id();
  if (r >= n1) return;
  const Index c = points[r];
  Index b = 0;
  for (Index k = ptr[c]; k < ptr[c + 1]; ++k) {
    if (strong[k]) b += 1 + depends[col[k]];
  }
  bound[r] = b;
}

__global__ void distance_two_candidates(Index n1, const Index* __restrict__ points,
                                        const Index* __restrict__ ptr,
                                        const Index* __restrict__ col,
                                        const uint8_t* __restrict__ strong,
                                        const Index* __restrict__ cidx,
                                        const Index* __restrict__ off, Index* __restrict__ cand,
                                        Index* __restrict__ count) {
  const Index r = global_id();
  if (r >= n1) return;
  const Index c = points[r];
  // Repeats are frequent: the row collects its candidates without them.
  CandidateRow row(cand + off[r], off[r + 1] - off[r]);
  auto add = [&](Index q) { row.add(q); };
  for (Index k = ptr[c]; k < ptr[c + 1]; ++k) {
    if (!strong[k]) continue;
    const Index m = col[k];
    const Index q = cidx[m];
    if (q >= 0 && q != r) add(q);
    for (Index l = ptr[m]; l < ptr[m + 1]; ++l) {
      if (!strong[l]) continue;
      const Index q2 = cidx[col[l]];
      if (q2 >= 0 && q2 != r) add(q2);
    }
  }
  count[r] = row.finish();
}

__global__ void count_influences(Index nnz, const Index* __restrict__ col,
                                 Index* __restrict__ influences) {
  const Index k = global_id();
  if (k < nnz) atomicAdd(influences + col[k], 1);
}

__global__ void demote_losers(Index n1, const Index* __restrict__ points,
                              const int8_t* __restrict__ cf2, int8_t* __restrict__ cf) {
  const Index r = global_id();
  if (r < n1 && cf2[r] != kCoarse) cf[points[r]] = kFine;
}

__global__ void list_points(Index n, const Index* __restrict__ cidx, Index* __restrict__ points) {
  const Index i = global_id();
  if (i < n && cidx[i] >= 0) points[cidx[i]] = i;
}

}  // namespace

void device_list_points(const DeviceSplitting& split, Index n, DeviceArray<Index>& points) {
  points.resize(split.n_coarse > 0 ? split.n_coarse : 1);
  if (n == 0) return;
  list_points<<<blocks(n), kBlock>>>(n, split.coarse_index.data(), points.data());
  check_launch("list_points");
}

template <class T>
DeviceSplitting device_aggressive_pmis(const DeviceCsrView<T>& A, const DeviceStrength& S,
                                       uint64_t seed, DeviceSplitting* first_stage) {
  const Index n = A.rows;
  DeviceSplitting first = device_pmis(A, S, seed);
  const Index n1 = first.n_coarse;
  DeviceSplitting out;
  out.cf.resize(n);
  if (n > 0) {
    check(cudaMemcpyAsync(out.cf.data(), first.cf.data(), n, cudaMemcpyDeviceToDevice),
          "cudaMemcpyAsync (aggressive splitting)");
  }
  if (n1 > 0) {
    DeviceArray<Index> points, off(static_cast<std::size_t>(n1) + 1), count(n1);
    device_list_points(first, n, points);
    distance_two_bounds<<<blocks(n1), kBlock>>>(n1, points.data(), A.ptr, A.col, S.strong.data(),
                                                S.depends.data(), off.data());
    check_launch("distance_two_bounds");
    const Index m = candidate_offsets(off.data(), n1, "the distance-two strength graph");
    DeviceArray<Index> cand(m > 0 ? m : 1);
    distance_two_candidates<<<blocks(n1), kBlock>>>(n1, points.data(), A.ptr, A.col,
                                                    S.strong.data(), first.coarse_index.data(),
                                                    off.data(), cand.data(), count.data());
    check_launch("distance_two_candidates");
    // The graph S2 among the first-stage C points: every entry strong.
    DeviceArray<Index> ptr2, col2;
    const Index nnz2 = pack_candidate_rows(n1, off.data(), cand.data(), count.data(), ptr2, col2);
    DeviceStrength S2;
    S2.depends = std::move(count);
    S2.influences.resize(n1);
    check(cudaMemsetAsync(S2.influences.data(), 0, n1 * sizeof(Index)),
          "cudaMemsetAsync (aggressive splitting)");
    S2.strong.resize(nnz2 > 0 ? nnz2 : 1);
    check(cudaMemsetAsync(S2.strong.data(), 1, S2.strong.size()),
          "cudaMemsetAsync (aggressive splitting)");
    if (nnz2 > 0) {
      count_influences<<<blocks(nnz2), kBlock>>>(nnz2, col2.data(), S2.influences.data());
      check_launch("count_influences");
    }
    const DeviceCsrView<T> G{n1, nnz2, ptr2.data(), col2.data(), nullptr};
    // A C point with no other C point within distance two stays C; the
    // second stage draws its ties from another stream.
    const DeviceSplitting second = device_pmis(G, S2, seed ^ 0xa5a5a5a5ull, true);
    demote_losers<<<blocks(n1), kBlock>>>(n1, points.data(), second.cf.data(), out.cf.data());
    check_launch("demote_losers");
  }
  device_number_coarse(n, out);
  if (first_stage) *first_stage = std::move(first);
  return out;
}

template DeviceSplitting device_aggressive_pmis(const DeviceCsrView<float>&,
                                                const DeviceStrength&, uint64_t,
                                                DeviceSplitting*);
template DeviceSplitting device_aggressive_pmis(const DeviceCsrView<double>&,
                                                const DeviceStrength&, uint64_t,
                                                DeviceSplitting*);

}  // namespace jaxamg::cuda
