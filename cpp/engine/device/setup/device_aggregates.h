// Device counterparts of the aggregation setup's data (amg/aggregation):
// the weighted graph that pairwise matching runs on and the aggregates it
// produces, with the launchers that build them. Each step mirrors its host
// function so that the device hierarchy equals the host one exactly:
//   device_weight_graph  <-> edge_weight_graph  (weight_graph.cu)
//   device_collapse      <-> collapse           (weight_graph.cu)
//   device_pairwise      <-> pairwise_aggregates (pairwise_matching.cu)
//   device_numbering     <-> aggregates_from_labels, compose (aggregate_numbering.cu)
// All work runs on the default stream; a launcher synchronises only where it
// reads a count back (one integer per matching round, the sizes of new arrays).
#pragma once
#include "amg/aggregation/pairwise_matching.h"
#include "backend/cuda/device_array.h"
#include "core/types.h"

namespace jaxamg::cuda {

// A CSR pattern with values on the device, not owned (the caller's matrix).
template <class T>
struct DeviceCsrView {
  Index rows = 0;
  Index nnz = 0;
  const Index* ptr = nullptr;  // rows + 1
  const Index* col = nullptr;  // nnz, ascending per row
  const T* val = nullptr;      // nnz
};

struct DeviceGraph {
  Index n = 0;
  DeviceArray<Index> ptr;  // n + 1
  DeviceArray<Index> adj;  // neighbours, ascending, no self loops
  DeviceArray<double> w;   // bitwise w_ij == w_ji
  Index edges() const { return static_cast<Index>(adj.size()); }
};

struct DeviceAggregates {
  Index n = 0;
  Index count = 0;
  DeviceArray<Index> of;       // n: the aggregate of each node
  DeviceArray<Index> ptr;      // count + 1 (filled by list_members)
  DeviceArray<Index> members;  // n, ascending within an aggregate
};

// weight_formula 0 or 1 as edge_weight_graph; throws the host's errors.
template <class T>
DeviceGraph device_weight_graph(const DeviceCsrView<T>& A, int weight_formula);

// The graph of aggregates with weights summed in the host's order.
DeviceGraph device_collapse(const DeviceGraph& g, const DeviceAggregates& agg);

// One handshake pass with leftover merging: labels in [0, n) per node.
void device_pairwise_labels(const DeviceGraph& g, const aggregation::MatchingOptions& opt,
                            DeviceArray<Index>& labels);

// Aggregates numbered by ascending label (aggregates_from_labels). These
// three fill `of` and `count` only: device_list_members adds the member
// lists once the last pass is composed.
DeviceAggregates device_aggregates_from_labels(const DeviceArray<Index>& labels);
// DUMMY: consecutive groups of `size` nodes.
DeviceAggregates device_dummy_aggregates(Index n, int size);
// total.of[i] = pass.of[total.of[i]], count = pass.count (compose).
void device_compose(DeviceAggregates& total, const DeviceAggregates& pass);
// ptr and members from `of` and `count`: members ascending per aggregate.
void device_list_members(DeviceAggregates& agg);

// Row index of every entry of a CSR pattern (n rows, ptr[n] entries).
void device_row_of_entries(Index n, const Index* ptr, Index* row);

}  // namespace jaxamg::cuda
