// Variable-length rows between neighbours along a halo plan: the setup of
// distributed classical AMG moves whole rows (of A for distance-two
// interpolation, of P for the Galerkin product, of partial coarse rows to
// their owners) where a halo exchange moves one value per point.
#pragma once
#include <cstdint>
#include <vector>

#include "dist/halo_plan.h"

namespace jaxamg::dist {

// Rows with global column ids: row r holds (col, val)[start[r], start[r+1]).
template <class V>
struct RowSet {
  std::vector<int64_t> start{0};
  std::vector<int64_t> col;
  std::vector<V> val;

  std::size_t rows() const { return start.size() - 1; }
  void push(int64_t c, V v) {
    col.push_back(c);
    val.push_back(v);
  }
  void end_row() { start.push_back(static_cast<int64_t>(col.size())); }
};

// Collective (neighbours only). Forward: `out` holds one row per send slot of
// the plan (send order, i.e. the row of local point send_index()[s]); the
// result holds one row per ghost slot, from the ghost's owner.
template <class V>
RowSet<V> rows_to_ghosts(const HaloPlan& plan, const RowSet<V>& out);

// Collective (neighbours only). Reverse: `out` holds one row per ghost slot;
// each travels to the ghost's owner. The result holds one row per send slot
// (send order: row s belongs to local point send_index()[s]).
template <class V>
RowSet<V> rows_to_owners(const HaloPlan& plan, const RowSet<V>& out);

}  // namespace jaxamg::dist
