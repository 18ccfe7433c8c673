// PMIS coarse-point selection and the C-point numbering shared by all
// selectors.
#include <omp.h>

#include <sstream>

#include "amg/classical/splitting.h"
#include "core/error.h"

namespace jaxamg::classical {

namespace {

// Keeps the undecided entries of U, in order.
void compact_undecided(const std::vector<int8_t>& cf, std::vector<Index>& U) {
  std::size_t m = 0;
  for (std::size_t k = 0; k < U.size(); ++k)
    if (cf[U[k]] == kUndecided) U[m++] = U[k];
  U.resize(m);
}

}  // namespace

void pmis(const StrengthGraph& S, uint64_t seed, std::vector<int8_t>& cf) {
  const Index n = S.n;
  if (static_cast<Index>(cf.size()) != n) {
    std::ostringstream os;
    os << "pmis: the splitting has " << cf.size() << " entries for " << n
       << " points; pass one entry per point";
    throw InvalidInput(os.str());
  }
  // Weight = number of points that would interpolate from i, with a hashed
  // fraction as tie-breaker; packed in one integer so comparisons are exact.
  std::vector<uint64_t> key(n);
#pragma omp parallel for schedule(static) if (n > kSerialBelow)
  for (Index i = 0; i < n; ++i) {
    key[i] = (static_cast<uint64_t>(S.num_influences(i)) << 32) | point_hash(i, seed);
    if (cf[i] == kUndecided && S.num_depends(i) == 0 && S.num_influences(i) == 0) cf[i] = kFine;
  }
  std::vector<Index> U;
  for (Index i = 0; i < n; ++i)
    if (cf[i] == kUndecided) U.push_back(i);
  std::vector<uint8_t> flag;
  // lose[i] == stamp: i lost against an undecided neighbour this round (a
  // new stamp per round spares clearing the array).
  std::vector<uint8_t> lose(n, 0);
  uint8_t stamp = 0;
  // Without any C point yet (no splitting passed in) the first F pass would
  // find nothing: it is skipped.
  bool any_coarse = false;
  for (Index i = 0; i < n && !any_coarse; ++i) any_coarse = cf[i] == kCoarse;

  while (!U.empty()) {
    const Index m = static_cast<Index>(U.size());
    if (any_coarse) {
      flag.assign(m, 0);
      // F points: undecided points that strongly depend on a C point.
      // Decisions are written in a second loop so every thread reads a fixed
      // state.
#pragma omp parallel for schedule(static) if (m > kSerialBelow)
      for (Index u = 0; u < m; ++u) {
        const Index i = U[u];
        for (Index k = S.row_ptr[i]; k < S.row_ptr[i + 1]; ++k)
          if (cf[S.col[k]] == kCoarse) { flag[u] = 1; break; }
      }
#pragma omp parallel for schedule(static) if (m > kSerialBelow)
      for (Index u = 0; u < m; ++u)
        if (flag[u]) cf[U[u]] = kFine;
    }
    any_coarse = true;  // the C pass below always selects at least one point

    // C points: undecided local maxima of the weight over undecided
    // neighbours in S + S^T (ties, which the hash makes rare, go to the
    // larger index). Every edge of S between two undecided points rules out
    // its smaller end, so S^T is not needed. The points the F pass just
    // decided are still listed in U and skipped.
    if (stamp == 255) {
      std::fill(lose.begin(), lose.end(), 0);
      stamp = 0;
    }
    const uint8_t now = ++stamp;
#pragma omp parallel for schedule(static) if (m > kSerialBelow)
    for (Index u = 0; u < m; ++u) {
      const Index i = U[u];
      if (cf[i] != kUndecided) continue;
      const uint64_t ki = key[i];
      for (Index k = S.row_ptr[i]; k < S.row_ptr[i + 1]; ++k) {
        const Index j = S.col[k];
        if (cf[j] != kUndecided) continue;
        const bool j_wins = key[j] > ki || (key[j] == ki && j > i);
        const Index loser = j_wins ? i : j;
#pragma omp atomic write
        lose[loser] = now;
      }
    }
#pragma omp parallel for schedule(static) if (m > kSerialBelow)
    for (Index u = 0; u < m; ++u) {
      const Index i = U[u];
      if (cf[i] == kUndecided && lose[i] != now) cf[i] = kCoarse;
    }
    compact_undecided(cf, U);
  }
}

Index coarse_numbering(const std::vector<int8_t>& cf, std::vector<Index>& coarse_index) {
  const Index n = static_cast<Index>(cf.size());
  coarse_index.resize(n);
  // Each thread numbers one contiguous block, offset by the C points of the
  // blocks before it: the same numbering as a serial pass.
  const int nt = n > kSerialBelow ? omp_get_max_threads() : 1;
  std::vector<Index> offset(static_cast<std::size_t>(nt) + 1, 0);
  const int8_t* c = cf.data();
  Index* out = coarse_index.data();
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    const int nth = omp_get_num_threads();
    const Index lo = static_cast<Index>(static_cast<int64_t>(n) * t / nth);
    const Index hi = static_cast<Index>(static_cast<int64_t>(n) * (t + 1) / nth);
    Index count = 0;
    for (Index i = lo; i < hi; ++i) count += c[i] == kCoarse;
    offset[t + 1] = count;
#pragma omp barrier
    Index next = 0;
    for (int u = 0; u < t; ++u) next += offset[u + 1];
    for (Index i = lo; i < hi; ++i) {
      const bool coarse = c[i] == kCoarse;
      out[i] = coarse ? next : -1;
      next += coarse;
    }
  }
  Index nc = 0;
  for (int t = 0; t < nt; ++t) nc += offset[t + 1];
  return nc;
}

}  // namespace jaxamg::classical
