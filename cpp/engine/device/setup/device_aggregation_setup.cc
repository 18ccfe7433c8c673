#include "device/setup/device_aggregation_setup.h"

#include <memory>
#include <string>

#include "amg/coarsening.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/setup/sort_segments.h"
#include "core/error.h"
#include "device/setup/device_transpose.h"

namespace jaxamg::cuda {

namespace {

using aggregation::SelectorKind;

// The view of a matrix whose arrays this setup owns.
template <class T>
DeviceCsrView<T> view_of(Index rows, const DeviceArray<Index>& ptr, const DeviceArray<Index>& col,
                         const DeviceArray<T>& val, Index nnz) {
  return {rows, nnz, ptr.data(), col.data(), val.data()};
}

}  // namespace

DeviceAggregationParams DeviceAggregationParams::from_config(const Config& cfg,
                                                             const std::string& scope) {
  const std::string algorithm = cfg.get_string("algorithm", scope);
  if (algorithm != "AGGREGATION") {
    throw NotSupported("device AMG setup (scope '" + scope + "'): algorithm '" + algorithm +
                       "' is not built on the GPU; use algorithm AGGREGATION or the host setup");
  }
  // The host's parser validates every aggregation parameter.
  const std::unique_ptr<Coarsening<double>> c = make_aggregation_coarsening<double>(cfg, scope, 0);
  const auto* agg = dynamic_cast<const aggregation::AggregationCoarsening<double>*>(c.get());
  if (!agg) {
    throw NotSupported("device AMG setup (scope '" + scope +
                       "'): smoothed aggregation (x_smoothed_aggregation, selector x_STANDARD) is "
                       "not built on the GPU; use x_smoothed_aggregation 0 or the host setup");
  }
  DeviceAggregationParams p;
  p.aggregation = agg->options();
  p.levels = LevelRules::from_config(cfg, scope);
  return p;
}

template <class T>
DeviceAggregates DeviceAggregationSetup<T>::select(const DeviceCsrView<T>& A) {
  const aggregation::AggregationOptions& opt = params_.aggregation;
  if (opt.selector == SelectorKind::kDummy) {
    DeviceAggregates agg = device_dummy_aggregates(A.rows, opt.dummy_size);
    device_list_members(agg);
    clock_.lap(timings_.matching);
    return agg;
  }
  // select_scalar_aggregates, pass by pass.
  DeviceSetupTimings& t = timings_;
  DeviceGraph g = device_weight_graph(A, opt.weight_formula);
  clock_.lap(t.weights);
  DeviceArray<Index> labels;
  device_pairwise_labels(g, opt.matching, labels);
  DeviceAggregates total = device_aggregates_from_labels(labels);
  clock_.lap(t.matching);
  DeviceAggregates last;
  const DeviceAggregates* pass = &total;
  // MULTI_PAIRWISE: the Galerkin matrix of the aggregates so far.
  DeviceArray<Index> cptr, ccol;
  DeviceArray<T> cval;
  DeviceCsrView<T> current = A;
  for (int p = 1; p < opt.passes; ++p) {
    if (pass->count == pass->n) break;  // the last pass joined nothing
    if (opt.selector == SelectorKind::kMultiPairwise) {
      DeviceGalerkin<T> galerkin;
      DeviceArray<Index> ptr, col;
      galerkin.symbolic(current, *pass, ptr, col);
      DeviceArray<T> val(galerkin.coarse_nnz() > 0 ? galerkin.coarse_nnz() : 1);
      galerkin.numeric(current.val, val.data());
      cptr = std::move(ptr);
      ccol = std::move(col);
      cval = std::move(val);
      current = view_of<T>(pass->count, cptr, ccol, cval, galerkin.coarse_nnz());
      clock_.lap(t.coarse_graphs);
      g = device_weight_graph(current, opt.weight_formula);
      clock_.lap(t.weights);
    } else {
      g = device_collapse(g, *pass);
      clock_.lap(t.coarse_graphs);
    }
    device_pairwise_labels(g, opt.matching, labels);
    DeviceAggregates next = device_aggregates_from_labels(labels);
    device_compose(total, next);  // after the collapse: it read *pass (maybe total)
    last = std::move(next);
    pass = &last;
  }
  device_list_members(total);
  clock_.lap(t.matching);
  return total;
}

template <class T>
void DeviceAggregationSetup<T>::setup(const DeviceCsrView<T>& A) {
  timings_ = DeviceSetupTimings();
  const double t0 = clock_.start();
  levels_.clear();
  levels_.emplace_back();
  levels_[0].A = A;
  for (int l = 0;; ++l) {
    const Index n = levels_[l].rows();
    if (params_.levels.coarsest(l, n)) break;
    DeviceAggregates agg = select(levels_[l].A);
    // All singletons: the level would not be coarser (P without columns).
    const Index nc = agg.count == agg.n ? 0 : agg.count;
    if (!params_.levels.keeps(n, nc)) break;

    levels_.emplace_back();
    Level& L = levels_[l];
    Level& C = levels_[l + 1];
    L.agg = std::move(agg);
    L.p_ptr.resize(static_cast<std::size_t>(n) + 1);
    iota(L.p_ptr.data(), n + 1);
    L.ones.resize(n);
    fill<T>(n, T(1), L.ones.data(), nullptr);
    L.galerkin.symbolic(L.A, L.agg, C.ptr, C.col);
    const Index nnz = L.galerkin.coarse_nnz();
    C.val.resize(nnz > 0 ? nnz : 1);
    L.galerkin.numeric(L.A.val, C.val.data());
    C.A = view_of<T>(nc, C.ptr, C.col, C.val, nnz);
    clock_.lap(timings_.galerkin);
  }
  check(cudaDeviceSynchronize(), "device aggregation setup");
  timings_.total = now_seconds() - t0;
}

template <class T>
void DeviceAggregationSetup<T>::resetup(const DeviceCsrView<T>& A) {
  if (levels_.empty()) {
    setup(A);
    return;
  }
  const DeviceCsrView<T>& old = levels_[0].A;
  if (A.rows != old.rows || A.nnz != old.nnz) {
    throw InvalidInput("device aggregation resetup: A has " + std::to_string(A.rows) +
                       " rows and " + std::to_string(A.nnz) +
                       " entries but the hierarchy was built for " + std::to_string(old.rows) +
                       " rows and " + std::to_string(old.nnz) +
                       " entries; a resetup needs the same sparsity pattern, run a full setup");
  }
  levels_[0].A = A;
  for (std::size_t l = 0; l + 1 < levels_.size(); ++l) {
    levels_[l].galerkin.numeric(levels_[l].A.val, levels_[l + 1].val.data());
  }
  check(cudaDeviceSynchronize(), "device aggregation resetup");
}

template <class T>
DeviceAggregationSetup<T> DeviceAggregationSetup<T>::transposed(const DeviceCsrView<T>& A) const {
  if (levels_.empty()) {
    throw InvalidInput("device aggregation setup: transposed() needs a hierarchy; call setup() "
                       "first");
  }
  if (A.rows != levels_[0].A.rows || A.nnz != levels_[0].A.nnz) {
    throw InvalidInput("device aggregation setup: transposed() was given a matrix with " +
                       std::to_string(A.rows) + " rows and " + std::to_string(A.nnz) +
                       " entries but the hierarchy was built for " +
                       std::to_string(levels_[0].A.rows) + " rows and " +
                       std::to_string(levels_[0].A.nnz) + "; pass the matrix of the setup");
  }
  DeviceAggregationSetup<T> t(params_);
  t.levels_.resize(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Level& S = levels_[l];
    Level& D = t.levels_[l];
    const DeviceCsrView<T>& M = l == 0 ? A : S.A;
    device_transpose(M, M.rows, D.ptr, D.col, D.val);
    D.A = view_of<T>(M.rows, D.ptr, D.col, D.val, M.nnz);
    if (l + 1 < levels_.size()) {
      D.agg.n = S.agg.n;
      D.agg.count = S.agg.count;
      copy_device_array(S.agg.of, D.agg.of);
      copy_device_array(S.agg.ptr, D.agg.ptr);
      copy_device_array(S.agg.members, D.agg.members);
      copy_device_array(S.p_ptr, D.p_ptr);
      copy_device_array(S.ones, D.ones);
    }
  }
  check(cudaDeviceSynchronize(), "device aggregation setup (transposed)");
  return t;
}

template <class T>
std::vector<Index> DeviceAggregationSetup<T>::download_aggregates(int l) const {
  const DeviceAggregates& agg = levels_.at(l).agg;
  std::vector<Index> of(agg.of.size());
  if (!of.empty()) {
    check(cudaMemcpy(of.data(), agg.of.data(), of.size() * sizeof(Index), cudaMemcpyDeviceToHost),
          "cudaMemcpy (aggregates)");
  }
  return of;
}

template class DeviceAggregationSetup<float>;
template class DeviceAggregationSetup<double>;

}  // namespace jaxamg::cuda
