"""A faithful reimplementation of seed 004's zip-up method, as a benchmark peer.

Seed 004 ("I Ruined a Wooden Puzzle") enumerates configurations like this:

1. every piece becomes a dense 0/1 configuration matrix, one row per placement,
   one column per board cell;
2. ``zip_up(A, B)`` computes the dense product ``A @ B.T``; every zero entry
   ``(i, j)`` (the two placements do not overlap) becomes a row ``A[i] + B[j]``
   of the result, built in a Python loop over the zero entries;
3. the pieces are joined in a balanced binary tree, ``ceil(log2(n))`` levels;
4. no merging of equal rows, no pruning of dead rows: every partial
   configuration is kept until the end, where the exact-cover condition is
   checked.

Three things are added so that it can count the same thing as zipup on the
benchmark puzzles, each in the seed's own style:

* copies of one piece (``count > 1``) are joined with themselves keeping only
  pairs ``i < j`` of placement indices (so swapping copies is not counted
  twice), as the seed's author would have to for the two T pieces of the room;
* ``separate`` colour rules: one more dense product per join, of the pieces'
  "marks" and "forbids" matrices (zipup's :class:`~zipup.matrices.Problem`
  provides them), must also be zero;
* ``slidable = "quick"``: the seed's filter, applied to the final rows.

The dense products are computed in row blocks so a join's memory is bounded by
its output, not by ``len(A) * len(B)``; that changes nothing else.  The method
is still exponential in the partial-configuration counts, so the benchmark only
runs it on tiny puzzles; :class:`TooBig` is raised before a join whose dense
product would exceed ``max_products`` entries.

Command line: ``python analysis/seed_method.py puzzles/room.toml`` prints the
count.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository's zipup importable
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

__all__ = ["TooBig", "count", "quick_slidable", "seed_count"]


class TooBig(RuntimeError):
    """A join would need a dense product larger than the allowed budget."""


@dataclass
class Block:
    """Rows of a partial configuration matrix and what they are made of.

    Attributes
    ----------
    rows : ndarray uint8 (m, n_cells)
        The configuration matrix (sums of placement rows).
    marks, forbids : ndarray uint8 (m, n_marks) or None
        Colour-rule side matrices, summed like ``rows``.
    parts : ndarray int64 (m, k)
        For each row, the global placement ids it is made of.
    """

    rows: np.ndarray
    marks: np.ndarray | None
    forbids: np.ndarray | None
    parts: np.ndarray


def zip_up(a, b, max_products=2 * 10**9, block_rows=2048, keep=None):
    """Join two blocks: keep the pairs whose overlap ``A @ B.T`` is zero.

    Parameters
    ----------
    a, b : Block
    max_products : int
        Refuse (:class:`TooBig`) when ``len(a) * len(b)`` exceeds this.
    block_rows : int
        Rows of ``A`` per dense product.
    keep : callable or None
        ``keep(i_array, j_array) -> bool mask``, an extra condition on pairs
        (used for ``i < j`` between copies of one piece).

    Returns
    -------
    Block
    """
    m, k = len(a.rows), len(b.rows)
    if m * k > max_products:
        raise TooBig(f"join of {m} x {k} rows exceeds the budget of {max_products:,} products")
    bt = b.rows.T.astype(np.int32)
    colour = a.marks is not None and b.marks is not None
    if colour:
        bmt = b.marks.T.astype(np.int32)
        bft = b.forbids.T.astype(np.int32)
    out_rows, out_marks, out_forbids, out_parts = [], [], [], []
    for s in range(0, m, block_rows):
        ar = a.rows[s:s + block_rows].astype(np.int32)
        overlap = ar @ bt
        if colour:
            overlap += a.marks[s:s + block_rows].astype(np.int32) @ bft
            overlap += a.forbids[s:s + block_rows].astype(np.int32) @ bmt
        ii, jj = np.nonzero(overlap == 0)
        if keep is not None:
            ok = keep(ii + s, jj)
            ii, jj = ii[ok], jj[ok]
        # The seed's Python loop over the zero entries, building A_i + B_j.
        for i, j in zip(ii.tolist(), jj.tolist()):
            i += s
            out_rows.append(a.rows[i] + b.rows[j])
            out_parts.append(np.concatenate((a.parts[i], b.parts[j])))
            if colour:
                out_marks.append(a.marks[i] + b.marks[j])
                out_forbids.append(a.forbids[i] + b.forbids[j])
    n = a.rows.shape[1]
    rows = np.array(out_rows, dtype=np.uint8).reshape(len(out_rows), n)
    parts = np.array(out_parts, dtype=np.int64).reshape(len(out_parts),
                                                        a.parts.shape[1] + b.parts.shape[1])
    if colour:
        nm = a.marks.shape[1]
        marks = np.array(out_marks, dtype=np.uint8).reshape(len(out_marks), nm)
        forbids = np.array(out_forbids, dtype=np.uint8).reshape(len(out_forbids), nm)
    else:
        marks = forbids = None  # with colour rules every leaf carries (maybe zero) marks
    return Block(rows, marks, forbids, parts)


def _leaf(problem, p, offset):
    """The block of one piece: its placements (dense), copies joined with i < j."""
    piece = problem.pieces[p]
    rows = piece.matrix.toarray().astype(np.uint8)
    m = len(rows)
    marks = forbids = None
    if problem.n_marks:
        if piece.marks is not None:
            marks = piece.marks.toarray().astype(np.uint8)
            forbids = piece.forbids.toarray().astype(np.uint8)
        else:
            marks = np.zeros((m, problem.n_marks), np.uint8)
            forbids = np.zeros((m, problem.n_marks), np.uint8)
    ids = np.arange(offset, offset + m, dtype=np.int64)[:, None]
    single = Block(rows, marks, forbids, ids)
    block = single
    for _ in range(1, piece.count or 1):
        last = block.parts[:, -1]
        block = zip_up(block, single, keep=lambda i, j, last=last: offset + j > last[i])
    return block


def seed_count(problem, max_products=2 * 10**9, verbose=False):
    """Count configurations of a :class:`~zipup.matrices.Problem` the seed's way.

    Returns
    -------
    (int, list of Block-size records)
        The count (after the exact-cover check and the puzzle's ``quick``
        slidable filter) and, per join, ``(level, rows_in_a, rows_in_b, rows_out)``.
    """
    offsets = np.cumsum([0] + [pc.n_placements for pc in problem.pieces])
    blocks = [_leaf(problem, p, int(offsets[p])) for p in range(len(problem.pieces))]
    steps = []
    level = 0
    while len(blocks) > 1:
        level += 1
        nxt = []
        for i in range(0, len(blocks) - 1, 2):
            c = zip_up(blocks[i], blocks[i + 1], max_products=max_products)
            steps.append((level, len(blocks[i].rows), len(blocks[i + 1].rows), len(c.rows)))
            if verbose:
                print(f"level {level}: {steps[-1][1]} x {steps[-1][2]} -> {steps[-1][3]}",
                      file=sys.stderr)
            nxt.append(c)
        if len(blocks) % 2:
            nxt.append(blocks[-1])
        blocks = nxt
    final = blocks[0]
    # The exact-cover check at the end: primary cells covered exactly once.
    prim = np.asarray(problem.primary, dtype=bool)
    ok = (final.rows[:, prim] == 1).all(axis=1) & (final.rows <= 1).all(axis=1)
    parts = final.parts[ok]
    puzzle = problem.puzzle
    if puzzle is not None and getattr(puzzle, "slidable", "none") == "quick":
        placement_cells = _placement_cells(problem)
        extent = drawing_extent(puzzle)
        keep = [quick_slidable(puzzle.board, [placement_cells[g] for g in row], extent)
                for row in parts]
        parts = parts[np.array(keep, dtype=bool)] if len(parts) else parts
    elif puzzle is not None and getattr(puzzle, "slidable", "none") not in ("none", None):
        raise NotImplementedError(f"slidable = {puzzle.slidable!r} is not the seed's filter")
    return len(parts), steps


def _placement_cells(problem):
    """Global placement id -> tuple of board cell coordinates."""
    out = []
    for pc in problem.pieces:
        m = pc.matrix
        for r in range(m.shape[0]):
            out.append(tuple(problem.columns[c] for c in m.indices[m.indptr[r]:m.indptr[r + 1]]))
    return out


def _directions(ndim):
    for axis in range(ndim):
        for d in (-1, 1):
            v = [0] * ndim
            v[axis] = d
            yield tuple(v)


def drawing_extent(puzzle):
    """The extent of the board drawing as written, ``.`` cells at its edges included.

    ``Board.shape`` is the extent of the non-``.`` cells; the slide test needs
    the drawing's own edges (cells beyond them are open floor, ``.`` cells
    inside them are walls), so the file is read again here.
    """
    import tomllib

    shape = tuple(puzzle.board.shape)
    try:
        with open(puzzle.path, "rb") as f:
            board = tomllib.load(f)["board"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return shape

    def rows_of(text):
        lines = text.split("\n")
        while lines and not lines[0].strip():
            lines.pop(0)
        while lines and not lines[-1].strip():
            lines.pop()
        return lines

    if "size" in board:
        drawn = tuple(board["size"])
    elif "layers" in board:
        layers = [rows_of(t) for t in board["layers"]]
        drawn = (len(layers), max(len(r) for r in layers), max(len(x) for r in layers for x in r))
    elif "cells" in board:
        rows = rows_of(board["cells"])
        drawn = (max(len(x) for x in rows),) if len(rows) == 1 and puzzle.board.ndim == 1 else \
            (len(rows), max(len(x) for x in rows))
    else:
        return shape
    if len(drawn) != len(shape):
        return shape
    return tuple(max(a, b) for a, b in zip(drawn, shape))


def quick_slidable(board, pieces, extent=None):
    """The seed's slide test on one configuration.

    Some piece can move one step (onto empty room cells, doorway cells or
    cells beyond the drawing, never onto a wall ``.`` inside the drawing nor
    onto another piece), and after it is taken out some other piece can still
    move one step.

    Parameters
    ----------
    board : zipup.puzzle.Board
    pieces : list of tuple of cell coordinates
    extent : tuple of int, optional
        The drawing's extent (see :func:`drawing_extent`); default ``board.shape``.
    """
    room = set(board.cells)
    doors = set(board.doors)
    shape = board.shape if extent is None else extent

    def free(c, occupied):
        if c in occupied:
            return False
        if c in room or c in doors:
            return True
        return any(x < 0 or x >= s for x, s in zip(c, shape))  # beyond the drawing

    owner = {}
    for k, cells in enumerate(pieces):
        for c in cells:
            owner[c] = k

    def movable(k, present):
        cells = set(pieces[k])
        occ = {c for c, o in owner.items() if o != k and o in present}
        for d in _directions(board.ndim):
            if all((t in cells) or free(t, occ)
                   for t in (tuple(a + b for a, b in zip(c, d)) for c in cells)):
                return True
        return False

    everyone = set(range(len(pieces)))
    for k in everyone:
        if movable(k, everyone):
            rest = everyone - {k}
            if any(movable(q, rest) for q in rest):
                return True
    return False


def count(path, max_products=2 * 10**9, verbose=False):
    """Load a puzzle file and count its configurations the seed's way."""
    from zipup.matrices import configuration_matrices
    from zipup.puzzle import load

    return seed_count(configuration_matrices(load(path)), max_products, verbose)[0]


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("puzzle")
    ap.add_argument("--max-products", type=float, default=2e9)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    t = time.perf_counter()
    n = count(a.puzzle, int(a.max_products), a.verbose)
    print(n)
    print(f"{time.perf_counter() - t:.3f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
