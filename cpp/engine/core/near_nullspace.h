// Near-null-space vectors of an operator (the rigid-body modes of elasticity,
// the constant of a Laplacian): the vectors that smoothed aggregation must
// represent exactly on every coarse level. Distinct from a null space of a
// singular system: these need not be annihilated by A, only be "smooth".
#pragma once
#include <vector>

#include "core/types.h"

namespace jaxamg {

struct NearNullspace {
  Index rows = 0;           // unknowns of the level (node-interleaved like block_dim)
  Index cols = 0;           // number of vectors
  std::vector<double> val;  // rows x cols, row-major: row i holds unknown i of each vector

  bool empty() const { return cols == 0; }
  const double* row(Index i) const { return val.data() + static_cast<std::size_t>(i) * cols; }
};

}  // namespace jaxamg
