// Graph colouring for the multicolour smoothers (MULTICOLOR_GS, _DILU, _ILU).
//
// Rows i != j get different colours whenever a_ij != 0 or a_ji != 0, so the
// rows of one colour can be relaxed in parallel: none reads another's value.
// The colouring is greedy first-fit in row order on the symmetrised graph.
// It is deterministic and gives few colours (2 for 5- and 7-point stencils),
// and therefore few synchronisations per sweep. AmgX's coloring schemes
// (MIN_MAX, MULTI_HASH, ...) are accepted by the config and produce this same
// colouring; unlike AmgX's MIN_MAX, no rows are left uncoloured.
//
// A matrix distributed over processes is coloured by its Distribution
// (Distribution::color_rows, a Jones-Plassmann scheme over the halo): rows
// coupled through a ghost column get different colours too, and
// num_colors is the same on every process.
#pragma once
#include <vector>

#include "core/csr_matrix.h"

namespace jaxamg::smoothers {

struct Coloring {
  int num_colors = 0;
  std::vector<int> color;        // per row
  std::vector<Index> color_ptr;  // num_colors + 1 offsets into rows
  std::vector<Index> rows;       // rows grouped by colour, ascending within a colour
};

// With block_dim k > 1 the nodes (k consecutive rows) are coloured instead:
// all rows of a node share its colour, and a colour's rows list each of its
// nodes as k consecutive entries (for block smoothers).
template <class T>
Coloring greedy_coloring(const CsrMatrix<T>& A, Index block_dim = 1);

// A's entries regrouped for colour sweeps: the rows are stored in colour
// order (row i at position pos[i], i.e. Coloring::rows[pos[i]] == i), so a
// colour's rows are contiguous in memory; each row's entries are ordered
// [earlier colours | diagonal | later colours], each part by (colour,
// column), so triangular sweeps read a contiguous lower or upper part.
// Built once per pattern; values are gathered again on a values-only resetup.
struct ColorSplit {
  std::vector<Index> row_ptr;  // n + 1, by position
  std::vector<Index> col;      // nnz
  std::vector<Index> src;      // split entry k holds A's entry src[k]
  std::vector<Index> dst;      // inverse of src: A's entry k sits at dst[k]
  std::vector<Index> diag;     // by position: split index of the diagonal
  std::vector<Index> pos;      // row -> position
};

// Requires a stored diagonal in every row (checked by the caller).
template <class T>
ColorSplit split_by_color(const CsrMatrix<T>& A, const Coloring& coloring);

// out[k] = A.val[split.src[k]]
template <class T>
void gather_split_values(const CsrMatrix<T>& A, const ColorSplit& split, std::vector<T>& out);

}  // namespace jaxamg::smoothers
