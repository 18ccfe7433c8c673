// Strength of connection for classical AMG: which couplings of a row are
// large enough that the point should interpolate through them. The graph is
// stored both ways because coarse-point selection needs the points a point
// depends on (S) and the points that depend on it (S^T).
#pragma once
#include <cstdint>
#include <vector>

#include "core/csr_matrix.h"
#include "core/parallel.h"

namespace jaxamg::classical {

enum class StrengthKind {
  kAhat,  // sign-aware: -s a_ij >= theta * max_k(-s a_ik), s = sign(a_ii)
  kAll,   // every stored nonzero off-diagonal coupling is strong
};

struct StrengthParams {
  StrengthKind kind = StrengthKind::kAhat;
  double theta = 0.25;        // strength_threshold
  double max_row_sum = 1.1;   // active when < 1
};

// Loops over fewer rows (points, entries) than this run serially in the
// classical kernels.
constexpr Index kSerialBelow = kParallelRows;

struct StrengthGraph {
  Index n = 0;
  // S: row i lists the points that i strongly depends on (sorted).
  std::vector<Index> row_ptr{0}, col;
  // S^T: row i lists the points that strongly depend on i (sorted). The
  // row offsets (hence num_influences) are always there; t_col only when
  // asked for (HMIS needs it, PMIS does not).
  std::vector<Index> t_row_ptr{0}, t_col;
  // One flag per stored entry of A: 1 where the entry is a strong dependence
  // (never on the diagonal). Interpolation walks A's rows with this mask.
  std::vector<uint8_t> strong;

  Index num_depends(Index i) const { return row_ptr[i + 1] - row_ptr[i]; }
  Index num_influences(Index i) const { return t_row_ptr[i + 1] - t_row_ptr[i]; }
};

// Computes S, S^T (columns if `with_transpose`) and the mask. Throws
// ConfigError for a threshold outside [0, 1].
template <class T>
StrengthGraph strength_graph(const CsrMatrix<T>& A, const StrengthParams& p,
                             bool with_transpose = true);

// Positions of the diagonal entries (-1 where absent), taken from A.diag_pos
// when it is filled and searched for otherwise.
template <class T>
std::vector<Index> diagonal_positions(const CsrMatrix<T>& A);

}  // namespace jaxamg::classical
