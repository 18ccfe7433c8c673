// PMIS on the device (host: amg/classical/pmis.cc). A round is the host's
// round: the undecided points that strongly depend on a C point become F,
// then every edge of S between two undecided points marks its loser (by the
// weight |S^T_i| << 32 | point_hash(i, seed), ties to the larger index) and
// the undecided points that lost nowhere become C. Every kernel reads a
// state the previous one finished, so the splitting is the host's whatever
// the thread order. One integer (the points left undecided) comes back per
// round.
#include "amg/classical/splitting.h"
#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"
#include "device/setup/device_classical.h"

namespace jaxamg::cuda {

namespace {

using classical::kCoarse;
using classical::kFine;
using classical::kUndecided;

__global__ void pmis_init(Index n, const Index* __restrict__ depends,
                          const Index* __restrict__ influences, uint64_t seed, int8_t isolated,
                          unsigned long long* __restrict__ key, int8_t* __restrict__ cf) {
  const Index i = global_id();
  if (i >= n) return;
  key[i] = (static_cast<unsigned long long>(influences[i]) << 32) |
           classical::point_hash(static_cast<uint64_t>(i), seed);
  // A point with no strong connection at all is F (smoothing handles it),
  // or C in aggressive coarsening's second stage.
  cf[i] = depends[i] == 0 && influences[i] == 0 ? isolated : kUndecided;
}

// flag[i] = 1: undecided i strongly depends on a C point.
__global__ void pmis_fine_flags(Index n, const Index* __restrict__ ptr,
                                const Index* __restrict__ col, const uint8_t* __restrict__ strong,
                                const int8_t* __restrict__ cf, uint8_t* __restrict__ flag) {
  const Index i = global_id();
  if (i >= n) return;
  uint8_t f = 0;
  if (cf[i] == kUndecided) {
    for (Index k = ptr[i]; k < ptr[i + 1]; ++k) {
      if (strong[k] && cf[col[k]] == kCoarse) {
        f = 1;
        break;
      }
    }
  }
  flag[i] = f;
}

__global__ void pmis_apply_fine(Index n, const uint8_t* __restrict__ flag, int8_t* __restrict__ cf) {
  const Index i = global_id();
  if (i < n && flag[i]) cf[i] = kFine;
}

// Every strong edge between undecided points marks its smaller end.
__global__ void pmis_mark_losers(Index n, const Index* __restrict__ ptr,
                                 const Index* __restrict__ col,
                                 const uint8_t* __restrict__ strong, const int8_t* __restrict__ cf,
                                 const unsigned long long* __restrict__ key,
                                 uint8_t* __restrict__ lose, uint8_t now) {
  const Index i = global_id();
  if (i >= n || cf[i] != kUndecided) return;
  const unsigned long long ki = key[i];
  for (Index k = ptr[i]; k < ptr[i + 1]; ++k) {
    if (!strong[k]) continue;
    const Index j = col[k];
    if (cf[j] != kUndecided) continue;
    const bool j_wins = key[j] > ki || (key[j] == ki && j > i);
    lose[j_wins ? i : j] = now;  // every writer writes the same value
  }
}

__global__ void pmis_select(Index n, const uint8_t* __restrict__ lose, uint8_t now,
                            int8_t* __restrict__ cf, Index* __restrict__ left) {
  const Index i = global_id();
  if (i >= n || cf[i] != kUndecided) return;
  if (lose[i] != now) {
    cf[i] = kCoarse;
  } else {
    atomicAdd(left, 1);
  }
}

__global__ void coarse_counts(Index n, const int8_t* __restrict__ cf, Index* __restrict__ c) {
  const Index i = global_id();
  if (i < n) c[i] = cf[i] == kCoarse;
}

__global__ void coarse_indices(Index n, const int8_t* __restrict__ cf, Index* __restrict__ c) {
  const Index i = global_id();
  if (i < n && cf[i] != kCoarse) c[i] = -1;
}

}  // namespace

void device_number_coarse(Index n, DeviceSplitting& split) {
  split.coarse_index.resize(static_cast<std::size_t>(n) + 1);
  if (n == 0) {
    split.n_coarse = 0;
    return;
  }
  coarse_counts<<<blocks(n), kBlock>>>(n, split.cf.data(), split.coarse_index.data());
  check_launch("coarse_counts");
  split.n_coarse = exclusive_scan(split.coarse_index.data(), split.coarse_index.data(), n);
  coarse_indices<<<blocks(n), kBlock>>>(n, split.cf.data(), split.coarse_index.data());
  check_launch("coarse_indices");
}

template <class T>
DeviceSplitting device_pmis(const DeviceCsrView<T>& A, const DeviceStrength& S, uint64_t seed,
                            bool isolated_coarse) {
  const Index n = A.rows;
  DeviceSplitting out;
  out.cf.resize(n);
  out.coarse_index.resize(static_cast<std::size_t>(n) + 1);
  if (n == 0) return out;
  DeviceArray<unsigned long long> key(n);
  DeviceArray<uint8_t> flag(n), lose(n);
  DeviceArray<Index> left(1);
  check(cudaMemsetAsync(lose.data(), 0, n), "cudaMemsetAsync (pmis)");
  pmis_init<<<blocks(n), kBlock>>>(n, S.depends.data(), S.influences.data(), seed,
                                   isolated_coarse ? kCoarse : kFine, key.data(), out.cf.data());
  check_launch("pmis_init");
  uint8_t stamp = 0;
  for (;;) {
    // Before any C point exists the F pass finds nothing, as the host's
    // skipped first pass.
    pmis_fine_flags<<<blocks(n), kBlock>>>(n, A.ptr, A.col, S.strong.data(), out.cf.data(),
                                           flag.data());
    check_launch("pmis_fine_flags");
    pmis_apply_fine<<<blocks(n), kBlock>>>(n, flag.data(), out.cf.data());
    check_launch("pmis_apply_fine");
    if (stamp == 255) {
      check(cudaMemsetAsync(lose.data(), 0, n), "cudaMemsetAsync (pmis)");
      stamp = 0;
    }
    const uint8_t now = ++stamp;
    pmis_mark_losers<<<blocks(n), kBlock>>>(n, A.ptr, A.col, S.strong.data(), out.cf.data(),
                                            key.data(), lose.data(), now);
    check_launch("pmis_mark_losers");
    check(cudaMemsetAsync(left.data(), 0, sizeof(Index)), "cudaMemsetAsync (pmis)");
    pmis_select<<<blocks(n), kBlock>>>(n, lose.data(), now, out.cf.data(), left.data());
    check_launch("pmis_select");
    Index undecided = 0;
    check(cudaMemcpy(&undecided, left.data(), sizeof(Index), cudaMemcpyDeviceToHost),
          "cudaMemcpy (pmis)");
    if (undecided == 0) break;
  }
  device_number_coarse(n, out);
  return out;
}

template DeviceSplitting device_pmis(const DeviceCsrView<float>&, const DeviceStrength&, uint64_t,
                                     bool);
template DeviceSplitting device_pmis(const DeviceCsrView<double>&, const DeviceStrength&, uint64_t,
                                     bool);

}  // namespace jaxamg::cuda
