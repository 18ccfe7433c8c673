// Classical AMG coarsening across process boundaries (hypre BoomerAMG
// style): strength of connection on the full local rows (owned and ghost
// columns), the splitting by distributed PMIS (dist_pmis.h), and direct
// (D1) or extended+i (D2) interpolation from C points of any process.
// HMIS runs its Ruge-Stueben first pass on each process's block of S (as
// hypre does; the pass is sequential), then PMIS across processes: its
// splitting is the serial one on one process and depends on the partition
// on more.
//
// The interpolation runs the serial kernels (amg/classical/interpolation.h)
// on an "extended" local matrix: every point this process knows of (owned,
// ghost, and for D2 the columns of the ghost rows), numbered in increasing
// global id, with the owned rows and, for D2, the ghost rows (whole rows,
// received from their owners along the halo plan; D2 reads the rows of an F
// point's strong F neighbours). Numbered this way every row and every
// coarse column keeps the serial order, so an owned row of P is computed
// from the same numbers in the same order as the serial row: with the
// serial splitting, P equals the serial P (exactly on one process).
//
// C points are numbered by global id: process p's C points get the global
// coarse ids that follow those of processes < p (an exclusive scan of the
// counts), the serial coarse numbering. P's columns are [owned C | ghost C]
// local, with the ghost C points' global ids.
#pragma once
#include <cstdint>
#include <vector>

#include "amg/classical/classical_coarsening.h"
#include "dist/dist_matrix.h"

namespace jaxamg::dist {

// P of one level: n_local rows, columns [0, nc) the owned coarse points,
// nc + k the coarse point of global id ghosts[k] (sorted).
template <class T>
struct DistProlongation {
  CsrMatrix<T> P;
  Index nc = 0;
  std::vector<int64_t> ghosts;
};

template <class T>
class DistClassical {
 public:
  explicit DistClassical(const classical::ClassicalParams& p) : p_(p) {}
  // The selectors and interpolators built across processes: PMIS or HMIS
  // with D1 or D2 (the others coarsen rank-locally).
  static bool supports(const classical::ClassicalParams& p);

  // Collective. Strength, splitting and P of the level matrix A (distributed
  // by `op`).
  void build(const DistOperator<T>& op, const CsrMatrix<T>& A, DistProlongation<T>& out);
  // True if A has the local shape and entry count of the last build (every
  // process must agree before a rebuild: it exchanges with the neighbours).
  bool fits(const CsrMatrix<T>& A) const;
  // Collective. A has the sparsity seen by build(): keeps the strength, the
  // splitting and P's pattern, and recomputes P's weights from A's values
  // (as the serial ClassicalCoarsening::rebuild).
  void rebuild(const DistOperator<T>& op, const CsrMatrix<T>& A, DistProlongation<T>& out);

  // kCoarse / kFine per owned point.
  const std::vector<int8_t>& splitting() const { return cf_; }

 private:
  // The extended matrix: its structure (first) or only new values.
  void extend(const DistOperator<T>& op, const CsrMatrix<T>& A, bool structure);
  void interpolate(bool keep_pattern, DistProlongation<T>& out);

  classical::ClassicalParams p_;
  bool ghost_rows_ = false;          // D2 reads the ghost points' rows
  Index n_ = 0;                      // owned points
  std::vector<int64_t> ghost_gid_;   // global ids of A's ghost columns
  std::vector<int64_t> ext_gid_;     // global id of every extended point (sorted)
  std::vector<Index> ext_of_local_;  // [owned | ghost] local point -> extended point
  CsrMatrix<T> ext_;                 // extended matrix (square, extended numbering)
  std::vector<Index> owned_slot_;    // per entry of A: its slot in ext_
  std::vector<Index> ghost_slot_;    // per entry of the received ghost rows: its slot
  std::vector<uint8_t> strong_;      // strength mask on ext_'s entries
  std::vector<int8_t> cf_;           // owned points
  std::vector<int8_t> cf_ext_;
  std::vector<Index> cidx_ext_;      // coarse index in the extended numbering (-1: F)
  std::vector<int64_t> cgid_;        // per extended coarse index: its global coarse id
  std::vector<uint8_t> skip_;        // rows of ext_ that are not owned
  int64_t cstart_ = 0;               // global coarse id of the first owned C point
  Index nc_ = 0;
  CsrMatrix<T> P_ext_;               // P in the extended numbering (a rebuild's pattern)
};

}  // namespace jaxamg::dist
