"""Distance-2 colouring of the columns of a sparsity pattern (NumPy only).

Two columns conflict when they have a nonzero in the same row; columns of one
colour can then be probed together by a single operator application, because
every row receives at most one of them. The number of colours is the number
of operator applications needed to materialise the matrix, so it is worth
keeping small.

Two colourings are tried:

- *Modular*: when every entry lies on one of a few diagonals (stencils on a
  grid in natural order, banded and periodic operators), ``colour = col mod K``
  is valid for every K that divides no difference of two diagonal offsets.
  The smallest such K is usually the lower bound (the longest row) or close
  to it: 3 for a tridiagonal matrix, 5-6 for the 2-D 5-point stencil, 7-8 for
  the 3-D 7-point stencil. It costs one pass over the entries.
- *Speculative first-fit* (Jones-Plassmann-style rounds): every uncoloured
  column proposes the smallest colour unused by its coloured conflicts, and
  proposals that clash with one of higher fixed-seed random priority are
  withdrawn. Works for any pattern; the conflict graph (A^T A) is never
  formed, each round does a few segment reductions over the entries whose
  column is still uncoloured.

The colouring with fewer colours is returned.
"""

from __future__ import annotations

import numpy as np

__all__ = ["column_coloring"]

_WORD_BITS = 64
# Largest number of distinct diagonals for which the modular colouring is tried;
# its cost grows with the square of this number.
_MAX_DIAGONALS = 256


def column_coloring(rows, cols, shape: tuple[int, int], *, seed: int = 0):
    """Colours of the columns (-1 for columns without entries) and their count."""
    n_rows, n_cols = shape
    rows = np.asarray(rows, dtype=np.int64).ravel()
    cols = np.asarray(cols, dtype=np.int64).ravel()
    colors = np.full(n_cols, -1, dtype=np.int32)
    if rows.size == 0:
        return colors, 0
    key = rows * n_cols + cols
    if not np.all(key[1:] > key[:-1]):  # unsorted or repeated entries
        key = np.unique(key)
        rows, cols = key // n_cols, key % n_cols
    present = np.zeros(n_cols, dtype=bool)
    present[cols] = True
    longest_row = int(np.bincount(rows, minlength=n_rows).max())

    best = _modular_coloring(rows, cols, n_cols, longest_row)
    # The modular colouring is near the lower bound whenever it applies, and a
    # first-fit colouring rarely gets below 1.5 times that bound on stencils,
    # so the general colouring is computed only when it may do better.
    if best is None or _count(best, present) > 1.5 * longest_row + 1:
        general = _speculative_greedy(rows, cols, shape, seed)
        if best is None or _count(general, present) < _count(best, present):
            best = general
    colors[present] = _compact(best[present])
    return colors, int(colors.max()) + 1


def _count(colors: np.ndarray, present: np.ndarray) -> int:
    return int(np.count_nonzero(np.bincount(colors[present])))


def _compact(colors: np.ndarray) -> np.ndarray:
    """Renumbers the colours in use to 0..k-1, keeping their order."""
    used = np.bincount(colors) > 0
    return (np.cumsum(used) - 1).astype(np.int32)[colors]


def _modular_coloring(rows, cols, n_cols: int, longest_row: int):
    """``col mod K`` for the smallest valid K, or None when the pattern has too
    many diagonals or no K up to twice their number works."""
    offsets = cols - rows
    lo = int(offsets.min())
    seen = np.zeros(int(offsets.max()) - lo + 1, dtype=bool)
    seen[offsets - lo] = True
    diagonals = np.flatnonzero(seen) + lo
    if diagonals.size > _MAX_DIAGONALS:
        return None
    diffs = np.abs(diagonals[:, None] - diagonals[None, :]).ravel()
    diffs = np.unique(diffs[diffs > 0])
    first = max(longest_row, 1)
    for k in range(first, max(2 * diagonals.size, first) + 1):
        if not np.any(diffs % k == 0):
            return (np.arange(n_cols, dtype=np.int64) % k).astype(np.int32)
    return None


def _segment_starts(keys: np.ndarray) -> np.ndarray:
    """Start positions of the runs of equal values in a grouped array."""
    if keys.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([[0], np.flatnonzero(keys[1:] != keys[:-1]) + 1])


def _speculative_greedy(rows, cols, shape, seed: int) -> np.ndarray:
    """Parallel first-fit colouring with conflict resolution.

    Each round, every uncoloured column proposes the smallest colour unused by
    its coloured conflicts. A proposal is kept when, in each of the column's
    rows, the proposals are pairwise distinct or the column has the highest
    (fixed-seed random) priority of the row's uncoloured columns. Two kept
    proposals in one row are therefore never equal, and the uncoloured column
    of highest priority is always kept, so every round makes progress.
    Duplicates are detected modulo 64 colours, which can only reject more.
    """
    n_rows, n_cols = shape
    # The uncoloured entries twice: grouped by row (conflict checks) and by
    # column (forbidden colours). Both shrink as columns are coloured.
    order = np.lexsort((cols, rows))
    r_rows, r_cols = rows[order], cols[order]
    order = np.lexsort((rows, cols))
    c_rows, c_cols = rows[order], cols[order]

    priority = np.random.default_rng(seed).permutation(n_cols).astype(np.int64)
    colors = np.full(n_cols, -1, dtype=np.int64)
    proposal = np.zeros(n_cols, dtype=np.int64)
    rejected = np.zeros(n_cols, dtype=bool)
    # Bit c % 64 of used[r, c // 64] is set when row r holds a column of colour c.
    used = np.zeros((n_rows, 1), dtype=np.uint64)

    while r_cols.size:
        c_starts = _segment_starts(c_cols)
        heads = c_cols[c_starts]
        proposal[heads], used = _smallest_free(c_rows, c_starts, used)

        entry_prop = proposal[r_cols]
        # Group the entries by (row, proposal); the list is sorted by row, so a
        # stable sort of the combined key only reorders within rows.
        key = r_rows * (int(entry_prop.max()) + 1) + entry_prop
        order = np.argsort(key, kind="stable")
        g_starts = _segment_starts(key[order])
        prio = priority[r_cols[order]]
        top = np.maximum.reduceat(prio, g_starts)
        counts = np.diff(np.append(g_starts, order.size))
        beaten = prio != np.repeat(top, counts)
        rejected[r_cols[order[beaten]]] = True

        kept_heads = heads[~rejected[heads]]
        colors[kept_heads] = proposal[kept_heads]
        kept = ~rejected[r_cols]
        used = _mark_used(r_rows[kept], entry_prop[kept], used)

        done = colors[r_cols] >= 0
        r_rows, r_cols = r_rows[~done], r_cols[~done]
        done = colors[c_cols] >= 0
        c_rows, c_cols = c_rows[~done], c_cols[~done]
        rejected[heads] = False
    return colors.astype(np.int32)


def _smallest_free(c_rows, c_starts, used):
    """For entries grouped by column (``c_starts``), the smallest colour that no
    row of the column has used."""
    pending = np.ones(c_starts.size, dtype=bool)
    choice = np.zeros(c_starts.size, dtype=np.int64)
    word = 0
    while pending.any():
        if word == used.shape[1]:
            used = np.concatenate([used, np.zeros((used.shape[0], 1), np.uint64)], axis=1)
        busy = np.bitwise_or.reduceat(used[c_rows, word], c_starts)
        free = np.where(pending, ~busy, np.uint64(0))
        found = free != 0
        lowest = free[found] & (~free[found] + np.uint64(1))
        choice[found] = word * _WORD_BITS + np.log2(lowest.astype(np.float64)).astype(np.int64)
        pending &= ~found
        word += 1
    return choice, used


def _mark_used(rows_sorted, entry_colors, used):
    """Sets the bits of ``entry_colors`` in ``used`` for entries grouped by row;
    a row may receive several colours, so they are OR-ed per row first."""
    if rows_sorted.size == 0:
        return used
    words = entry_colors // _WORD_BITS
    bits = np.left_shift(np.uint64(1), (entry_colors % _WORD_BITS).astype(np.uint64))
    for word in np.unique(words):
        sel = words == word
        r = rows_sorted[sel]
        starts = _segment_starts(r)
        used[r[starts], word] |= np.bitwise_or.reduceat(bits[sel], starts)
    return used
