// Classical interpolation operators P (n_fine x n_coarse). C rows are
// identity rows; F rows interpolate from C points only, with weights chosen
// so that P reproduces constants wherever A has zero row sum.
#pragma once
#include <cstdint>
#include <vector>

#include "amg/classical/truncation.h"
#include "core/csr_matrix.h"

namespace jaxamg::classical {

template <class T>
struct InterpolationInput {
  const CsrMatrix<T>& A;
  const std::vector<Index>& diag_pos;   // diagonal_positions(A)
  const std::vector<uint8_t>& strong;   // StrengthGraph::strong (one flag per entry of A)
  const std::vector<int8_t>& cf;        // kCoarse / kFine per point
  const std::vector<Index>& coarse_index;
  Index n_coarse;
  // Optional: rows i with skip_rows[i] != 0 are left empty (not computed).
  const uint8_t* skip_rows = nullptr;
};

// Direct (distance-one) interpolation, Stueben's formula, AmgX's D1: an F
// point interpolates from its strong C neighbours; the other couplings are
// distributed over them (negative and positive couplings separately).
// With `pattern` (the P of an earlier build on the same sparsity) the
// weights are recomputed on that pattern instead of being truncated afresh.
template <class T>
void direct_interpolation(const InterpolationInput<T>& in, const Truncation& trunc,
                          const CsrMatrix<T>* pattern, CsrMatrix<T>& P);

// Extended+i interpolation (De Sterck, Falgout, Nolting, Yang 2008), AmgX's
// D2: an F point also interpolates from the strong C neighbours of its strong
// F neighbours, which gives PMIS/HMIS splittings their convergence.
template <class T>
void extended_i_interpolation(const InterpolationInput<T>& in, const Truncation& trunc,
                              const CsrMatrix<T>* pattern, CsrMatrix<T>& P);

// Multipass interpolation (Stueben), AmgX's MULTIPASS and the default
// aggressive_interpolator: F points far from C points interpolate through
// the rows of F points closer to them. Truncation applies to every row as it
// is computed, so later passes substitute truncated rows.
template <class T>
void multipass_interpolation(const InterpolationInput<T>& in, const Truncation& trunc,
                             const CsrMatrix<T>* pattern, CsrMatrix<T>& P);

// Two-stage extended+i interpolation for an aggressive (two-stage) splitting
// (Yang, "On long-range interpolation operators for aggressive coarsening",
// NLAA 2010): P = P1 P2, where P1 is the extended+i interpolation from every
// point to the first-stage C points `first_stage`, and P2 interpolates the
// first-stage C points to the final C points of `in.cf` (identity on final C
// points; extended+i on A for the others, which reach final C points through
// one F point). The truncation applies to P1, to P2 and to the product.
template <class T>
void two_stage_interpolation(const InterpolationInput<T>& in,
                             const std::vector<int8_t>& first_stage, const Truncation& trunc,
                             const CsrMatrix<T>* pattern, CsrMatrix<T>& P);

}  // namespace jaxamg::classical
