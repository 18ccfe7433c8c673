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

// Scales `kept` (whose sums by sign are `k`) so that its sum equals the sum
// of the full row, whose positive and negative parts are `full`. The two
// signs are scaled separately, as in hypre, so a row of mixed signs is not
// distorted by one factor; a sign group that lost every entry hands its mass
// to the other.
void rescale(SignSums full, SignSums k, std::vector<RowEntry>& kept) {
  if (k.pos == 0) { full.neg += full.pos; full.pos = 0; }
  if (k.neg == 0) { full.pos += full.neg; full.neg = 0; }
  const double scale_pos = k.pos != 0 ? full.pos / k.pos : 1.0;
  const double scale_neg = k.neg != 0 ? full.neg / k.neg : 1.0;
  for (RowEntry& e : kept) e.val *= e.val > 0 ? scale_pos : scale_neg;
}

// Ties in |w| go to the lower column.
bool larger(double x, Index cx, double y, Index cy) { return x > y || (x == y && cx < cy); }

// The `keep` (<= 8) largest entries offered, by `larger`, in a short sorted
// list; smallest() is the last of them.
class LargestFew {
 public:
  explicit LargestFew(std::size_t keep) : keep_(keep) {}
  void offer(double a, Index col) {
    if (n_ == keep_ && !larger(a, col, abs_[n_ - 1], col_[n_ - 1])) return;
    std::size_t q = n_ < keep_ ? n_++ : n_ - 1;
    for (; q > 0 && larger(a, col, abs_[q - 1], col_[q - 1]); --q) {
      abs_[q] = abs_[q - 1];
      col_[q] = col_[q - 1];
    }
    abs_[q] = a;
    col_[q] = col;
  }
  double smallest_abs() const { return abs_[keep_ - 1]; }
  Index smallest_col() const { return col_[keep_ - 1]; }

 private:
  std::size_t keep_, n_ = 0;
  double abs_[8];
  Index col_[8];
};

}  // namespace

void truncate_row(std::vector<RowEntry>& row, const Truncation& t, std::vector<RowEntry>& scratch) {
  if (!t.active() || row.empty()) return;
  const bool by_factor = t.factor_active();
  const std::size_t len = row.size();
  const std::size_t keep =
      t.max_elements > 0 ? static_cast<std::size_t>(t.max_elements) : len;
  if (!by_factor && len <= keep) return;
  // Among the survivors of the factor test (|w| >= cut), the max_elements
  // largest (|w|, -col) stay; `last` is the smallest of those, found from a
  // short sorted list when max_elements is small (rows are short), else by
  // nth_element.
  SignSums full;
  double cut = -1.0;  // nothing is below it
  double last_abs = -1.0;
  Index last_col = 0;
  bool select;
  if (!by_factor && keep <= 8) {
    // The common case (max_elements alone): the sums of each sign and the
    // largest entries in one pass.
    LargestFew largest(keep);
    for (const RowEntry& e : row) {
      (e.val > 0 ? full.pos : full.neg) += e.val;
      largest.offer(std::abs(e.val), e.col);
    }
    select = true;  // len > keep here
    last_abs = largest.smallest_abs();
    last_col = largest.smallest_col();
  } else {
    // The sums of each sign (for the rescaling) and the largest |w|.
    double wmax = 0;
    for (const RowEntry& e : row) {
      (e.val > 0 ? full.pos : full.neg) += e.val;
      wmax = std::max(wmax, std::abs(e.val));
    }
    if (by_factor) cut = t.factor * wmax;
    std::size_t survivors = len;
    if (by_factor) {
      survivors = 0;
      for (const RowEntry& e : row) survivors += std::abs(e.val) >= cut;
    }
    select = survivors > keep;
  }
  if (select && (by_factor || keep > 8)) {
    if (keep <= 8) {
      LargestFew largest(keep);
      for (const RowEntry& e : row) {
        if (std::abs(e.val) >= cut) largest.offer(std::abs(e.val), e.col);
      }
      last_abs = largest.smallest_abs();
      last_col = largest.smallest_col();
    } else {
      scratch.clear();
      for (const RowEntry& e : row) {
        if (std::abs(e.val) >= cut) scratch.push_back(e);
      }
      const auto by_size = [&](const RowEntry& a, const RowEntry& b) {
        return larger(std::abs(a.val), a.col, std::abs(b.val), b.col);
      };
      std::nth_element(scratch.begin(), scratch.begin() + (keep - 1), scratch.end(), by_size);
      last_abs = std::abs(scratch[keep - 1].val);
      last_col = scratch[keep - 1].col;
    }
  }
  // Compact in column order, summing what stays by sign.
  SignSums kept;
  std::size_t m = 0;
  for (std::size_t u = 0; u < len; ++u) {
    const RowEntry e = row[u];
    const double a = std::abs(e.val);
    const bool stays = a >= cut && (!select || !larger(last_abs, last_col, a, e.col));
    if (!stays) continue;
    (e.val > 0 ? kept.pos : kept.neg) += e.val;
    row[m++] = e;
  }
  if (m == len) return;
  row.resize(m);
  rescale(full, kept, row);
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
  if (scratch.size() != row.size()) rescale(sign_sums(row), sign_sums(scratch), scratch);
  row.swap(scratch);
}

}  // namespace jaxamg::classical
