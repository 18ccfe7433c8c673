#include "device/setup/device_classical_setup.h"

#include <algorithm>
#include <string>

#include "backend/cuda/cuda_check.h"
#include "core/error.h"
#include "device/setup/device_classical.h"
#include "device/setup/device_spgemm.h"
#include "device/setup/device_transpose.h"

namespace jaxamg::cuda {

namespace {

using classical::Interpolator;
using classical::Selector;

Index nnz_of(const DeviceArray<Index>& ptr, Index rows) {
  Index nnz = 0;
  check(cudaMemcpy(&nnz, ptr.data() + rows, sizeof(Index), cudaMemcpyDeviceToHost),
        "cudaMemcpy (row offsets)");
  return nnz;
}

}  // namespace

classical::ClassicalParams DeviceClassicalParams::level(int l) const {
  classical::ClassicalParams p = l < aggressive_levels ? aggressive : classical;
  // classical_params: each level its own tie-breaking stream.
  p.seed = 0x5eedull + static_cast<uint64_t>(l) * 0x10001ull;
  return p;
}

DeviceClassicalParams DeviceClassicalParams::from_config(const Config& cfg,
                                                         const std::string& scope) {
  const std::string algorithm = cfg.get_string("algorithm", scope);
  if (algorithm != "CLASSICAL") {
    throw NotSupported("device classical setup (scope '" + scope + "'): algorithm '" + algorithm +
                       "' is not CLASSICAL");
  }
  DeviceClassicalParams p;
  // The host's parser validates every classical parameter (and throws its
  // ConfigError for invalid ones).
  p.aggressive_levels = std::max(0, cfg.get_int("aggressive_levels", scope));
  p.classical = classical::classical_params(cfg, scope, p.aggressive_levels);
  if (p.classical.selector != Selector::kPmis) {
    throw NotSupported("classical selector " + cfg.get_string("selector", scope) + " (scope '" +
                       scope + "') is not built on the GPU (PMIS is)");
  }
  if (p.classical.interpolator != Interpolator::kD1 &&
      p.classical.interpolator != Interpolator::kD2) {
    throw NotSupported("interpolator " + cfg.get_string("interpolator", scope) + " (scope '" +
                       scope + "') is not built on the GPU (D1 and D2 are)");
  }
  if (p.aggressive_levels > 0) {
    p.aggressive = classical::classical_params(cfg, scope, 0);
    if (p.aggressive.selector != Selector::kAggressivePmis) {
      throw NotSupported("aggressive_selector " + cfg.get_string("aggressive_selector", scope) +
                         " (scope '" + scope + "') is not built on the GPU (AGGRESSIVE_PMIS is)");
    }
    if (p.aggressive.interpolator != Interpolator::kD2 &&
        p.aggressive.interpolator != Interpolator::kTwoStageD2) {
      throw NotSupported("aggressive_interpolator " +
                         cfg.get_string("aggressive_interpolator", scope) + " (scope '" + scope +
                         "') is not built on the GPU (D2 and D2_TWO_STAGE are)");
    }
  }
  p.levels = LevelRules::from_config(cfg, scope);
  return p;
}

template <class T>
DeviceClassicalSetup<T>::DeviceClassicalSetup(DeviceClassicalParams params) : params_(params) {}

template <class T>
DeviceClassicalSetup<T>::~DeviceClassicalSetup() {
  if (handle_) cusparseDestroy(handle_);
}

template <class T>
void DeviceClassicalSetup<T>::setup(const DeviceCsrView<T>& A) {
  // Created on first use: a setup object is also made to read a config on
  // machines without a GPU.
  if (!handle_) check(cusparseCreate(&handle_), "cusparseCreate (classical setup)");
  timings_ = DeviceClassicalTimings();
  const double t0 = clock_.start();
  levels_.clear();
  levels_.emplace_back();
  levels_[0].A = A;
  for (int l = 0;; ++l) {
    const Index n = levels_[l].rows();
    if (params_.levels.coarsest(l, n)) break;
    const classical::ClassicalParams p = params_.level(l);
    const bool aggressive = p.selector == Selector::kAggressivePmis;
    const bool two_stage = aggressive && p.interpolator == Interpolator::kTwoStageD2;
    const DeviceCsrView<T> Al = levels_[l].A;
    DeviceStrength S = device_strength(Al, p.strength);
    clock_.lap(timings_.strength);
    DeviceSplitting first;
    DeviceSplitting split = aggressive
                                ? device_aggressive_pmis(Al, S, p.seed, two_stage ? &first : nullptr)
                                : device_pmis(Al, S, p.seed);
    clock_.lap(timings_.selection);
    const Index nc = split.n_coarse;
    if (!params_.levels.keeps(n, nc)) break;

    levels_.emplace_back();
    Level& L = levels_[l];
    Level& C = levels_[l + 1];
    if (two_stage) {
      device_two_stage_interpolation(Al, S, first, split, p.truncation, L.p_ptr, L.p_col,
                                     L.p_val);
    } else {
      // D2_TWO_STAGE off an aggressive level is extended+i, as on the host.
      const Interpolator kind =
          p.interpolator == Interpolator::kTwoStageD2 ? Interpolator::kD2 : p.interpolator;
      device_interpolation(Al, S, split, kind, p.truncation, L.p_ptr, L.p_col, L.p_val);
    }
    first = DeviceSplitting();
    L.p_nnz = nnz_of(L.p_ptr, n);
    L.cf = std::move(split.cf);
    S = DeviceStrength();  // before the products: keep the peak memory down
    const DeviceCsrView<T> P = prolongation(l);
    device_transpose(P, nc, L.r_ptr, L.r_col, L.r_val);
    clock_.lap(timings_.interpolation);
    const DeviceCsrView<T> R{nc, L.p_nnz, L.r_ptr.data(), L.r_col.data(), L.r_val.data()};
    device_galerkin(handle_, R, Al, P, nc, C.ptr, C.col, C.val);
    C.A = {nc, nnz_of(C.ptr, nc), C.ptr.data(), C.col.data(), C.val.data()};
    clock_.lap(timings_.galerkin);
  }
  check(cudaDeviceSynchronize(), "device classical setup");
  timings_.total = now_seconds() - t0;
}

template <class T>
void DeviceClassicalSetup<T>::resetup(const DeviceCsrView<T>& A) {
  if (!levels_.empty() && (A.rows != levels_[0].A.rows || A.nnz != levels_[0].A.nnz)) {
    throw InvalidInput("device classical resetup: A has " + std::to_string(A.rows) +
                       " rows and " + std::to_string(A.nnz) +
                       " entries but the hierarchy was built for " +
                       std::to_string(levels_[0].A.rows) + " rows and " +
                       std::to_string(levels_[0].A.nnz) +
                       " entries; a resetup needs the same sparsity pattern, run a full setup");
  }
  setup(A);
}

template <class T>
DeviceCsrView<T> DeviceClassicalSetup<T>::prolongation(int l) const {
  const Level& L = levels_.at(l);
  return {L.rows(), L.p_nnz, L.p_ptr.data(), L.p_col.data(), L.p_val.data()};
}

template <class T>
DeviceCsrView<T> DeviceClassicalSetup<T>::restriction(int l) const {
  const Level& L = levels_.at(l);
  return {levels_.at(l + 1).rows(), L.p_nnz, L.r_ptr.data(), L.r_col.data(), L.r_val.data()};
}

template <class T>
std::unique_ptr<DeviceHierarchy<T>> DeviceClassicalSetup<T>::make_transposed(
    const DeviceCsrView<T>& A) const {
  if (levels_.empty()) {
    throw InvalidInput("device classical setup: make_transposed() needs a hierarchy; call "
                       "setup() first");
  }
  if (A.rows != levels_[0].A.rows || A.nnz != levels_[0].A.nnz) {
    throw InvalidInput("device classical setup: make_transposed() was given a matrix with " +
                       std::to_string(A.rows) + " rows and " + std::to_string(A.nnz) +
                       " entries but the hierarchy was built for " +
                       std::to_string(levels_[0].A.rows) + " rows and " +
                       std::to_string(levels_[0].A.nnz) + "; pass the matrix of the setup");
  }
  auto t = std::make_unique<DeviceClassicalSetup<T>>(params_);
  t->levels_.resize(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Level& S = levels_[l];
    Level& D = t->levels_[l];
    const DeviceCsrView<T>& M = l == 0 ? A : S.A;
    device_transpose(M, M.rows, D.ptr, D.col, D.val);
    D.A = {M.rows, M.nnz, D.ptr.data(), D.col.data(), D.val.data()};
    if (l + 1 < levels_.size()) {
      // R = P^T: the transposed cycle restricts with P^T = R and
      // prolongates with R^T = P, the same operators.
      copy_device_array(S.p_ptr, D.p_ptr);
      copy_device_array(S.p_col, D.p_col);
      copy_device_array(S.p_val, D.p_val);
      copy_device_array(S.r_ptr, D.r_ptr);
      copy_device_array(S.r_col, D.r_col);
      copy_device_array(S.r_val, D.r_val);
      copy_device_array(S.cf, D.cf);
      D.p_nnz = S.p_nnz;
    }
  }
  check(cudaDeviceSynchronize(), "device classical setup (transposed)");
  return t;
}

template <class T>
std::vector<int8_t> DeviceClassicalSetup<T>::download_splitting(int l) const {
  const Level& L = levels_.at(l);
  std::vector<int8_t> cf(L.cf.size());
  if (!cf.empty()) {
    check(cudaMemcpy(cf.data(), L.cf.data(), cf.size(), cudaMemcpyDeviceToHost),
          "cudaMemcpy (splitting)");
  }
  return cf;
}

template <class T>
CsrMatrix<T> DeviceClassicalSetup<T>::download_prolongation(int l) const {
  if (l + 1 >= num_levels()) return CsrMatrix<T>();
  return download_csr(prolongation(l), levels_.at(l + 1).rows());
}

template class DeviceClassicalSetup<float>;
template class DeviceClassicalSetup<double>;

}  // namespace jaxamg::cuda
