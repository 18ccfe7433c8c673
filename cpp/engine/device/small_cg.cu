// The fused small-system CG (small_cg.h): the kernel, its launch and the
// read-back of its record.
#include "device/small_cg.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "backend/cuda/cuda_check.h"
#include "core/error.h"
#include "core/types.h"

namespace jaxamg::cuda {

namespace cg = cooperative_groups;

namespace {

constexpr int kWarps = kSmallCgThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;
// History entries read back together with the record (one copy per solve);
// a longer history (max_iters beyond this) needs a second copy.
constexpr std::size_t kInlineHistory = 512;
constexpr std::size_t kRecordDoubles = sizeof(SmallCgRecord) / sizeof(double);
static_assert(sizeof(SmallCgRecord) % sizeof(double) == 0,
              "the record is followed by the history in one array of doubles");

template <class T>
struct Params {
  Index n;
  Index rows_per_block;  // block g owns rows [g * rows_per_block, (g + 1) * rows_per_block)
  const Index* row_ptr;
  const Index* col;
  const T* val;
  const T* b;
  T* x;
  T* r;
  T* q;
  T* p;             // two direction buffers of n, used alternately
  double* parts;    // 2 buffers x 2 values x G partial sums
  int* flags;       // G
  double* state;    // SmallCgRecord, then the history
  StoppingRule rule;
  int max_iters;
  int monitor;
  int store;
  int use_x0;
  NormType norm;
};

__device__ __forceinline__ float fma_t(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_t(double a, double b, double c) { return fma(a, b, c); }

// cg.cc's unusable_divisor.
__device__ __forceinline__ bool unusable(double d) { return d == 0.0 || !isfinite(d); }

// The norm term's combination: a sum for L1, for LMAX a max that keeps a
// NaN (fmax would drop it, and a NaN must reach the convergence test).
__device__ __forceinline__ double combine(bool is_max, double a, double b) {
  if (is_max) return (isnan(a) || isnan(b)) ? NAN : fmax(a, b);
  return a + b;
}

// A barrier over the grid; over the block when the grid is one block (then
// launched without the cooperative API, where a grid sync is not allowed).
__device__ __forceinline__ void grid_barrier() {
  if (gridDim.x == 1) {
    __syncthreads();
  } else {
    cg::this_grid().sync();
  }
}

struct Totals {
  double sum;    // sum of the first values (a dot product)
  double other;  // the second values combined (the L1 or LMAX norm term)
};

// Grid-wide totals of each thread's (sum, other): the block's partials go
// to buffer `epoch & 1` of `parts`, then after one grid barrier every warp
// of every block combines the G partials in the same order, so every thread
// returns the same bits. Two buffers suffice: a block writes a buffer again
// only after the next barrier, which every block reaches after reading it.
__device__ Totals grid_totals(double sum, double other, bool other_max, double* parts,
                              int& epoch) {
  __shared__ double shared[2][kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int G = gridDim.x;
  for (int off = 16; off > 0; off >>= 1) {
    sum += __shfl_down_sync(kFullMask, sum, off);
    other = combine(other_max, other, __shfl_down_sync(kFullMask, other, off));
  }
  if (lane == 0) {
    shared[0][warp] = sum;
    shared[1][warp] = other;
  }
  __syncthreads();
  double* buf = parts + static_cast<std::size_t>(epoch & 1) * 2 * G;
  ++epoch;
  if (warp == 0) {
    sum = lane < kWarps ? shared[0][lane] : 0.0;
    other = lane < kWarps ? shared[1][lane] : 0.0;
    for (int off = 16; off > 0; off >>= 1) {
      sum += __shfl_down_sync(kFullMask, sum, off);
      other = combine(other_max, other, __shfl_down_sync(kFullMask, other, off));
    }
    if (lane == 0) {
      buf[blockIdx.x] = sum;
      buf[G + blockIdx.x] = other;
    }
  }
  grid_barrier();
  // Written by other blocks during this launch: read through L2 (__ldcg),
  // never a possibly stale L1 line.
  double s = 0.0, o = 0.0;
  for (int i = lane; i < G; i += 32) {
    s += __ldcg(buf + i);
    o = combine(other_max, o, __ldcg(buf + G + i));
  }
  // A butterfly leaves the same bits in every lane (each step adds the same
  // two operands, and + and the NaN-keeping max are commutative).
  for (int off = 16; off > 0; off >>= 1) {
    s += __shfl_xor_sync(kFullMask, s, off);
    o = combine(other_max, o, __shfl_xor_sync(kFullMask, o, off));
  }
  return {s, o};
}

// The whole of DeviceSolver::solve for plain CG. Every thread keeps the
// loop's scalars and takes the same decisions (all are made from grid-wide
// totals), so the barriers are reached by all threads the same number of
// times. Vectors written by one block and read at other blocks' rows in a
// later phase (r, x and the old direction, through the SpMV) are read with
// __ldcg; each thread reads its own rows' p and q back itself.
// Two blocks per SM (<= 128 registers, no spills): 264 co-resident blocks
// on an H200, enough for kSmallCgMaxRows at kSmallCgRowsPerBlock.
template <class T>
__global__ void __launch_bounds__(kSmallCgThreads, 2) small_cg_kernel(Params<T> P) {
  const Index n = P.n;
  const long long lo_ll = static_cast<long long>(blockIdx.x) * P.rows_per_block;
  const Index lo = static_cast<Index>(lo_ll < n ? lo_ll : n);
  const Index hi = static_cast<Index>(lo_ll + P.rows_per_block < n ? lo_ll + P.rows_per_block : n);
  const Index first_row = lo + static_cast<Index>(threadIdx.x);
  constexpr Index kStride = kSmallCgThreads;
  const bool lmax = P.norm == NormType::kLMax;
  const bool other_norm = P.norm != NormType::kL2;
  const bool keep_history = P.monitor && P.store;
  const bool writer = blockIdx.x == 0 && threadIdx.x == 0;
  const bool x_is_zero = !P.use_x0;
  double* history = P.state + kRecordDoubles;
  int epoch = 0;

  auto norm_of = [&](const Totals& t) { return other_norm ? t.other : sqrt(t.sum); };
  // r = b - A x on this block's rows (r = b when zero_x), as DeviceSolver's
  // residual (cuSPARSE's -1 * A x + 1 * r is b - A x); totals of <r, r>
  // and the norm term.
  auto residual = [&](bool zero_x) {
    double rr = 0.0, other = 0.0;
    for (Index i = first_row; i < hi; i += kStride) {
      T ri;
      if (zero_x) {
        ri = P.b[i];
      } else {
        T ax = T(0);
        const Index end = __ldg(P.row_ptr + i + 1);
        for (Index k = __ldg(P.row_ptr + i); k < end; ++k) {
          ax += __ldg(P.val + k) * __ldcg(P.x + __ldg(P.col + k));
        }
        ri = P.b[i] - ax;
      }
      P.r[i] = ri;
      const double d = static_cast<double>(ri);
      rr += d * d;
      if (other_norm) other = combine(lmax, other, fabs(d));
    }
    return grid_totals(rr, other, lmax, P.parts, epoch);
  };

  // A zero guess: x = 0 now (the solve then either updates it or, with no
  // iteration run, returns it as DeviceSolver does).
  if (x_is_zero) {
    for (Index i = first_row; i < hi; i += kStride) P.x[i] = T(0);
  }

  SmallCgRecord rec;
  rec.status = static_cast<int>(Status::kSuccess);
  bool done = false;
  // <r, r> and the monitored norm of the current r, and whether r is already
  // b - A x for the next pass (the initial residual or a failed true check:
  // recomputing it would give the same bits).
  double rr = 0.0, nrm = 0.0;
  bool have_r = false;

  if (P.monitor) {
    const Totals t = residual(x_is_zero);
    rr = t.sum;
    nrm = norm_of(t);
    have_r = true;
    rec.initial = rec.largest = rec.final_norm = nrm;
    if (keep_history && writer) history[0] = nrm;
    if (!isfinite(nrm)) {
      rec.status = static_cast<int>(Status::kFailed);
      done = true;
    } else if (P.rule.converged(nrm, nrm, nrm)) {
      done = true;
    }
  }
  if (!done && P.max_iters == 0) {
    rec.status = static_cast<int>(P.monitor ? Status::kNotConverged : Status::kSuccess);
    done = true;
  }

  bool first_pass = true;
  int cur = 0;  // the buffer of P.p holding the current direction
  while (!done) {
    // method_init: a zero start (first pass only) or r = b - A x.
    if (!have_r) {
      const Totals t = residual(x_is_zero && first_pass);
      rr = t.sum;
      nrm = norm_of(t);
    }
    have_r = false;
    first_pass = false;
    ++rec.passes;
    bool first = true, from_recurrence = false;
    double rz = 0.0;
    while (rec.iterations < P.max_iters && !done) {
      // cg_direction: <r, r> unusable (0: r is exactly zero) stops the recurrence.
      bool stopped = unusable(rr);
      if (!stopped) {
        const double beta = first ? 0.0 : rr / rz;
        rz = rr;
        const T bt = static_cast<T>(beta);
        const T* p_old = P.p + static_cast<std::size_t>(cur) * n;
        T* p_new = P.p + static_cast<std::size_t>(cur ^ 1) * n;
        // p = r + beta p_old (p = r first) on own rows, and q = A p with p
        // formed the same way (fma_t: the same bits) at every column read.
        double pq = 0.0;
        for (Index i = first_row; i < hi; i += kStride) {
          T qi = T(0);
          const Index end = __ldg(P.row_ptr + i + 1);
          for (Index k = __ldg(P.row_ptr + i); k < end; ++k) {
            const Index j = __ldg(P.col + k);
            const T rj = __ldcg(P.r + j);
            const T pj = first ? rj : fma_t(bt, __ldcg(p_old + j), rj);
            qi += __ldg(P.val + k) * pj;
          }
          const T ri = __ldcg(P.r + i);
          const T pi = first ? ri : fma_t(bt, __ldcg(p_old + i), ri);
          p_new[i] = pi;
          P.q[i] = qi;
          pq += static_cast<double>(pi) * static_cast<double>(qi);
        }
        const double pq_total = grid_totals(pq, 0.0, false, P.parts, epoch).sum;
        cur ^= 1;
        first = false;
        // cg_step: an unusable <p, A p> stops before the update.
        if (unusable(pq_total)) {
          stopped = true;
        } else {
          const double alpha = rz / pq_total;
          const T at = static_cast<T>(alpha);
          double rr_part = 0.0, other = 0.0;
          for (Index i = first_row; i < hi; i += kStride) {
            const T pi = p_new[i];
            const T qi = P.q[i];
            P.x[i] += at * pi;
            const T ri = P.r[i] - at * qi;
            P.r[i] = ri;
            const double d = static_cast<double>(ri);
            rr_part += d * d;
            if (other_norm) other = combine(lmax, other, fabs(d));
          }
          const Totals t = grid_totals(rr_part, other, lmax, P.parts, epoch);
          rr = t.sum;
          nrm = norm_of(t);
        }
      }
      // loop_control_kernel's decision; after a stop, nrm is the norm of
      // the unchanged r.
      const int it = ++rec.iterations;
      const bool step_converged = stopped && nrm == 0.0;
      const bool breakdown = stopped && !step_converged;
      if (P.monitor) {
        from_recurrence = true;
        rec.final_norm = nrm;
        if (rec.largest < nrm) rec.largest = nrm;
        if (keep_history && writer) history[it] = nrm;
        if (!isfinite(nrm)) {
          rec.status = static_cast<int>(Status::kFailed);
          done = true;
        } else if (step_converged || P.rule.converged(nrm, rec.initial, rec.largest)) {
          rec.status = static_cast<int>(Status::kSuccess);
          done = true;
        } else if (P.rule.diverged(nrm, rec.initial)) {
          rec.status = static_cast<int>(Status::kDiverged);
          done = true;
        }
      } else if (step_converged) {
        rec.status = static_cast<int>(Status::kSuccess);
        done = true;
      }
      if (!done && breakdown) {
        rec.status = static_cast<int>(Status::kDiverged);
        done = true;
      }
    }
    if (!done) {
      rec.status = static_cast<int>(P.monitor ? Status::kNotConverged : Status::kSuccess);
      break;
    }
    if (rec.status == static_cast<int>(Status::kSuccess) && from_recurrence) {
      // The true residual before reporting SUCCESS; a miss restarts CG from
      // the current x while iterations remain.
      const Totals t = residual(false);
      ++rec.true_checks;
      const double true_norm = norm_of(t);
      if (isfinite(true_norm) && !P.rule.converged(true_norm, rec.initial, rec.largest)) {
        rec.final_norm = true_norm;
        if (keep_history && writer) history[rec.iterations] = true_norm;
        if (rec.iterations < P.max_iters) {
          done = false;
          rr = t.sum;
          nrm = true_norm;
          have_r = true;
          continue;
        }
        rec.status = static_cast<int>(Status::kNotConverged);
      }
    }
  }

  // DeviceSolver's all_finite(x): a NaN or Inf anywhere in x is FAILED.
  int bad = 0;
  for (Index i = first_row; i < hi; i += kStride) bad |= !isfinite(P.x[i]);
  bad = __syncthreads_or(bad);
  if (threadIdx.x == 0) P.flags[blockIdx.x] = bad;
  grid_barrier();
  if (writer) {
    for (int g = 0; g < static_cast<int>(gridDim.x); ++g) {
      if (__ldcg(P.flags + g)) rec.status = static_cast<int>(Status::kFailed);
    }
    *reinterpret_cast<SmallCgRecord*>(P.state) = rec;
  }
}

}  // namespace

bool small_cg_enabled() {
  const char* v = std::getenv("JAXAMG_SMALL_CG");
  return !(v && std::strcmp(v, "0") == 0);
}

int small_cg_forced_blocks() {
  const char* v = std::getenv("JAXAMG_SMALL_CG_BLOCKS");
  if (!v || !*v) return 0;
  char* end = nullptr;
  errno = 0;
  const long g = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || g < 1 || g > (1 << 20)) {
    throw InvalidInput(std::string("JAXAMG_SMALL_CG_BLOCKS='") + v +
                       "' is not a block count; set it to an integer from 1 to 1048576, or "
                       "unset it for the automatic count");
  }
  return static_cast<int>(g);
}

template <class T>
SmallCg<T>::SmallCg(const DeviceCsr<T>& A) : A_(A), n_(A.rows()) {}

template <class T>
SmallCg<T>::~SmallCg() {
  if (pinned_) cudaFreeHost(pinned_);
}

template <class T>
int SmallCg<T>::capacity() {
  if (capacity_ >= 0) return capacity_;
  int device = 0, coop = 0, sms = 0, per_sm = 0;
  check(cudaGetDevice(&device), "cudaGetDevice (small CG)");
  check(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device),
        "cudaDeviceGetAttribute (cooperative launch)");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute (multiprocessors)");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, small_cg_kernel<T>,
                                                      kSmallCgThreads, 0),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor (small CG)");
  capacity_ = coop ? per_sm * sms : 0;
  return capacity_;
}

// DeviceSolver's traffic model for the same solve (see its residual and
// read_back, and the one CG method's updates on the CUDA backend): the
// initial residual and its norm when monitored; per pass the residual of
// method_init (not for a zero start); per iteration the direction (3
// vectors), SpMV, <p, A p> (2), the updates of x and r (6), <r, r> (1) and
// the norm (1) -- the first iteration of a pass copies p = r, one vector
// less, and the pass's start reads r once for <r, r>, one more; per true
// check a residual and its norm.
template <class T>
double SmallCg<T>::model_bytes(const SmallCgRule& rule, bool use_x0) const {
  const double vec = static_cast<double>(n_) * sizeof(T);
  const double spmv = A_.spmv_bytes();
  // A residual is one fused kernel, or a copy and a cuSPARSE SpMV.
  const double residual = (A_.uses_cusparse() ? 3 : 1) * vec + spmv;
  double bytes = 0;
  if (rule.monitor) bytes += (use_x0 ? residual : 0) + vec;
  if (last_.passes > 0) bytes += (last_.passes - (use_x0 ? 0 : 1)) * residual;
  // With iterations run, every pass ran at least one (a restart needs one
  // left); its shorter first iteration and its <r, r> at the start cancel.
  if (last_.iterations > 0) bytes += last_.iterations * (13 * vec + spmv);
  bytes += last_.true_checks * (residual + vec);
  return bytes;
}

template <class T>
bool SmallCg<T>::solve(const SmallCgRule& rule, const T* b, T* x, bool use_x0,
                       cudaStream_t stream, std::vector<double>* history) {
  if (n_ < 1 || A_.rows() != n_) return false;
  const int forced = small_cg_forced_blocks();
  int G = forced > 0 ? forced : static_cast<int>((n_ + kSmallCgRowsPerBlock - 1) /
                                                 kSmallCgRowsPerBlock);
  if (G > 1) {
    // Every block must be resident at once for the grid barriers.
    const int cap = capacity();
    if (cap < 1) return false;
    if (G > cap) {
      if (forced > 0) return false;
      G = cap;
    }
  }
  const bool keep_history = rule.monitor && rule.store;
  const std::size_t history_cap =
      keep_history ? static_cast<std::size_t>(std::max(rule.max_iters, 0)) + 1 : 0;
  const std::size_t n = static_cast<std::size_t>(n_);
  r_.resize(n);
  q_.resize(n);
  p_.resize(2 * n);
  parts_.resize(4 * static_cast<std::size_t>(G));
  flags_.resize(static_cast<std::size_t>(G));
  state_.resize(kRecordDoubles + std::max<std::size_t>(history_cap, 1));
  if (!pinned_) {
    check(cudaMallocHost(reinterpret_cast<void**>(&pinned_),
                         (kRecordDoubles + kInlineHistory) * sizeof(double)),
          "cudaMallocHost (small CG record)");
  }

  Params<T> P;
  P.n = n_;
  P.rows_per_block = static_cast<Index>((n_ + G - 1) / G);
  P.row_ptr = A_.row_ptr();
  P.col = A_.col();
  P.val = A_.val();
  P.b = b;
  P.x = x;
  P.r = r_.data();
  P.q = q_.data();
  P.p = p_.data();
  P.parts = parts_.data();
  P.flags = flags_.data();
  P.state = state_.data();
  P.rule = rule.rule;
  P.max_iters = rule.max_iters;
  P.monitor = rule.monitor ? 1 : 0;
  P.store = rule.store ? 1 : 0;
  P.use_x0 = use_x0 ? 1 : 0;
  P.norm = rule.monitor ? rule.norm : NormType::kL2;

  // A refused launch (cooperative launch too large for what is free, an
  // unsupported configuration) is not an error of the solve: clear it and
  // let the caller take the multi-kernel path.
  cudaError_t launched;
  if (G == 1) {
    small_cg_kernel<T><<<1, kSmallCgThreads, 0, stream>>>(P);
    launched = cudaGetLastError();
  } else {
    void* args[] = {&P};
    launched = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(small_cg_kernel<T>),
                                           dim3(G), dim3(kSmallCgThreads), args, 0, stream);
  }
  if (launched != cudaSuccess) {
    cudaGetLastError();
    return false;
  }

  const std::size_t inline_history = std::min(history_cap, kInlineHistory);
  check(cudaMemcpyAsync(pinned_, state_.data(), (kRecordDoubles + inline_history) * sizeof(double),
                        cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (small CG record)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (small CG)");
  std::memcpy(&last_, pinned_, sizeof(SmallCgRecord));
  if (history) history->clear();
  if (keep_history && history) {
    const std::size_t len = static_cast<std::size_t>(last_.iterations) + 1;
    const double* h = pinned_ + kRecordDoubles;
    history->assign(h, h + std::min(len, inline_history));
    if (len > inline_history) {
      history->resize(len);
      check(cudaMemcpyAsync(history->data() + inline_history,
                            state_.data() + kRecordDoubles + inline_history,
                            (len - inline_history) * sizeof(double), cudaMemcpyDeviceToHost,
                            stream),
            "cudaMemcpyAsync (small CG history)");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (small CG history)");
    }
  }
  last_blocks_ = G;
  last_bytes_ = model_bytes(rule, use_x0);
  return true;
}

template class SmallCg<float>;
template class SmallCg<double>;

}  // namespace jaxamg::cuda
