"""The depth plan's branching rules: what each one searches, built from a problem.

Two rules, each a compiled loop over arrays built here:

* :class:`Fewest` branches on the item with the fewest choices, among the
  empty cells and the pieces with copies left (:mod:`zipup.plans._search`).
  Each node costs population counts over every item, but the tree is small:
  it wins where pieces differ and the board is small (the 3x4x5 box).
* :class:`FirstCell` branches on the first empty cell in the sweep's order
  (the longest axis slowest) and tries the placements anchored there
  (:mod:`zipup.plans._first_cell`).  A node costs a few words of ``AND`` per
  candidate: it wins on large boards of large pieces (Calibron) and on
  rectangles scanned along their short side.

Both number the cells in the sweep's order, share one read-only set of
placement rows and fill the same scalar state, so the driver in
:mod:`zipup.plans.depth` runs either the same way.  Shapes: ``R``
placements, ``n`` cells, ``P`` pieces with a copy count, ``D`` the deepest
path; ``W = ceil(n / 64)`` and ``V = ceil(R / 64)`` words.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from .sweep import sweep_order

__all__ = ["RULES", "Fewest", "FirstCell", "Rows"]

# the collision sets of all placements are held when they take at most this many bytes
# (else each is built when its placement is tried)
_CONFLICT_BYTES = 1 << 26
_BATCH = 1024


class Rows:
    """The placements of a problem as the compiled searches read them (shared by the rules).

    Attributes
    ----------
    n : int
        Cells (primary columns), numbered in the sweep's order.
    row_piece, row_local : (R,) int64
        The piece of each placement and its row in that piece's matrix.
    slot : (R,) int64
        The piece among the ``P`` pieces with a copy count (-1 for an option
        usable any number of times).
    copies : (P,) int64
        Copies of each such piece.
    size : (R,) int64
        Cells of each placement.
    cells : int
        Cells of all placements (the nonzeros of the matrices).
    cell_words : tuple of ndarray
        ``(wptr, words, masks)``, int64, int64 and uint64: each
        placement's nonzero words of cells, ``words[wptr[t]:wptr[t + 1]]``
        and their bits ``masks[...]``.
    depth : int
        The deepest path a search can take.
    """

    def __init__(self, problem):
        pieces = list(problem.pieces)
        use = [k for k, p in enumerate(pieces) if p.count != 0 and p.n_placements]
        counted = [k for k, p in enumerate(pieces) if p.count is not None and p.count > 0]
        self.n = n = problem.n_columns
        order = sweep_order(problem)
        pos = None  # the new number of each column, if any changes
        if not (order == np.arange(n)).all():
            pos = np.empty(n, np.int64)
            pos[order] = np.arange(n)
        # rows sorted: a placement's first column is its first cell in the order
        self.mats = mats = [_renumbered(pieces[k].matrix, pos) for k in use]
        empty = np.zeros(0, np.int64)
        self.row_piece = np.concatenate([np.full(m.shape[0], k, np.int64) for k, m in zip(use, mats)] + [empty])
        self.row_local = np.concatenate([np.arange(m.shape[0], dtype=np.int64) for m in mats] + [empty])
        self.r = len(self.row_piece)
        self.counted = counted
        slot_of = np.full(len(pieces), -1, np.int64)
        slot_of[counted] = np.arange(len(counted))
        self.slot = slot_of[self.row_piece]
        self.copies = np.array([pieces[k].count for k in counted], np.int64)
        self.unlimited = any(p.count is None for p in pieces)
        self.depth = n if self.unlimited else min(n, int(self.copies.sum()))
        self.size = np.concatenate([np.diff(m.indptr) for m in mats] + [empty]).astype(np.int64)
        self.cells = int(self.size.sum())
        self.problem = problem

    @functools.cached_property
    def cell_words(self):
        """``(wptr, words, masks)``, built when a rule first asks for them."""
        return _cell_words(self.mats, self.r, self.n)

    def nbytes(self):
        held = [a for a in vars(self).values() if isinstance(a, np.ndarray)] + list(vars(self).get("cell_words", ()))
        return sum(a.nbytes for a in held) + sum(m.data.nbytes + m.indices.nbytes for m in self.mats)


class _Rule:
    """What both rules share: the scalar state, the configurations found, the calls to the compiled loop."""

    name = ""
    module = ""

    def __init__(self, rows, mode):
        self.rows = rows
        d2 = rows.depth + 2
        self.sol = np.zeros((_BATCH if mode == "list" else 1, d2), np.int64)
        self.sol_len = np.zeros(len(self.sol), np.int64)
        self.st = np.zeros(6, np.int64)

    def load(self):
        """Import (the first time: compile) the compiled loop; the seconds it took."""
        import importlib

        t = time.perf_counter()
        self.k = importlib.import_module(f"zipup.plans.{self.module}")
        self.search(0, 0)
        return time.perf_counter() - t

    def reset(self):
        """Forget the search so far: the next call starts at the root."""
        self.st[:] = 0

    def nbytes(self):
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))

    def timed(self, seconds):
        """Count from the root for about ``seconds``: ``(nodes, elapsed, finished)``; the state is kept."""
        t = time.perf_counter()
        budget = 1 << 8
        nodes = 0
        while True:
            status = self.search(budget, 0)
            nodes += int(self.st[self.k.NODES])
            self.st[self.k.NODES] = 0
            elapsed = time.perf_counter() - t
            if status == self.k.DONE:
                return nodes, elapsed, True
            if elapsed >= seconds:
                return nodes, elapsed, False
            budget *= 2


class Fewest(_Rule):
    """Branch on the item (empty cell or piece) with the fewest fitting placements.

    Arrays: ``cellm`` (n, V) uint64, per cell the placements covering it;
    ``pmask`` (P, V) uint64, per piece its placements, in its words
    ``prange[s, 0]:prange[s, 1]``; ``conf`` (R, V) uint64, per placement the
    placements sharing a cell with it, or no rows when that would take more
    than 64 MiB; per depth ``live`` (D + 2, V) the placements still fitting,
    nonzero only in the first ``nnz[d]`` words of ``nzw[d]``, ``cov`` (D + 2,
    W) the cells covered, ``left`` (D + 2, P) the copies left, ``ncov`` the
    cells covered, and ``item``, ``pos``, ``lim``, ``chosen``: the item
    branched on, where its next choice starts, how many it has left, the
    placement chosen.
    """

    name = "fewest"
    module = "_search"

    def __init__(self, rows, mode):
        super().__init__(rows, mode)
        r, n = rows.r, rows.n
        d2 = rows.depth + 2
        wr = max(1, -(-r // 64))
        nw = max(1, -(-n // 64))
        self.cellm = _cell_masks(rows.mats, r, n)
        on = rows.slot >= 0
        self.pmask = _set_bits(np.zeros((len(rows.copies), wr), np.uint64), rows.slot[on], np.flatnonzero(on))
        self.conf = _conflicts(self.cellm, rows.mats, r)
        self.prange = np.zeros((len(rows.copies), 2), np.int64)
        for s, k in enumerate(rows.counted):
            at = np.flatnonzero(rows.row_piece == k)
            if len(at):
                self.prange[s] = at[0] >> 6, (at[-1] >> 6) + 1
        self.live = np.zeros((d2, wr), np.uint64)
        _set_bits(self.live, np.zeros(r, np.int64), np.arange(r))  # depth 0: every placement
        self.item = np.zeros(d2, np.int64)
        self.pos = np.zeros(d2, np.int64)
        self.lim = np.zeros(d2, np.int64)
        self.chosen = np.zeros(d2, np.int64)
        self.cov = np.zeros((d2, nw), np.uint64)
        self.left = np.zeros((d2, len(rows.copies)), np.int64)
        self.left[0] = rows.copies
        self.ncov = np.zeros(d2, np.int64)
        self.nzw = np.zeros((d2, wr), np.int64)
        self.nnz = np.zeros(d2, np.int64)

    def _state(self):
        w = self.rows
        return (self.conf, self.cellm, self.pmask, self.prange, *w.cell_words, w.size, w.slot, w.n,
                self.live, self.nzw, self.nnz, self.item, self.pos, self.lim)

    def search(self, budget, mode, batch=_BATCH):
        # a batch of fewer rows is a view of the first rows of ``sol`` (C-contiguous: the same compiled loop)
        return self.k.search(*self._state(), self.chosen, self.cov, self.left, self.ncov, self.sol[:batch],
                             self.sol_len[:batch], self.st, budget, mode)

    def probe(self, probes, seed):
        return self.k.probe(*self._state(), self.cov, self.left, self.ncov, probes, seed)


class FirstCell(_Rule):
    """Branch on the first empty cell, trying the placements anchored there.

    Arrays: ``cand`` (R,) int64, the placements by anchor (their first
    cell), those of cell ``c`` at ``aptr[c]:aptr[c + 1]``; per depth
    ``cov`` (D + 2, W) the cells covered, ``left`` (D + 2, P) the copies
    left, ``cell`` the first empty cell, ``pos`` the next candidate,
    ``chosen`` the placement chosen.  For rectangle packings (see
    :func:`_rectangles`) instead of ``cov``: ``prof`` (D + 2, rows), per
    row of the board how far it is filled, and ``room`` (D + 2,) the width
    of the lowest run of rows; ``anchor``, ``fast``, ``slow`` (R,) each
    placement's first cell and extents across and along the rows; ``pext``
    (P,) uint64 the set of each piece's widths across them.  Otherwise ``prof`` has no
    columns and ``anchor``, ``fast`` and ``slow`` are empty.
    """

    name = "first-cell"
    module = "_first_cell"

    def __init__(self, rows, mode):
        super().__init__(rows, mode)
        n = rows.n
        d2 = rows.depth + 2
        nw = max(1, -(-n // 64))
        # rows are sorted: a placement's first column is its anchor
        first = np.concatenate([m.indices[m.indptr[:-1]].astype(np.int64) for m in rows.mats]
                               + [np.zeros(0, np.int64)])
        self.span, self.fast, self.slow, self.pext, nrows = _rectangles(rows)
        # by anchor; with a profile, narrowest first within a cell
        self.cand = np.lexsort((self.fast, first) if nrows else (first,)).astype(np.int64)
        self.anchor = first if nrows else np.zeros(0, np.int64)
        self.aptr = np.zeros(n + 2, np.int64)  # n + 1: a search past the last cell finds no candidates
        np.cumsum(np.bincount(first, minlength=n + 1), out=self.aptr[1:])
        self.fit = np.zeros(max(1, int(np.diff(self.aptr).max(initial=0))), np.int64)
        self.prof = np.zeros((d2, nrows), np.int64)
        self.room = np.zeros(d2, np.int64)
        # a profile stands for the covered cells, so the placements' cells are not needed
        none = np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64)
        self.cell_words = none if nrows else rows.cell_words
        self.cov = np.zeros((d2, nw), np.uint64)
        if n & 63:  # the bits past the last cell count as covered: the first empty cell is then n
            self.cov[:, -1] = ~((np.uint64(1) << np.uint64(n & 63)) - np.uint64(1))
        self.left = np.zeros((d2, len(rows.copies)), np.int64)
        self.left[0] = rows.copies
        self.cell = np.zeros(d2, np.int64)
        self.pos = np.zeros(d2, np.int64)
        self.chosen = np.zeros(d2, np.int64)

    def _state(self):
        w = self.rows
        return (self.aptr, self.cand, *self.cell_words, w.slot, w.n, self.span, self.fast, self.slow,
                self.pext, self.anchor, self.cov, self.left, self.prof, self.room)

    def search(self, budget, mode, batch=_BATCH):
        return self.k.search(*self._state(), self.cell, self.pos, self.chosen, self.sol[:batch],
                             self.sol_len[:batch], self.st, budget, mode)

    def probe(self, probes, seed):
        return self.k.probe(*self._state(), self.fit, probes, seed)


#: The branching rules by name.
RULES = {cls.name: cls for cls in (Fewest, FirstCell)}


def _rectangles(rows):
    """The profile's arrays when the problem packs rectangles into a rectangle, else empty ones.

    Returns ``(span, fast, slow, pext, nrows)``: with cells numbered
    ``x * nrows + y`` (``y`` the fast axis), ``span`` the length of a row,
    each placement's extents along ``y`` and ``x``, each piece's widths
    along ``y`` as a bit set (bit ``k``: a placement ``k`` rows wide).
    """
    none = (0, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(len(rows.copies), np.uint64), 0)
    problem = rows.problem
    n = rows.n
    if problem.puzzle is None or rows.unlimited or rows.r == 0 or n == 0:
        return none
    coords = np.array(problem.columns, dtype=np.int64).reshape(n, -1)
    if coords.shape[1] != 2:
        return none
    extent = coords.max(axis=0) - coords.min(axis=0) + 1
    if int(np.prod(extent)) != n:
        return none
    # the sweep's order numbers the cells x * nrows + y, y along the shorter axis; a row's
    # width must fit a word (see _first_cell._fillable)
    nrows = int(extent.min())
    if nrows > 63:
        return none
    span = n // nrows
    for m in rows.mats:  # a piece is a rectangle when one of its placements is
        ind = m.indices[m.indptr[0]:m.indptr[1]].astype(np.int64)
        box = np.ptp(ind // nrows) + 1, np.ptp(ind % nrows) + 1
        if box[0] * box[1] != len(ind):
            return none
    # a rectangle's cells run from one corner (its first cell) to the opposite (its last)
    lo = np.concatenate([m.indices[m.indptr[:-1]] for m in rows.mats]).astype(np.int64)
    hi = np.concatenate([m.indices[m.indptr[1:] - 1] for m in rows.mats]).astype(np.int64)
    fast = hi % nrows - lo % nrows + 1
    slow = hi // nrows - lo // nrows + 1
    pext = np.zeros(len(rows.copies), np.uint64)
    np.bitwise_or.at(pext, rows.slot, np.left_shift(np.uint64(1), fast.astype(np.uint64)))
    return span, fast, slow, pext, nrows


def _renumbered(matrix, pos):
    """``matrix`` (CSR) with column ``j`` renamed ``pos[j]`` (``None``: as it is), each row's columns sorted.

    No copy is made when nothing changes.
    """
    if pos is None and matrix.has_sorted_indices:
        return matrix
    m = matrix.copy()
    if pos is not None:
        m.indices = pos[m.indices].astype(m.indices.dtype)
        m.has_sorted_indices = False
    m.sort_indices()
    return m


def _bit(k):
    """The uint64 word holding bit ``k & 63`` alone, for each ``k``."""
    return np.left_shift(np.uint64(1), (k & 63).astype(np.uint64))


def _set_bits(out, members, bits):
    """In the bit sets ``out`` (uint64 words), put bit ``bits[k]`` into set ``members[k]``."""
    np.bitwise_or.at(out, (members, bits >> 6), _bit(bits))
    return out


def _chunks(mats, cells):
    """``(first row, row lengths, cell numbers)`` of consecutive placements, about ``cells`` cells at a time."""
    base = 0
    for m in mats:
        ip = m.indptr
        a = 0
        while a < m.shape[0]:
            b = min(m.shape[0], max(a + 1, int(np.searchsorted(ip, ip[a] + cells, "right")) - 1))
            yield base + a, np.diff(ip[a:b + 1]), m.indices[ip[a]:ip[b]].astype(np.int64)
            a = b
        base += m.shape[0]


def _cell_words(mats, r, n):
    """Per placement, its nonzero words of cells: ``(wptr, words, masks)``.

    ``words[wptr[t]:wptr[t + 1]]`` (int64 word numbers) and ``masks[...]``
    (uint64).  Built a quarter of a million cells at a time, so that no
    temporary grows with the cells of all placements (7 M on Calibron).
    """
    nw = max(1, -(-n // 64))
    count = np.zeros(r, np.int64)
    words, masks = [np.zeros(0, np.int64)], [np.zeros(0, np.uint64)]
    for a, lengths, cells in _chunks(mats, 1 << 18):
        rows = np.repeat(np.arange(a, a + len(lengths)), lengths)
        key = rows * nw + (cells >> 6)
        starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
        words.append(cells[starts] >> 6)
        masks.append(np.bitwise_or.reduceat(_bit(cells), starts))
        count[a:a + len(lengths)] = np.bincount(rows[starts] - a, minlength=len(lengths))
    wptr = np.zeros(r + 1, np.int64)
    np.cumsum(count, out=wptr[1:])
    return wptr, np.concatenate(words), np.concatenate(masks)


def _cell_masks(mats, r, n):
    """Per cell, the set of placements covering it: (n, V) uint64."""
    cellm = np.zeros((n, max(1, -(-r // 64))), np.uint64)
    for a, lengths, cells in _chunks(mats, 1 << 18):
        _set_bits(cellm, cells, np.repeat(np.arange(a, a + len(lengths)), lengths))
    return cellm


def _conflicts(cellm, mats, r):
    """Per placement, the set of placements sharing a cell with it: (R, V) uint64, or (0, V) when too big."""
    wr = cellm.shape[1]
    if r * wr * 8 > _CONFLICT_BYTES or r == 0:
        return np.zeros((0, wr), np.uint64)
    conf = np.empty((r, wr), np.uint64)
    for a, lengths, cells in _chunks(mats, max(1, (1 << 22) // (8 * wr))):  # a few MB at a time
        offsets = np.concatenate([[0], np.cumsum(lengths[:-1])])
        conf[a:a + len(lengths)] = np.bitwise_or.reduceat(cellm[cells], offsets, axis=0)
    return conf
