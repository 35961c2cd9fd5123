"""The depth plan: a compiled depth-first search for exact covers.

Where the breadth-first plans hold a whole level of partial configurations
(which for the 3x4x5 box or the Morse alphabet grows past 10^8 rows), this
plan holds one path.  How it branches is a *rule* (the arrays and compiled
loops of each are in :mod:`zipup.plans.branching`):

* ``fewest``: the item with the fewest choices, among the empty cells and
  the pieces with copies left.  Costly nodes, a small tree: it wins where
  the pieces differ and the board is small (the 3x4x5 box 7.7x over the
  other rule, Morse, Soma, the pentomino rectangles).
* ``first-cell``: the first empty cell in the sweep's order (the longest
  axis slowest), trying the placements anchored there; on rectangle
  packings along a profile, with wells no piece left can fill pruned.
  Cheap nodes, a larger tree: it wins on large boards of large pieces
  (Calibron's 56x56 square: 2.5 M nodes in half a second, where the other
  rule needs 20 s).

No rule wins everywhere, so under ``rule="auto"`` each search picks one:
the first-cell rule runs first, briefly (a search that ends, or, when the
listing stops early, finds its first configuration, settles it); else each
rule's tree is sized by Knuth's estimator (random paths from the root, in
compiled batches) and its speed measured on a short run, and the smaller
estimated time wins.  :class:`SearchStats` records the rule, why, and the
estimates.  Copies of a piece are interchangeable and every configuration
is met once under either rule.

It solves full covers only (every column primary, no colours, no
separation) and runs in one process.  The count is an exact Python int; the
configurations come out in batches as they are found.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from ..matrices import Configuration
from .base import Plan, Result
from .branching import RULES, Fewest, FirstCell, Rows

__all__ = ["Depth", "SearchStats", "refusal"]

# nodes the compiled loop visits between returns to Python: short while
# listing (configurations reach the reader at least that often), long while counting
_LIST_BUDGET = 1 << 17
_COUNT_BUDGET = 1 << 23
_BATCH = 1024
# choosing a rule: seconds of each short run, random paths of Knuth's estimator (and
# the seconds they may take), and the estimated time under which the cheaper rule is kept unasked
_TRIAL = 0.02
# ... and how long, when the listing stops early, the cheaper rule may look for the first configuration
_FIRST_TRIAL = 0.25
_PROBES = 1 << 14
_PROBE_SECONDS = 0.05
_WORTH_COMPARING = 0.05
# seconds per cell of all placements to build the fewest rule's arrays and load its loop (Calibron:
# 7.3 M cells, 0.3 s); the other rule is not tried when that exceeds a quarter of the time it could save
_SETUP_PER_CELL = 4e-8


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
    rule : str
        The branching rule that searched: ``"fewest"`` or ``"first-cell"``
        (see :mod:`zipup.plans.branching`).
    why : str
        Why that rule: asked for, or what the estimates said.
    estimates : dict
        Per rule estimated, ``(nodes, seconds)`` of its whole search.
    choosing : float
        Seconds spent choosing the rule (short runs and random paths), loading
        excluded; part of ``seconds``.
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
    rule: str = ""
    why: str = ""
    estimates: dict = field(default_factory=dict)
    choosing: float = 0.0

    @property
    def rate(self):
        """Nodes per second, loading excluded (0.0 before any time has passed)."""
        busy = self.seconds - self.load
        return self.nodes / busy if busy > 0 else 0.0

    def as_dict(self):
        return dict(self.__dict__, rate=self.rate)


class _Search:
    """One resumable depth-first search over a problem's placements, under a rule it picks."""

    def __init__(self, problem, mode, record, rule="auto", limited=False):
        self.t0 = time.perf_counter()
        self.record = record
        self.mode = mode
        self.want = rule
        self.limited = limited
        self.rows = Rows(problem)
        self.rule = None
        self.pending = None  # the status of a search begun while choosing the rule, if any

    def batches(self):
        """Yield lists of configurations as they are found (count mode: empty lists)."""
        rec = self.record
        mode = 1 if self.mode == "list" else 0
        budget = _LIST_BUDGET if mode else _COUNT_BUDGET
        if self.rows.n == 0:  # nothing to cover: one empty configuration when no copy is due
            if not self.rows.copies.any():
                rec.configurations = 1
                rec.first = time.perf_counter() - self.t0
                if mode:
                    yield [Configuration(())]
            self._finish()
            return
        rule = self.rule = self._pick()
        rec.bytes = self.rows.nbytes() + rule.nbytes()
        k = rule.k
        # the first call returns at the first configuration, then batches double: a reader
        # that stops after N configurations has let the search find fewer than 2N
        batch = 1
        status = self.pending  # where choosing the rule already searched to
        while status is not None or rule.st[k.DEPTH] >= 0:
            if status is None:
                status = rule.search(budget, mode, batch)
            rec.nodes += int(rule.st[k.NODES])
            rec.configurations += int(rule.st[k.COUNT])
            rule.st[k.NODES] = rule.st[k.COUNT] = 0
            if status == k.FIRST:
                rec.first = time.perf_counter() - self.t0
            rec.seconds = time.perf_counter() - self.t0
            if mode and rule.st[k.NSOL]:
                found = self._configurations(int(rule.st[k.NSOL]))
                rule.st[k.NSOL] = 0
                batch = min(2 * batch, _BATCH)
                yield found
            if status == k.DONE:
                break
            status = None
        self._finish()

    def _pick(self):
        """The rule to search with, loaded, at the root; the record says which and why."""
        rec = self.record
        t = time.perf_counter()
        if self.want != "auto":
            rule = RULES[self.want](self.rows, self.mode)
            rec.load = rule.load()
            rec.rule, rec.why = rule.name, "asked for"
        else:
            rule = self._estimate()
        if self.pending is None:
            rule.reset()
        rec.choosing = time.perf_counter() - t - rec.load
        return rule

    def _estimate(self):
        """Pick the rule whose search should take less time.

        The first-empty-cell rule is cheap to set up, so it goes first: a
        search it ends within a short trial (or, listing with a limit, a
        first configuration it finds) settles the matter.  Otherwise each
        rule's tree is sized by Knuth's estimator (random paths from the
        root) and its speed measured on a short run; the smaller product wins.
        """
        rec = self.record
        cell = FirstCell(self.rows, self.mode)
        rec.load = cell.load()
        if self.limited:
            status, seconds = _first_within(cell, _FIRST_TRIAL)
            if status is not None:  # the listing goes on from there
                self.pending = status
                rec.rule = cell.name
                rec.why = (f"it found the first configuration in {_ms(seconds)}" if cell.st[cell.k.FOUND] else
                           f"it searched the whole tree in {_ms(seconds)}")
                return cell
            cell.reset()
        nodes, seconds, done = cell.timed(_TRIAL)
        if done:
            rec.rule, rec.why = cell.name, f"it searched the whole tree in {_ms(seconds)}"
            return cell
        size = _knuth(cell, _PROBE_SECONDS)
        guess = size * seconds / max(nodes, 1)
        rec.estimates = {cell.name: (size, guess)}
        if guess < _WORTH_COMPARING:
            rec.rule, rec.why = cell.name, f"estimated {_ms(guess)}"
            return cell
        # building the other rule's bit sets takes time in proportion to the placements' cells
        setup = _SETUP_PER_CELL * self.rows.cells
        if setup > guess / 4:
            rec.rule = cell.name
            rec.why = f"estimated {_ms(guess)}; setting up the fewest rule would take about {_ms(setup)}"
            return cell
        # its short run and random paths may cost a tenth of the time they can save
        spend = min(_TRIAL + _PROBE_SECONDS, guess / 10)
        fewest = Fewest(self.rows, self.mode)
        rec.load += fewest.load()
        fnodes, fseconds, fdone = fewest.timed(spend / 3)
        if fdone:
            rec.rule, rec.why = fewest.name, f"it searched the whole tree in {_ms(fseconds)}"
            return fewest
        fsize = _knuth(fewest, 2 * spend / 3)
        fguess = fsize * fseconds / max(fnodes, 1)
        rec.estimates[fewest.name] = (fsize, fguess)
        best, other = (cell, fewest) if guess <= fguess else (fewest, cell)
        rec.rule = best.name
        rec.why = f"estimated {_ms(min(guess, fguess))} against {_ms(max(guess, fguess))} for {other.name}"
        return best

    def _finish(self):
        self.record.finished = True
        self.record.seconds = time.perf_counter() - self.t0

    def _configurations(self, h):
        out = []
        rows = self.rows
        for chosen, m in zip(self.rule.sol[:h], self.rule.sol_len[:h]):
            chosen = chosen[:m]
            out.append(Configuration(tuple(sorted(zip(rows.row_piece[chosen].tolist(),
                                                      rows.row_local[chosen].tolist())))))
        return out


def _first_within(rule, seconds):
    """List until the first configuration for about ``seconds``: ``(status, elapsed)``.

    The status is the search's when it found the first configuration or
    ended, else ``None``.
    """
    t = time.perf_counter()
    k = rule.k
    budget = 1 << 8
    while True:
        status = rule.search(budget, 1, 1)
        elapsed = time.perf_counter() - t
        if status in (k.FIRST, k.DONE):
            return status, elapsed
        if elapsed >= seconds:
            return None, elapsed
        budget *= 2


def _knuth(rule, seconds):
    """Knuth's estimate of the nodes of ``rule``'s tree: the mean over random paths, as many as ``seconds`` allow.

    The estimate of one path is heavy-tailed (a few paths meet the large
    subtrees), so thousands of paths are needed to come within a factor of
    two on the pentomino rectangles: the paths run in compiled batches that
    double until the time is spent.
    """
    t = time.perf_counter()
    total, done, chunk = 0.0, 0, 64
    while done < _PROBES:
        total += rule.probe(chunk, 1 + done) * chunk
        done += chunk
        if time.perf_counter() - t > seconds:
            break
        chunk *= 2
    return total / done


def _ms(seconds):
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


class _SearchResult(Result):
    """The result of a depth plan run that lists: configurations stream as found.

    The search counts as it lists, so ``count`` is ``None`` until a listing
    has run to its end: a reader that stops early (``--limit``) never pays
    for the rest of the tree.
    """

    def __init__(self, problem, plan, rule, limited):
        self._problem = problem
        self._rule = rule
        self._limited = limited
        super().__init__(count=None, stats=[], plan=plan, _lister=self._list)

    def _list(self):
        rec = SearchStats(mode="list")
        self.stats.append(rec)
        search = _Search(self._problem, "list", rec, self._rule, self._limited)
        for batch in search.batches():
            yield from batch
        self.count = rec.configurations


def _count(problem, stats, rule):
    rec = SearchStats(mode="count")
    stats.append(rec)
    for _ in _Search(problem, "count", rec, rule).batches():
        pass
    return rec.configurations


class Depth(Plan):
    """Depth-first search under the branching rule estimated fastest (compiled with numba).

    For full covers: every column primary, no colours or separation.  It
    runs in one process; ``stats`` holds one :class:`SearchStats` per search.

    Parameters
    ----------
    rule : {"auto", "fewest", "first-cell"}
        How to branch (see :mod:`zipup.plans.branching`); ``"auto"`` picks
        by estimate, and :class:`SearchStats` says which and why.
    limited : bool
        The reader will stop listing after a few configurations: under
        ``"auto"``, a rule that finds the first one quickly is kept without
        estimating the whole tree.

    Examples
    --------
    >>> import zipup
    >>> r = zipup.solve(zipup.load("puzzles/pentomino-3x20.toml"), plan="depth", count_only=True)
    >>> r.count, r.stats[0].configurations, r.stats[0].finished, r.stats[0].rule
    (8, 8, True, 'first-cell')
    >>> r = zipup.solve(zipup.load("puzzles/pentomino-3x20.toml"), plan=Depth(rule="fewest"), count_only=True)
    >>> r.count, r.stats[0].rule, r.stats[0].why
    (8, 'fewest', 'asked for')
    """

    name = "depth"
    splits = False

    def __init__(self, rule="auto", limited=False):
        if rule != "auto" and rule not in RULES:
            raise UsageError(f"unknown branching rule {rule!r}; expected one of auto, {', '.join(sorted(RULES))}")
        self.rule = rule
        self.limited = limited

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
            return Result(count=_count(problem, stats, self.rule), stats=stats, plan=self.name)
        return _SearchResult(problem, self.name, self.rule, self.limited)

    def estimate(self, problem):
        """A search holds one path: a few lists of placements."""
        return 0 if refusal(problem) is None else float("inf")
