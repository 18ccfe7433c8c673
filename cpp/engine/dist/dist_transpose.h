// The transpose of a distributed matrix, for adjoint solves (A^T x = b).
// Process p owns rows [s_p, s_p + n_p) of A and the same rows of A^T, i.e.
// the columns [s_p, s_p + n_p) of A. Entries of A in owned columns become
// local rows of A^T at once; entries in ghost columns are sent to the
// columns' owners along the halo plan's neighbours, in reverse (the owners
// of this process's ghosts are exactly the processes it sends to). Nothing
// but those off-process entries travels: no process sees the global matrix.
#pragma once
#include "dist/dist_matrix.h"

namespace jaxamg::dist {

// Where every entry of A lands in A^T, kept so that new values of A move
// into A^T by one exchange of values with the same neighbours (the cached
// exchange plan of the adjoint), without rebuilding structure or plan.
struct TransposeMap {
  std::vector<Index> local_slot;  // per entry of A: its slot in A^T, or -1 if sent away
  std::vector<Index> send_entry;  // per sent value, in send order: the entry of A
  std::vector<Index> recv_slot;   // per received value: its slot in A^T
  std::vector<int> send_counts, recv_counts;  // per plan.recv_ranks() / plan.send_ranks()
};

// Collective. The result is distributed (dist attached) with its own plan;
// `map` (if given) receives the entry map for transpose_values.
template <class T>
LocalMatrix<T> transpose(const Communicator& comm, const RowPartition& part,
                         const CsrMatrix<T>& A, const std::vector<int64_t>& ghosts,
                         const HaloPlan& plan, TransposeMap* map = nullptr);

// Collective. Writes A's current values into At (built by transpose() with
// `map` from a matrix of A's structure).
template <class T>
void transpose_values(const Communicator& comm, const HaloPlan& plan, const TransposeMap& map,
                      const CsrMatrix<T>& A, CsrMatrix<T>& At);

}  // namespace jaxamg::dist
