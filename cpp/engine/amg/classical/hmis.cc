// HMIS coarse-point selection: a Ruge-Stueben first pass, then PMIS for the
// points it leaves undecided. On one process the first pass decides every
// point that influences something; PMIS settles the rest (points that only
// depend on others and have no C point among them yet).
#include <algorithm>

#include "amg/classical/splitting.h"
#include "amg/classical/transpose.h"

namespace jaxamg::classical {

namespace {

// Points bucketed by measure, each bucket a doubly linked list, so that the
// point of largest measure is found and re-bucketed in O(1).
class MeasureBuckets {
 public:
  MeasureBuckets(Index n, Index max_measure)
      : head_(max_measure + 1, -1), next_(n, -1), prev_(n, -1), measure_(n, -1) {}

  void insert(Index i, Index m) {
    measure_[i] = m;
    prev_[i] = -1;
    next_[i] = head_[m];
    if (head_[m] >= 0) prev_[head_[m]] = i;
    head_[m] = i;
    top_ = std::max(top_, m);
  }
  void remove(Index i) {
    const Index m = measure_[i];
    if (m < 0) return;
    if (prev_[i] >= 0) next_[prev_[i]] = next_[i]; else head_[m] = next_[i];
    if (next_[i] >= 0) prev_[next_[i]] = prev_[i];
    measure_[i] = -1;
  }
  void change(Index i, Index delta) {
    const Index m = measure_[i];
    if (m < 0) return;
    remove(i);
    insert(i, m + delta);
  }
  // The most recently bucketed point of the largest positive measure, or -1.
  Index pop_max() {
    while (top_ > 0 && head_[top_] < 0) --top_;
    if (top_ <= 0) return -1;
    const Index i = head_[top_];
    remove(i);
    return i;
  }

 private:
  std::vector<Index> head_, next_, prev_, measure_;
  Index top_ = 0;
};

}  // namespace

void hmis(const StrengthGraph& S, uint64_t seed, std::vector<int8_t>& cf) {
  ruge_stueben_first_pass(S, cf);
  pmis(S, seed, cf);
}

void ruge_stueben_first_pass(const StrengthGraph& S, std::vector<int8_t>& cf) {
  const Index n = S.n;
  if (static_cast<Index>(cf.size()) != n) cf.assign(n, kUndecided);
  // The first pass walks S^T (the dependents of a new C point).
  std::vector<Index> own_rp, own_col;
  const bool own = S.t_col.size() != S.col.size();
  if (own) transpose_pattern(n, S.row_ptr, S.col, own_rp, own_col);
  const std::vector<Index>& t_row_ptr = own ? own_rp : S.t_row_ptr;
  const std::vector<Index>& t_col = own ? own_col : S.t_col;
  // Measure = |S^T_i restricted to undecided| + 2 |S^T_i restricted to F|,
  // so it never exceeds twice the number of influenced points.
  Index max_measure = 0;
  for (Index i = 0; i < n; ++i) max_measure = std::max(max_measure, 2 * S.num_influences(i));
  MeasureBuckets buckets(n, max_measure);
  // Inserted from the last point down, so ties go to the lowest index first.
  for (Index i = n - 1; i >= 0; --i)
    if (cf[i] == kUndecided) buckets.insert(i, S.num_influences(i));

  for (Index i = buckets.pop_max(); i >= 0; i = buckets.pop_max()) {
    cf[i] = kCoarse;
    for (Index k = t_row_ptr[i]; k < t_row_ptr[i + 1]; ++k) {
      const Index j = t_col[k];
      if (cf[j] != kUndecided) continue;
      cf[j] = kFine;
      buckets.remove(j);
      // j now needs interpolation: the points it depends on become more
      // attractive as C points.
      for (Index l = S.row_ptr[j]; l < S.row_ptr[j + 1]; ++l)
        if (cf[S.col[l]] == kUndecided) buckets.change(S.col[l], +1);
    }
    // The points i depends on lost an undecided dependent.
    for (Index k = S.row_ptr[i]; k < S.row_ptr[i + 1]; ++k)
      if (cf[S.col[k]] == kUndecided) buckets.change(S.col[k], -1);
  }
}

}  // namespace jaxamg::classical
