"""The depth plan: a compiled depth-first search for exact covers.

Where the breadth-first plans hold a whole level of partial configurations
(which for the 3x4x5 box or the Morse alphabet grows past 10^8 rows), this
plan holds one path: at every node it branches on the item with the fewest
choices, among the uncovered cells and the pieces with copies left, and
keeps, per depth, the set of placements that still fit (a bit set: a
child is its parent's set less one precomputed set of collisions, and
choices are counted with population counts).  A cell no
placement can cover, or a piece with fewer fitting placements than copies
left, ends the branch.  Copies of a piece are interchangeable, so when the
search branches on a piece, the copy it places takes the smallest placement
of the copies still to come, and the later copies take placements after it:
every configuration is met once.

It solves full covers only (every column primary, no colours, no
separation) and runs in one process.  The count is an exact Python int; the
configurations come out in batches as they are found.

Layout of the search state (``R`` placements of all pieces, ``n`` cells,
``W = ceil(n / 64)`` and ``V = ceil(R / 64)`` words, ``P`` pieces with
copies, ``D`` the deepest path):

* ``words``, ``masks`` (with ``wptr``) : int64 and uint64, each
  placement's nonzero words of cells; ``size`` : (R,) int64 its cells.
* ``cellm`` : (n, V) uint64, per cell the set of placements covering it;
  ``pmask`` : (P, V) uint64, per piece its placements, which lie in its
  words ``prange[s, 0]:prange[s, 1]``; ``conf`` : (R, V) uint64, per
  placement the placements sharing a cell with it (itself included), or no
  rows when that would take more than 64 MiB.
* ``slot`` : (R,) int64, the piece of each placement among the ``P`` pieces
  with copies (-1 for an exact-cover option usable any number of times).
* ``live`` : (D + 2, V) uint64, per depth the set of placements that still
  fit, each a subset of the one before it; its nonzero words are among the
  first ``nnz[d]`` of ``nzw[d]`` : (D + 2, V) int64, the others zero.
* ``cov`` : (D + 2, W) uint64 cells covered; ``left`` : (D + 2, P) int64
  copies left; and ``item``, ``pos``, ``lim``, ``chosen`` per depth: the
  item branched on, the first placement its next choice may be, how many
  choices it has left, the placement chosen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..matrices import Configuration
from .base import Plan, Result

__all__ = ["Depth", "SearchStats", "refusal"]

# nodes the compiled loop visits between returns to Python: short while
# listing (configurations reach the reader at least that often), long while counting
_LIST_BUDGET = 1 << 17
_COUNT_BUDGET = 1 << 23
_BATCH = 1024
# the collision sets of all placements are held when they take at most this many bytes
# (else each is built when its placement is tried)
_CONFLICT_BYTES = 1 << 26


def refusal(problem):
    """Why the depth plan cannot solve ``problem``, or ``None`` when it can.

    Examples
    --------
    >>> import zipup
    >>> refusal(zipup.as_problem(zipup.load("puzzles/room.toml")))
    'partial cover (board.cover = "partial")'
    >>> refusal(zipup.as_problem(zipup.load("puzzles/soma.toml"))) is None
    True
    """
    puzzle = problem.puzzle
    board = getattr(puzzle, "board", None)
    if problem.n_marks:
        if puzzle is not None and getattr(puzzle, "separate", "none") != "none":
            return f'separation of colours (separate = "{puzzle.separate}")'
        return "colours (items with a colour)"
    if not problem.exact:
        if board is not None and board.cover != "exact":
            return f'partial cover (board.cover = "{board.cover}")'
        if board is not None:
            return "optional cells (board.optional)"
        return "secondary columns (covered at most once)"
    for p in problem.pieces:
        if p.count != 0 and p.n_placements and (np.diff(p.matrix.indptr) == 0).any():
            return f"a placement of piece {p.name!r} that covers no cell"
    return None


@dataclass
class SearchStats:
    """What one depth-first search did (the ``--stats`` record of the depth plan).

    Attributes
    ----------
    plan : str
    mode : {"count", "list"}
    nodes : int
        Placements tried (nodes of the search tree below the root).
    configurations : int
        Configurations found so far.
    first : float or None
        Seconds from the start to the first configuration.
    seconds : float
        Seconds from the start (loading the compiled loop included) to the
        end, or to where the reader stopped listing.
    load : float
        Seconds spent importing numba and loading (or, the first time,
        compiling) the compiled loop; part of ``seconds`` and ``first``.
    finished : bool
        Whether the whole tree was searched.
    bytes : int
        Memory held by the search state.
    """

    plan: str = "depth"
    mode: str = "count"
    nodes: int = 0
    configurations: int = 0
    first: float | None = None
    seconds: float = 0.0
    load: float = 0.0
    finished: bool = False
    bytes: int = 0

    @property
    def rate(self):
        """Nodes per second of searching, loading excluded (0.0 before any time has passed)."""
        busy = self.seconds - self.load
        return self.nodes / busy if busy > 0 else 0.0

    def as_dict(self):
        return dict(self.__dict__, rate=self.rate)


class _Search:
    """One resumable depth-first search over a problem's placements."""

    def __init__(self, problem, mode, record):
        t0 = time.perf_counter()
        self.t0 = t0
        self.record = record
        self.mode = mode
        pieces = list(problem.pieces)
        use = [k for k, p in enumerate(pieces) if p.count != 0 and p.n_placements]
        counted = [k for k, p in enumerate(pieces) if p.count is not None and p.count > 0]
        self.slot_of = {k: s for s, k in enumerate(counted)}
        n = problem.n_columns
        self.n = n
        mats = [pieces[k].matrix for k in use]
        self.row_piece = np.concatenate([np.full(m.shape[0], k, np.int64) for k, m in zip(use, mats)]
                                        + [np.zeros(0, np.int64)])
        self.row_local = np.concatenate([np.arange(m.shape[0], dtype=np.int64) for m in mats]
                                        + [np.zeros(0, np.int64)])
        r = len(self.row_piece)
        self.slot = np.array([self.slot_of.get(int(k), -1) for k in self.row_piece], np.int64)
        copies = np.array([pieces[k].count for k in counted], np.int64)
        if any(p.count is None for p in pieces):
            depth = n
        else:
            depth = min(n, int(copies.sum()))
        d2 = depth + 2
        nw = max(1, -(-n // 64))
        wr = max(1, -(-r // 64))
        self.size = np.concatenate([np.diff(m.indptr) for m in mats] + [np.zeros(0, np.int64)]).astype(np.int64)
        self.cellm, self.wptr, self.words, self.masks = _cell_sets(mats, r, n)
        on = self.slot >= 0
        self.pmask = _set_bits(np.zeros((len(counted), wr), np.uint64), self.slot[on], np.flatnonzero(on))
        self.conf = _conflicts(self.cellm, mats, r)
        # the words holding each piece's placements (they are consecutive)
        self.prange = np.zeros((len(counted), 2), np.int64)
        for s, k in enumerate(counted):
            rows = np.flatnonzero(self.row_piece == k)
            if len(rows):
                self.prange[s] = rows[0] >> 6, (rows[-1] >> 6) + 1
        self.live = np.zeros((d2, wr), np.uint64)
        _set_bits(self.live, np.zeros(r, np.int64), np.arange(r))  # depth 0: every placement
        self.item = np.zeros(d2, np.int64)
        self.pos = np.zeros(d2, np.int64)
        self.lim = np.zeros(d2, np.int64)
        self.chosen = np.zeros(d2, np.int64)
        self.cov = np.zeros((d2, nw), np.uint64)
        self.left = np.zeros((d2, len(counted)), np.int64)
        self.left[0] = copies
        self.ncov = np.zeros(d2, np.int64)
        self.nzw = np.zeros((d2, wr), np.int64)
        self.nnz = np.zeros(d2, np.int64)
        self.sol = np.zeros((_BATCH if mode == "list" else 1, d2), np.int64)
        self.sol_len = np.zeros(len(self.sol), np.int64)
        self.st = np.zeros(6, np.int64)
        self.copies = copies
        self._note_bytes()

    def _note_bytes(self):
        self.record.bytes = int(sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray)))

    def batches(self):
        """Yield lists of configurations as they are found (count mode: empty lists)."""
        t = time.perf_counter()
        from . import _search as k  # numba: imported when a search runs

        rec = self.record
        mode = 1 if self.mode == "list" else 0
        budget = _LIST_BUDGET if mode else _COUNT_BUDGET
        if self.n == 0:  # nothing to cover: one empty configuration when no copy is due
            alive = not self.copies.any()
            self.st[k.DEPTH] = -1
            if alive:
                rec.configurations = 1
                rec.first = time.perf_counter() - self.t0
                if mode:
                    yield [Configuration(())]
            self._finish()
            return
        self._search(k, 0, mode)  # loads the compiled loop, so that its time is told apart
        rec.load = time.perf_counter() - t
        # the first call returns at the first configuration, then batches double: a reader
        # that stops after N configurations has let the search find fewer than 2N
        batch = 1
        while self.st[k.DEPTH] >= 0:
            status = self._search(k, budget, mode, batch)
            rec.nodes += int(self.st[k.NODES])
            rec.configurations += int(self.st[k.COUNT])
            self.st[k.NODES] = self.st[k.COUNT] = 0
            if status == k.FIRST:
                rec.first = time.perf_counter() - self.t0
            rec.seconds = time.perf_counter() - self.t0
            if mode and self.st[k.NSOL]:
                found = self._configurations(int(self.st[k.NSOL]))
                self.st[k.NSOL] = 0
                batch = min(2 * batch, _BATCH)
                yield found
            if status == k.DONE:
                break
        self._finish()

    def _search(self, k, budget, mode, batch=_BATCH):
        # a batch of fewer rows is a view of the first rows of ``sol`` (C-contiguous: the same compiled loop)
        return k.search(self.conf, self.cellm, self.pmask, self.prange, self.wptr, self.words, self.masks,
                        self.size, self.slot, self.n, self.live, self.nzw, self.nnz, self.item, self.pos, self.lim,
                        self.chosen, self.cov, self.left, self.ncov, self.sol[:batch], self.sol_len[:batch],
                        self.st, budget, mode)

    def _finish(self):
        self.record.finished = True
        self.record.seconds = time.perf_counter() - self.t0

    def _configurations(self, h):
        out = []
        for rows, m in zip(self.sol[:h], self.sol_len[:h]):
            rows = rows[:m]
            out.append(Configuration(tuple(sorted(zip(self.row_piece[rows].tolist(),
                                                      self.row_local[rows].tolist())))))
        return out


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


def _cell_sets(mats, r, n):
    """The placements' cells as bit sets, two ways round.

    Returns ``cellm`` ((n, V) uint64: per cell, the placements covering it)
    and, per placement, its nonzero words of cells: ``words[wptr[t]:wptr[t +
    1]]`` (int64 word numbers) and ``masks[...]`` (uint64).  Built a quarter
    of a million cells at a time, so that no temporary grows with the cells
    of all placements (7 M on Calibron).
    """
    nw = max(1, -(-n // 64))
    cellm = np.zeros((n, max(1, -(-r // 64))), np.uint64)
    count = np.zeros(r, np.int64)
    words, masks = [np.zeros(0, np.int64)], [np.zeros(0, np.uint64)]
    for a, lengths, cells in _chunks(mats, 1 << 18):
        rows = np.repeat(np.arange(a, a + len(lengths)), lengths)
        _set_bits(cellm, cells, rows)
        key = rows * nw + (cells >> 6)
        starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
        words.append(cells[starts] >> 6)
        masks.append(np.bitwise_or.reduceat(_bit(cells), starts))
        count[a:a + len(lengths)] = np.bincount(rows[starts] - a, minlength=len(lengths))
    wptr = np.zeros(r + 1, np.int64)
    np.cumsum(count, out=wptr[1:])
    return cellm, wptr, np.concatenate(words), np.concatenate(masks)


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


class _SearchResult(Result):
    """The result of a depth plan run that lists: configurations stream as found.

    The search counts as it lists, so ``count`` is ``None`` until a listing
    has run to its end: a reader that stops early (``--limit``) never pays
    for the rest of the tree.
    """

    def __init__(self, problem, plan):
        self._problem = problem
        super().__init__(count=None, stats=[], plan=plan, _lister=self._list)

    def _list(self):
        rec = SearchStats(mode="list")
        self.stats.append(rec)
        search = _Search(self._problem, "list", rec)
        for batch in search.batches():
            yield from batch
        self.count = rec.configurations


def _count(problem, stats):
    rec = SearchStats(mode="count")
    stats.append(rec)
    for _ in _Search(problem, "count", rec).batches():
        pass
    return rec.configurations


class Depth(Plan):
    """Depth-first search, branching where the choices are fewest (compiled with numba).

    For full covers: every column primary, no colours or separation.  It
    runs in one process; ``stats`` holds one :class:`SearchStats` per search.

    Examples
    --------
    >>> import zipup
    >>> r = zipup.solve(zipup.load("puzzles/pentomino-3x20.toml"), plan="depth", count_only=True)
    >>> r.count, r.stats[0].configurations, r.stats[0].finished
    (8, 8, True)
    """

    name = "depth"
    splits = False

    def run(self, problem, *, count_only=False, kernel="auto", memory=None, on_step=None):
        why = refusal(problem)
        if why is not None:
            raise UsageError(f"the depth plan solves full covers only; {problem.name!r} needs {why}: "
                             "use --plan auto")
        if kernel not in ("auto", None):
            raise UsageError(f"--kernel {kernel} chooses how the breadth-first plans join; the depth plan "
                             "has one compiled search and takes only --kernel auto")
        if count_only:
            stats = []
            return Result(count=_count(problem, stats), stats=stats, plan=self.name)
        return _SearchResult(problem, self.name)

    def estimate(self, problem):
        """A search holds one path: a few lists of placements."""
        return 0 if refusal(problem) is None else float("inf")
