// C/F splittings: which points of a level become coarse-grid points.
//
// Rules shared by every selector here:
//  * a point with no strong connection at all (neither depends on nor
//    influences anything) is F and gets an empty interpolation row: the
//    smoother alone handles it;
//  * a point becomes F only because it strongly depends on a C point, so
//    every other F point has a C point to interpolate from;
//  * for a symmetric strength graph no two C points are strongly connected.
#pragma once
#include <cstdint>
#include <vector>

#include "amg/classical/strength.h"

namespace jaxamg::classical {

enum : int8_t { kFine = -1, kUndecided = 0, kCoarse = 1 };

// Deterministic pseudo-random tie-breaker in [0, 2^32), a function of the
// point and the seed only (no dependence on the thread count); the device
// PMIS (device/setup) calls the same function.
JAXAMG_HOST_DEVICE inline uint32_t point_hash(uint64_t i, uint64_t seed) {
  uint64_t z = i + seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<uint32_t>(z >> 32);
}

// PMIS (De Sterck, Yang, Heys 2006): repeatedly takes as C the undecided
// points whose weight |S^T_i| + random beats every undecided neighbour in
// S + S^T, then makes F the undecided points that depend on a new C point.
// `cf` holds one entry per point: kUndecided points are decided, kCoarse and
// kFine entries are kept (HMIS passes its first-pass result this way).
void pmis(const StrengthGraph& S, uint64_t seed, std::vector<int8_t>& cf);

// HMIS: a Ruge-Stueben first pass (greedy by measure) whose C points seed
// PMIS for whatever the first pass leaves undecided. `cf` as for pmis (an
// empty vector: every point undecided).
void hmis(const StrengthGraph& S, uint64_t seed, std::vector<int8_t>& cf);

// HMIS's first pass alone (hmis = this, then pmis): decides C points greedily
// by measure and makes their undecided dependents F. The distributed HMIS
// runs it on each process's block of S, then PMIS across processes.
void ruge_stueben_first_pass(const StrengthGraph& S, std::vector<int8_t>& cf);

// Aggressive coarsening (hypre's two-stage scheme): a first PMIS (or HMIS)
// splitting, then PMIS (HMIS) again on its C points with distance-two
// strength (c depends on c' if c' is in S_c or in S_m for some m in S_c).
// C points of the first stage that lose become F, and reach a C point only
// through F points: they need MULTIPASS (or D2) interpolation.
// With `first_stage` non-null it receives the first-stage splitting (the
// two-stage interpolation builds on it).
void aggressive_splitting(const StrengthGraph& S, bool hmis_stages, uint64_t seed,
                          std::vector<int8_t>& cf, std::vector<int8_t>* first_stage = nullptr);

// Coarse index of every C point (-1 for F) in increasing point order;
// returns the number of C points.
Index coarse_numbering(const std::vector<int8_t>& cf, std::vector<Index>& coarse_index);

}  // namespace jaxamg::classical
