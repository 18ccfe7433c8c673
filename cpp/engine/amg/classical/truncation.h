// Truncation of interpolation rows (hypre's trunc_factor and P_max_elmts,
// AmgX's interp_truncation_factor and interp_max_elements): small weights are
// dropped to keep the coarse operators sparse, and the survivors are scaled
// so each row keeps its sum (interpolation of constants stays exact).
#pragma once
#include <vector>

#include "core/types.h"

namespace jaxamg::classical {

struct RowEntry {
  Index col;   // coarse column
  double val;  // weight
};

struct Truncation {
  double factor = 1.1;    // drop |w| < factor * max|w|; active in (0, 1)
  int max_elements = -1;  // keep at most this many entries; active when > 0
  bool factor_active() const { return factor > 0.0 && factor < 1.0; }
  bool active() const { return factor_active() || max_elements > 0; }
};

// Applies the factor test, then keeps the max_elements largest |w| (ties to
// the lower column), then rescales. Which entries stay does not depend on
// the order of `row`; they keep that order (callers pass rows sorted by
// column, except for intermediate rows whose order does not matter).
void truncate_row(std::vector<RowEntry>& row, const Truncation& t, std::vector<RowEntry>& scratch);

// Resetup: replaces the sorted `row` by its values on the sorted columns
// [pb, pe) of an earlier P (0 where a column is absent) and rescales the same
// way, so unchanged values give the earlier row bit for bit.
void restrict_row(std::vector<RowEntry>& row, const Index* pb, const Index* pe,
                  std::vector<RowEntry>& scratch);

}  // namespace jaxamg::classical
