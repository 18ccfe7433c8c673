// The tentative prolongation of smoothed aggregation fitted to near-null-space
// vectors B (n x m): per aggregate, a thin QR of B restricted to the
// aggregate's unknowns, B_agg = Q R. Q's columns are the aggregate's block of
// columns of P_tent and R's rows the aggregate's rows of the coarse B_c, so
// P_tent B_c = B exactly on aggregated unknowns and P_tent^T P_tent = I.
//
// Rank deficiency: a column of B_agg that depends on the earlier ones (the
// rotation about the line through a 2-node aggregate in 3D) keeps its slot
// with a unit vector orthogonal to Q (the unknown with the largest component
// left), and a zero row of B_c; the coarse level keeps m unknowns per node.
// Only an aggregate with fewer unknowns than m cannot do that: its dependent
// slots are dropped, and the coarse level then has no uniform block size.
#pragma once
#include <vector>

#include "amg/coarsening.h"
#include "core/csr_matrix.h"
#include "core/near_nullspace.h"

namespace jaxamg::aggregation {

struct TentativeProlongator {
  Index coarse_rows = 0;         // columns of P_tent = rows of B_c
  Index coarse_block_dim = 1;    // m if every aggregate kept m columns, else 1
  std::vector<Index> offset;     // per aggregate: first coarse unknown (count + 1)
  NearNullspace coarse;          // B_c
  Index dependent_columns = 0;   // columns of B found dependent inside an aggregate
  Index dropped_columns = 0;     // of those, slots that could not be kept
};

// node_of: per node (block of `block_dim` unknowns) its aggregate or -1;
// count aggregates. B.rows must equal node_of.size() * block_dim.
// Fills P (n x coarse_rows, CSR) and returns the coarse data.
template <class T>
TentativeProlongator tentative_prolongator(const std::vector<Index>& node_of, Index count,
                                           Index block_dim, const NearNullspace& B,
                                           CsrMatrix<T>& P);

}  // namespace jaxamg::aggregation
