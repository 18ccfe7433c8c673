#include "core/csr_matrix.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "core/parallel.h"

namespace jaxamg {

const char* status_name(Status s) {
  switch (s) {
    case Status::kSuccess: return "SUCCESS";
    case Status::kFailed: return "FAILED";
    case Status::kDiverged: return "DIVERGED";
    case Status::kNotConverged: return "NOT_CONVERGED";
  }
  return "UNKNOWN";
}

template <class T>
Index CsrMatrix<T>::find_diagonal() {
  diag_pos.assign(nrows, -1);
  Index missing = 0;
  // Const views: reading a borrowed matrix must not copy it.
  const Index* rp = std::as_const(row_ptr).data();
  const Index* ci = std::as_const(col).data();
  // Small matrices (coarse levels) are searched serially: a parallel region
  // costs more than the loop there.
#pragma omp parallel for reduction(+ : missing) schedule(static) if (nrows > kParallelRows)
  for (Index i = 0; i < nrows; ++i) {
    // Columns are sorted: binary search.
    const Index* b = ci + rp[i];
    const Index* e = ci + rp[i + 1];
    const Index* p = std::lower_bound(b, e, i);
    if (p != e && *p == i) {
      diag_pos[i] = static_cast<Index>(p - ci);
    } else {
      ++missing;
    }
  }
  return missing;
}

template <class T>
std::vector<T> CsrMatrix<T>::diagonal() const {
  std::vector<T> d(nrows, T(0));
  for (Index i = 0; i < nrows; ++i) {
    if (diag_pos[i] >= 0) d[i] = val[diag_pos[i]];
  }
  return d;
}

template <class T>
bool canonicalize(CsrMatrix<T>& A, const std::string& what) {
  // Reads go through a const view: a borrowed matrix (core/csr_array.h)
  // that is already canonical stays borrowed.
  const CsrMatrix<T>& C = A;
  auto fail = [&](const std::string& msg) { throw InvalidInput(what + ": " + msg); };
  if (A.nrows < 0 || A.ncols < 0) fail("negative shape");
  if (static_cast<Index>(C.row_ptr.size()) != A.nrows + 1) {
    std::ostringstream os;
    os << "row offsets have " << C.row_ptr.size() << " entries but the matrix has " << A.nrows
       << " rows; pass nrows + 1 offsets";
    fail(os.str());
  }
  if (C.row_ptr[0] != 0) fail("row offsets must start at 0, got " + std::to_string(C.row_ptr[0]));
  for (Index i = 0; i < A.nrows; ++i) {
    if (C.row_ptr[i + 1] < C.row_ptr[i]) {
      fail("row offsets must be non-decreasing; row " + std::to_string(i) + " has offsets " +
           std::to_string(C.row_ptr[i]) + " > " + std::to_string(C.row_ptr[i + 1]));
    }
  }
  const Index nnz = C.row_ptr[A.nrows];
  if (static_cast<Index>(C.col.size()) != nnz || static_cast<Index>(C.val.size()) != nnz) {
    std::ostringstream os;
    os << "row offsets announce " << nnz << " entries but " << C.col.size()
       << " column indices and " << C.val.size() << " values were given";
    fail(os.str());
  }
  bool changed = false;
  // Check ranges and finiteness, and whether every row is already sorted
  // (in parallel; the first offending row is found again serially).
  const Index* rp = C.row_ptr.data();
  const Index* ci = C.col.data();
  const T* v = C.val.data();
  const Index ncols = A.ncols;
  Index bad_index_row = A.nrows, bad_value_row = A.nrows;
  int unsorted = 0;
#pragma omp parallel for schedule(static) reduction(min : bad_index_row, bad_value_row) \
    reduction(| : unsorted) if (nnz > (1 << 16))
  for (Index i = 0; i < A.nrows; ++i) {
    const Index k1 = rp[i + 1];
    bool bad_i = false, bad_v = false;
    for (Index k = rp[i]; k < k1; ++k) {
      bad_i |= ci[k] < 0 || ci[k] >= ncols;
      bad_v |= !std::isfinite(static_cast<double>(v[k]));
      if (k > rp[i]) unsorted |= ci[k] <= ci[k - 1];
    }
    if (bad_i) bad_index_row = std::min(bad_index_row, i);
    if (bad_v) bad_value_row = std::min(bad_value_row, i);
  }
  // An index error is reported first, at its first occurrence; a value
  // error only when it comes before any index error (so there is none).
  if (bad_index_row < A.nrows) {
    Index bad_col = 0;
    for (Index k = rp[bad_index_row]; k < rp[bad_index_row + 1]; ++k) {
      if (ci[k] < 0 || ci[k] >= ncols) { bad_col = ci[k]; break; }
    }
    fail("column index " + std::to_string(bad_col) + " in row " + std::to_string(bad_index_row) +
         " is out of range [0, " + std::to_string(A.ncols) + "); pass 0-based column indices");
  }
  if (bad_value_row < A.nrows) {
    Index bad_col = 0;
    for (Index k = rp[bad_value_row]; k < rp[bad_value_row + 1]; ++k) {
      if (!std::isfinite(static_cast<double>(v[k]))) { bad_col = ci[k]; break; }
    }
    fail("entry (" + std::to_string(bad_value_row) + ", " + std::to_string(bad_col) +
         ") is NaN or infinite; pass finite matrix values");
  }
  // Sort unsorted rows and merge duplicates (summing them, as SciPy does).
  if (unsorted) {
    changed = true;
    std::vector<Index> new_ptr(A.nrows + 1, 0);
    std::vector<Index> new_col;
    std::vector<T> new_val;
    new_col.reserve(nnz);
    new_val.reserve(nnz);
    std::vector<std::pair<Index, T>> row;
    for (Index i = 0; i < A.nrows; ++i) {
      row.clear();
      for (Index k = C.row_ptr[i]; k < C.row_ptr[i + 1]; ++k) row.emplace_back(C.col[k], C.val[k]);
      std::stable_sort(row.begin(), row.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t k = 0; k < row.size(); ++k) {
        if (k > 0 && row[k].first == new_col.back()) {
          new_val.back() += row[k].second;
        } else {
          new_col.push_back(row[k].first);
          new_val.push_back(row[k].second);
        }
      }
      new_ptr[i + 1] = static_cast<Index>(new_col.size());
    }
    A.row_ptr = std::move(new_ptr);
    A.col = std::move(new_col);
    A.val = std::move(new_val);
  }
  A.find_diagonal();
  return changed;
}

template <class T>
CsrMatrix<T> make_csr(Index nrows, Index ncols, const Index* row_ptr, const Index* col,
                      const T* val, Index nnz, const std::string& what) {
  if (nrows < 0 || ncols < 0 || nnz < 0) throw InvalidInput(what + ": negative size");
  CsrMatrix<T> A;
  A.nrows = nrows;
  A.ncols = ncols;
  A.row_ptr.assign(row_ptr, row_ptr + nrows + 1);
  A.col.assign(col, col + nnz);
  A.val.assign(val, val + nnz);
  canonicalize(A, what);
  return A;
}

template <class T>
void require_nonzero_diagonal(const CsrMatrix<T>& A, const std::string& who) {
  for (Index i = 0; i < A.nrows; ++i) {
    if (A.diag_pos[i] < 0 || A.val[A.diag_pos[i]] == T(0)) {
      throw InvalidInput(who + " divides by the diagonal, but " + row_name(A, i) + " has " +
                         (A.diag_pos[i] < 0 ? "no stored diagonal" : "a zero diagonal") +
                         "; use a smoother that does not divide by it (e.g. JACOBI_L1) or fix "
                         "the matrix");
    }
  }
}

template <class T>
CsrMatrix<T> transpose(const CsrMatrix<T>& A) {
  CsrMatrix<T> B(A.ncols, A.nrows);
  const Index nnz = A.nnz();
  B.col.resize(nnz);
  B.val.resize(nnz);
  for (Index k = 0; k < nnz; ++k) ++B.row_ptr[A.col[k] + 1];
  for (Index i = 0; i < B.nrows; ++i) B.row_ptr[i + 1] += B.row_ptr[i];
  std::vector<Index> next(B.row_ptr.begin(), B.row_ptr.end() - 1);
  for (Index i = 0; i < A.nrows; ++i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const Index dst = next[A.col[k]]++;
      B.col[dst] = i;  // rows visited in order: columns of B come out sorted
      B.val[dst] = A.val[k];
    }
  }
  B.find_diagonal();
  B.block_dim = A.block_dim;  // the transpose of a block matrix is blocked alike
  return B;
}

template <class To, class From>
CsrMatrix<To> convert_values(const CsrMatrix<From>& A) {
  CsrMatrix<To> B;
  B.nrows = A.nrows;
  B.ncols = A.ncols;
  B.row_ptr = A.row_ptr;
  B.col = A.col;
  B.diag_pos = A.diag_pos;
  B.block_dim = A.block_dim;
  B.val.assign(A.val.begin(), A.val.end());
  return B;
}

template <class T>
bool is_symmetric(const CsrMatrix<T>& A, double tol) {
  if (A.nrows != A.ncols) return false;
  CsrMatrix<T> B = transpose(A);
  if (B.row_ptr != A.row_ptr || B.col != A.col) return false;
  double vmax = 0;
  for (const T& v : A.val) vmax = std::max(vmax, std::abs(static_cast<double>(v)));
  for (Index k = 0; k < A.nnz(); ++k) {
    if (std::abs(static_cast<double>(A.val[k] - B.val[k])) > tol * vmax) return false;
  }
  return true;
}

#define JAXAMG_INSTANTIATE(T)                                                               \
  template struct CsrMatrix<T>;                                                             \
  template bool canonicalize(CsrMatrix<T>&, const std::string&);                            \
  template CsrMatrix<T> make_csr(Index, Index, const Index*, const Index*, const T*, Index, \
                                 const std::string&);                                       \
  template void require_nonzero_diagonal(const CsrMatrix<T>&, const std::string&);          \
  template CsrMatrix<T> transpose(const CsrMatrix<T>&);                                     \
  template bool is_symmetric(const CsrMatrix<T>&, double);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE
template CsrMatrix<float> convert_values(const CsrMatrix<double>&);
template CsrMatrix<double> convert_values(const CsrMatrix<float>&);
template CsrMatrix<double> convert_values(const CsrMatrix<double>&);
template CsrMatrix<float> convert_values(const CsrMatrix<float>&);

}  // namespace jaxamg
