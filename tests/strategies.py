"""Hypothesis strategies and the independent reference implementations they are checked against.

Everything here is written from the puzzle format's specification, not from zipup's code:
the orientations of a shape are computed by closing it under quarter turns and reflections
of its coordinates, placements by translating every orientation over the board, and
configurations by a plain recursive search.  Tests compare zipup against these.

A :class:`Model` is a random puzzle as plain Python data; ``Model.toml()`` writes it in the
TOML puzzle format, and :func:`brute_force` lists its configurations as a set of frozensets of
``(piece name, frozenset of cells)``.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

#: ``HYPOTHESIS_PROFILE=thorough`` runs ten times the examples of every property test.
SCALE = 10 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 1


def examples(n):
    """``@examples(n)``: run a property test on n random examples (times SCALE)."""
    return settings(max_examples=n * SCALE)

# --------------------------------------------------------------------------- geometry by hand


def _quarter_turn(axis_a, axis_b):
    """Rotate a point by 90 degrees in the plane of two axes: (a, b) -> (b, -a)."""

    def f(p):
        q = list(p)
        q[axis_a], q[axis_b] = p[axis_b], -p[axis_a]
        return tuple(q)

    return f


def _reflect(axis):
    def f(p):
        q = list(p)
        q[axis] = -p[axis]
        return tuple(q)

    return f


def generators(ndim, rotate, mirror):
    """Point maps generating the motions the spec allows (the orbit is closed under them).

    1-D: reversal when rotate or mirror.  2-D: quarter turn; turning over (left-right flip).
    3-D: quarter turns about the three axes; mirror image (flip of the column axis).  With
    ``rotate = false, mirror = true`` only the left-right (column) flip.
    """
    if ndim == 1:
        return [_reflect(0)] if (rotate or mirror) else []
    gens = []
    if rotate:
        gens += [_quarter_turn(0, 1)] if ndim == 2 else [_quarter_turn(0, 1), _quarter_turn(1, 2),
                                                         _quarter_turn(0, 2)]
    if mirror:
        gens.append(_reflect(ndim - 1))
    return gens


def normalised(shape):
    """A shape {cell: label} translated so each axis starts at 0, as a frozenset of items."""
    ndim = len(next(iter(shape)))
    lo = [min(c[i] for c in shape) for i in range(ndim)]
    return frozenset((tuple(c[i] - lo[i] for i in range(ndim)), lab) for c, lab in shape.items())


def ref_orientations(shape, rotate=True, mirror=True):
    """Distinct normalised orientations of ``shape`` ({cell: label}), by closing under the
    generators (breadth first).  Returns a set of frozensets of (cell, label)."""
    ndim = len(next(iter(shape)))
    gens = generators(ndim, rotate, mirror)
    start = normalised(shape)
    seen = {start}
    todo = [start]
    while todo:
        s = todo.pop()
        for g in gens:
            t = normalised({g(c): lab for c, lab in s})
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def ref_placements(shape, board, rotate, mirror, match):
    """Every placement of a piece: sorted list of distinct frozensets of cells.

    ``board`` maps room cells to labels; under ``match`` piece labels must equal them.
    Without ``match`` labels are ignored (placements are sets of cells).
    """
    out = set()
    for orient in ref_orientations(shape, rotate, mirror):
        cells = sorted(orient)
        (c0, _), rest = cells[0], cells
        for b in board:
            t = tuple(x - y for x, y in zip(b, c0))
            moved = [(tuple(x + y for x, y in zip(c, t)), lab) for c, lab in rest]
            if all(c in board and (not match or board[c] == lab) for c, lab in moved):
                out.add(frozenset(c for c, _ in moved))
    return sorted(out, key=sorted)


def neighbours(cell, rule):
    """Cells touching ``cell`` under a separate rule ('edge': faces, 'corner': all 3**n - 1)."""
    for off in itertools.product((-1, 0, 1), repeat=len(cell)):
        if any(off) and (rule == "corner" or sum(map(abs, off)) == 1):
            yield tuple(a + b for a, b in zip(cell, off))


# --------------------------------------------------------------------------- the model


@dataclass
class PieceModel:
    name: str
    shape: dict  # {cell: label}, as drawn (any origin for coords)
    count: int = 1
    colour: str | None = None
    rotate: bool | None = None  # None: from [rules]
    mirror: bool | None = None
    style: str = "cells"  # cells | layers | coords


@dataclass
class Model:
    """A random puzzle as plain data, with the TOML text it is written as."""

    ndim: int
    box: tuple  # extent of the board drawing
    board: dict  # {room cell: label}
    pieces: list
    doors: frozenset = frozenset()
    cover: str = "exact"
    match: bool = False
    separate: str = "none"
    rotate: bool | None = None  # None: key left out, the default applies
    mirror: bool | None = None
    board_style: str = "cells"  # cells | layers | size
    door: str = "D"
    trim: bool = False  # leave out trailing '.' of drawing rows
    blank_lines: bool = False

    # -- the rules in force
    @property
    def rules_rotate(self):
        return True if self.rotate is None else self.rotate

    @property
    def rules_mirror(self):
        return (self.ndim < 3) if self.mirror is None else self.mirror

    def piece_rules(self, p):
        return (self.rules_rotate if p.rotate is None else p.rotate,
                self.rules_mirror if p.mirror is None else p.mirror)

    @property
    def area(self):
        return sum(len(p.shape) * p.count for p in self.pieces)

    # -- writing
    def toml(self, name="random puzzle"):
        out = [f'name = "{name}"', "", "[board]"]
        if self.board_style == "size":
            out.append(f"size = {list(self.box)}")
        elif self.ndim == 3:
            out.append("layers = [" + ", ".join(_q(_draw(self._board_grid(layer), self.trim, self.blank_lines))
                                                for layer in range(self.box[0])) + "]")
        else:
            out.append("cells = " + _q(_draw(self._board_grid(None), self.trim, self.blank_lines)))
        out.append(f'cover = "{self.cover}"')
        if self.match:
            out.append("match = true")
        if self.door != "D":
            out.append(f'door = "{self.door}"')
        rules = []
        if self.rotate is not None:
            rules.append(f"rotate = {str(self.rotate).lower()}")
        if self.mirror is not None:
            rules.append(f"mirror = {str(self.mirror).lower()}")
        if self.separate != "none":
            rules.append(f'separate = "{self.separate}"')
        if rules:
            out += ["", "[rules]"] + rules
        for p in self.pieces:
            out += ["", "[[piece]]", f'name = "{p.name}"']
            if p.count != 1:
                out.append(f"count = {p.count}")
            if p.colour is not None:
                out.append(f'colour = "{p.colour}"')
            if p.rotate is not None:
                out.append(f"rotate = {str(p.rotate).lower()}")
            if p.mirror is not None:
                out.append(f"mirror = {str(p.mirror).lower()}")
            out.append(_piece_toml(p, self.ndim))
        return "\n".join(out) + "\n"

    def _board_grid(self, layer):
        """Rows of characters of the board drawing (one layer in 3-D)."""
        cells = dict(self.board)
        cells.update({d: self.door for d in self.doors})
        if self.ndim == 1:
            return ["".join(cells.get((c,), ".") for c in range(self.box[0]))]
        if self.ndim == 2:
            return ["".join(cells.get((r, c), ".") for c in range(self.box[1])) for r in range(self.box[0])]
        return ["".join(cells.get((layer, r, c), ".") for c in range(self.box[2])) for r in range(self.box[1])]


def _draw(rows, trim=False, blank_lines=False):
    if trim:  # rows may differ in length; an all-'.' row keeps one '.' (a blank one is dropped)
        rows = [r.rstrip(".") or "." for r in rows]
    text = "\n".join(rows)
    return ("\n\n" + text + "\n\n") if blank_lines else ("\n" + text + "\n")


def _q(text):
    return '"""' + text + '"""'


def _piece_toml(p, ndim):
    cells = list(p.shape)
    if p.style == "coords":
        return "coords = " + str([list(c) for c in cells])
    lo = [min(c[i] for c in cells) for i in range(ndim)]
    hi = [max(c[i] for c in cells) for i in range(ndim)]
    norm = {tuple(c[i] - lo[i] for i in range(ndim)): lab for c, lab in p.shape.items()}
    ext = [h - l + 1 for h, l in zip(hi, lo)]
    if ndim == 1:
        return "cells = " + _q(_draw(["".join(norm.get((c,), ".") for c in range(ext[0]))]))
    if ndim == 2:
        return "cells = " + _q(_draw(["".join(norm.get((r, c), ".") for c in range(ext[1]))
                                      for r in range(ext[0])]))
    layers = [["".join(norm.get((l, r, c), ".") for c in range(ext[2])) for r in range(ext[1])]
              for l in range(ext[0])]
    if p.style == "cells" and ext[0] == 1:  # a piece lying in one layer may be a plain drawing
        return "cells = " + _q(_draw(layers[0]))
    return "layers = [" + ", ".join(_q(_draw(layer)) for layer in layers) + "]"


# --------------------------------------------------------------------------- brute force


def brute_force(model):
    """Every configuration of ``model``: a set of frozensets of (piece name, frozenset of cells).

    A plain recursive search over the copies, one placement each, copies of one piece in
    increasing placement order (they are interchangeable), no cell used twice; under exact
    cover every board cell is used; under ``separate`` two placed pieces (copies included) of
    the same colour do not touch.
    """
    board = model.board
    plist = [ref_placements(p.shape, board, *model.piece_rules(p), model.match) for p in model.pieces]
    copies = [i for i, p in enumerate(model.pieces) for _ in range(p.count)]
    found = set()
    chosen = []  # (piece index, placement index, cells)
    room = frozenset(board)

    def clashes(i, cells):
        colour = model.pieces[i].colour
        if model.separate == "none" or colour is None:
            return False
        halo = {nb for c in cells for nb in neighbours(c, model.separate)}
        return any(model.pieces[j].colour == colour and halo & other for j, _, other in chosen)

    def search(k, used):
        if k == len(copies):
            if model.cover == "exact" and used != room:
                return
            found.add(frozenset((model.pieces[i].name, cells) for i, _, cells in chosen))
            return
        i = copies[k]
        start = chosen[-1][1] + 1 if (k and copies[k - 1] == i) else 0
        for idx in range(start, len(plist[i])):
            cells = plist[i][idx]
            if cells & used or clashes(i, cells):
                continue
            chosen.append((i, idx, cells))
            search(k + 1, used | cells)
            chosen.pop()

    search(0, frozenset())
    return found


def engine_configurations(problem, configurations):
    """zipup configurations in the brute force's terms (a list, to catch repeats)."""
    out = []
    for conf in configurations:
        out.append(frozenset((problem.pieces[p].name, frozenset(problem.columns[c] for c in cells))
                             for (p, _), cells in zip(conf.placements, conf.cells(problem))))
    return out


# --------------------------------------------------------------------------- strategies


def _face_neighbours(cell):
    for i in range(len(cell)):
        for d in (-1, 1):
            yield cell[:i] + (cell[i] + d,) + cell[i + 1:]


@st.composite
def polyforms(draw, ndim, max_size=4, labels=("#",)):
    """A random face-connected shape {cell: label} grown from the origin."""
    size = draw(st.sampled_from([k for k in (1, 2, 3, 3, 4, 4, 5, 6) if k <= max_size]))
    cells = [(0,) * ndim]
    while len(cells) < size:
        frontier = sorted({nb for c in cells for nb in _face_neighbours(c)} - set(cells))
        cells.append(draw(st.sampled_from(frontier)))
    return {c: draw(st.sampled_from(labels)) for c in cells}


def boxes(ndim):
    if ndim == 1:
        return st.tuples(st.integers(3, 12))
    if ndim == 2:
        return st.tuples(st.integers(2, 4), st.integers(2, 4))
    return st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(2, 3)).filter(
        lambda b: b[0] * b[1] * b[2] <= 16 and b[0] * b[1] >= 2)


@st.composite
def models(draw, ndims=(1, 2, 3), covers=("exact", "partial"), separate=("none", "edge", "corner"),
           match=(False, True), max_copies=5, max_kinds=4, doors=True):
    """A random small puzzle (board of at most 16 cells) that zipup must load.

    The board is built by putting copies of random pieces into an empty box, each in an
    orientation its rules allow (so exact-cover puzzles usually have solutions); under
    partial cover a few spare cells are added.  Sometimes the board is instead any random set
    of cells of the right size (so zero is a common answer too).  Covers copies (count > 1),
    holes, labels (with and without ``match = true``), colours with ``separate``, per-piece
    ``rotate``/``mirror``, coordinates, layers and size boards.
    """
    ndim = draw(st.sampled_from(ndims))
    box = draw(boxes(ndim))
    use_match = draw(st.sampled_from(match))
    # labels matter only under match; without it they must change nothing
    labels = ("#", "a", "b") if (use_match or draw(st.booleans())) else ("#",)
    cover = draw(st.sampled_from(covers))
    sep = draw(st.sampled_from(separate))
    rot = draw(st.sampled_from((None, True, False)))
    mir = draw(st.sampled_from((None, True, False)))
    model = Model(ndim=ndim, box=box, board={}, pieces=[], cover=cover, match=use_match,
                  separate=sep, rotate=rot, mirror=mir)
    colours = (None, "red", "blue") if sep != "none" else (None, "red")

    allbox = list(itertools.product(*(range(n) for n in box)))
    occupied = {}
    kinds = draw(st.sampled_from([k for k in (1, 2, 3, 3, 4, 4) if k <= max_kinds]))
    copies_left = max_copies
    for k in range(kinds):
        if copies_left == 0:
            break
        shape = draw(polyforms(ndim, 4, labels))
        style = draw(st.sampled_from(("cells", "coords") if ndim < 3 else ("cells", "layers", "coords")))
        if any(lab != "#" for lab in shape.values()):
            style = "cells" if ndim < 3 else draw(st.sampled_from(("cells", "layers")))
        if style == "coords":  # any origin
            off = draw(st.tuples(*[st.integers(-3, 3)] * ndim))
            shape = {tuple(a + b for a, b in zip(c, off)): lab for c, lab in shape.items()}
        piece = PieceModel(name=f"P{k}", shape=shape, colour=draw(st.sampled_from(colours)),
                           rotate=draw(st.sampled_from((None, None, True, False))),
                           mirror=draw(st.sampled_from((None, None, True, False))), style=style)
        want = draw(st.sampled_from([k for k in (1, 1, 2, 3) if k <= copies_left]))
        r, m = model.piece_rules(piece)
        orients = sorted(ref_orientations(shape, r, m), key=sorted)
        placed = 0
        for _ in range(want):
            options = []
            for o in orients:
                for at in allbox:
                    cells = {tuple(a + b for a, b in zip(c, at)): lab for c, lab in o}
                    if all(c in allbox_set(box) and c not in occupied for c in cells):
                        options.append(cells)
            if not options:
                break
            occupied.update(draw(st.sampled_from(options)))
            placed += 1
        if placed:
            piece.count = placed
            model.pieces.append(piece)
            copies_left -= placed
    if not model.pieces:  # nothing fitted: one monomino
        at = draw(st.sampled_from(allbox))
        model.pieces.append(PieceModel(name="P0", shape={(0,) * ndim: "#"}))
        occupied[at] = "#"
    board = dict(occupied)
    free = [c for c in allbox if c not in board]
    if cover == "partial" and free:
        extra = draw(st.lists(st.sampled_from(free), max_size=3, unique=True))
        for c in extra:
            board[c] = draw(st.sampled_from(labels))
    if draw(st.integers(0, 4)) == 0:
        # a random board of the same number of cells; the drawing keeps the whole box so that
        # every piece still fits its extent
        cells = draw(st.permutations(allbox))[:len(board)]
        board = {c: draw(st.sampled_from(labels)) for c in cells}
        model.board = board
        if use_match:
            have = set(board.values())
            for p in model.pieces:  # labels no board cell carries are refused; use the board's
                p.shape = {c: (lab if lab in have else sorted(have)[0]) for c, lab in p.shape.items()}
                if p.style == "coords" and any(lab != "#" for lab in p.shape.values()):
                    p.style = "cells"  # coordinates carry no labels: draw it
        model.trim = False
        model.board_style = "layers" if ndim == 3 else "cells"
    else:
        model.board = board
        model.trim = ndim < 3 and draw(st.booleans()) and len(board) > 0
        full = len(board) == len(allbox) and all(lab == "#" for lab in board.values())
        model.board_style = draw(st.sampled_from(("size", "cells" if ndim < 3 else "layers"))) if (
            full and ndim > 1) else ("layers" if ndim == 3 else "cells")
    if model.trim:
        # rows lose their trailing '.', so the drawing's width shrinks to the cells (the
        # number of rows stays: a 2-D drawing must keep two rows or more)
        width = max(c[-1] for c in model.board) + 1
        model.box = model.box[:-1] + (width,)
    if doors and model.board_style != "size":
        free = [c for c in itertools.product(*(range(n) for n in model.box)) if c not in model.board]
        if free:
            model.doors = frozenset(draw(st.lists(st.sampled_from(free), max_size=2, unique=True)))
    model.door = draw(st.sampled_from(("D", "D", "+")))
    model.blank_lines = draw(st.booleans())
    return model


def allbox_set(box, _cache={}):
    if box not in _cache:
        _cache[box] = frozenset(itertools.product(*(range(n) for n in box)))
    return _cache[box]


# --------------------------------------------------------------------------- matrices


@st.composite
def binary_matrices(draw, max_rows=8, max_cols=140, cols=None):
    """A small dense 0/1 uint8 matrix; columns may cross the 64-bit word boundary."""
    n = draw(st.integers(0, max_rows))
    m = cols if cols is not None else draw(st.sampled_from([1, 3, 8, 63, 64, 65, 70, 128, 130]))
    density = draw(st.sampled_from([0.05, 0.2, 0.5]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    return (rng.random((n, m)) < density).astype(np.uint8)


@st.composite
def matrix_pairs(draw):
    """Two 0/1 matrices with the same number of columns."""
    a = draw(binary_matrices())
    b = draw(binary_matrices(cols=a.shape[1]))
    return a, b


@st.composite
def polyomino_shapes(draw, ndim=2, max_size=6):
    """A random shape as a list of coordinate tuples (for geometry tests)."""
    return sorted(draw(polyforms(ndim, max_size)))


@st.composite
def tree_texts(draw, model):
    """A random ``--tree`` over the copies of a model's pieces: every copy once, any order,
    any bracketing."""
    leaves = [p.name for p in model.pieces for _ in range(p.count)]
    leaves = draw(st.permutations(leaves))

    def build(items):
        if len(items) == 1:
            return items[0]
        cut = draw(st.integers(1, len(items) - 1))
        return f"({build(items[:cut])},{build(items[cut:])})"

    return build(list(leaves))


def model_from_puzzle(puzzle):
    """A Model of a loaded puzzle (to run the brute force on a repository puzzle file)."""
    b = puzzle.board
    pieces = [PieceModel(name=p.name, shape=dict(zip(p.cells, p.labels)), count=p.count, colour=p.colour,
                         rotate=p.rotate, mirror=p.mirror) for p in puzzle.pieces]
    return Model(ndim=b.ndim, box=b.shape, board=dict(zip(b.cells, b.labels)), pieces=pieces,
                 doors=frozenset(b.doors), cover=b.cover, match=b.match, separate=puzzle.separate)


@st.composite
def exact_cover_problems(draw, max_options=9, max_columns=7):
    """A random exact-cover problem without geometry: options (non-empty 0/1 rows) that may each
    be used at most once, primary columns covered exactly once, secondary at most once.
    Returns ``(options, primary)`` as a 0/1 array and a bool array."""
    m = draw(st.integers(1, max_columns))
    k = draw(st.integers(0, max_options))
    rows = draw(st.lists(st.lists(st.booleans(), min_size=m, max_size=m).filter(any), min_size=k, max_size=k))
    primary = draw(st.lists(st.booleans(), min_size=m, max_size=m))
    return np.array(rows, dtype=np.uint8).reshape(k, m), np.array(primary, dtype=bool)


def exact_covers(problem):
    """Every exact cover of a full-cover problem, by a plain recursive search on its rows.

    Branches on the uncovered column with the fewest fitting rows (columns only, never a
    piece) and checks the copies at the end.  Returns the set of sorted tuples of
    ``(piece index, row)``, the form of ``Configuration.placements``.
    """
    rows = [(p, r, frozenset(piece.matrix.indices[piece.matrix.indptr[r]:piece.matrix.indptr[r + 1]].tolist()))
            for p, piece in enumerate(problem.pieces) if piece.count != 0 for r in range(piece.n_placements)]
    found = set()

    def search(free, avail, left, chosen):
        if not free:
            if not any(left.values()):
                found.add(tuple(sorted(chosen)))
            return
        best = min(sorted(free), key=lambda c: sum(1 for x in avail if c in x[2]))
        for p, r, cells in avail:
            if best not in cells:
                continue
            now = dict(left)
            if p in now:
                now[p] -= 1
            fits = [y for y in avail if not (y[2] & cells) and now.get(y[0], 1) > 0]
            search(free - cells, fits, now, chosen + [(p, r)])

    left = {p: piece.count for p, piece in enumerate(problem.pieces) if piece.count is not None}
    search(frozenset(range(problem.n_columns)), rows, left, [])
    return found


def peer_exact_covers(problem):
    """Every exact cover of a full-cover problem whose pieces are each placed once, by a peer.

    The PyPI package ``exact-cover`` (Knuth's dancing links, in C) solves the matrix with one
    column per cell and one per piece; the test is skipped where it is not installed.  Returns
    the set of sorted tuples of ``(piece index, row)``, the form of ``Configuration.placements``.
    """
    import pytest

    exact_cover = pytest.importorskip("exact_cover")
    assert all(p.count == 1 for p in problem.pieces), "one copy of each piece"
    owner = [(p, r) for p, piece in enumerate(problem.pieces) for r in range(piece.n_placements)]
    dense = np.zeros((len(owner), problem.n_columns + len(problem.pieces)), dtype=bool)
    at = 0
    for p, piece in enumerate(problem.pieces):
        dense[at:at + piece.n_placements, :problem.n_columns] = piece.matrix.toarray() != 0
        dense[at:at + piece.n_placements, problem.n_columns + p] = True
        at += piece.n_placements
    return {tuple(sorted(owner[int(i)] for i in found)) for found in exact_cover.get_all_solutions(dense)}


@st.composite
def rectangle_packings(draw, max_side=8):
    """A rectangle cut into rectangles by random guillotine cuts, as a TOML puzzle (always solvable).

    Equal rectangles become one piece with copies; ``rotate`` is drawn once for all pieces
    (without it a piece keeps the orientation it was cut in).  The board is at most
    ``max_side`` a side, its shorter side either way round.
    """
    w = draw(st.integers(1, max_side))
    h = draw(st.integers(1, max_side))
    parts, todo = [], [(w, h)]
    while todo:
        a, b = todo.pop()
        if (a * b > 1) and draw(st.integers(0, 5)) < min(a * b - 1, 4):
            if a > 1 and (b == 1 or draw(st.booleans())):
                k = draw(st.integers(1, a - 1))
                todo += [(k, b), (a - k, b)]
            else:
                k = draw(st.integers(1, b - 1))
                todo += [(a, k), (a, b - k)]
        else:
            parts.append((a, b))
    rotate = draw(st.booleans())
    kinds = {}
    for a, b in parts:
        key = tuple(sorted((a, b))) if rotate else (a, b)
        kinds[key] = kinds.get(key, 0) + 1
    text = f'name = "rectangles"\n[board]\nsize = [{w}, {h}]\n[rules]\nrotate = {str(rotate).lower()}\n'
    text += "mirror = false\n"
    for (a, b), count in sorted(kinds.items()):
        cells = "\\n".join(["#" * b] * a)
        text += f'[[piece]]\nname = "r{a}x{b}"\ncount = {count}\ncells = "{cells}"\n'
    return text
