// Helpers of the MPI tests: every process builds the same global test
// matrix (small), takes its block of rows with global columns, and compares
// what the distributed engine returns with the serial engine's answer.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/csr_matrix.h"

namespace jaxamg::mpitest {

inline int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// Row blocks: equal (as equal as whole blocks allow) or unequal (rank r gets
// a share growing with r), in units of block_dim rows.
inline std::vector<int64_t> partition_starts(int64_t n, int nranks, bool unequal,
                                             int64_t block_dim = 1) {
  const int64_t nodes = n / block_dim;
  std::vector<int64_t> w(nranks, 1);
  if (unequal) {
    for (int r = 0; r < nranks; ++r) w[r] = r + 1;
  }
  int64_t total = 0;
  for (int64_t x : w) total += x;
  std::vector<int64_t> starts(nranks + 1, 0);
  int64_t acc = 0;
  for (int r = 0; r < nranks; ++r) {
    acc += w[r];
    starts[r + 1] = nodes * acc / total * block_dim;
  }
  starts[nranks] = n;
  return starts;
}

// Rows [lo, hi) of A with global columns, as the FFI receives them.
template <class T>
struct LocalRows {
  std::vector<int32_t> row_ptr, col;
  std::vector<T> val;
};

template <class T>
LocalRows<T> take_rows(const CsrMatrix<T>& A, int64_t lo, int64_t hi) {
  LocalRows<T> out;
  out.row_ptr.push_back(0);
  for (int64_t i = lo; i < hi; ++i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      out.col.push_back(A.col[k]);
      out.val.push_back(A.val[k]);
    }
    out.row_ptr.push_back(static_cast<int32_t>(out.col.size()));
  }
  return out;
}

// A random sparse matrix, the same on every process (fixed seed): about
// `per_row` off-diagonal entries per row, near the diagonal and far, with a
// dominant diagonal. symmetric: A = A^T (SPD).
template <class T>
CsrMatrix<T> random_matrix(int n, int per_row, bool symmetric, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> near(-4, 4), far(0, n - 1);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<std::vector<std::pair<int, double>>> rows(n);
  for (int i = 0; i < n; ++i) {
    for (int e = 0; e < per_row; ++e) {
      const int j = (e % 3 == 2) ? far(gen) : std::clamp(i + near(gen), 0, n - 1);
      if (j == i) continue;
      const double v = val(gen);
      rows[i].emplace_back(j, v);
      if (symmetric) rows[j].emplace_back(i, v);
    }
  }
  CsrMatrix<T> A(n, n);
  for (int i = 0; i < n; ++i) {
    std::sort(rows[i].begin(), rows[i].end());
    std::vector<std::pair<int, double>> merged;
    for (auto& e : rows[i]) {
      if (!merged.empty() && merged.back().first == e.first) {
        merged.back().second += e.second;
      } else {
        merged.push_back(e);
      }
    }
    double offsum = 0;
    for (auto& e : merged) offsum += std::abs(e.second);
    merged.emplace_back(i, offsum + 1.0 + (symmetric ? 0.0 : 0.5 * val(gen)));
    std::sort(merged.begin(), merged.end());
    for (auto& [c, v] : merged) {
      A.col.push_back(c);
      A.val.push_back(static_cast<T>(v));
    }
    A.row_ptr[i + 1] = static_cast<Index>(A.col.size());
  }
  A.find_diagonal();
  return A;
}

inline std::vector<double> random_vector(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = d(gen);
  return v;
}

// True on every process iff `s` is the same string on every process.
inline bool same_on_all_ranks(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  uint64_t lo = h, hi = h;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

// Runs f and returns the exception message ("" if none).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace jaxamg::mpitest
