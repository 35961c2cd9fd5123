"""Stage 3: configuration matrices.

A :class:`Problem` is what every plan works on, whatever the input format:
one sparse configuration matrix per piece (one row per placement, one column
per board cell), which columns must be covered, and how pieces of one colour
may not touch.  :func:`configuration_matrices` builds it from a
:class:`~zipup.puzzle.Puzzle`; the readers in :mod:`zipup.formats` build it
from formats without geometry.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .geometry import allowed_transforms, orientations

__all__ = ["Configuration", "PieceRows", "Problem", "configuration_matrices", "placement_array",
           "separating_colours"]


@dataclass(frozen=True, eq=False)
class PieceRows:
    """The configuration matrix of one piece.

    Attributes
    ----------
    name, label : str
        As in the puzzle file.
    count : int or None
        Number of interchangeable copies, each placed exactly once.  ``None``
        means "any number of times, including none" (exact-cover options read
        from DLX files).
    colour : str or None
    matrix : scipy.sparse.csr_array, shape (n_placements, n_columns), dtype uint8
        One row per placement, 1 where the placement covers the column.
    orientation : ndarray of int64, shape (n_placements,)
        Which orientation of the piece each row uses (empty without geometry).
    marks, forbids : scipy.sparse.csr_array or None, shape (n_placements, n_marks), dtype uint8
        Side conditions beyond overlap: two placements ``a`` and ``b`` also
        collide when ``marks[a] . forbids[b]`` or ``forbids[a] . marks[b]`` is
        nonzero.  ``separate`` puts a placement's cells in the marks and its
        halo (cells touching it) in the forbids, in one block of columns per
        colour; DLX colours put ``item:c`` in the marks and every other
        colour of the item in the forbids.  ``None`` when the problem has none.
    """

    name: str
    label: str
    count: int | None
    colour: str | None
    matrix: sp.csr_array
    orientation: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    marks: sp.csr_array | None = None
    forbids: sp.csr_array | None = None

    @property
    def n_placements(self):
        return self.matrix.shape[0]


@dataclass(frozen=True, eq=False)
class Problem:
    """A fitting problem in matrix form.

    Attributes
    ----------
    name : str
    columns : tuple
        What each column is: a cell coordinate tuple, or a name.
    primary : ndarray of bool, shape (n_columns,)
        ``True``: covered exactly once.  ``False``: at most once.
    pieces : tuple of PieceRows
    n_marks : int
        Width of the pieces' ``marks`` / ``forbids`` matrices (0 if none).
    puzzle : Puzzle or None
        The geometric puzzle this came from, if any.
    """

    name: str
    columns: tuple
    primary: np.ndarray
    pieces: tuple
    n_marks: int = 0
    puzzle: object = None

    @property
    def n_columns(self):
        return len(self.columns)

    @property
    def exact(self):
        """True when every column is primary (a pure exact-cover problem)."""
        return bool(self.primary.all())



def _neighbour_offsets(ndim, separate):
    if separate == "edge":
        offs = []
        for i in range(ndim):
            for d in (-1, 1):
                o = [0] * ndim
                o[i] = d
                offs.append(tuple(o))
        return offs
    return [o for o in itertools.product((-1, 0, 1), repeat=ndim) if any(o)]


def _index_grid(board):
    grid = np.full(board.shape, -1, dtype=np.int64)
    for i, c in enumerate(board.cells):
        grid[c] = i
    return grid


def _placements(piece, board, grid, labcode):
    """Rows (cell indices, each row ascending) and orientation numbers of every placement of a piece."""
    rows, orient = [], []
    shape = np.array(board.shape)
    strides = np.cumprod((list(board.shape[1:]) + [1])[::-1])[::-1].astype(np.int64)  # row-major
    flat = grid.ravel().astype(np.int32)  # the matrices' index type: no copy when they are built
    holes = bool((flat < 0).any())
    for k, (cells, labels) in enumerate(orientations(piece.cells, piece.labels,
                                                     allowed_transforms(board.ndim, piece.rotate,
                                                                        piece.mirror))):
        o = np.array(cells, dtype=np.int64)
        span = shape - o.max(axis=0)
        if (span <= 0).any():
            continue
        # every translation's offset in the box, then its cells: flat indices, not coordinates
        offs = np.zeros(1, np.int64)
        for size, stride in zip(span, strides):
            offs = (offs[:, None] + np.arange(size, dtype=np.int64) * stride).ravel()
        idx = flat[offs[:, None] + (o @ strides)[None, :]]  # (n_offsets, k); cells sorted, so rows ascend
        ok = (idx >= 0).all(axis=1) if holes else np.ones(len(idx), bool)
        if board.match:
            want = np.array([labcode[ch] for ch in labels])
            got = np.where(idx >= 0, _labcode_arr(labcode, board)[np.maximum(idx, 0)], -1)
            ok &= (got == want[None, :]).all(axis=1)
        rows.append(idx if ok.all() else idx[ok])
        orient.append(np.full(len(rows[-1]), k, dtype=np.int64))
    if not rows:
        return np.zeros((0, len(piece.cells)), np.int32), np.zeros(0, np.int64)
    return np.concatenate(rows), np.concatenate(orient)


def _labcode_arr(labcode, board):
    return np.array([labcode[ch] for ch in board.labels], dtype=np.int64)


def configuration_matrices(puzzle):
    """Build the configuration matrix of every piece of a puzzle.

    Every distinct orientation the rules allow, every translation that puts
    all its cells on board cells (with equal labels under ``match``).

    Parameters
    ----------
    puzzle : Puzzle

    Returns
    -------
    Problem
        Columns are the board cells in row-major order.

    Examples
    --------
    >>> from zipup.puzzle import loads
    >>> p = loads('name = "x"\\n[board]\\nsize = [2, 3]\\n[[piece]]\\nname = "L"\\n'
    ...           'coords = [[0, 0], [0, 1], [1, 0]]\\n[[piece]]\\nname = "I"\\ncells = "##"\\n'
    ...           '[[piece]]\\nname = "o"\\ncells = "#"\\n')
    >>> prob = configuration_matrices(p)
    >>> [m.matrix.shape for m in prob.pieces]
    [(8, 6), (7, 6), (6, 6)]
    """
    board = puzzle.board
    grid = _index_grid(board)
    labcode = {ch: i for i, ch in enumerate(sorted(set(board.labels) | {ch for p in puzzle.pieces
                                                                        for ch in p.labels}))}
    n = len(board.cells)
    pieces = []
    for piece in puzzle.pieces:
        if not board.match:  # labels only matter under match: shapes alike but for labels are one
            piece = dataclasses.replace(piece, labels=("#",) * len(piece.cells))
        idx, orient = _placements(piece, board, grid, labcode)
        m, k = idx.shape
        ptr = np.arange(0, m * k + 1, k, dtype=np.int32 if m * k < 2**31 else np.int64)
        mat = sp.csr_array((np.ones(m * k, dtype=np.uint8), idx.ravel(), ptr), shape=(m, n))
        mat.sort_indices()
        pieces.append(PieceRows(name=piece.name, label=piece.label, count=piece.count,
                                colour=piece.colour, matrix=mat, orientation=orient))
    primary = np.ones(n, dtype=bool) if board.cover == "exact" else np.zeros(n, dtype=bool)
    if board.optional:
        primary &= np.array([c not in board.optional for c in board.cells])
    n_marks = 0
    colours = separating_colours(puzzle)
    if colours:
        adjacency = _adjacency(board, grid, puzzle.separate)
        n_marks = n * len(colours)
        pieces = [_with_halo(p, adjacency, colours.index(p.colour), len(colours))
                  if p.colour in colours else p for p in pieces]
    return Problem(name=puzzle.name, columns=board.cells, primary=primary, pieces=tuple(pieces),
                   n_marks=n_marks, puzzle=puzzle)


def separating_colours(puzzle):
    """Colours under ``separate`` that have two or more pieces (copies included), sorted."""
    if puzzle.separate == "none":
        return ()
    tally = {}
    for p in puzzle.pieces:
        if p.colour is not None:
            tally[p.colour] = tally.get(p.colour, 0) + p.count
    return tuple(sorted(c for c, k in tally.items() if k >= 2))


def _adjacency(board, grid, separate):
    """Cells touching under the separate rule, the diagonal included: (n, n) csr int32."""
    n = len(board.cells)
    r, c = [], []
    offs = _neighbour_offsets(board.ndim, separate)
    for i, cell in enumerate(board.cells):
        r.append(i)
        c.append(i)
        for off in offs:
            nb = tuple(a + b for a, b in zip(cell, off))
            if all(0 <= x < s for x, s in zip(nb, board.shape)) and grid[nb] >= 0:
                r.append(i)
                c.append(int(grid[nb]))
    return sp.csr_array((np.ones(len(r), np.int32), (r, c)), shape=(n, n))


def _with_halo(rows, adjacency, block, n_blocks):
    """Marks = own cells, forbids = halo, both in the colour's block of columns."""
    import dataclasses

    m = rows.matrix
    n = m.shape[1]
    halo = sp.csr_array((sp.csr_array(m, dtype=np.int32) @ adjacency).astype(bool), dtype=np.uint8)
    pad = sp.csr_array((m.shape[0], n), dtype=np.uint8)
    blocks = lambda x: sp.csr_array(sp.hstack([x if b == block else pad for b in range(n_blocks)],
                                              format="csr"), dtype=np.uint8)
    return dataclasses.replace(rows, marks=blocks(m), forbids=blocks(halo))


def placement_array(problem, piece):
    """One piece's placements as an n-dimensional sparse array over the board.

    Handy in a notebook to look at placements as pictures: entry
    ``[p, *cell]`` is 1 when placement ``p`` covers ``cell``.

    Parameters
    ----------
    problem : Problem
        Built from a puzzle (it needs geometry).
    piece : int or str
        Index or name of the piece.

    Returns
    -------
    sparse.COO, shape (n_placements, *board.shape), dtype uint8

    Examples
    --------
    >>> from zipup.puzzle import loads
    >>> p = loads('name = "x"\\n[board]\\nsize = [2, 2]\\n[[piece]]\\nname = "I"\\ncells = "##"\\n'
    ...           '[[piece]]\\nname = "J"\\ncells = "##"\\n')
    >>> a = placement_array(configuration_matrices(p), "I")
    >>> a.shape, int(a.sum())
    ((4, 2, 2), 8)
    """
    import sparse

    if isinstance(piece, str):
        piece = [p.name for p in problem.pieces].index(piece)
    mat = sp.coo_array(problem.pieces[piece].matrix)
    cells = np.array(problem.columns, dtype=np.int64)[mat.col]  # (nnz, ndim)
    coords = np.vstack([mat.row[None, :], cells.T])
    shape = (mat.shape[0],) + tuple(problem.puzzle.board.shape)
    return sparse.COO(coords, data=mat.data.astype(np.uint8), shape=shape)


@dataclass(frozen=True, order=True)
class Configuration:
    """One way to place every piece.

    Attributes
    ----------
    placements : tuple of (int, int)
        For every copy of every piece, ``(piece index, row of its configuration
        matrix)``, sorted.  Copies of one piece are interchangeable, so their
        rows are listed in increasing order and a configuration is never
        repeated with copies swapped.
    """

    placements: tuple

    def cells(self, problem):
        """Column indices covered by each placement, in the order of ``placements``.

        Returns
        -------
        list of ndarray of int
        """
        out = []
        for p, r in self.placements:
            m = problem.pieces[p].matrix
            out.append(m.indices[m.indptr[r]:m.indptr[r + 1]])
        return out
