// One pass of AmgX-style handshake pairwise aggregation on a weighted graph.
//
// Round: every unmatched node picks its strongest unmatched neighbour (only
// edges of positive weight are candidates); two nodes that pick each other
// become a pair. Rounds repeat until at most max_unassigned_fraction of the
// nodes are unmatched, no unmatched node has an unmatched neighbour left, or
// max_iterations rounds have run. Leftovers then join the aggregate of their
// strongest matched neighbour (merge_singletons) or stay alone.
//
// Ties: edges compare by (weight, fixed hash of the edge, edge indices), a
// key shared by both ends. Hence the heaviest remaining edge is always picked
// by both its ends, every round makes progress, and on graphs with uniform
// weights (Poisson) the hash spreads the pairs over the whole graph instead
// of letting index order zip them up one pair per round.
//
// Merging is capped: an aggregate absorbs at most one leftover per pass, so a
// pass never makes an aggregate larger than 3 of its input nodes. A leftover
// whose neighbouring aggregates are all taken stays a singleton aggregate.
#pragma once
#include "amg/aggregation/aggregates.h"
#include "amg/aggregation/weight_graph.h"

namespace jaxamg::aggregation {

struct MatchingOptions {
  int max_iterations = 15;               // max_matching_iterations
  double max_unassigned_fraction = 0.05;  // max_unassigned_percentage
  int handshaking_phases = 1;            // handshakes per round (1 or 2)
  bool merge_singletons = true;
};

Aggregates pairwise_aggregates(const WeightGraph& g, const MatchingOptions& opt);

}  // namespace jaxamg::aggregation
