"""Symmetry: counts up to symmetry, automatic symmetry breaking, labelled counts.

A *symmetry* of a puzzle is a rotation or reflection of the board drawing
that maps it onto itself (room cells, their labels under ``match``, doorways,
and the walls when a slide test is in force), combined with a renaming of
pieces (and of colours, under ``separate``) that maps the piece set onto
itself.  The symmetries form the puzzle's :class:`SymmetryGroup`; it acts on
the configurations of the puzzle's :class:`~zipup.matrices.Problem`.

* :meth:`SymmetryGroup.canonical` is the smallest image of a configuration
  (configurations compare as sorted ``(piece, row)`` tuples); counting
  canonical configurations counts *up to symmetry*.
* :func:`labelled_count` is the count with the copies of every piece told
  apart (``count`` times the product of ``count_p!``).
* :func:`symmetry_breaking` picks one piece and keeps one placement per orbit
  of its placements, so that a plan does ``|G|`` times less work; the orbits
  of the whole configurations are then recovered exactly (see
  :func:`solve_unique`).

>>> import zipup
>>> res = count_unique(zipup.load("puzzles/north-colours.toml"))
>>> res.summary()
'32 configurations, 2 up to symmetry (group of order 16), 128 with copies told apart'
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .errors import UsageError
from .geometry import all_transforms, allowed_transforms, normalise, orientations
from .matrices import Configuration, Problem, separating_colours

__all__ = ["Orbit", "Symmetry", "SymmetryBreaking", "SymmetryGroup", "UniqueResult",
           "count_unique", "enumerate_unique", "labelled_count", "restrict_rows", "solve_unique",
           "symmetry_breaking", "symmetry_group"]

#: Refuse groups larger than this (many same-shaped pieces with different names).
MAX_ORDER = 10_000


# ------------------------------------------------------------------ elements


@dataclass(frozen=True, eq=False)
class Symmetry:
    """One element of a puzzle's symmetry group.

    Attributes
    ----------
    transform : ndarray of int, shape (ndim, ndim)
        Signed permutation matrix applied to cell coordinates (``(0, 0)``-shaped
        for problems without geometry).
    offset : tuple of int
        Translation applied after ``transform``: cell ``c`` goes to
        ``transform @ c + offset``.
    renaming : tuple of int
        ``renaming[p]`` is the piece that piece ``p``'s placements become.
    colours : tuple of (str, str)
        The colour renaming under ``separate`` (only colours that change).
    columns : ndarray of int
        Column ``c`` goes to column ``columns[c]``.
    rows : tuple of ndarray of int
        ``rows[p][r]`` is the row of piece ``renaming[p]`` that row ``r`` of
        piece ``p`` becomes.
    """

    transform: np.ndarray
    offset: tuple
    renaming: tuple
    colours: tuple
    columns: np.ndarray
    rows: tuple

    @property
    def is_motion(self):
        """Whether the board moves (``False`` for a pure renaming of pieces)."""
        return not np.array_equal(self.transform, np.eye(len(self.transform), dtype=np.int64))

    def __call__(self, configuration):
        """The image of a configuration (a :class:`~zipup.matrices.Configuration`)."""
        return Configuration(tuple(sorted((self.renaming[p], int(self.rows[p][r]))
                                          for p, r in configuration.placements)))

    def __repr__(self):
        moved = {i: j for i, j in enumerate(self.renaming) if i != j}
        return (f"Symmetry(transform={self.transform.tolist()}, offset={list(self.offset)}, "
                f"renaming={moved}, colours={dict(self.colours)})")


@dataclass(frozen=True)
class Orbit:
    """One class of configurations equivalent under the symmetry group.

    Attributes
    ----------
    representative : Configuration
        The canonical (smallest) configuration of the class.
    size : int
        How many configurations the class holds: the group order divided by
        ``stabiliser``.
    stabiliser : int
        How many symmetries map the representative onto itself.
    """

    representative: Configuration
    size: int
    stabiliser: int


class SymmetryGroup:
    """The symmetries of a problem and their action on configurations.

    Build it with :func:`symmetry_group`.  The identity is ``elements[0]``.

    Attributes
    ----------
    problem : Problem
    elements : tuple of Symmetry
    """

    def __init__(self, problem, elements):
        self.problem = problem
        self.elements = tuple(elements)
        sizes = [p.n_placements for p in problem.pieces]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        # one global placement id per (piece, row); ids sort as (piece, row) pairs do, so a
        # sorted id vector orders like a Configuration
        self._maps = np.empty((len(self.elements), int(self._offsets[-1])), dtype=np.int64)
        for k, g in enumerate(self.elements):
            for p, rows in enumerate(g.rows):
                q = g.renaming[p]
                self._maps[k, self._offsets[p]:self._offsets[p + 1]] = self._offsets[q] + rows

    def __len__(self):
        return len(self.elements)

    def __iter__(self):
        return iter(self.elements)

    def __repr__(self):
        return f"SymmetryGroup(order={self.order}, motions={self.n_motions})"

    @property
    def order(self):
        """Number of symmetries, the identity included."""
        return len(self.elements)

    @property
    def renamings(self):
        """The symmetries that rename pieces without moving the board (a normal subgroup)."""
        return tuple(g for g in self.elements if not g.is_motion)

    @property
    def n_motions(self):
        """Number of distinct board motions (the order divided by the renamings)."""
        return self.order // len(self.renamings)

    # -- the action
    def _ids(self, configuration):
        return np.array([self._offsets[p] + r for p, r in configuration.placements], dtype=np.int64)

    def _conf(self, ids):
        piece = np.searchsorted(self._offsets, ids, side="right") - 1
        return Configuration(tuple((int(p), int(i - self._offsets[p])) for p, i in zip(piece, ids)))

    def _images(self, configuration):
        """Sorted placement ids of every image, one row per element: (order, k)."""
        ids = self._ids(configuration)
        imgs = self._maps[:, ids]
        imgs.sort(axis=1)
        return ids, imgs

    def images(self, configuration):
        """The image of a configuration under every element, in element order."""
        _, imgs = self._images(configuration)
        return [self._conf(row) for row in imgs]

    def orbit(self, configuration):
        """The distinct images of a configuration, sorted (the first is canonical).

        Examples
        --------
        >>> import zipup
        >>> prob = zipup.as_problem(zipup.load("puzzles/north-colours.toml"))
        >>> g = symmetry_group(prob)
        >>> c = next(iter(zipup.enumerate(prob)))
        >>> len(g.orbit(c)), g.orbit(c)[0] == g.canonical(c)
        (16, True)
        """
        _, imgs = self._images(configuration)
        return [self._conf(row) for row in np.unique(imgs, axis=0)]

    def canonical(self, configuration):
        """The smallest image of a configuration under the group."""
        _, imgs = self._images(configuration)
        return self._conf(imgs[np.lexsort(imgs.T[::-1])[0]])

    def stabiliser(self, configuration):
        """The elements that map a configuration onto itself."""
        ids, imgs = self._images(configuration)
        return [g for g, same in zip(self.elements, (imgs == ids).all(axis=1)) if same]

    def orbit_size(self, configuration):
        """Number of distinct images: the order over the stabiliser's order."""
        ids, imgs = self._images(configuration)
        return self.order // int((imgs == ids).all(axis=1).sum())

    def is_canonical(self, configuration):
        """Whether a configuration is the smallest of its orbit."""
        ids, imgs = self._images(configuration)
        return bool(np.array_equal(imgs[np.lexsort(imgs.T[::-1])[0]], ids))

    def describe(self, configuration):
        """The :class:`Orbit` of a configuration."""
        ids, imgs = self._images(configuration)
        stab = int((imgs == ids).all(axis=1).sum())
        best = imgs[np.lexsort(imgs.T[::-1])[0]]
        return Orbit(self._conf(best), self.order // stab, stab)


def _trivial_group(problem):
    rows = tuple(np.arange(p.n_placements, dtype=np.int64) for p in problem.pieces)
    ident = Symmetry(np.zeros((0, 0), np.int64), (), tuple(range(len(problem.pieces))), (),
                     np.arange(problem.n_columns, dtype=np.int64), rows)
    return SymmetryGroup(problem, [ident])


def _geometric(problem):
    """Whether the problem is the configuration matrices of its puzzle (so geometry applies)."""
    pz = problem.puzzle
    return (pz is not None and len(pz.pieces) == len(problem.pieces)
            and all(a.name == b.name for a, b in zip(pz.pieces, problem.pieces))
            and tuple(map(tuple, problem.columns)) == tuple(pz.board.cells)
            and all(p.count is not None for p in problem.pieces))


def symmetry_group(puzzle, *, walls=False):
    """The symmetry group of a puzzle, computed from its geometry.

    A board motion (one of the 2, 8 or 48 signed permutations in 1-, 2- and
    3-D) is a symmetry when, re-translated so that the room's bounding box
    stays put, it maps the room cells onto themselves (with their labels when
    ``match = true``, the only case where labels matter), and the doorways
    and the cells that may stay empty each onto themselves.  It is combined with every renaming of pieces that maps
    each piece's set of allowed orientations, moved, onto another piece's,
    keeps counts, and (under ``separate``) renames colours consistently.  A
    reflection therefore counts even where pieces may not be mirrored when
    the mirrored piece set is the same set (the Soma cube's chiral pair).

    Parameters
    ----------
    puzzle : Puzzle or Problem
        Problems without geometry (DPF, DLX) have the trivial group.
    walls : bool
        Also map the ``.`` cells inside the drawing onto themselves.  Needed
        when a slide test is applied: walls and open floor differ for it.

    Returns
    -------
    SymmetryGroup

    Examples
    --------
    >>> import zipup
    >>> symmetry_group(zipup.load("puzzles/north-colours.toml")).order  # square x colour swap
    16
    >>> symmetry_group(zipup.load("puzzles/room.toml")).order  # the doorway breaks it all
    1
    >>> g = symmetry_group(zipup.load("puzzles/soma.toml"))
    >>> g.order, sum(g.renaming != tuple(range(7)) for g in g)  # reflections swap A and B
    (48, 24)
    """
    from .api import as_problem

    problem = as_problem(puzzle)
    if not _geometric(problem):
        return _trivial_group(problem)
    pz = problem.puzzle
    board = pz.board
    ndim = board.ndim
    match = board.match
    cells = np.array(board.cells, dtype=np.int64).reshape(-1, ndim)
    labels = board.labels if match else ("#",) * len(cells)
    room = dict(zip(board.cells, labels))
    index = {c: i for i, c in enumerate(board.cells)}
    doors = frozenset(board.doors)
    optional = frozenset(board.optional)  # BurrTools cells that may stay empty
    wall = frozenset()
    if walls:
        box = itertools.product(*(range(s) for s in board.shape))
        wall = frozenset(c for c in box if c not in room and c not in doors)
    lo = cells.min(axis=0)

    shapes = []
    for p in pz.pieces:
        labs = p.labels if match else None
        shapes.append(frozenset(orientations(p.cells, labs, allowed_transforms(ndim, p.rotate, p.mirror))))
    counts = [p.count for p in pz.pieces]
    sep = set(separating_colours(pz))
    colour = [p.colour if p.colour in sep else None for p in pz.pieces]

    def moved(points, m, t):
        if not points:
            return frozenset()
        a = np.array(sorted(points), dtype=np.int64).reshape(-1, ndim) @ m.T + t
        return frozenset(map(tuple, a.tolist()))

    table = _RowTable(problem)
    elements = []
    for m in all_transforms(ndim):
        a = cells @ m.T
        t = lo - a.min(axis=0)
        a = a + t
        image = {tuple(x): lab for x, lab in zip(a.tolist(), labels)}
        if (image != room or moved(doors, m, t) != doors or moved(wall, m, t) != wall
                or moved(optional, m, t) != optional):
            continue
        columns = np.array([index[tuple(x)] for x in a.tolist()], dtype=np.int64)
        images = [frozenset(normalise(np.array(o, dtype=np.int64) @ m.T, labs if match else None)
                            for o, labs in s) for s in shapes]
        options = [[q for q in range(len(shapes)) if shapes[q] == images[p] and counts[q] == counts[p]]
                   for p in range(len(shapes))]
        for renaming, cmap in _renamings(options, colour):
            rows = table.rows(columns, renaming)
            if rows is None:  # cannot happen for a symmetric board; keep the group honest anyway
                continue
            elements.append(Symmetry(m, tuple(int(x) for x in t), renaming,
                                     tuple(sorted((a, b) for a, b in cmap.items() if a != b)),
                                     columns, rows))
            if len(elements) > MAX_ORDER:
                raise UsageError(f"the symmetry group of {pz.name!r} has more than {MAX_ORDER} "
                                 "elements (many same-shaped pieces with different names?); "
                                 "give them one name and a count instead")
    if not elements or elements[0].is_motion or elements[0].renaming != tuple(range(len(shapes))):
        # the identity itself was refused: two rows of a piece cover the same cells
        return _trivial_group(problem)
    return SymmetryGroup(problem, elements)


def _renamings(options, colour):
    """Every bijection ``p -> options[p]`` that renames the separating colours consistently.

    Yields ``(renaming tuple, colour map)``.  ``colour[p]`` is ``None`` for a
    piece no separation rule concerns; such pieces map only to such pieces.
    """
    n = len(options)
    chosen = [None] * n
    used = set()
    cmap, cinv = {}, {}

    def rec(p):
        if p == n:
            yield tuple(chosen), dict(cmap)
            return
        for q in options[p]:
            if q in used:
                continue
            a, b = colour[p], colour[q]
            if (a is None) != (b is None):
                continue
            added = False
            if a is not None:
                if a in cmap:
                    if cmap[a] != b:
                        continue
                elif b in cinv:
                    continue
                else:
                    cmap[a], cinv[b] = b, a
                    added = True
            chosen[p] = q
            used.add(q)
            yield from rec(p + 1)
            used.discard(q)
            if added:
                del cmap[a], cinv[b]

    yield from rec(0)


class _RowTable:
    """Find the row of a piece covering a given set of columns (vectorised lookups).

    A row is keyed by two sums of random 40-bit weights of its columns (Zobrist
    hashing): order-free, so a moved row needs no sorting, and one sparse
    product keys every row of a piece at once.  Two different cell sets share
    a key with odds of about 2**-80 per pair, and a map that is not a
    permutation of rows is refused anyway.
    """

    def __init__(self, problem):
        rng = np.random.default_rng(20171201)
        self.weights = rng.integers(0, 2**40, size=(problem.n_columns, 2), dtype=np.int64)
        self.matrices = [sp.csr_array(pr.matrix, dtype=np.int64) for pr in problem.pieces]
        self.keys, self.order = [], []
        for m in self.matrices:
            keys = _void(m @ self.weights)
            order = np.argsort(keys, kind="stable")
            self.keys.append(keys[order])
            self.order.append(order)

    def rows(self, columns, renaming):
        """``rows[p][r]``: row of piece ``renaming[p]`` covering row r's columns, moved."""
        moved_weights = self.weights[columns]  # column c weighs what its image does
        out = []
        for p, q in enumerate(renaming):
            n = self.matrices[p].shape[0]
            if n != len(self.order[q]):
                return None
            if not n:
                out.append(np.zeros(0, np.int64))
                continue
            keys = _void(self.matrices[p] @ moved_weights)
            at = np.minimum(np.searchsorted(self.keys[q], keys), n - 1)
            if not (self.keys[q][at] == keys).all():
                return None
            rows = self.order[q][at].astype(np.int64)
            if len(np.unique(rows)) != n:
                return None
            out.append(rows)
        return tuple(out)


def _void(a):
    """Rows of a 2-D array as single comparable (sortable) items."""
    a = np.ascontiguousarray(a)
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


# ------------------------------------------------------------------ labelled counts


def labelled_count(problem, count):
    """The count if the copies of every piece were told apart.

    Every configuration becomes ``prod(count_p!)`` labelled ones.

    Examples
    --------
    >>> import zipup
    >>> labelled_count(zipup.load("puzzles/north-colours.toml"), 32)  # two pairs of copies
    128
    """
    from .api import as_problem

    # a Puzzle's pieces carry their counts: no need to build its matrices
    pieces = problem.pieces if hasattr(problem, "board") else as_problem(problem).pieces
    factor = 1
    for p in pieces:
        if p.count is not None:
            factor *= math.factorial(p.count)
    return count * factor


# ------------------------------------------------------------------ symmetry breaking


@dataclass(frozen=True)
class SymmetryBreaking:
    """Restrict one piece to one placement per orbit of its placements.

    Attributes
    ----------
    piece : int
        The restricted piece: one copy, renamed to itself by every symmetry.
    free : ndarray of int
        Representative rows whose stabiliser holds no board motion: every
        configuration through one of them has a trivial stabiliser, so each of
        its orbits is met exactly ``renamings`` times and can be counted
        without listing.
    fixed : ndarray of int
        Representative rows that some board motion maps onto themselves (a
        symmetric piece on a symmetry axis): their configurations are listed
        and weighed one by one.
    renamings : int
        Order of the subgroup that renames pieces without moving the board.
    n_rows : int
        Placements of the piece before restriction.
    """

    piece: int
    free: np.ndarray
    fixed: np.ndarray
    renamings: int
    n_rows: int

    @property
    def rows(self):
        """All representative rows, sorted."""
        return np.sort(np.concatenate([self.free, self.fixed]))

    def restrict(self, problem, rows=None):
        """The problem with the piece restricted to ``rows`` (default: all representatives).

        Returns ``(restricted problem, function mapping its configurations back)``.
        """
        return restrict_rows(problem, self.piece, self.rows if rows is None else rows)

    def describe(self, problem):
        name = problem.pieces[self.piece].name
        return (f"symmetry breaking: piece {name} restricted to {len(self.free) + len(self.fixed)} "
                f"of {self.n_rows} placements ({len(self.fixed)} on a symmetry axis)")


def symmetry_breaking(group, piece=None):
    """Choose the piece whose restriction cuts the most work; ``None`` if none is suitable.

    A suitable piece has one copy (so a configuration has one placement of it)
    and every symmetry renames it to itself.  The group acts on its
    placements; one representative per orbit is kept, the one the sweep
    reaches first, so that partial states without the piece die early.

    Parameters
    ----------
    group : SymmetryGroup
    piece : int or str, optional
        Restrict this piece (index or name) if it is suitable, instead of
        choosing; ``None`` is returned when it is not.

    Returns
    -------
    SymmetryBreaking or None

    Examples
    --------
    >>> import zipup
    >>> prob = zipup.as_problem(zipup.load("puzzles/pentomino-6x10.toml"))
    >>> b = symmetry_breaking(symmetry_group(prob))
    >>> prob.pieces[b.piece].name, len(b.free), len(b.fixed), b.n_rows
    ('X', 8, 0, 32)
    """
    from .plans import sweep_order

    problem = group.problem
    if group.order == 1:
        return None
    renamings = len(group.renamings)
    motions = [k for k, g in enumerate(group.elements) if g.is_motion]
    pos = np.empty(problem.n_columns, dtype=np.int64)
    pos[sweep_order(problem)] = np.arange(problem.n_columns)
    if isinstance(piece, str):
        names = [p.name for p in problem.pieces]
        if piece not in names:
            raise UsageError(f"unknown piece {piece!r}; pieces are {', '.join(names)}")
        piece = names.index(piece)
    best = None
    for p, pr in enumerate(problem.pieces):
        if piece is not None and p != piece:
            continue
        if pr.count != 1 or any(g.renaming[p] != p for g in group.elements) or not pr.n_placements:
            continue
        m = pr.matrix
        first = np.minimum.reduceat(pos[m.indices], m.indptr[:-1])
        images = np.stack([group.elements[k].rows[p] for k in motions]) if motions else \
            np.zeros((0, pr.n_placements), np.int64)
        seen = np.zeros(pr.n_placements, dtype=bool)
        free, fixed = [], []
        # the orbit of each row; keep the row the sweep reaches first (then the lowest)
        for r in np.lexsort((np.arange(pr.n_placements), first)):
            if seen[r]:
                continue
            orbit = images[:, r]
            seen[orbit] = True
            seen[r] = True
            (fixed if (orbit == r).any() else free).append(int(r))
        # work ~ share of configurations kept; a fixed row keeps a larger share of its orbit
        # and its configurations are listed, so it weighs more
        score = ((len(free) + 3 * len(fixed)) / pr.n_placements, len(free) + len(fixed),
                 int(first[free + fixed].max()))
        if best is None or score < best[0]:
            best = (score, SymmetryBreaking(p, np.array(sorted(free), np.int64),
                                            np.array(sorted(fixed), np.int64), renamings,
                                            pr.n_placements))
    return None if best is None else best[1]


def restrict_rows(problem, piece, rows, marker=True):
    """A problem whose ``piece`` keeps only the given rows of its matrix.

    With ``marker`` an extra primary column is added that only the kept rows
    cover, at the coordinates of the last cell where a kept row starts.  The
    sweep orders columns by coordinates (stably), so it decides the marker
    right after that cell and drops every partial state that has not placed
    the piece by then, instead of carrying them to the end; other plans just
    see one more column that the piece covers.

    Parameters
    ----------
    problem : Problem
    piece : int
    rows : array_like of int
    marker : bool

    Returns
    -------
    (Problem, callable)
        The restricted problem, and a function mapping its configurations
        back to configurations of ``problem``.

    Examples
    --------
    >>> import zipup
    >>> prob = zipup.as_problem(zipup.load("puzzles/room.toml"))
    >>> small, back = restrict_rows(prob, 1, [0, 5])
    >>> small.pieces[1].n_placements, small.n_columns, prob.n_columns
    (2, 25, 24)
    >>> sorted({p for c in map(back, zipup.enumerate(small, slidable="none")) for p in c.placements
    ...         if p[0] == 1})
    [(1, 0), (1, 5)]
    """
    from .plans import sweep_order

    rows = np.unique(np.asarray(rows, dtype=np.int64))
    pr = problem.pieces[piece]
    sub = dict(matrix=_rows(pr.matrix, rows))
    if len(pr.orientation):
        sub["orientation"] = pr.orientation[rows]
    for key in ("marks", "forbids"):
        if getattr(pr, key) is not None:
            sub[key] = _rows(getattr(pr, key), rows)
    pieces = list(problem.pieces)
    pieces[piece] = dataclasses.replace(pr, **sub)
    out = dataclasses.replace(problem, pieces=tuple(pieces))
    if marker and len(rows) and problem.n_columns:
        n = problem.n_columns
        order = sweep_order(problem)
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(n)
        m = pieces[piece].matrix
        last = int(np.minimum.reduceat(pos[m.indices], m.indptr[:-1]).max())
        widened = [_with_marker(x.matrix, n, x is pieces[piece]) for x in pieces]
        out = dataclasses.replace(
            out, columns=tuple(problem.columns) + (problem.columns[order[last]],),
            primary=np.append(problem.primary, True),
            pieces=tuple(dataclasses.replace(x, matrix=w) for x, w in zip(pieces, widened)))

    def back(configuration):
        return Configuration(tuple(sorted((p, int(rows[r]) if p == piece else r)
                                          for p, r in configuration.placements)))

    return out, back


def _rows(m, rows):
    sub = sp.csr_array(m[rows], dtype=m.dtype)
    sub.sort_indices()
    return sub


def _with_marker(m, n, mark):
    """``m`` widened by one column (index ``n``), set in every row when ``mark``."""
    if not mark:
        return sp.csr_array((m.data, m.indices, m.indptr), shape=(m.shape[0], n + 1))
    k = m.shape[0]
    indices = np.insert(m.indices, m.indptr[1:], n)  # n is the largest column: rows stay sorted
    data = np.insert(m.data, m.indptr[1:], 1).astype(m.dtype)
    indptr = m.indptr + np.arange(k + 1)
    return sp.csr_array((data, indices, indptr), shape=(k, n + 1))


# ------------------------------------------------------------------ solving up to symmetry


@dataclass
class UniqueResult:
    """Counts up to symmetry and a lister of one configuration per orbit.

    ``count`` (all configurations), ``unique`` (orbits), ``labelled``
    (copies told apart) and, with post-stage filters, ``before_filters``
    are known after counting, or once :meth:`orbits` has been exhausted;
    until then they are ``None``.

    Attributes
    ----------
    group : SymmetryGroup
    breaking : SymmetryBreaking or None
    count, unique, labelled, before_filters : int or None
    stats : list of Step
        Every plan run's steps.
    plan : str
    """

    group: SymmetryGroup
    breaking: SymmetryBreaking | None
    count: int | None = None
    unique: int | None = None
    labelled: int | None = None
    before_filters: int | None = None
    stats: list = field(default_factory=list)
    plan: str = ""
    _source: object = field(default=None, repr=False)

    @property
    def order(self):
        """The order of the symmetry group."""
        return self.group.order

    def orbits(self):
        """Iterate over the orbits (one :class:`Orbit` each), tallying the counts."""
        if self._source is None:
            raise UsageError("this result was computed with count_only=True; nothing to list")
        total = unique = before = 0
        for orbit, passed in self._source():
            before += orbit.size
            if passed:
                total += orbit.size
                unique += 1
                yield orbit
        self.count, self.unique, self.before_filters = total, unique, before
        self.labelled = labelled_count(self.group.problem, total)

    def configurations(self):
        """Iterate over the canonical configuration of every orbit."""
        return (o.representative for o in self.orbits())

    def summary(self):
        """``'N configurations, U up to symmetry (group of order G), L with copies told apart'``."""
        n = self.count
        return (f"{n} configuration{'s' if n != 1 else ''}, {self.unique} up to symmetry "
                f"(group of order {self.order}), {self.labelled} with copies told apart")


def solve_unique(puzzle, plan="auto", *, filters=None, slidable=None, count_only=False, breaking=True,
                 tree=None, kernel=None, memory=None, group=None):
    """Count (and list) configurations up to symmetry.

    Without breaking, every configuration is listed and kept when it is its
    own canonical image.  With breaking (:func:`symmetry_breaking`), one
    piece is restricted to a representative of each orbit of its placements,
    and the plan solves that smaller problem.  An orbit of configurations
    meets the restricted problem in a few of its members; the one listed is
    the smallest of them, and its canonical image is reported.  When only
    counting, the representatives off every symmetry axis are counted without
    listing: each orbit through them has ``|G|`` members and is met exactly
    once per piece renaming.

    Parameters
    ----------
    puzzle : Puzzle or Problem
    plan, tree, kernel, memory
        As for :func:`zipup.solve` (``kernel=None``: its default).  ``auto``
        chooses the plan for the whole problem, not the restricted one.
    filters : list of Filter, optional
        Default: what the puzzle asks for.  The group keeps walls fixed when
        a slide test is among them.
    slidable : {"none", "quick", "exact"}, optional
        Overrides the file's slide test.
    count_only : bool
        Count without listing where possible; :meth:`UniqueResult.orbits`
        is then unavailable.
    breaking : bool or int or str
        Use symmetry breaking (default ``True``); a piece (index or name)
        restricts that piece if it is suitable.
    group : SymmetryGroup, optional
        Reuse a group already computed for the same problem and filters.

    Returns
    -------
    UniqueResult

    Examples
    --------
    >>> import zipup
    >>> res = solve_unique(zipup.load("puzzles/room.toml"), slidable="none", count_only=True)
    >>> res.count, res.unique, res.labelled, res.order
    (52, 52, 104, 1)
    """
    from .api import as_problem, solve
    from .filters import Slidable, default_filters
    from .plans import Auto, get_plan

    problem = as_problem(puzzle)
    if filters is None:
        filters = default_filters(problem, slidable)
    post = [f for f in filters if not f.in_plan]
    if group is None:
        group = symmetry_group(problem, walls=any(isinstance(f, Slidable) for f in filters))
    if breaking is True:
        brk = symmetry_breaking(group)
    else:
        brk = symmetry_breaking(group, breaking) if breaking is not False else None
    res = UniqueResult(group=group, breaking=brk)

    chosen_plan = get_plan(plan, tree)
    if isinstance(chosen_plan, Auto):
        # choose on the whole problem: the restricted one's marker column skews the estimates
        chosen_plan = chosen_plan.choose(problem)

    def run(prob, count):
        r = solve(prob, chosen_plan, count_only=count, memory=memory,
                  **({} if kernel is None else {"kernel": kernel}))
        res.stats.extend(r.stats)
        res.plan = r.plan if not res.plan or res.plan == r.plan else f"{res.plan}+{r.plan}"
        return r

    def passes(conf):
        return all(f.keep(problem, conf) for f in post)

    if group.order == 1:  # every configuration is its own orbit
        if count_only and not post:
            n = run(problem, True).count
            res.count = res.unique = res.before_filters = n
            res.labelled = labelled_count(problem, n)
            return res

        def source():
            for conf in run(problem, False).configurations():
                yield Orbit(conf, 1, 1), passes(conf)
    elif brk is None:
        def source():
            for conf in run(problem, False).configurations():
                ids, imgs = group._images(conf)
                best = np.lexsort(imgs.T[::-1])[0]
                if np.array_equal(imgs[best], ids):
                    stab = int((imgs == ids).all(axis=1).sum())
                    yield Orbit(conf, group.order // stab, stab), passes(conf)
    else:
        reps = brk.rows
        rep_ids = group._offsets[brk.piece] + reps

        def chosen(conf):
            """The Orbit of ``conf`` when ``conf`` is the smallest member met by the restriction."""
            ids, imgs = group._images(conf)
            # the piece has one copy and keeps its name: where each image puts it
            row = next(r for p, r in conf.placements if p == brk.piece)
            met = np.isin(group._maps[:, group._offsets[brk.piece] + row], rep_ids)
            cands = imgs[met]
            if not np.array_equal(cands[np.lexsort(cands.T[::-1])[0]], ids):
                return None
            stab = int((imgs == ids).all(axis=1).sum())
            return Orbit(group._conf(imgs[np.lexsort(imgs.T[::-1])[0]]), group.order // stab, stab)

        def listed(rows):
            if not len(rows):
                return
            small, back = restrict_rows(problem, brk.piece, rows)
            for conf in run(small, False).configurations():
                orbit = chosen(back(conf))
                if orbit is not None:
                    yield orbit, passes(orbit.representative)

        if count_only and not post:
            n_free = run(restrict_rows(problem, brk.piece, brk.free)[0], True).count if len(brk.free) else 0
            if n_free % brk.renamings:
                raise AssertionError("symmetry breaking: the free count is not a multiple of the "
                                     "renamings; please report this puzzle")
            unique = n_free // brk.renamings
            total = unique * group.order
            for orbit, _ in listed(brk.fixed):
                unique += 1
                total += orbit.size
            res.count = res.before_filters = total
            res.unique = unique
            res.labelled = labelled_count(problem, total)
            return res

        def source():
            yield from listed(reps)

    if count_only:  # post-stage filters: list, but keep only the tallies
        return _tallied(res, source)
    res._source = source
    return res


def _tallied(res, source):
    """Exhaust ``source`` into ``res``'s counts (count_only with post-stage filters)."""
    total = unique = before = 0
    for orbit, passed in source():
        before += orbit.size
        if passed:
            total += orbit.size
            unique += 1
    res.count, res.unique, res.before_filters = total, unique, before
    res.labelled = labelled_count(res.group.problem, total)
    return res


def count_unique(puzzle, plan="auto", **kwargs):
    """Count configurations, orbits and labelled configurations; see :func:`solve_unique`.

    Returns
    -------
    UniqueResult
        With ``count``, ``unique``, ``labelled`` and ``order`` filled in.

    Examples
    --------
    >>> import zipup
    >>> r = count_unique(zipup.load("puzzles/north-colours.toml"))
    >>> r.count, r.unique, r.order, r.labelled
    (32, 2, 16, 128)
    """
    return solve_unique(puzzle, plan, count_only=True, **kwargs)


def enumerate_unique(puzzle, plan="auto", *, limit=None, **kwargs):
    """Iterate over one configuration per orbit (its canonical image); see :func:`solve_unique`.

    Examples
    --------
    >>> import zipup
    >>> len(list(enumerate_unique(zipup.load("puzzles/north-colours.toml"))))
    2
    """
    confs = solve_unique(puzzle, plan, **kwargs).configurations()
    return itertools.islice(confs, limit) if limit is not None else confs
