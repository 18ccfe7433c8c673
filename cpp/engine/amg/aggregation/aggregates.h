// A partition of a level's nodes into aggregates: the one piece of data that
// every aggregation method shares. Unsmoothed aggregation turns it into a
// piecewise-constant P; smoothed aggregation would fit near-null-space
// vectors per aggregate (members are listed contiguously for that reason).
#pragma once
#include <vector>

#include "amg/coarsening.h"
#include "core/types.h"

namespace jaxamg::aggregation {

struct Aggregates {
  Index n = 0;                 // nodes of the level
  Index count = 0;             // aggregates
  std::vector<Index> of;       // n: the aggregate of each node
  std::vector<Index> ptr{0};   // count + 1: offsets into members
  std::vector<Index> members;  // n: the nodes of each aggregate, ascending

  Index size(Index a) const { return ptr[a + 1] - ptr[a]; }
  Index max_size() const;
};

// Builds aggregates from one label per node (nodes with equal labels share an
// aggregate; labels lie in [0, n)). Aggregates are numbered by ascending
// label, so the result does not depend on how the labels were computed in
// parallel.
Aggregates aggregates_from_labels(const std::vector<Index>& labels);

// Fills ptr/members from `of` and `count` (stable: members ascending).
void list_members(Aggregates& agg);

// Node -> coarse aggregate, where `fine` groups the nodes and `coarse` groups
// the aggregates of `fine` (one more pairwise pass).
Aggregates compose(const Aggregates& fine, const Aggregates& coarse);

// P (n x count) = aggregate indicator, R = P^T; every value is one.
template <class T>
void piecewise_constant_transfer(const Aggregates& agg, TransferOperators<T>& ops);

}  // namespace jaxamg::aggregation
