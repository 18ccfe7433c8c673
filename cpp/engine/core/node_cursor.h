// The node j / k of the column indices of a block matrix's rows (k unknowns
// a node), read in ascending order: the division, which costs as much as a
// row entry's other work, runs only when a column leaves the current node.
#pragma once
#include "core/types.h"

namespace jaxamg {

class NodeCursor {
 public:
  explicit NodeCursor(Index k) : k_(k) {}

  // j / k, for any j (a column below the current node divides again).
  Index operator()(Index j) {
    if (j < begin_ || j >= end_) {
      node_ = j / k_;
      begin_ = node_ * k_;
      end_ = begin_ + k_;
    }
    return node_;
  }

 private:
  Index k_;
  Index node_ = -1, begin_ = 0, end_ = 0;
};

}  // namespace jaxamg
