"""Scale: independent subproblems on many cores or a Dask cluster.

A :class:`~zipup.matrices.Problem` is cut into *subproblems* whose
configurations partition the problem's: a subproblem fixes some placements
(removing the cells they cover and every placement that collides with them)
and keeps the rest.  Each node of the cutting tree branches on whatever has
the fewest choices (the most constrained piece or primary cell):

* on a piece with ``count`` copies: child ``r`` gives the *first* copy (the
  one with the smallest row) row ``r`` and leaves the other copies the rows
  after ``r``, so interchangeable copies are never counted twice;
* on a primary cell: child ``k`` fixes the ``k``-th placement covering it
  (exactly one placement covers a primary cell in every configuration).

Children are numbered, so a subproblem is named by its *path* from the root,
e.g. ``(3, 0, 17)``; the cutting is deterministic, so a path names the same
subproblem in every process, on every machine and in every run.  That is what
lets workers rebuild subproblems from their paths, and a checkpoint record
finished ones by path.

The subproblems run in local processes (:class:`concurrent.futures.ProcessPoolExecutor`),
in this process (``workers=0``), or on an existing Dask distributed cluster
(``scheduler=``).  A memory budget bounds every worker: local workers run
under an address-space limit, and a subproblem that runs out of it (or whose
listing would not fit) is cut further and run again; so is one whose plan
estimate is over the budget before it starts.

>>> import zipup
>>> from zipup import parallel
>>> room = zipup.as_problem(zipup.load("puzzles/room.toml"))
>>> parallel.run(room, workers=0, parts=8, progress=False).count
52

See ``docs/scale.md`` for the command line and for running on a cluster.
"""

from __future__ import annotations

import array
import collections
import concurrent.futures as cf
import dataclasses
import functools
import hashlib
import heapq
import json
import math
import os
import sys
import threading
import time

import numpy as np
import scipy.sparse as sp

from .errors import UsageError, ZipupError
from .matrices import Configuration
from .plans import available_memory as _available_memory

__all__ = ["Checkpoint", "Finished", "ParallelResult", "RunStats", "Subproblem", "configurations",
           "count", "default_memory", "estimate_bytes", "fingerprint", "parse_size", "plan_split",
           "run", "speedup", "subproblem", "worth_splitting"]

#: Version of the cutting rule; a checkpoint made with another version is refused.
SPLIT_VERSION = 1

_OVERHEAD = 4  # bytes a plan holds per row of its largest matrix, times the row's own bytes
_SMALL_BYTES = 1 << 40  # estimates are loose upper bounds: below this, whole and in this process is faster
_MIN_LIMIT = 64 << 20  # a worker process's address-space headroom is never less than this
_LOCAL_PAYLOAD = None


# ------------------------------------------------------------ sizes


def parse_size(text):
    """Bytes from a size like ``500M``, ``4G``, ``1.5GiB``, ``800k`` or ``25%``.

    Suffixes are powers of 1024; a percentage is of the memory available now.

    Parameters
    ----------
    text : str or int

    Returns
    -------
    int

    Raises
    ------
    UsageError
        If ``text`` is not a size.

    Examples
    --------
    >>> parse_size("500M"), parse_size("4G"), parse_size("1.5k"), parse_size(4096)
    (524288000, 4294967296, 1536, 4096)
    """
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        if text <= 0:
            raise UsageError(f"memory size {text}: expected a positive number of bytes")
        return int(text)
    s = str(text).strip().replace("_", "")
    if s.endswith("%"):
        try:
            frac = float(s[:-1]) / 100
        except ValueError:
            frac = -1
        if not 0 < frac <= 1:
            raise UsageError(f"memory size {text!r}: a percentage must be in (0%, 100%]")
        return max(1, int(_available_memory() * frac))
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    u = s.upper()
    for tail in ("IB", "B"):
        if u.endswith(tail) and len(u) > len(tail):
            u = u[:-len(tail)]
            break
    unit = u[-1:] if u[-1:] in units and u[-1:] != "" else ""
    num = u[:-1] if unit else u
    try:
        value = float(num)
    except ValueError:
        raise UsageError(f"memory size {text!r}: expected a number with an optional unit "
                         f"K, M, G or T (e.g. 500M, 4G)") from None
    if not value > 0 or not math.isfinite(value):
        raise UsageError(f"memory size {text!r}: expected a positive size")
    return max(1, int(value * units[unit]))


def default_memory():
    """The default memory budget: half the memory available now (at least 256 MiB).

    Examples
    --------
    >>> default_memory() >= 256 << 20
    True
    """
    return max(256 << 20, _available_memory() // 2)


# ------------------------------------------------------------ subproblems


def _row_ids(m, lengths=None):
    """Row number of every stored entry of a csr matrix."""
    return np.repeat(np.arange(m.shape[0]), np.diff(m.indptr) if lengths is None else lengths)


def _take_rows(m, keep, lengths=None, colmap=None, n_columns=None):
    """The rows of a csr matrix where ``keep`` is true, columns renumbered by ``colmap``."""
    lengths = np.diff(m.indptr) if lengths is None else lengths
    entries = np.repeat(keep, lengths)
    indices = m.indices[entries]
    if colmap is not None:
        indices = colmap[indices].astype(m.indices.dtype)
    indptr = np.zeros(int(keep.sum()) + 1, dtype=m.indptr.dtype)
    np.cumsum(lengths[keep], out=indptr[1:])
    shape = (len(indptr) - 1, m.shape[1] if n_columns is None else n_columns)
    return sp.csr_array((m.data[entries], indices, indptr), shape=shape)


def _cover_counts(problem):
    """How many placements (all pieces) cover each column."""
    cover = np.zeros(problem.n_columns, np.int64)
    for p in problem.pieces:
        if p.matrix.nnz:
            cover += np.bincount(p.matrix.indices, minlength=problem.n_columns)
    return cover


@dataclasses.dataclass(frozen=True, eq=False)
class Subproblem:
    """A part of a problem: some placements fixed, the rest still to choose.

    Attributes
    ----------
    path : tuple of int
        Child numbers from the root (``()`` is the whole problem).
    problem : Problem
        What is left: the cells the fixed placements cover are gone, and so is
        every placement that collides with them; a piece's ``count`` is what
        is left to place of it.
    fixed : tuple of (int, int)
        ``(piece, row)`` of the fixed placements in the root problem.
    origin : tuple of (int, ndarray)
        For each piece of ``problem``: its piece index in the root problem and
        the root row of each of its rows.

    Examples
    --------
    >>> import zipup
    >>> room = zipup.as_problem(zipup.load("puzzles/room.toml"))
    >>> top = Subproblem.root(room)
    >>> top.branches, [p.name for p in top.problem.pieces]  # V (or Z) has the fewest placements
    (32, ['T', 'S', 'V', 'Z'])
    >>> sub = subproblem(room, (0,))
    >>> sub.fixed, sub.problem.n_columns, [p.name for p in sub.problem.pieces]
    (((2, 0),), 19, ['T', 'S', 'Z'])
    >>> sub.fixed == top.children()[0].fixed
    True
    """

    path: tuple
    problem: object
    fixed: tuple
    origin: tuple

    @classmethod
    def root(cls, problem):
        """The whole problem as a subproblem (path ``()``)."""
        origin = tuple((i, np.arange(p.n_placements, dtype=np.int64)) for i, p in enumerate(problem.pieces))
        return cls((), problem, (), origin)

    @property
    def depth(self):
        return len(self.path)

    @functools.cached_property
    def dead(self):
        """``True`` when no configuration can exist (a piece or a primary cell has no placement left)."""
        prob = self.problem
        for p in prob.pieces:
            if p.count is not None and p.n_placements < p.count:
                return True
        if prob.primary.any():
            if not prob.pieces:
                return True
            if (_cover_counts(prob)[prob.primary] == 0).any():
                return True
        return False

    @functools.cached_property
    def _branching(self):
        """``(n, "piece", k)`` or ``(n, "cell", c)`` with the fewest choices, or ``None``."""
        prob = self.problem
        best = None
        for k, p in enumerate(prob.pieces):
            if p.count is not None and p.count >= 1 and (best is None or p.n_placements < best[0]):
                best = (p.n_placements, "piece", k)
        if prob.primary.any() and prob.pieces:
            cover = np.where(prob.primary, _cover_counts(prob), np.iinfo(np.int64).max)
            c = int(np.argmin(cover))
            if best is None or cover[c] < best[0]:
                best = (int(cover[c]), "cell", c)
        return best

    @property
    def branches(self):
        """Number of children (0: cannot be cut)."""
        return 0 if self._branching is None else self._branching[0]

    @functools.cached_property
    def _choices(self):
        """``(piece, row, first_copy)`` of each child."""
        br = self._branching
        if br is None:
            return []
        _, kind, x = br
        if kind == "piece":
            return [(x, r, True) for r in range(self.problem.pieces[x].n_placements)]
        out = []
        for k, p in enumerate(self.problem.pieces):
            m = p.matrix
            out.extend((k, int(r), False) for r in _row_ids(m)[m.indices == x])
        return out

    def child(self, i):
        """The ``i``-th child: one more placement fixed."""
        piece, row, first = self._choices[i]
        return self._fix(piece, row, first, i)

    def children(self):
        """Every child, dead ones included (so that numbering is stable)."""
        return [self.child(i) for i in range(self.branches)]

    def _fix(self, p, r, first, index):
        prob = self.problem
        pr = prob.pieces[p]
        m = pr.matrix
        hit = np.zeros(prob.n_columns, dtype=bool)
        hit[m.indices[m.indptr[r]:m.indptr[r + 1]]] = True
        keepcols = np.flatnonzero(~hit)
        colmap = np.full(prob.n_columns, -1, dtype=np.int64)
        colmap[keepcols] = np.arange(len(keepcols))
        mk = fb = None
        if pr.marks is not None:
            mk = np.zeros(prob.n_marks, dtype=bool)
            mk[pr.marks.indices[pr.marks.indptr[r]:pr.marks.indptr[r + 1]]] = True
            fb = np.zeros(prob.n_marks, dtype=bool)
            fb[pr.forbids.indices[pr.forbids.indptr[r]:pr.forbids.indptr[r + 1]]] = True
        pieces, origin = [], []
        for k, q in enumerate(prob.pieces):
            count = q.count
            mq = q.matrix
            n = mq.shape[0]
            lengths = np.diff(mq.indptr)
            bad = np.zeros(n, dtype=bool)
            bad[_row_ids(mq, lengths)[hit[mq.indices]]] = True
            if mk is not None and q.marks is not None:
                bad[_row_ids(q.forbids)[mk[q.forbids.indices]]] = True
                bad[_row_ids(q.marks)[fb[q.marks.indices]]] = True
            if k == p:
                if count is not None:
                    count -= 1
                if first:  # the other copies take rows after this one
                    bad[:r + 1] = True
                bad[r] = True
            if count == 0:
                continue
            keep = ~bad
            rows = np.flatnonzero(keep)
            mat = _take_rows(mq, keep, lengths, colmap, len(keepcols))
            kw = {"count": count, "matrix": mat}
            if len(q.orientation) == n:
                kw["orientation"] = q.orientation[rows]
            if q.marks is not None:
                kw["marks"] = _take_rows(q.marks, keep)
                kw["forbids"] = _take_rows(q.forbids, keep)
            pieces.append(dataclasses.replace(q, **kw))
            origin.append((self.origin[k][0], self.origin[k][1][rows]))
        fixed = tuple(sorted(self.fixed + ((self.origin[p][0], int(self.origin[p][1][r])),)))
        rest = dataclasses.replace(prob, columns=tuple(prob.columns[c] for c in keepcols),
                                   primary=prob.primary[keepcols], pieces=tuple(pieces))
        return Subproblem(self.path + (index,), rest, fixed, tuple(origin))

    def configuration(self, conf):
        """Map a configuration of :attr:`problem` to the root problem (fixed placements added).

        Parameters
        ----------
        conf : Configuration
            Rows of :attr:`problem`.

        Returns
        -------
        Configuration
            Rows of the root problem.
        """
        pl = [(self.origin[p][0], int(self.origin[p][1][r])) for p, r in conf.placements]
        return Configuration(tuple(sorted(pl + list(self.fixed))))


def subproblem(problem, path, _cache=None):
    """The subproblem of ``problem`` at ``path`` (rebuilt by replaying the cuts).

    Parameters
    ----------
    problem : Problem
    path : sequence of int
    _cache : _NodeCache, optional
        Subproblems already built (and it is filled).

    Returns
    -------
    Subproblem
    """
    path = tuple(int(i) for i in path)
    if _cache is None:
        _cache = _NodeCache(0)
    node = _cache.get(path)
    if node is None:
        node = Subproblem.root(problem) if not path else subproblem(problem, path[:-1], _cache).child(path[-1])
        _cache.put(path, node)
    return node


# ------------------------------------------------------------ estimates and the split


def _plan_for(problem, plan, tree=None):
    from .plans import Auto, get_plan

    p = get_plan(plan, tree)
    return p.choose(problem) if isinstance(p, Auto) else p


def estimate_bytes(problem, plan="auto"):
    """Rough bytes a plan needs for ``problem``: its row estimate times the bytes of a row.

    Parameters
    ----------
    problem : Problem
    plan : str or Plan

    Returns
    -------
    float
        ``inf`` when the plan cannot tell.

    Examples
    --------
    >>> import zipup
    >>> room = zipup.as_problem(zipup.load("puzzles/room.toml"))
    >>> 0 < estimate_bytes(room) < 1e9
    True
    """
    try:
        rows = float(_plan_for(problem, plan).estimate(problem))
    except ZipupError:
        return math.inf
    words = -(-problem.n_columns // 64) + 2 * -(-problem.n_marks // 64) + -(-len(problem.pieces) // 64) + 2
    return rows * 8 * words * _OVERHEAD


def worth_splitting(problem, plan="auto"):
    """Whether cutting ``problem`` into subproblems is likely to pay (its estimate is not small).

    Small problems run faster whole, in this process, than it takes to start workers.

    Examples
    --------
    >>> import zipup
    >>> worth_splitting(zipup.as_problem(zipup.load("puzzles/room.toml")))
    False
    >>> worth_splitting(zipup.as_problem(zipup.load("puzzles/box-3x4x5.toml")))
    True
    """
    return estimate_bytes(problem, plan) > _SMALL_BYTES


@dataclasses.dataclass
class RunStats:
    """What the cutting and the run did (printed by ``--stats``).

    Attributes
    ----------
    subproblems : int
        Subproblems run (or left to run, if stopped early).
    depth : int
        Deepest cut.
    dead : int
        Subproblems dropped while cutting because they cannot have a configuration.
    over_budget : int
        Cuts made before running because the estimate was over the budget.
    still_over : int
        Subproblems run although their estimate was over the budget (the
        cutting stopped at ``max_subproblems``; the run-time guard watches them).
    memory_splits : int
        Subproblems cut again at run time: out of memory, or a listing too big.
    resumed : int
        Subproblems already finished in the checkpoint.
    workers : int
        Processes (or Dask threads) running subproblems.
    budget : int
        Bytes one worker may use.
    peak_bytes : int
        Largest matrix any step held.
    seconds : float
        Wall time.
    busy : float
        Time spent in the plans, summed over workers.
    plans : dict
        Plan name -> subproblems it ran.
    where : str
        ``this process``, ``N local processes`` or the Dask scheduler.
    stopped : int
        Subproblems left unrun (or cut short) because ``limit`` configurations
        had passed.
    """

    subproblems: int = 0
    depth: int = 0
    dead: int = 0
    over_budget: int = 0
    still_over: int = 0
    memory_splits: int = 0
    resumed: int = 0
    workers: int = 1
    budget: int = 0
    peak_bytes: int = 0
    seconds: float = 0.0
    busy: float = 0.0
    plans: dict = dataclasses.field(default_factory=dict)
    where: str = "this process"
    stopped: int = 0

    def lines(self):
        """Human-readable lines for ``--stats``."""
        plans = ", ".join(f"{k} x{v}" for k, v in sorted(self.plans.items())) or "-"
        out = [f"split: {self.subproblems} subproblems, depth {self.depth}, {self.dead} dead ends dropped",
               f"memory budget: {_human(self.budget)} per worker; {self.over_budget} cuts for estimates "
               f"over it, {self.memory_splits} subproblems cut again at run time"
               + (f"; {self.still_over} still estimated over it when the cutting stopped "
                  f"(watched at run time)" if self.still_over else ""),
               f"ran on {self.where}: {self.seconds:.2f} s wall, {self.busy:.2f} s in plans "
               f"({plans}); largest step {_human(self.peak_bytes)}"]
        if self.resumed:
            out.append(f"resumed: {self.resumed} subproblems were already done")
        if self.stopped:
            out.append(f"stopped at the limit: {self.stopped} subproblems left unrun or cut short")
        return out


def _human(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _prefixes(done):
    out = set()
    for d in done:
        for k in range(len(d)):
            out.add(tuple(d[:k]))
    return out


def plan_split(problem, *, parts=1, budget=None, plan="auto", done=(), max_subproblems=None, stats=None):
    """Cut ``problem`` into subproblems: enough of them, each under the budget.

    Starting from the whole problem (or, when resuming, from what ``done``
    leaves), the subproblem with the largest estimate is cut until there are
    at least ``parts`` of them and every estimate is at most ``budget``, or
    there are ``max_subproblems``.  Dead subproblems are dropped.

    Parameters
    ----------
    problem : Problem
    parts : int
        At least this many subproblems (when the problem can be cut so far).
    budget : int, optional
        Bytes one subproblem may use (default: no limit).
    plan : str or Plan
        Whose estimate to use.
    done : collection of tuple
        Paths already finished (from a checkpoint): they and everything under
        them are left out.
    max_subproblems : int, optional
        Stop cutting at this many (default ``max(32 * parts, 512)``).
    stats : RunStats, optional
        Filled in (``depth``, ``dead``, ``over_budget``, ``still_over``).

    Returns
    -------
    list of Subproblem
        Largest estimate first.  (Only paths are kept while cutting, so a
        problem with large matrices does not fill the memory; these are
        rebuilt at the end: :func:`_split_paths` gives the paths alone.)

    Examples
    --------
    >>> import zipup
    >>> room = zipup.as_problem(zipup.load("puzzles/room.toml"))
    >>> subs = plan_split(room, parts=20)
    >>> len(subs) >= 20, len({s.path for s in subs}) == len(subs)
    (True, True)
    """
    cache = _NodeCache()
    return [subproblem(problem, path, cache)
            for path in _split_paths(problem, parts=parts, budget=budget, plan=plan, done=done,
                                     max_subproblems=max_subproblems, stats=stats)]


class _NodeCache(collections.OrderedDict):
    """Subproblems built lately, least recently used dropped beyond a number of matrix entries."""

    def __init__(self, max_entries=20_000_000):
        super().__init__()
        self.max_entries = max_entries
        self.entries = 0

    def get(self, path):
        node = super().get(path)
        if node is not None:
            self.move_to_end(path)
        return node

    def clear(self):
        super().clear()
        self.entries = 0

    def put(self, path, node):
        if path in self:
            return
        weight = sum(p.matrix.nnz for p in node.problem.pieces)
        self[path] = node
        self.entries += weight
        while self.entries > self.max_entries and len(self) > 1:
            _, old = self.popitem(last=False)
            self.entries -= sum(p.matrix.nnz for p in old.problem.pieces)


def _split_paths(problem, *, parts=1, budget=None, plan="auto", done=(), max_subproblems=None, stats=None):
    """The paths of :func:`plan_split`'s subproblems, largest estimate first."""
    stats = stats if stats is not None else RunStats()
    done = {tuple(d) for d in done}
    inner = _prefixes(done)
    cap = max_subproblems if max_subproblems is not None else max(32 * parts, 512)
    budget = math.inf if budget is None else budget
    cache = _NodeCache()
    heap, tick = [], 0
    final = []

    def push(node):
        nonlocal tick
        if node.path in done:
            return
        if node.dead:
            stats.dead += 1
            return
        if node.path in inner:  # partly done: its children carry on
            for i in range(node.branches):
                push(node.child(i))
            return
        est = estimate_bytes(node.problem, plan) if node.problem.pieces else 0.0
        size = sum(p.n_placements for p in node.problem.pieces)
        item = (-est, -size, tick, node.path)
        tick += 1
        if node.branches == 0 or not node.problem.pieces:
            final.append(item)  # cannot be cut
        else:
            heapq.heappush(heap, item)

    push(Subproblem.root(problem))
    while heap:
        est, size, _, path = heap[0]
        over = math.isfinite(est) and -est > budget  # an infinite estimate means the plan cannot tell
        if not (over or len(heap) + len(final) < parts) or len(heap) + len(final) >= cap:
            break
        heapq.heappop(heap)
        if over:
            stats.over_budget += 1
        node = subproblem(problem, path, cache)
        for i in range(node.branches):
            child = node.child(i)
            if child.branches and child.problem.pieces:
                cache.put(child.path, child)
            push(child)
    items = sorted([t[:2] + (t[3],) for t in heap + final])
    stats.still_over += sum(1 for e, _, _ in items if math.isfinite(e) and -e > budget)
    out = [p for _, _, p in items]
    stats.depth = max([stats.depth] + [len(p) for p in out])
    return out


# ------------------------------------------------------------ the work of one subproblem


@dataclasses.dataclass(frozen=True)
class _Payload:
    """What every worker needs: the whole problem and how to solve a subproblem."""

    problem: object
    plan: object
    tree: object
    kernel: str
    filters: tuple
    budget: int


_WORKER = threading.local()  # per thread: the payload and its subproblem cache


def _solve_path(payload, path, mode):
    """Solve one subproblem; a dict the coordinator understands.

    ``mode``: ``count`` (the plan's count only), ``filter`` (list and filter,
    return the number passing) or ``list`` (return the configurations that
    pass, as root rows).
    """
    t0 = time.perf_counter()
    if getattr(_WORKER, "payload", None) is not payload:
        _WORKER.payload, _WORKER.cache = payload, _NodeCache(max(1, payload.budget // 40))
    cache = _WORKER.cache
    try:
        node = subproblem(payload.problem, path, cache)
        out = {"path": tuple(path), "status": "done", "plan": None, "peak": 0}
        if node.dead:
            out.update(count=0, passed=0, configs=None if mode != "list" else _encode([]))
        elif not node.problem.pieces:
            passed, enc = _filtered(payload, [node.configuration(Configuration(()))], mode == "list")
            out.update(count=1, passed=passed, configs=enc)
        else:
            from .plans import get_plan

            plan = get_plan(payload.plan, payload.tree if not path else None)  # a tree names the root's pieces
            res = plan.run(node.problem, count_only=(mode == "count"), kernel=payload.kernel,
                           memory=payload.budget)
            out["plan"] = res.plan
            out["peak"] = max((s.bytes for s in res.stats), default=0)
            if mode == "count":
                out.update(count=res.count, passed=res.count, configs=None)
            else:
                per = 16 * sum(p.count or 1 for p in payload.problem.pieces) + 64
                if res.count is not None and res.count * per > payload.budget // 2 and node.branches:
                    return {"path": tuple(path), "status": "split", "reason": "listing",
                            "seconds": time.perf_counter() - t0}
                passed, enc = _filtered(payload, (node.configuration(c) for c in res.configurations()),
                                        mode == "list")
                out.update(count=res.count, passed=passed, configs=enc)  # a searching plan counts as it lists
        out["seconds"] = time.perf_counter() - t0
        return out
    except MemoryError:
        cache.clear()
        return {"path": tuple(path), "status": "split", "reason": "memory",
                "seconds": time.perf_counter() - t0}


def _filtered(payload, confs, keep):
    """Apply the filters; the number passing, and (if ``keep``) those passing, encoded."""
    for f in payload.filters:
        confs = f.apply(payload.problem, confs)
    if not keep:
        return sum(1 for _ in confs), None
    flat, lens = array.array("q"), array.array("q")
    for c in confs:
        lens.append(len(c.placements))
        for p, r in c.placements:
            flat.append(p)
            flat.append(r)
    return len(lens), (np.frombuffer(flat, dtype=np.int64).reshape(-1, 2), np.frombuffer(lens, dtype=np.int64))


def _encode(confs):
    """Configurations as two int64 arrays: flat ``(piece, row)`` pairs and lengths."""
    lens = np.array([len(c.placements) for c in confs], dtype=np.int64)
    flat = np.array([pr for c in confs for pr in c.placements], dtype=np.int64).reshape(-1, 2)
    return flat, lens


def _decode(enc):
    flat, lens = enc
    out, at = [], 0
    pairs = [(int(p), int(r)) for p, r in flat.tolist()] if len(flat) else []
    for n in lens.tolist():
        out.append(Configuration(tuple(pairs[at:at + n])))
        at += n
    return out


# ------------------------------------------------------------ executors


def _set_memory_limit(budget):
    """Limit this process's data segment to what it uses now plus ``budget`` (Linux)."""
    try:
        import resource

        with open("/proc/self/status") as fh:
            data = next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("VmData:"))
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        want = data + int(budget)
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (want, hard))
    except (OSError, ValueError, StopIteration, ImportError):
        pass


def _init_local(payload_bytes, limit):
    import pickle

    global _LOCAL_PAYLOAD

    _LOCAL_PAYLOAD = pickle.loads(payload_bytes)
    if limit:
        _set_memory_limit(max(_LOCAL_PAYLOAD.budget, _MIN_LIMIT))


def _local_task(path, mode):
    return _solve_path(_LOCAL_PAYLOAD, path, mode)


class _Serial:
    """Run subproblems in this process, one at a time, when asked for a result."""

    where = "this process"

    def __init__(self, payload):
        self.payload = payload
        self.slots = 1

    def submit(self, path, mode):
        f = cf.Future()
        f.args = (path, mode)
        return f

    def wait(self, futures):
        f = next(iter(futures))
        f.set_result(_solve_path(self.payload, *f.args))
        return [f]

    def close(self, abort=False):
        pass


class _Local:
    """A pool of local worker processes, each under the memory limit.

    Workers are forked while this process has a single thread (then a script
    needs no ``if __name__ == "__main__"`` guard); otherwise they start from a
    fork server, as forking a threaded process is unsafe.
    """

    def __init__(self, payload, workers, limit=True):
        import pickle

        self.workers = workers
        self.slots = 2 * workers
        self.where = f"{workers} local process{'es' if workers != 1 else ''}"
        self._args = (pickle.dumps(payload), limit)
        self._pool = None
        self._start()

    def _start(self):
        import multiprocessing

        methods = multiprocessing.get_all_start_methods()
        if "fork" in methods and threading.active_count() == 1:
            ctx = multiprocessing.get_context("fork")
        else:
            ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            if ctx.get_start_method() == "forkserver":  # workers start with numpy, scipy and zipup loaded
                ctx.set_forkserver_preload(["zipup.parallel", "zipup.plans", "zipup.filters"])
        self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_init_local,
                                            initargs=self._args)
        self._pool.submit(int).result()  # start the workers now, before any thread of ours

    def submit(self, path, mode):
        f = self._pool.submit(_local_task, path, mode)
        f.args = (path, mode)
        return f

    def wait(self, futures):
        done, _ = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
        return list(done)

    def restart(self):
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._start()

    def close(self, abort=False):
        if abort:  # interrupted: do not wait for subproblems that may run for hours
            for proc in list(getattr(self._pool, "_processes", {}).values()):
                proc.terminate()
        self._pool.shutdown(wait=not abort, cancel_futures=True)


class _Dask:
    """Subproblems as tasks on a Dask distributed cluster."""

    def __init__(self, payload_fn, scheduler, memory):
        try:
            from distributed import Client
        except ImportError:
            raise UsageError("--scheduler needs Dask: pip install 'zipup[dask]'") from None
        self._own = not isinstance(scheduler, Client)
        try:
            self.client = Client(scheduler, timeout="20s") if self._own else scheduler
        except (OSError, TimeoutError) as e:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
        info = self.client.scheduler_info()
        if "n_workers" in info and info.get("n_workers", 0) > len(info.get("workers", {})):
            info = self.client.scheduler_info(n_workers=-1)
        ws = list(info.get("workers", {}).values())
        if not ws:
            self.client.wait_for_workers(1, timeout=60)
            ws = list(self.client.scheduler_info().get("workers", {}).values())
        threads = sum(int(w.get("nthreads", 1)) for w in ws) or 1
        self.workers = threads
        self.slots = 2 * threads
        self.where = f"Dask scheduler {self.client.scheduler.address} ({len(ws)} workers, {threads} threads)"
        limits = [int(w["memory_limit"]) // max(1, int(w.get("nthreads", 1)))
                  for w in ws if w.get("memory_limit")]
        self.budget = memory if memory is not None else (min(limits) // 2 if limits else default_memory())
        self.payload = payload_fn(self.budget)
        self._remote = self.client.scatter(self.payload, broadcast=True, hash=False)

    def submit(self, path, mode):
        f = self.client.submit(_solve_path, self._remote, tuple(path), mode, pure=False,
                               key=f"zipup-{'.'.join(map(str, path)) or 'root'}-{os.urandom(4).hex()}")
        f.args = (path, mode)
        return f

    def wait(self, futures):
        from distributed import wait

        done, _ = wait(list(futures), return_when="FIRST_COMPLETED")
        return list(done)

    def close(self, abort=False):
        if self._own:
            self.client.close()


# ------------------------------------------------------------ the coordinator


@dataclasses.dataclass
class Finished:
    """One finished subproblem, as handed to ``on_result``.

    Attributes
    ----------
    path : tuple of int
    count : int
        Configurations of the subproblem before post-stage filters.
    passed : int
        Of those, how many passed the filters (equal to ``count`` without them).
    configurations : list of Configuration or None
        Those that passed, as rows of the root problem (``None`` when counting).
    seconds : float
    plan : str or None
    """

    path: tuple
    count: int
    passed: int
    configurations: list
    seconds: float
    plan: str = None


@dataclasses.dataclass
class ParallelResult:
    """The outcome of :func:`run`.

    Attributes
    ----------
    count : int or None
        Configurations before post-stage filters; ``None`` when ``limit``
        stopped the run before every subproblem had run.
    passed : int
        Configurations that passed every filter (the total of every
        subproblem, or at most ``limit``).
    stats : RunStats
    plan : str
        The plans the subproblems used, e.g. ``sweep``.
    limit_reached : bool
        Whether ``limit`` configurations passed (and the run stopped there).
    """

    count: int | None
    passed: int
    stats: RunStats
    plan: str
    limit_reached: bool = False


class _Progress:
    """A tqdm bar on stderr (only when it is a terminal and not quiet)."""

    def __init__(self, enabled, total, initial, configs0):
        self.bar = None
        self.configs = configs0
        self.t0 = time.perf_counter()
        self.c0 = configs0
        if enabled is None:
            enabled = sys.stderr.isatty()
        if enabled:
            from tqdm import tqdm

            class _Bar(tqdm):
                monitor_interval = 0  # no monitor thread: workers may still be forked later

            self.bar = _Bar(total=total, initial=initial, unit="sub", desc="subproblems", file=sys.stderr,
                            dynamic_ncols=True, smoothing=0.05, leave=False)

    def update(self, done_configs, more_total=0):
        self.configs += done_configs
        if self.bar is None:
            return
        if more_total:
            self.bar.total += more_total
        rate = (self.configs - self.c0) / max(1e-9, time.perf_counter() - self.t0)
        self.bar.set_postfix_str(f"{self.configs:,} configurations, {rate:,.0f}/s", refresh=False)
        self.bar.update(1 if done_configs is not None else 0)

    def grow(self, more):
        if self.bar is not None:
            self.bar.total += more
            self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _drive(problem, *, plan, tree, kernel, filters, mode, workers, scheduler, memory, parts,
           max_subproblems, done, passed0, limit, progress, stats):
    """Generator of :class:`Finished`, in the order subproblems finish."""
    t_start = time.perf_counter()
    done = set(done)
    local_workers = (os.cpu_count() or 1) if workers is None else int(workers)
    if scheduler is not None:
        holder = {}

        def payload_fn(budget):
            holder["p"] = _Payload(problem, plan, tree, kernel, tuple(filters), int(budget))
            return holder["p"]

        ex = _Dask(payload_fn, scheduler, memory)
        budget = ex.budget
    else:
        total = memory if memory is not None else default_memory()
        budget = max(64 << 10, total // max(1, local_workers))
        payload = _Payload(problem, plan, tree, kernel, tuple(filters), int(budget))
        ex = _Serial(payload) if local_workers <= 1 else _Local(payload, local_workers)
    stats.workers = ex.workers if hasattr(ex, "workers") else 1
    stats.where = ex.where
    stats.budget = budget
    try:
        want = parts if parts is not None else (1 if stats.workers <= 1 else 8 * stats.workers)
        paths = _split_paths(problem, parts=want, budget=budget, plan=plan, done=done,
                             max_subproblems=max_subproblems, stats=stats)
        stats.resumed = len(done)
        stats.subproblems = len(paths)
        queue = collections.deque(paths)
        bar = _Progress(progress, stats.resumed + len(queue), stats.resumed, passed0)
        passed = passed0
        inflight = {}
        crashes = collections.Counter()
        coord_cache = _NodeCache()
        try:
            while queue or inflight:
                if limit is not None and passed >= limit:  # nothing more is wanted: drop the rest
                    stats.stopped = len(queue) + len(inflight)
                    break
                while queue and len(inflight) < ex.slots:
                    path = queue.popleft()
                    inflight[ex.submit(path, mode)] = path
                finished = _wait(ex, inflight, crashes, queue)
                for f in finished:
                    path = inflight.pop(f)
                    r = f.result()
                    if r["status"] == "split":
                        node = subproblem(problem, path, coord_cache)
                        if node.branches == 0:
                            raise ZipupError(
                                f"subproblem {'.'.join(map(str, path)) or '(root)'} needs more than the "
                                f"memory budget ({_human(budget)} per worker) and cannot be cut further; "
                                f"give more --memory or fewer --workers")
                        kids = [c.path for c in node.children() if not c.dead]
                        stats.dead += node.branches - len(kids)
                        stats.memory_splits += 1
                        stats.subproblems += len(kids) - 1
                        stats.depth = max(stats.depth, len(path) + 1)
                        queue.extendleft(reversed(kids))
                        bar.grow(len(kids) - 1)
                        continue
                    stats.busy += r["seconds"]
                    stats.peak_bytes = max(stats.peak_bytes, r["peak"])
                    if r["plan"]:
                        stats.plans[r["plan"]] = stats.plans.get(r["plan"], 0) + 1
                    confs = _decode(r["configs"]) if r.get("configs") is not None else None
                    if confs is not None and limit is not None:
                        confs = confs[:max(0, limit - passed)]
                    n_passed = len(confs) if confs is not None else r["passed"]
                    passed += n_passed
                    bar.update(n_passed)
                    yield Finished(tuple(path), int(r["count"]), int(n_passed), confs, r["seconds"], r["plan"])
        finally:
            bar.close()
            for f in inflight:
                f.cancel()
    except BaseException:
        ex.close(abort=True)
        raise
    else:
        ex.close(abort=bool(stats.stopped))  # stopped at the limit: what still runs is not wanted
    finally:
        stats.seconds = time.perf_counter() - t_start


def _wait(ex, inflight, crashes, queue):
    """Finished futures; a crashed local pool is restarted and its work queued again."""
    finished = ex.wait(inflight)
    ok = []
    broken = False
    for f in finished:
        try:
            f.result()
            ok.append(f)
        except cf.process.BrokenProcessPool:
            broken = True
        except Exception as e:  # noqa: BLE001 - a task that failed for a reason of its own
            if type(e).__name__ == "KilledWorker":  # a Dask worker died (out of memory?)
                crashes[inflight[f]] += 1
                fut = cf.Future()
                fut.set_result({"path": inflight[f], "status": "split", "reason": "crash"})
                inflight[fut] = inflight.pop(f)
                ok.append(fut)
            else:
                raise
    if broken:
        # every task in flight died with the pool; run them again, and cut the repeat offenders
        for f, path in list(inflight.items()):
            if f in ok:
                continue
            del inflight[f]
            crashes[path] += 1
            if crashes[path] >= 2:
                fut = cf.Future()
                fut.set_result({"path": path, "status": "split", "reason": "crash"})
                inflight[fut] = path
                ok.append(fut)
            else:
                queue.appendleft(path)
        ex.restart()
    return ok


def run(problem, plan="auto", *, count_only=True, filters=None, slidable=None, tree=None, kernel="auto",
        workers=None, scheduler=None, memory=None, parts=None, max_subproblems=None, checkpoint=None,
        output=None, on_result=None, limit=None, progress=None):
    """Solve ``problem`` as independent subproblems, in parallel.

    Parameters
    ----------
    problem : Problem or Puzzle
    plan : str or Plan
        The plan each subproblem runs (``auto`` chooses per subproblem).
    count_only : bool
        ``True``: count (listing only what post-stage filters need);
        ``False``: hand every configuration that passes to ``on_result``.
    filters : list of Filter, optional
        Default: what the puzzle file asks for.
    slidable : {"none", "quick", "exact"}, optional
        Overrides the file's ``[filters] slidable``.
    tree, kernel
        As for :func:`zipup.solve` (a ``tree`` names the whole problem's
        pieces, so with a tree nothing is cut).
    workers : int, optional
        Local worker processes (default ``os.cpu_count()``); ``0`` or ``1``:
        run the subproblems in this process.
    scheduler : str or distributed.Client, optional
        Address of a Dask scheduler (``tcp://host:8786``): run there instead.
    memory : int or str, optional
        Memory budget: for local workers, the whole run's (each worker gets an
        equal share); on Dask, one task's.  Default: half the memory
        available (locally), half a Dask worker's limit per thread.
    parts : int, optional
        Cut into at least this many subproblems (default 8 per worker; with a
        checkpoint at least 16).
    max_subproblems : int, optional
        See :func:`plan_split`.
    checkpoint : str, os.PathLike or Checkpoint, optional
        Journal of finished subproblems: an interrupted run started again
        with the same checkpoint does only the rest.
    output : file, optional
        The file ``on_result`` writes to; it is flushed and synced before a
        subproblem is recorded as finished in the checkpoint.
    on_result : callable, optional
        Called with each :class:`Finished` subproblem, in this process, as
        they finish.
    limit : int, optional
        Stop once this many configurations have passed: no further subproblem
        is started and those running are stopped (``count`` is then ``None``).
    progress : bool, optional
        Show a progress bar on stderr (default: when stderr is a terminal).

    Returns
    -------
    ParallelResult

    Examples
    --------
    >>> import zipup
    >>> room = zipup.as_problem(zipup.load("puzzles/room.toml"))
    >>> seen = []
    >>> r = run(room, count_only=False, slidable="none", workers=0, parts=4, progress=False,
    ...         on_result=lambda fin: seen.extend(fin.configurations))
    >>> r.count, r.passed, len(set(seen))
    (52, 52, 52)
    """
    from .api import as_problem
    from .filters import default_filters

    problem = as_problem(problem)
    if filters is None:
        filters = default_filters(problem, slidable)
    filters = list(filters)
    post = [f for f in filters if not f.in_plan]
    mode = "list" if not count_only else ("filter" if post else "count")
    if memory is not None:
        memory = parse_size(memory)
    ck = checkpoint
    if ck is not None and not isinstance(ck, Checkpoint):
        ck = Checkpoint(ck, fingerprint(problem, mode=mode, filters=[repr(f) for f in filters], limit=limit))
        ck.resume()
    if ck is not None and not ck.started:
        ck.begin(output)
    done = ck.done if ck is not None else set()
    if parts is None and ck is not None:  # a checkpoint wants small steps, even on one worker
        parts = max(16, 8 * ((os.cpu_count() or 1) if workers is None else int(workers)))
    count0 = ck.count if ck is not None else 0
    passed0 = ck.passed if ck is not None else 0
    stats = RunStats()
    plans = collections.Counter(ck.plans) if ck is not None else collections.Counter()
    total, passed = count0, passed0
    if tree is not None:
        parts, max_subproblems = 1, 1
    for fin in _drive(problem, plan=plan, tree=tree, kernel=kernel, filters=filters if mode != "count" else (),
                      mode=mode, workers=workers, scheduler=scheduler, memory=memory, parts=parts,
                      max_subproblems=max_subproblems, done=done, passed0=passed0, limit=limit,
                      progress=progress, stats=stats):
        if on_result is not None:
            on_result(fin)
        if ck is not None:
            ck.record(fin, output)
        total += fin.count
        passed += fin.passed
        if fin.plan and ck is None:
            plans[fin.plan] += 1
    if ck is not None:
        plans = ck.plans
    plan_name = "+".join(sorted(plans)) or (plan if isinstance(plan, str) else getattr(plan, "name", "?"))
    reached = limit is not None and passed >= limit
    if reached:
        passed = limit
    return ParallelResult(count=None if stats.stopped else total, passed=passed, stats=stats, plan=plan_name,
                          limit_reached=reached)


def count(puzzle, plan="auto", **kwargs):
    """The number of configurations passing every filter, computed in parallel.

    Keyword arguments are those of :func:`run`.

    Examples
    --------
    >>> import zipup
    >>> count(zipup.load("puzzles/room.toml"), workers=0, progress=False)
    3
    """
    kwargs.setdefault("count_only", True)
    res = run(puzzle, plan, **kwargs)
    return res.passed


def configurations(puzzle, plan="auto", *, limit=None, **kwargs):
    """Iterate over the configurations that pass every filter, computed in parallel.

    They come in the order the subproblems finish.  Keyword arguments are
    those of :func:`run` (but ``checkpoint``, ``on_result`` and ``output``).

    Examples
    --------
    >>> import zipup
    >>> room = zipup.load("puzzles/room.toml")
    >>> len(set(configurations(room, slidable="none", workers=0, progress=False)))
    52
    """
    from .api import as_problem
    from .filters import default_filters

    problem = as_problem(puzzle)
    filters = kwargs.pop("filters", None)
    if filters is None:
        filters = default_filters(problem, kwargs.pop("slidable", None))
    kwargs.pop("slidable", None)
    stats = RunStats()
    memory = kwargs.pop("memory", None)
    tree = kwargs.pop("tree", None)
    parts, cap = kwargs.pop("parts", None), kwargs.pop("max_subproblems", None)
    if tree is not None:
        parts, cap = 1, 1
    gen = _drive(problem, plan=plan, tree=tree, kernel=kwargs.pop("kernel", "auto"), filters=list(filters),
                 mode="list", workers=kwargs.pop("workers", None), scheduler=kwargs.pop("scheduler", None),
                 memory=None if memory is None else parse_size(memory), parts=parts, max_subproblems=cap,
                 done=(), passed0=0, limit=limit, progress=kwargs.pop("progress", None), stats=stats)
    if kwargs:
        raise TypeError(f"unexpected keyword arguments: {', '.join(sorted(kwargs))}")
    n = 0
    try:
        for fin in gen:
            for c in fin.configurations:
                yield c
                n += 1
            if limit is not None and n >= limit:
                return
    finally:
        gen.close()


# ------------------------------------------------------------ checkpoints


def fingerprint(problem, **options):
    """A hash of a problem's matrices and of the options that shape the output.

    Examples
    --------
    >>> import zipup
    >>> room = zipup.as_problem(zipup.load("puzzles/room.toml"))
    >>> fingerprint(room) == fingerprint(room), fingerprint(room) == fingerprint(room, mode="list")
    (True, False)
    """
    h = hashlib.sha256()
    h.update(json.dumps({"split": SPLIT_VERSION, "name": problem.name, "n_marks": problem.n_marks,
                         "columns": [repr(c) for c in problem.columns], "options": options},
                        sort_keys=True, default=repr).encode())
    h.update(np.ascontiguousarray(problem.primary, dtype=np.uint8).tobytes())
    for p in problem.pieces:
        h.update(json.dumps([p.name, p.count]).encode())
        for m in (p.matrix, p.marks, p.forbids):
            if m is None:
                h.update(b"-")
                continue
            m = sp.csr_array(m)
            h.update(np.asarray(m.shape, np.int64).tobytes())
            for a in (m.indptr, m.indices, m.data):
                h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return h.hexdigest()


class Checkpoint:
    """A journal (JSON lines) of finished subproblems, for resuming a run.

    The first line names the problem and options (a fingerprint) and where
    the output's preamble ends; then one line per finished subproblem, with
    its path, its count, how many configurations it wrote and the output's
    length after them.  A subproblem's configurations are written, flushed
    and synced *before* its line is appended (and synced), so at any moment
    the output is: the preamble, the configurations of the recorded
    subproblems, and possibly some of an unrecorded one.  Resuming truncates
    the output to the length in the last complete line and runs only the
    subproblems not recorded, so no configuration is lost or written twice,
    whenever the process was killed (a torn last line is ignored).

    Parameters
    ----------
    path : str or os.PathLike
    fingerprint : str
        From :func:`fingerprint`: a checkpoint of another problem or other
        options is refused.

    Examples
    --------
    >>> import os, tempfile, zipup
    >>> room = zipup.as_problem(zipup.load("puzzles/room.toml"))
    >>> ck_path = os.path.join(tempfile.mkdtemp(), "room.ckpt")
    >>> first = run(room, workers=0, parts=6, checkpoint=ck_path, progress=False)
    >>> first.passed, first.stats.subproblems >= 6
    (3, True)
    >>> again = run(room, workers=0, parts=6, checkpoint=ck_path, progress=False)
    >>> again.passed, again.stats.subproblems, again.stats.resumed == first.stats.subproblems
    (3, 0, True)
    """

    def __init__(self, path, fingerprint):
        self.path = os.fspath(path)
        self.fingerprint = fingerprint
        self.done = set()
        self.count = 0
        self.passed = 0
        self.plans = collections.Counter()
        self.end = 0
        self.started = False
        self._fh = None

    def resume(self, output_path=None):
        """Read the journal; truncate ``output_path`` to the recorded length.

        Returns
        -------
        bool
            ``True`` when there was a journal to carry on from.

        Raises
        ------
        UsageError
            If the journal is of another problem or other options.
        """
        try:
            with open(self.path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            return False
        good = 0  # bytes of complete, valid lines
        header = None
        for line in raw.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break
            try:
                rec = json.loads(line)
            except ValueError:
                break
            if header is None:
                if rec.get("zipup") != "checkpoint":
                    raise UsageError(f"--checkpoint {self.path}: not a zipup checkpoint file")
                if rec.get("fingerprint") != self.fingerprint:
                    raise UsageError(f"--checkpoint {self.path}: it was made for another puzzle or other "
                                     f"options (count/list, format, filters, limit); use a new file")
                header = rec
                self.end = int(rec["start"])
            elif "done" in rec:
                path = tuple(rec["done"])
                if path not in self.done:
                    self.done.add(path)
                    self.count += int(rec["count"])
                    self.passed += int(rec["passed"])
                    if rec.get("plan"):
                        self.plans[rec["plan"]] += 1
                self.end = int(rec["end"])
            good += len(line)
        if header is None:
            return False
        if good < len(raw):
            with open(self.path, "r+b") as fh:
                fh.truncate(good)
        if output_path is not None and os.path.exists(output_path):
            if os.path.getsize(output_path) < self.end:
                raise ZipupError(f"--checkpoint {self.path}: the output {output_path} is shorter than "
                                 f"recorded ({os.path.getsize(output_path)} < {self.end} bytes); "
                                 f"it was changed after the checkpoint was written")
            os.truncate(output_path, self.end)
        elif output_path is not None and self.end:
            raise ZipupError(f"--checkpoint {self.path}: the output {output_path} is missing")
        self.started = True
        return True

    def begin(self, output=None):
        """Start a new journal; the output's preamble (if any) is already written."""
        self.done, self.count, self.passed, self.plans = set(), 0, 0, collections.Counter()
        self.end = _sync(output)
        self._fh = open(self.path, "w", encoding="utf-8")
        self._append({"zipup": "checkpoint", "version": 1, "fingerprint": self.fingerprint,
                      "start": self.end})
        self.started = True

    def record(self, fin, output=None):
        """Record a finished subproblem (after syncing the output it wrote)."""
        self.end = _sync(output) if output is not None else self.end
        self.done.add(fin.path)
        self.count += fin.count
        self.passed += fin.passed
        if fin.plan:
            self.plans[fin.plan] += 1
        self._append({"done": list(fin.path), "count": fin.count, "passed": fin.passed, "end": self.end,
                      "plan": fin.plan})

    def finish(self, count, passed, output=None):
        """Record the end of the run (information only: resuming ignores it)."""
        self._append({"finished": True, "count": count, "passed": passed,
                      "end": _sync(output) if output is not None else self.end})

    def _append(self, rec):
        if self._fh is None:
            self._fh = open(self.path, "a", encoding="utf-8")
        self._fh.write(json.dumps(rec) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self):
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _sync(output):
    """Flush and fsync a file; its length (0 without one, or for a pipe)."""
    if output is None:
        return 0
    output.flush()
    try:
        os.fsync(output.fileno())
        return output.tell()
    except (OSError, ValueError, AttributeError):
        return 0


# ------------------------------------------------------------ measuring


def speedup(puzzle, workers=(1, 2), plan="auto", *, parts=None, repeat=1, **kwargs):
    """Time a count with different numbers of workers.

    Parameters
    ----------
    puzzle : Puzzle or Problem
    workers : sequence of int
    plan : str
    parts : int, optional
        Subproblems (default: 8 per worker of the largest ``workers``, the
        same cut for every row so that only the number of workers changes).
    repeat : int
        Best of this many runs.

    Returns
    -------
    list of dict
        ``workers``, ``seconds``, ``count``, ``subproblems``, ``busy``
        (seconds in plans) and ``speedup`` (relative to the first row).

    Examples
    --------
    >>> import zipup
    >>> rows = speedup(zipup.load("puzzles/room.toml"), workers=(0,), parts=4)
    >>> rows[0]["count"], rows[0]["speedup"]
    (3, 1.0)
    """
    from .api import as_problem

    problem = as_problem(puzzle)
    parts = parts if parts is not None else 8 * max(max(workers), 1)
    rows = []
    for w in workers:
        best = None
        for _ in range(repeat):
            t = time.perf_counter()
            res = run(problem, plan, workers=w, parts=parts, progress=False, **kwargs)
            dt = time.perf_counter() - t
            if best is None or dt < best[0]:
                best = (dt, res)
        dt, res = best
        rows.append({"workers": w, "seconds": dt, "count": res.passed, "subproblems": res.stats.subproblems,
                     "busy": res.stats.busy})
    for r in rows:
        r["speedup"] = round(rows[0]["seconds"] / r["seconds"], 2) if rows[0]["seconds"] > 0 else 1.0
    rows[0]["speedup"] = 1.0
    return rows
