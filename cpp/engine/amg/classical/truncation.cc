#include "amg/classical/truncation.h"

#include <algorithm>
#include <cmath>

namespace jaxamg::classical {

namespace {

struct SignSums {
  double pos = 0, neg = 0;
};

SignSums sign_sums(const std::vector<RowEntry>& row) {
  SignSums s;
  for (const RowEntry& e : row) (e.val > 0 ? s.pos : s.neg) += e.val;
  return s;
}

// Scales `kept` so that its sum equals the sum of the full row, whose
// positive and negative parts are `full`. The two signs are scaled
// separately, as in hypre, so a row of mixed signs is not distorted by one
// factor; a sign group that lost every entry hands its mass to the other.
void rescale(SignSums full, std::vector<RowEntry>& kept) {
  const SignSums k = sign_sums(kept);
  if (k.pos == 0) { full.neg += full.pos; full.pos = 0; }
  if (k.neg == 0) { full.pos += full.neg; full.neg = 0; }
  const double scale_pos = k.pos != 0 ? full.pos / k.pos : 1.0;
  const double scale_neg = k.neg != 0 ? full.neg / k.neg : 1.0;
  for (RowEntry& e : kept) e.val *= e.val > 0 ? scale_pos : scale_neg;
}

}  // namespace

void truncate_row(std::vector<RowEntry>& row, const Truncation& t, std::vector<RowEntry>& scratch) {
  if (!t.active() || row.empty()) return;
  if (!t.factor_active() && row.size() <= static_cast<std::size_t>(t.max_elements)) return;
  const std::size_t len = row.size();
  const SignSums full = sign_sums(row);
  if (t.factor_active()) {
    double wmax = 0;
    for (const RowEntry& e : row) wmax = std::max(wmax, std::abs(e.val));
    const double cut = t.factor * wmax;
    row.erase(std::remove_if(row.begin(), row.end(),
                             [cut](const RowEntry& e) { return std::abs(e.val) < cut; }),
              row.end());
  }
  if (t.max_elements > 0 && row.size() > static_cast<std::size_t>(t.max_elements)) {
    // The max_elements-th largest (|w|, -col) decides; the row stays in
    // column order.
    const auto larger = [](const RowEntry& a, const RowEntry& b) {
      const double x = std::abs(a.val), y = std::abs(b.val);
      return x > y || (x == y && a.col < b.col);
    };
    RowEntry last;
    const std::size_t keep = static_cast<std::size_t>(t.max_elements);
    if (keep <= 8) {
      // Short list of the largest entries, kept sorted (rows are short).
      RowEntry top[8];
      std::size_t nt = 0;
      for (const RowEntry& e : row) {
        if (nt == keep && !larger(e, top[nt - 1])) continue;
        std::size_t q = nt < keep ? nt++ : nt - 1;
        for (; q > 0 && larger(e, top[q - 1]); --q) top[q] = top[q - 1];
        top[q] = e;
      }
      last = top[keep - 1];
    } else {
      scratch = row;
      std::nth_element(scratch.begin(), scratch.begin() + (keep - 1), scratch.end(), larger);
      last = scratch[keep - 1];
    }
    row.erase(std::remove_if(row.begin(), row.end(),
                             [&](const RowEntry& e) { return larger(last, e); }),
              row.end());
  }
  if (row.size() != len) rescale(full, row);
}

void restrict_row(std::vector<RowEntry>& row, const Index* pb, const Index* pe,
                  std::vector<RowEntry>& scratch) {
  scratch.clear();
  std::size_t k = 0;
  for (const Index* p = pb; p != pe; ++p) {
    while (k < row.size() && row[k].col < *p) ++k;
    const double v = (k < row.size() && row[k].col == *p) ? row[k].val : 0.0;
    scratch.push_back({*p, v});
  }
  if (scratch.size() != row.size()) rescale(sign_sums(row), scratch);
  row.swap(scratch);
}

}  // namespace jaxamg::classical
