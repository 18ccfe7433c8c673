// Device handshake matching and leftover merging (host:
// amg/aggregation/pairwise_matching.cc). Both are parallel per node on the
// host already and order-independent, so one thread per node gives the
// host's labels exactly: a round is a pick kernel and a pair kernel, and the
// host reads one pair of counters per round for the stop test. The host's
// "each aggregate keeps its heaviest proposal" is a maximum under a strict
// total order (weight, edge hash, end points), found by three atomicMax
// passes over the order's components: the result does not depend on the
// order of the atomics.
#include <cub/block/block_reduce.cuh>

#include <cmath>

#include "backend/cuda/setup/launch.cuh"
#include "device/setup/device_aggregates.h"

namespace jaxamg::cuda {

namespace {

using U64 = unsigned long long;

__device__ U64 edge_hash(Index a, Index b) {
  const U64 lo = static_cast<unsigned>(a < b ? a : b);
  const U64 hi = static_cast<unsigned>(a < b ? b : a);
  U64 z = (lo << 32 | hi) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__device__ bool heavier(double w1, Index a1, Index b1, double w2, Index a2, Index b2) {
  if (w1 != w2) return w1 > w2;
  const U64 h1 = edge_hash(a1, b1), h2 = edge_hash(a2, b2);
  if (h1 != h2) return h1 > h2;
  const Index lo1 = a1 < b1 ? a1 : b1, lo2 = a2 < b2 ? a2 : b2;
  if (lo1 != lo2) return lo1 > lo2;
  return (a1 < b1 ? b1 : a1) > (a2 < b2 ? b2 : a2);
}

// The strongest positive edge of i to a neighbour `eligible` accepts.
template <class Eligible>
__device__ Index strongest(const Index* ptr, const Index* adj, const double* w, Index i,
                           Eligible eligible, Index* pos) {
  Index best = -1, best_k = -1;
  for (Index k = ptr[i]; k < ptr[i + 1]; ++k) {
    const Index j = adj[k];
    const double wk = w[k];
    if (!(wk > 0) || !eligible(j)) continue;
    if (best < 0 || heavier(wk, i, j, w[best_k], i, best)) {
      best = j;
      best_k = k;
    }
  }
  *pos = best_k;
  return best;
}

// Adds each block's count of `flag` to *total (one atomic per block).
__device__ void block_count(int flag, int* total) {
  using Reduce = cub::BlockReduce<int, kBlock>;
  __shared__ typename Reduce::TempStorage temp;
  const int sum = Reduce(temp).Sum(flag);
  if (threadIdx.x == 0 && sum != 0) atomicAdd(total, sum);
}

__global__ void pick_kernel(Index n, const Index* ptr, const Index* adj, const double* w,
                            const Index* label, Index* pick, int* counters) {
  const Index i = global_id();
  int picked = 0;
  if (i < n) {
    Index pos;
    const Index j = label[i] >= 0
                        ? -1
                        : strongest(ptr, adj, w, i, [&](Index v) { return label[v] < 0; }, &pos);
    pick[i] = j;
    picked = j >= 0;
  }
  block_count(picked, &counters[0]);
}

__global__ void pair_kernel(Index n, const Index* pick, Index* label, int* counters) {
  const Index i = global_id();
  int paired = 0;
  if (i < n) {
    const Index j = pick[i];
    if (j > i && pick[j] == i) {
      label[i] = i;
      label[j] = i;
      paired = 2;
    }
  }
  block_count(paired, &counters[1]);
}

__device__ U64 weight_bits(double w) { return static_cast<U64>(__double_as_longlong(w)); }
__device__ U64 end_points(Index a, Index b) {
  const U64 lo = static_cast<unsigned>(a < b ? a : b), hi = static_cast<unsigned>(a < b ? b : a);
  return lo << 32 | hi;
}

// Merge step 1: every leftover proposes to its strongest neighbour in an
// aggregate that is not full; the aggregate records the heaviest weight.
__global__ void propose_kernel(Index n, const Index* ptr, const Index* adj, const double* w,
                               const Index* label, const char* full, Index* choice, Index* target,
                               double* cw, U64* best_w) {
  const Index i = global_id();
  if (i >= n) return;
  choice[i] = -1;
  if (label[i] >= 0) return;
  Index pos;
  const Index j = strongest(
      ptr, adj, w, i, [&](Index v) { return label[v] >= 0 && !full[label[v]]; }, &pos);
  if (j < 0) return;
  choice[i] = j;
  target[i] = label[j];
  cw[i] = w[pos];
  // Positive doubles order as their bit patterns.
  atomicMax(&best_w[label[j]], weight_bits(w[pos]));
}

// Steps 2 and 3: among the proposals of the heaviest weight, the largest
// edge hash; among those, the largest end points.
__global__ void tie_hash_kernel(Index n, const Index* choice, const Index* target,
                                const double* cw, const U64* best_w, U64* best_h) {
  const Index i = global_id();
  if (i >= n || choice[i] < 0) return;
  const Index L = target[i];
  if (weight_bits(cw[i]) == best_w[L]) atomicMax(&best_h[L], edge_hash(i, choice[i]));
}

__global__ void tie_ends_kernel(Index n, const Index* choice, const Index* target,
                                const double* cw, const U64* best_w, const U64* best_h,
                                U64* best_e) {
  const Index i = global_id();
  if (i >= n || choice[i] < 0) return;
  const Index L = target[i];
  if (weight_bits(cw[i]) == best_w[L] && edge_hash(i, choice[i]) == best_h[L]) {
    atomicMax(&best_e[L], end_points(i, choice[i]));
  }
}

__global__ void accept_kernel(Index n, const Index* choice, const Index* target, const U64* best_e,
                              Index* label, char* full, int* counters) {
  const Index i = global_id();
  int accepted = 0;
  if (i < n && choice[i] >= 0 && end_points(i, choice[i]) == best_e[target[i]]) {
    // best_e names one edge, and its end i is a leftover: one winner per aggregate.
    full[target[i]] = 1;
    label[i] = target[i];
    accepted = 1;
  }
  block_count(accepted, &counters[0]);
}

__global__ void clear_best(Index n, const Index* choice, const Index* target, U64* best_w,
                           U64* best_h, U64* best_e) {
  const Index i = global_id();
  if (i >= n || choice[i] < 0) return;
  best_w[target[i]] = 0;
  best_h[target[i]] = 0;
  best_e[target[i]] = 0;
}

__global__ void label_leftovers(Index n, Index* label) {
  const Index i = global_id();
  if (i < n && label[i] < 0) label[i] = i;
}

void read_counters(const DeviceArray<int>& d, int* h) {
  check(cudaMemcpy(h, d.data(), 2 * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy (counters)");
}

void zero(void* p, std::size_t bytes) { check(cudaMemsetAsync(p, 0, bytes), "cudaMemsetAsync"); }

}  // namespace

void device_pairwise_labels(const DeviceGraph& g, const aggregation::MatchingOptions& opt,
                            DeviceArray<Index>& label) {
  const Index n = g.n;
  label.resize(n);
  if (n == 0) return;
  check(cudaMemsetAsync(label.data(), 0xff, n * sizeof(Index)), "cudaMemsetAsync (labels)");
  DeviceArray<Index> pick(n);
  DeviceArray<int> counters(2);
  int h[2];
  const double target = std::floor(opt.max_unassigned_fraction * n);
  Index unmatched = n;
  bool stuck = false;
  for (int round = 0; round < opt.max_iterations && unmatched > target && !stuck; ++round) {
    for (int phase = 0; phase < opt.handshaking_phases && !stuck; ++phase) {
      zero(counters.data(), 2 * sizeof(int));
      pick_kernel<<<blocks(n), kBlock>>>(n, g.ptr.data(), g.adj.data(), g.w.data(), label.data(),
                                         pick.data(), counters.data());
      check_launch("pick_kernel");
      pair_kernel<<<blocks(n), kBlock>>>(n, pick.data(), label.data(), counters.data());
      check_launch("pair_kernel");
      read_counters(counters, h);
      if (h[0] == 0) {
        stuck = true;  // every unmatched node is surrounded by matched ones
        break;
      }
      unmatched -= h[1];
    }
  }

  if (opt.merge_singletons && unmatched > 0) {
    DeviceArray<char> full(n);
    DeviceArray<Index> choice(n), tgt(n);
    DeviceArray<double> cw(n);
    DeviceArray<U64> best_w(n), best_h(n), best_e(n);
    zero(full.data(), n);
    for (auto* b : {&best_w, &best_h, &best_e}) zero(b->data(), n * sizeof(U64));
    Index singles = unmatched;
    for (int round = 0; round < opt.max_iterations && singles > 0; ++round) {
      zero(counters.data(), 2 * sizeof(int));
      propose_kernel<<<blocks(n), kBlock>>>(n, g.ptr.data(), g.adj.data(), g.w.data(),
                                            label.data(), full.data(), choice.data(), tgt.data(),
                                            cw.data(), best_w.data());
      check_launch("propose_kernel");
      tie_hash_kernel<<<blocks(n), kBlock>>>(n, choice.data(), tgt.data(), cw.data(),
                                             best_w.data(), best_h.data());
      check_launch("tie_hash_kernel");
      tie_ends_kernel<<<blocks(n), kBlock>>>(n, choice.data(), tgt.data(), cw.data(),
                                             best_w.data(), best_h.data(), best_e.data());
      check_launch("tie_ends_kernel");
      accept_kernel<<<blocks(n), kBlock>>>(n, choice.data(), tgt.data(), best_e.data(),
                                           label.data(), full.data(), counters.data());
      check_launch("accept_kernel");
      clear_best<<<blocks(n), kBlock>>>(n, choice.data(), tgt.data(), best_w.data(),
                                        best_h.data(), best_e.data());
      check_launch("clear_best");
      read_counters(counters, h);
      singles -= h[0];
      if (h[0] == 0) break;
    }
  }
  // Whatever is left is its own aggregate.
  label_leftovers<<<blocks(n), kBlock>>>(n, label.data());
  check_launch("label_leftovers");
}

}  // namespace jaxamg::cuda
