"""Stage 6: post-stage filters on whole configurations.

A filter looks at one final configuration and keeps it or not; filters only
ever remove configurations.  Cover and colour separation are also built into
the plans (that is what makes them fast), and are checked again here on every
configuration, independently, from the geometry; the slide test exists only
here.  A new filter is one new subclass of :class:`Filter`.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .errors import UsageError

__all__ = ["Cover", "Filter", "Separation", "Slidable", "default_filters", "parse_filter"]


class Filter:
    """Interface of every post-stage filter.

    Attributes
    ----------
    name : str
    in_plan : bool
        ``True`` when every plan already enforces it, so counting need not
        list configurations to apply it.
    """

    name = "?"
    in_plan = False

    def keep(self, problem, configuration):
        """Whether ``configuration`` passes."""
        raise NotImplementedError

    def apply(self, problem, configurations):
        """Lazily keep the configurations that pass."""
        return (c for c in configurations if self.keep(problem, c))

    def __repr__(self):
        return f"{type(self).__name__}()"


class Cover(Filter):
    """No column covered twice, and every primary column covered once.

    Examples
    --------
    >>> import zipup
    >>> prob = zipup.configuration_matrices(zipup.load("puzzles/room.toml"))
    >>> c = next(iter(zipup.enumerate(prob)))
    >>> Cover().keep(prob, c)
    True
    """

    name = "cover"
    in_plan = True

    def keep(self, problem, configuration):
        hits = np.zeros(problem.n_columns, dtype=np.int64)
        for cells in configuration.cells(problem):
            np.add.at(hits, cells, 1)
        return bool((hits <= 1).all() and (hits[problem.primary] == 1).all())


class Separation(Filter):
    """Pieces of one colour do not touch (by edge, or also by corner).

    Parameters
    ----------
    rule : {"edge", "corner"}
    """

    name = "separate"
    in_plan = True

    def __init__(self, rule):
        self.rule = rule

    def __repr__(self):
        return f"Separation({self.rule!r})"

    def keep(self, problem, configuration):
        coords = problem.columns
        owner = {}
        for k, ((p, _), cells) in enumerate(zip(configuration.placements, configuration.cells(problem))):
            for c in cells:
                owner[coords[c]] = (k, problem.pieces[p].colour)
        reach = 1
        for cell, (k, colour) in owner.items():
            if colour is None:
                continue
            for other, (k2, colour2) in _neighbours(owner, cell, self.rule, reach):
                if k2 != k and colour2 == colour:
                    return False
        return True


def _neighbours(owner, cell, rule, reach):
    import itertools

    nd = len(cell)
    for off in itertools.product((-1, 0, 1), repeat=nd):
        if not any(off):
            continue
        if rule == "edge" and sum(map(abs, off)) != 1:
            continue
        nb = tuple(a + b for a, b in zip(cell, off))
        if nb in owner:
            yield nb, owner[nb]


class Slidable(Filter):
    """The slide test: pieces move one unit along an axis, without rotating.

    A piece may move onto empty room cells, doorway cells and cells beyond the
    drawing, never onto ``.`` cells or another piece; it has left the room
    when none of its cells is a room cell.

    Parameters
    ----------
    mode : {"quick", "exact"}
        ``quick`` (the seed notebook's test): some piece can move one step, and
        after it is taken out some other piece can still move one step.
        ``exact``: all pieces can be taken out one after another.
    max_states : int
        Bound of the ``exact`` search per configuration.
    """

    name = "slidable"

    def __init__(self, mode="quick", max_states=200_000):
        if mode not in ("quick", "exact"):
            raise UsageError(f"slidable={mode}: expected none, quick or exact")
        self.mode = mode
        self.max_states = max_states

    def __repr__(self):
        return f"Slidable({self.mode!r})"

    def keep(self, problem, configuration):
        puzzle = problem.puzzle
        if puzzle is None:
            raise UsageError("the slide test needs a puzzle with geometry (a board drawing)")
        world = _World(puzzle)
        pieces = [frozenset(problem.columns[c] for c in cells) for cells in configuration.cells(problem)]
        if self.mode == "quick":
            return _quick(world, pieces)
        return _exact(world, pieces, self.max_states)


class _World:
    """What each position of space is: room, wall, or open floor."""

    def __init__(self, puzzle):
        b = puzzle.board
        self.ndim = b.ndim
        self.shape = b.shape
        self.room = frozenset(b.cells)
        self.open_inside = frozenset(b.doors)
        self.has_doors = bool(b.doors)
        self.dirs = [tuple(d if i == ax else 0 for i in range(b.ndim)) for ax in range(b.ndim)
                     for d in (-1, 1)]

    def free(self, cell, occupied):
        if cell in occupied:
            return False
        if cell in self.room or cell in self.open_inside:
            return True
        inside = all(0 <= x < s for x, s in zip(cell, self.shape))
        return not inside  # beyond the drawing is open floor; '.' inside it is wall

    def can_move(self, piece, d, occupied):
        others = occupied - piece
        return all(self.free(tuple(a + b for a, b in zip(c, d)), others) for c in piece)

    def movable(self, piece, occupied):
        return any(self.can_move(piece, d, occupied) for d in self.dirs)

    def outside(self, piece):
        return not any(c in self.room for c in piece)


def _quick(world, pieces):
    occupied = frozenset().union(*pieces)
    for k, p in enumerate(pieces):
        if not world.movable(p, occupied):
            continue
        rest = occupied - p
        if any(world.movable(q, rest) for m, q in enumerate(pieces) if m != k):
            return True
    return False


def _exact(world, pieces, max_states):
    """Breadth-first search over positions until every piece is out."""
    start = tuple(sorted(pieces, key=sorted))
    seen = {start}
    todo = deque([start])
    while todo:
        state = todo.popleft()
        if not state:
            return True
        occupied = frozenset().union(*state)
        for k, p in enumerate(state):
            for d in world.dirs:
                if not world.can_move(p, d, occupied):
                    continue
                moved = frozenset(tuple(a + b for a, b in zip(c, d)) for c in p)
                rest = state[:k] + state[k + 1:]
                nxt = rest if world.outside(moved) else tuple(sorted(rest + (moved,), key=sorted))
                if nxt not in seen:
                    if len(seen) >= max_states:
                        raise UsageError(f"slidable=exact gave up after {max_states} positions; "
                                         "use slidable=quick for this puzzle")
                    seen.add(nxt)
                    todo.append(nxt)
    return False


def default_filters(problem, slidable=None):
    """The filters a problem's puzzle asks for (``slidable`` overrides the file).

    Returns
    -------
    list of Filter
    """
    out = [Cover()]
    puzzle = problem.puzzle
    if puzzle is not None and puzzle.separate != "none":
        out.append(Separation(puzzle.separate))
    mode = slidable if slidable is not None else (puzzle.slidable if puzzle is not None else "none")
    if mode != "none":
        out.append(Slidable(mode))
    return out


def parse_filter(text):
    """Parse ``--filter NAME=VALUE``; returns ``(name, value)``.

    Examples
    --------
    >>> parse_filter("slidable=quick")
    ('slidable', 'quick')
    """
    name, eq, value = text.partition("=")
    if name.strip() != "slidable" or not eq:
        raise UsageError(f"--filter {text!r}: expected slidable=none, slidable=quick or slidable=exact")
    value = value.strip()
    if value not in ("none", "quick", "exact"):
        raise UsageError(f"--filter {text!r}: expected slidable=none, slidable=quick or slidable=exact")
    return "slidable", value
