#include "dist/dist_pmis.h"

#include <string>

#include "amg/classical/splitting.h"
#include "core/error.h"

namespace jaxamg::dist {

using classical::kCoarse;
using classical::kFine;
using classical::kUndecided;

void dist_pmis(const HaloPlan& plan, const LocalStrength& S, int64_t row_start,
               const std::vector<int64_t>& ghost_gid, uint64_t seed, std::vector<int8_t>& cf) {
  const Communicator& comm = plan.comm();
  const Index n = S.n;
  const Index ng = plan.num_ghosts();
  if (static_cast<Index>(cf.size()) != n || static_cast<Index>(ghost_gid.size()) != ng) {
    throw SetupError("distributed PMIS: " + std::to_string(cf.size()) + " states and " +
                     std::to_string(ghost_gid.size()) + " ghost ids for " + std::to_string(n) +
                     " points and " + std::to_string(ng) + " ghosts");
  }
  const auto& sidx = plan.send_index();
  auto gid = [&](Index j) { return j < n ? row_start + j : ghost_gid[j - n]; };
  // |S^T_i|: the owned rows count their dependences on every local column;
  // the counts on ghost columns go back to the owners.
  std::vector<int64_t> infl(static_cast<std::size_t>(n + ng), 0), back(sidx.size());
  for (Index c : S.col) ++infl[c];
  plan.reverse(infl.data() + n, back.data());
  for (std::size_t s = 0; s < sidx.size(); ++s) infl[sidx[s]] += back[s];
  // Keys as the serial PMIS packs them (influence count, hashed tie-breaker),
  // for the owned points and, by exchange, the ghosts.
  std::vector<int64_t> key(static_cast<std::size_t>(n + ng));
  for (Index i = 0; i < n; ++i) {
    const uint64_t hash = classical::point_hash(static_cast<uint64_t>(row_start + i), seed);
    key[i] = static_cast<int64_t>((static_cast<uint64_t>(infl[i]) << 32) | hash);
    if (cf[i] == kUndecided && S.row_ptr[i + 1] == S.row_ptr[i] && infl[i] == 0) cf[i] = kFine;
  }
  plan.exchange(key.data(), key.data() + n);
  auto wins = [&](Index j, Index i) {  // j beats i
    const uint64_t kj = static_cast<uint64_t>(key[j]), ki = static_cast<uint64_t>(key[i]);
    return kj > ki || (kj == ki && gid(j) > gid(i));
  };
  std::vector<int64_t> state(static_cast<std::size_t>(n + ng), kUndecided);
  auto share_states = [&] {
    for (Index i = 0; i < n; ++i) state[i] = cf[i];
    plan.exchange(state.data(), state.data() + n);
  };
  std::vector<int64_t> lose(static_cast<std::size_t>(n + ng));
  bool any_coarse = false;
  for (Index i = 0; i < n && !any_coarse; ++i) any_coarse = cf[i] == kCoarse;
  any_coarse = comm.max_int(any_coarse ? 1 : 0) == 1;
  std::vector<uint8_t> to_fine(n);
  for (;;) {
    int64_t undecided = 0;
    for (Index i = 0; i < n; ++i) undecided += cf[i] == kUndecided;
    if (comm.sum_int(undecided) == 0) break;
    if (any_coarse) {
      // F points: undecided points that strongly depend on a C point.
      share_states();
      for (Index i = 0; i < n; ++i) {
        to_fine[i] = 0;
        if (cf[i] != kUndecided) continue;
        for (Index k = S.row_ptr[i]; k < S.row_ptr[i + 1] && !to_fine[i]; ++k) {
          to_fine[i] = state[S.col[k]] == kCoarse;
        }
      }
      for (Index i = 0; i < n; ++i) {
        if (to_fine[i]) cf[i] = kFine;
      }
    }
    any_coarse = true;
    // C points: undecided points that beat every undecided neighbour in
    // S + S^T. Each edge of S rules out its losing end; a losing ghost is
    // reported to its owner.
    share_states();
    std::fill(lose.begin(), lose.end(), 0);
    for (Index i = 0; i < n; ++i) {
      if (cf[i] != kUndecided) continue;
      for (Index k = S.row_ptr[i]; k < S.row_ptr[i + 1]; ++k) {
        const Index j = S.col[k];
        if (state[j] != kUndecided) continue;
        lose[wins(j, i) ? i : j] = 1;
      }
    }
    plan.reverse(lose.data() + n, back.data());
    for (std::size_t s = 0; s < sidx.size(); ++s) lose[sidx[s]] |= back[s];
    for (Index i = 0; i < n; ++i) {
      if (cf[i] == kUndecided && !lose[i]) cf[i] = kCoarse;
    }
  }
}

}  // namespace jaxamg::dist
