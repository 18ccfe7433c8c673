#include "amg/aggregation/pairwise_matching.h"

#include <cmath>
#include <cstdint>

namespace jaxamg::aggregation {

namespace {

constexpr Index kParallelMin = 4096;

// Fixed-seed 64-bit mix of the edge (lo, hi); the same from both ends.
std::uint64_t edge_hash(Index a, Index b) {
  const std::uint64_t lo = static_cast<std::uint32_t>(a < b ? a : b);
  const std::uint64_t hi = static_cast<std::uint32_t>(a < b ? b : a);
  std::uint64_t z = (lo << 32 | hi) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Strict total order on edges: weight, then hash, then the end points.
bool heavier(double w1, Index a1, Index b1, double w2, Index a2, Index b2) {
  if (w1 != w2) return w1 > w2;
  const std::uint64_t h1 = edge_hash(a1, b1), h2 = edge_hash(a2, b2);
  if (h1 != h2) return h1 > h2;
  const Index lo1 = a1 < b1 ? a1 : b1, lo2 = a2 < b2 ? a2 : b2;
  if (lo1 != lo2) return lo1 > lo2;
  return (a1 < b1 ? b1 : a1) > (a2 < b2 ? b2 : a2);
}

// The neighbour j of i with the heaviest positive edge among those `eligible`
// accepts; -1 if none. Returns the edge's position in *pos.
template <class Eligible>
Index strongest(const WeightGraph& g, Index i, Eligible&& eligible, Index* pos) {
  Index best = -1, best_k = -1;
  for (Index k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
    const Index j = g.adj[k];
    const double w = g.w[k];
    if (!(w > 0) || !eligible(j)) continue;
    if (best < 0 || heavier(w, i, j, g.w[best_k], i, best)) {
      best = j;
      best_k = k;
    }
  }
  if (pos) *pos = best_k;
  return best;
}

}  // namespace

Aggregates pairwise_aggregates(const WeightGraph& g, const MatchingOptions& opt) {
  const Index n = g.n;
  // label[i] < 0: unmatched; otherwise a node of i's aggregate that names it.
  std::vector<Index> label(n, -1);
  std::vector<Index> pick(n, -1);
  const double target = std::floor(opt.max_unassigned_fraction * n);
  Index unmatched = n;
  bool stuck = false;

  for (int round = 0; round < opt.max_iterations && unmatched > target && !stuck; ++round) {
    for (int phase = 0; phase < opt.handshaking_phases && !stuck; ++phase) {
      Index picks = 0;
#pragma omp parallel for schedule(static) reduction(+ : picks) if (n > kParallelMin)
      for (Index i = 0; i < n; ++i) {
        pick[i] = label[i] >= 0 ? -1
                                : strongest(g, i, [&](Index j) { return label[j] < 0; }, nullptr);
        picks += pick[i] >= 0;
      }
      if (picks == 0) {
        stuck = true;  // every unmatched node is surrounded by matched ones
        break;
      }
      Index paired = 0;
      // Only the smaller end of a mutual pick writes, so no two threads touch
      // the same node.
#pragma omp parallel for schedule(static) reduction(+ : paired) if (n > kParallelMin)
      for (Index i = 0; i < n; ++i) {
        const Index j = pick[i];
        if (j > i && pick[j] == i) {
          label[i] = i;
          label[j] = i;
          paired += 2;
        }
      }
      unmatched -= paired;
    }
  }

  if (opt.merge_singletons && unmatched > 0) {
    std::vector<Index> singles;
    for (Index i = 0; i < n; ++i)
      if (label[i] < 0) singles.push_back(i);
    std::vector<char> full(n, 0);           // by label: absorbed a leftover already
    std::vector<Index> choice(singles.size());  // neighbour proposed to
    std::vector<Index> edge(singles.size());    // position of that edge in g
    std::vector<Index> best(n, -1);         // by label: index into singles
    const Index ns_parallel = kParallelMin / 8;
    for (int round = 0; round < opt.max_iterations && !singles.empty(); ++round) {
      const Index ns = static_cast<Index>(singles.size());
      choice.resize(ns);
      edge.resize(ns);
#pragma omp parallel for schedule(static) if (ns > ns_parallel)
      for (Index s = 0; s < ns; ++s) {
        choice[s] = strongest(
            g, singles[s], [&](Index j) { return label[j] >= 0 && !full[label[j]]; }, &edge[s]);
      }
      // Each aggregate keeps its heaviest proposal; serial in node order.
      for (Index s = 0; s < ns; ++s) {
        const Index j = choice[s];
        if (j < 0) continue;
        const Index L = label[j];
        const Index b = best[L];
        if (b < 0) {
          best[L] = s;
          continue;
        }
        if (heavier(g.w[edge[s]], singles[s], j, g.w[edge[b]], singles[b], choice[b])) best[L] = s;
      }
      Index kept = 0;
      bool accepted = false;
      for (Index s = 0; s < ns; ++s) {
        const Index j = choice[s];
        if (j >= 0 && best[label[j]] == s) {
          const Index L = label[j];
          best[L] = -1;
          full[L] = 1;
          label[singles[s]] = L;
          accepted = true;
        } else {
          singles[kept++] = singles[s];
        }
      }
      singles.resize(kept);
      if (!accepted) break;
    }
  }

  // Whatever is left is its own aggregate.
#pragma omp parallel for schedule(static) if (n > kParallelMin)
  for (Index i = 0; i < n; ++i)
    if (label[i] < 0) label[i] = i;
  return aggregates_from_labels(label);
}

}  // namespace jaxamg::aggregation
