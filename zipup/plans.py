"""Stage 5: plans, i.e. trees of zip-up joins.

Every plan turns a :class:`~zipup.matrices.Problem` into *merged states*: rows
of a configuration matrix (bit-packed, see :mod:`zipup.join`) with a
multiplicity.  Two partial configurations that occupy the same cells with the
same pieces are interchangeable for every join above them, so they become one
row whose multiplicity is the sum of theirs.  Counting adds multiplicities and
never lists; listing walks the back-pointers each merged row keeps to the
rows that made it.

* :class:`Balanced` zips the pieces up in a balanced binary tree (the seed
  method, the picture to teach with).
* :class:`Sweep` orders the cells, groups the placements by their first cell,
  and zips the running matrix with one group at a time (a left-deep tree),
  requiring every swept cell to be decided once its step is done.
* :class:`Auto` estimates the sizes of both and picks one.

A new plan is one new subclass of :class:`Plan`.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

import numpy as np

from .errors import MemoryBudgetError, UsageError
from .join import BLOCK_BYTES, get_kernel, pack
from .matrices import Configuration

__all__ = ["Auto", "Balanced", "Plan", "Result", "Step", "Sweep", "available_memory", "get_plan", "parse_tree"]

_INT64_SAFE = 2**62


@dataclass(frozen=True)
class Step:
    """What one join of a plan did.

    Attributes
    ----------
    plan : str
    index : int
    label : str
        What was joined: a subtree like ``(T,(S,V))`` or a swept cell.
    rows_in : tuple of int
        Rows of the two operands.
    nnz : int or None
        Nonzeros of the overlap matrix ``A @ B.T`` (colliding pairs); ``None``
        where the join did not form it (hashed complement at an exact root).
    rows_out : int
        Rows the plain zip-up (no merging anywhere) would have here: the sum
        of the multiplicities produced.
    rows_formed : int
        Rows this join actually formed from its (merged) operands.
    rows_merged : int
        Rows left after merging equal states.
    pruned : int
        Rows dropped because they could never be completed.
    bytes : int
        Memory held by the step's result.
    seconds : float
    """

    plan: str
    index: int
    label: str
    rows_in: tuple
    nnz: int | None
    rows_out: int
    rows_formed: int
    rows_merged: int
    pruned: int
    bytes: int
    seconds: float

    def as_dict(self):
        return dict(self.__dict__)


@dataclass
class Result:
    """What a plan found: the count, the step statistics, and a lister.

    Attributes
    ----------
    count : int
        Exact number of configurations (a Python int, however large).
    stats : list of Step
    plan : str
    """

    count: int
    stats: list
    plan: str
    _lister: object = field(default=None, repr=False)

    def configurations(self):
        """Iterate over the configurations (streamed from back-pointers).

        Raises
        ------
        UsageError
            If the plan ran with ``count_only=True``.
        """
        if self._lister is None:
            raise UsageError("this result was computed with count_only=True; nothing to list")
        return self._lister()


class _Stats(list):
    """The list of steps, telling a listener about each as it is appended."""

    def __init__(self, on_step=None):
        super().__init__()
        self.on_step = on_step

    def append(self, step):
        super().append(step)
        if self.on_step is not None:
            self.on_step(step)


# ------------------------------------------------------------ multiplicities


def _mul(a, b):
    """Exact elementwise product: int64 while safe, Python ints beyond."""
    if a.dtype != object and b.dtype != object and len(a):
        if int(a.max()) * int(b.max()) < _INT64_SAFE:
            return a * b
    return a.astype(object) * b.astype(object)


def _group_sum(values, starts):
    """Exact sums of consecutive groups (``values`` sorted by group)."""
    if not len(values):
        return values
    if values.dtype != object and int(values.max()) * len(values) >= _INT64_SAFE:
        values = values.astype(object)
    return np.add.reduceat(values, starts)


def _total(values):
    """Exact sum as a Python int."""
    if values.dtype != object and (not len(values) or int(values.max()) * len(values) < _INT64_SAFE):
        return int(values.sum())
    return int(sum(values.tolist()))


# ------------------------------------------------------------ merging


@dataclass
class _Merge:
    keys: np.ndarray  # (n_unique, K) uint64
    mult: np.ndarray  # (n_unique,)
    order: np.ndarray  # pre-merge rows sorted by group
    starts: np.ndarray  # (n_unique + 1,) group boundaries in ``order``


def _merge(keys, mult):
    """Merge equal rows of ``keys`` (n, K) uint64, summing multiplicities."""
    n, k = keys.shape
    if n == 0:
        return _Merge(keys, mult, np.zeros(0, np.int64), np.zeros(1, np.int64))
    if k == 0:
        order = np.arange(n)
        flags = np.zeros(n, dtype=bool)
        flags[0] = True
    else:
        order = np.argsort(keys[:, 0], kind="stable") if k == 1 else np.lexsort(keys.T[::-1])
        s = keys[order]
        flags = np.empty(n, dtype=bool)
        flags[0] = True
        np.any(s[1:] != s[:-1], axis=1, out=flags[1:])
    starts = np.flatnonzero(flags)
    merged = _group_sum(mult[order], starts)
    return _Merge(keys[order[starts]], merged, order, np.append(starts, n))


# ------------------------------------------------------------ plans


class Plan:
    """Interface of every plan.

    Subclasses implement :meth:`run`.  ``name`` is what ``--plan`` takes.
    """

    name = "?"

    def run(self, problem, *, count_only=False, kernel="auto", memory=None, on_step=None):
        """Solve ``problem``; return a :class:`Result`.

        ``on_step``, if given, is called with each :class:`Step` as it finishes.
        """
        raise NotImplementedError

    def estimate(self, problem):
        """Rough size (largest number of rows) this plan would hold."""
        return math.inf


def _segments(problem):
    """Widths in words of the cells, marks and forbids segments."""
    wc = max(1, -(-problem.n_columns // 64))
    wm = -(-problem.n_marks // 64) if problem.n_marks else 0
    return wc, wm


def _leaf_rows(problem, piece):
    """Packed [cells | marks | forbids] rows of one piece."""
    pr = problem.pieces[piece]
    parts = [pack(pr.matrix, problem.n_columns)]
    if problem.n_marks:
        for m in (pr.marks, pr.forbids):
            parts.append(pack(m, problem.n_marks) if m is not None
                         else np.zeros((pr.n_placements, -(-problem.n_marks // 64)), np.uint64))
    return np.ascontiguousarray(np.hstack(parts))


def _swap(problem):
    """Column permutation of a state row that swaps its marks and forbids segments."""
    wc, wm = _segments(problem)
    idx = np.arange(wc + 2 * wm)
    if wm:
        idx[wc:wc + wm], idx[wc + wm:] = np.arange(wc + wm, wc + 2 * wm), np.arange(wc, wc + wm)
    return idx


def _full_words(problem, which):
    """Packed mask of the given column selection (bool array)."""
    return pack(which[None, :].astype(np.uint8), problem.n_columns)[0]


# ---- the balanced tree


def parse_tree(text, problem):
    """Parse a tree like ``"((T,T),((S,V),Z))"`` into nested tuples of piece indices.

    Every copy of every piece must appear exactly once.

    Examples
    --------
    >>> from zipup import load, configuration_matrices
    >>> prob = configuration_matrices(load("puzzles/room.toml"))
    >>> parse_tree("((T,T),((S,V),Z))", prob)
    ((0, 0), ((1, 2), 3))
    """
    names = {p.name: i for i, p in enumerate(problem.pieces)}
    toks = [t for t in re.split(r"\s*([(),])\s*", text.strip()) if t != ""]
    pos = 0

    def expr():
        nonlocal pos
        if pos >= len(toks):
            raise UsageError(f"--tree {text!r}: ended early; expected a piece name or '('")
        t = toks[pos]
        pos += 1
        if t == "(":
            items = [expr()]
            while pos < len(toks) and toks[pos] == ",":
                pos += 1
                items.append(expr())
            if pos >= len(toks) or toks[pos] != ")":
                raise UsageError(f"--tree {text!r}: expected ')' or ','")
            pos += 1
            if len(items) == 1:
                return items[0]
            node = items[0]
            for it in items[1:]:
                node = (node, it)
            return node
        if t in "),":
            raise UsageError(f"--tree {text!r}: unexpected {t!r}; expected a piece name or '('")
        if t not in names:
            raise UsageError(f"--tree {text!r}: unknown piece {t!r}; pieces are "
                             f"{', '.join(names)}")
        return names[t]

    tree = expr()
    if pos != len(toks):
        raise UsageError(f"--tree {text!r}: unexpected {toks[pos]!r} after the tree")
    have = {}
    for leaf in _leaves(tree):
        have[leaf] = have.get(leaf, 0) + 1
    for i, p in enumerate(problem.pieces):
        if have.get(i, 0) != p.count:
            raise UsageError(f"--tree {text!r}: piece {p.name!r} appears {have.get(i, 0)} times, "
                             f"expected {p.count} (its count)")
    return tree


def _leaves(tree):
    if isinstance(tree, tuple):
        return _leaves(tree[0]) + _leaves(tree[1])
    return [tree]


def default_tree(problem):
    """Pair neighbours level by level (copies of a piece side by side): ceil(log2 n) levels."""
    level = [i for i, p in enumerate(problem.pieces) for _ in range(p.count)]
    if not level:
        raise UsageError("the problem has no pieces")
    while len(level) > 1:
        level = [(level[k], level[k + 1]) if k + 1 < len(level) else level[k]
                 for k in range(0, len(level), 2)]
    return level[0]


def tree_label(tree, problem):
    if isinstance(tree, tuple):
        return f"({tree_label(tree[0], problem)},{tree_label(tree[1], problem)})"
    return problem.pieces[tree].name


@dataclass
class _Node:
    state: np.ndarray  # (n, W) uint64 packed [cells | marks | forbids]
    mult: np.ndarray  # (n,)
    ords: dict  # piece -> (first array or None, last array or None), copies in leaf order
    label: str
    pieces: dict  # piece -> copies in this subtree
    back: tuple = None  # listing: (left node, right node, i, j, order, starts) or (piece,)


class Balanced(Plan):
    """A balanced binary tree of joins over the piece copies.

    Parameters
    ----------
    tree : str or nested tuple, optional
        The shape, e.g. ``"((T,T),((S,V),Z))"``; default: neighbours paired
        level by level.
    merge : bool
        Merge equal states after every join (default ``True``).
    prune : bool
        Under exact cover, drop rows that leave a cell no remaining placement
        can cover (default ``True``).
    """

    name = "balanced"

    def __init__(self, tree=None, merge=True, prune=True):
        self.tree = tree
        self.merge = merge
        self.prune = prune

    def _tree(self, problem):
        if any(p.count is None for p in problem.pieces):
            raise UsageError("the balanced plan needs pieces with a fixed count; "
                             "use --plan sweep for exact-cover options")
        if self.tree is None:
            return default_tree(problem)
        if isinstance(self.tree, str):
            return parse_tree(self.tree, problem)
        return self.tree

    def estimate(self, problem):
        """Largest node size, assuming placements collide independently at random."""
        if any(p.count is None for p in problem.pieces):
            return math.inf
        n = max(1, problem.n_columns)
        sizes = [p.n_placements for p in problem.pieces]
        areas = [int(p.matrix.nnz // max(1, p.n_placements)) for p in problem.pieces]
        biggest = 0.0

        def walk(t):
            nonlocal biggest
            if not isinstance(t, tuple):
                return float(sizes[t]), areas[t]
            (ra, ka), (rb, kb) = walk(t[0]), walk(t[1])
            free = max(n - ka, 0)
            p_ok = math.exp(sum(math.log(max(free - x, 1e-9) / (n - x)) for x in range(min(kb, n))))
            rows = ra * rb * p_ok
            biggest = max(biggest, rows)
            return rows, ka + kb

        walk(self._tree(problem))
        return biggest

    def run(self, problem, *, count_only=False, kernel="auto", memory=None, on_step=None):
        kern = get_kernel(kernel)
        tree = self._tree(problem)
        budget = _block_budget(memory)
        self._limit, self._held = _Budget(memory), 0
        stats = _Stats(on_step)
        swap = _swap(problem)
        wc, _ = _segments(problem)
        primary = _full_words(problem, problem.primary)
        counts = {i: p.count for i, p in enumerate(problem.pieces)}
        exact_root = problem.exact and problem.n_marks == 0
        leaf_rows = {}
        seen = {}

        def leaf(piece):
            copy = seen[piece] = seen.get(piece, 0) + 1
            if piece not in leaf_rows:
                leaf_rows[piece] = _leaf_rows(problem, piece)
            rows = leaf_rows[piece]
            n = rows.shape[0]
            ident = np.arange(n, dtype=np.int64)
            ords = {}
            if counts[piece] > 1:
                ords[piece] = (ident if copy > 1 else None, ident if copy < counts[piece] else None)
            return _Node(rows, np.ones(n, dtype=np.int64), ords, problem.pieces[piece].name,
                         {piece: 1}, back=(piece,))

        def build(t, is_root):
            if not isinstance(t, tuple):
                return leaf(t)
            a = build(t[0], False)
            b = build(t[1], False)
            return self._join(problem, a, b, kern, budget, is_root and exact_root, is_root,
                              primary, wc, swap, counts, stats, count_only)

        root = build(tree, True)
        if not isinstance(tree, tuple):  # a single piece: the root is a leaf
            keep = _covers(root.state[:, :wc], primary)
            root = _Node(root.state[keep], root.mult[keep], {}, root.label, root.pieces,
                         back=("filter", root, np.flatnonzero(keep)))
        count = _total(root.mult)
        lister = None if count_only else (lambda: _walk_balanced(root, problem))
        return Result(count=count, stats=stats, plan=self.name, _lister=lister)

    def _join(self, problem, a, b, kern, budget, hashed, is_root, primary, wc, swap, counts,
              stats, count_only):
        t0 = time.perf_counter()
        label = f"({a.label},{b.label})"
        both = [p for p in a.ords if p in b.ords]
        upper = (a.back is not None and b.back is not None and len(a.back) == 1 and len(b.back) == 1
                 and a.back == b.back)
        if hashed:
            i, j = _complement_pairs(a.state[:, :wc], b.state[:, :wc], primary)
            nnz = None
        else:
            i, j = kern.pairs(a.state, b.state[:, swap], upper=upper, block_bytes=budget)
            nnz = kern.last_nnz
        if both:
            ok = np.ones(len(i), dtype=bool)
            for p in both:
                ok &= a.ords[p][1][i] < b.ords[p][0][j]
            i, j = i[ok], j[ok]
        state = a.state[i] | b.state[j]
        mult = _mul(a.mult[i], b.mult[j])
        pieces = dict(a.pieces)
        for p, k in b.pieces.items():
            pieces[p] = pieces.get(p, 0) + k
        ords = {}
        for p in set(a.ords) | set(b.ords):
            if pieces[p] == counts[p]:
                continue
            first = a.ords[p][0] if p in a.ords else b.ords[p][0]
            last = b.ords[p][1] if p in b.ords else a.ords[p][1]
            if first is not None:
                first = (a.ords[p][0][i] if p in a.ords else b.ords[p][0][j])
            if last is not None:
                last = (b.ords[p][1][j] if p in b.ords else a.ords[p][1][i])
            ords[p] = (first, last)
        rows_out = len(i)
        plain = _total(mult)
        pruned = 0
        keep = None
        if is_root:
            keep = _covers(state[:, :wc], primary)
        elif self.prune and problem.primary.any():
            keep = _coverable(problem, state[:, :wc], pieces, counts, kern, budget)
        if keep is not None:
            pruned = int(len(keep) - keep.sum())
            state, mult, i, j = state[keep], mult[keep], i[keep], j[keep]
            ords = {p: tuple(None if x is None else x[keep] for x in v) for p, v in ords.items()}
        ord_cols = [x for p in sorted(ords) for x in ords[p] if x is not None]
        if self.merge:
            keys = np.hstack([state] + [c.astype(np.uint64)[:, None] for c in ord_cols])
            mg = _merge(np.ascontiguousarray(keys), mult)
            rep = mg.order[mg.starts[:-1]]
            state, mult = state[rep], mg.mult
            ords = {p: tuple(None if x is None else x[rep] for x in v) for p, v in ords.items()}
            order, starts = mg.order, mg.starts
        else:
            order, starts = np.arange(len(i)), np.arange(len(i) + 1)
        back = None if count_only else ("join", a, b, i, j, order, starts)
        node = _Node(state, mult, ords, label, pieces, back=back)
        self._held += state.nbytes + mult.nbytes + (0 if count_only else 3 * 8 * len(i))
        self._limit.check(self._held, f"balanced join {label}")
        nbytes = state.nbytes + mult.nbytes + sum(x.nbytes for v in ords.values() for x in v
                                                   if x is not None)
        stats.append(Step(self.name, len(stats), label, (a.state.shape[0], b.state.shape[0]), nnz,
                          plain, rows_out, len(mult), pruned, int(nbytes), time.perf_counter() - t0))
        if count_only:  # children are no longer needed
            a.back = b.back = None
        return node


def _covers(cells, primary):
    """Rows (packed cells) that cover every primary column."""
    return ((cells & primary[None, :]) == primary[None, :]).all(axis=1)


def _complement_pairs(a, b, full):
    """Pairs whose cells are exact complements (root of an exact cover): a hash join."""
    need = a ^ full[None, :]
    kb = np.ascontiguousarray(b).view(np.dtype((np.void, 8 * b.shape[1]))).ravel()
    kn = np.ascontiguousarray(need).view(np.dtype((np.void, 8 * b.shape[1]))).ravel()
    order = np.argsort(kb, kind="stable")
    sb = kb[order]
    lo = np.searchsorted(sb, kn, side="left")
    hi = np.searchsorted(sb, kn, side="right")
    # rows of a whose cells overlap b are never complements, so only equal keys pair up
    n = hi - lo
    i = np.repeat(np.arange(len(a)), n)
    offs = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    j = order[np.repeat(lo, n) + offs]
    return i.astype(np.int64), j.astype(np.int64)


def _coverable(problem, cells, pieces, counts, kern, budget):
    """Rows whose free primary cells can each still be covered by some remaining piece."""
    rest = [p for p in range(len(problem.pieces)) if pieces.get(p, 0) < counts[p]]
    if not rest or not len(cells):
        return np.ones(len(cells), dtype=bool)
    g = np.vstack([pack(problem.pieces[p].matrix, problem.n_columns) for p in rest])
    primary = _full_words(problem, problem.primary)
    reach = np.zeros_like(cells)
    step = max(1, budget // max(1, 8 * len(g) * cells.shape[1]))
    for lo in range(0, len(cells), step):
        c = cells[lo:lo + step]
        fits = ((c[:, None, :] & g[None, :, :]) == 0).all(axis=2)  # (rows, placements)
        for w in range(cells.shape[1]):
            # OR of fitting placements' words: cells some remaining placement can still cover
            reach[lo:lo + step, w] = np.bitwise_or.reduce(np.where(fits, g[None, :, w], np.uint64(0)),
                                                          axis=1)
    free = ~cells & primary[None, :]
    return ((free & ~reach) == 0).all(axis=1)


def _walk_balanced(root, problem):
    """Stream configurations from the root's back-pointers, depth first."""

    def expand(node, r):
        back = node.back
        if back[0] == "join":
            _, a, b, i, j, order, starts = back
            for k in order[starts[r]:starts[r + 1]]:
                for left in expand(a, i[k]):
                    for right in expand(b, j[k]):
                        yield left + right
        elif back[0] == "filter":
            yield from expand(back[1], back[2][r])
        else:
            yield ((back[0], int(r)),)

    for r in range(len(root.mult)):
        for placements in expand(root, r):
            yield Configuration(tuple(sorted(placements)))


# ---- the frontier sweep


def sweep_order(problem):
    """Column order of the sweep: the longest axis outermost, so the cross-section is short."""
    n = problem.n_columns
    if problem.puzzle is None or n == 0:
        return np.arange(n)
    coords = np.array(problem.columns, dtype=np.int64).reshape(n, -1)
    extent = coords.max(axis=0) - coords.min(axis=0)
    axes = sorted(range(coords.shape[1]), key=lambda ax: -extent[ax])  # major axis first
    return np.lexsort([coords[:, ax] for ax in reversed(axes)])


class Sweep(Plan):
    """The frontier sweep: a left-deep tree of joins, one group of placements per cell.

    Columns of the running matrix are the cells still ahead plus the pieces used
    (a counter for copies); after every step equal rows are merged.

    Parameters
    ----------
    compact : bool
        Keep each state in one ``uint64`` when it fits (the fast path); with
        ``False`` always use multi-word rows (the general path, same results).
    prune : bool
        On the fast path, drop states that leave one of the next empty cells
        impossible to cover (needs numba; counts are the same either way).
    """

    name = "sweep"

    def __init__(self, compact=True, prune=True):
        self.compact = compact
        self.prune = prune

    def estimate(self, problem):
        """Rows the sweep may hold: 2 ** (span of a placement in sweep order), roughly."""
        order = sweep_order(problem)
        pos = np.empty(len(order), dtype=np.int64)
        pos[order] = np.arange(len(order))
        return float(2 ** min(_span(problem, pos), 60))

    def run(self, problem, *, count_only=False, kernel="auto", memory=None, on_step=None):
        order = sweep_order(problem)
        pos = np.empty(problem.n_columns, dtype=np.int64)
        pos[order] = np.arange(problem.n_columns)
        bits = sum(max(1, p.count.bit_length()) for p in problem.pieces if p.count is not None)
        if self.compact and problem.n_marks == 0 and _span(problem, pos) + bits <= 64:
            return self._run_compact(problem, order, pos, bits, count_only, get_kernel(kernel),
                                     _block_budget(memory), on_step, memory)
        return self._run_general(problem, count_only=count_only, kernel=kernel, memory=memory,
                                 on_step=on_step)

    def _run_compact(self, problem, order, pos, bits, count_only, kern, budget, on_step=None,
                     memory=None):
        """The sweep with every state in one uint64 key: [window of cells ahead | piece counters].

        The window's bit 0 is the cell being swept.  Keys stay sorted after each
        merge, so states with equal windows are adjacent: the overlap test is
        done once per distinct window (``A @ B.T`` over distinct windows x the
        cell's placements) and then fanned out to the states that share it.
        """
        n = problem.n_columns
        pieces = problem.pieces
        one = np.uint64(1)
        off = np.zeros(len(pieces), np.uint64)
        fmask = np.zeros(len(pieces), np.uint64)
        cap = np.zeros(len(pieces), np.uint64)
        counted = np.zeros(len(pieces), dtype=bool)
        used = 0
        full = 0
        for p, pr in enumerate(pieces):
            if pr.count is None:
                continue
            b = max(1, pr.count.bit_length())
            off[p], fmask[p], cap[p], counted[p] = used, (1 << b) - 1, pr.count, True
            full |= pr.count << used
            used += b
        P = np.uint64(bits)
        pmask = np.uint64((1 << bits) - 1)
        full = np.uint64(full)
        gpiece, grow, first, gwin = _placement_windows(problem, pos)
        inc = np.where(counted[gpiece], one << off[gpiece], np.uint64(0)).astype(np.uint64)
        add = (gwin << P) + inc  # fits, so OR-ing the window is adding it
        # (key & field) < capfield  <=>  the piece's counter is below its count
        field = np.where(counted[gpiece], fmask[gpiece] << off[gpiece], np.uint64(0)).astype(np.uint64)
        capfield = np.where(counted[gpiece], cap[gpiece] << off[gpiece], np.uint64(1)).astype(np.uint64)
        gsort = np.argsort(first, kind="stable")
        gstart = np.searchsorted(first[gsort], np.arange(n + 1))
        primary_pos = problem.primary[order]
        prune = _Lookahead(problem, pos, primary_pos, first, gwin, field, capfield) if self.prune else None
        prune = prune or None

        keys = np.zeros(1, np.uint64)
        mult = np.ones(1, dtype=np.int64)
        stats, backs = _Stats(on_step), []
        limit, held_back = _Budget(memory), 0
        fast = getattr(kern, "step_count", None) if count_only else None
        for k in range(n):
            t0 = time.perf_counter()
            gids = gsort[gstart[k]:gstart[k + 1]]
            res = None
            if fast is not None and _total(mult) * (len(gids) + 1) < _INT64_SAFE:
                res = fast(keys, mult, P, bool(primary_pos[k]), gwin[gids], add[gids], field[gids],
                           capfield[gids])
            if res is not None:
                rows_in = int(len(keys) - ((keys >> P) & one).sum())
                keys, mult, nnz, rows_out, plain = res
                pruned = 0
                if prune is not None and k + 1 < n and len(keys) >= prune.threshold:
                    alive = prune(keys, P, k + 1)
                    pruned = int(len(keys) - alive.sum())
                    if pruned:
                        keys, mult = keys[alive], mult[alive]
                stats.append(Step(self.name, k, f"cell {_colname(problem, order[k])}",
                                  (rows_in, len(gids)), int(nnz), int(plain), int(rows_out), len(keys),
                                  pruned, int(keys.nbytes + mult.nbytes), time.perf_counter() - t0))
                limit.check(3 * (keys.nbytes + mult.nbytes), f"sweep step {k}")
                if len(keys) == 0:
                    break
                continue
            covered = ((keys >> P) & one).astype(bool)
            pas = np.flatnonzero(covered) if primary_pos[k] else np.arange(len(keys))
            todo = np.flatnonzero(~covered)
            tk = keys[todo]
            s_idx, gl, new = kern.expand(tk, P, gwin[gids], add[gids], field[gids], capfield[gids],
                                         block_bytes=budget)
            nnz = kern.last_nnz
            src = todo[s_idx]
            gg = gids[gl]
            allk = np.concatenate([keys[pas], new])
            mult = np.concatenate([mult[pas], mult[src]])
            plain = _total(mult)
            rows_out = len(allk)
            allk = ((allk >> (P + one)) << P) | (allk & pmask)  # cell k is decided: shift it out
            order_k = np.argsort(allk, kind="stable")
            sk = allk[order_k]
            flags = np.empty(len(sk), dtype=bool)
            if len(sk):
                flags[0] = True
                np.not_equal(sk[1:], sk[:-1], out=flags[1:])
            starts = np.flatnonzero(flags)
            mult = _group_sum(mult[order_k], starts)
            keys = sk[starts]
            pruned = 0
            if prune is not None and k + 1 < n and len(keys) >= prune.threshold:
                alive = prune(keys, P, k + 1)
                pruned = int(len(keys) - alive.sum())
                if pruned:
                    keep = np.flatnonzero(alive)
                    keys, mult = keys[keep], mult[keep]
                    starts = starts[keep]  # back-pointers of pruned rows are never walked
            if not count_only:
                parent = np.concatenate([pas, src])
                placement = np.concatenate([np.full(len(pas), -1), gg])
                ends = np.append(starts[1:], len(sk)) if not pruned else _group_ends(flags, starts)
                backs.append((parent, placement, order_k, starts, ends))
                held_back += sum(a.nbytes for a in backs[-1])
            stats.append(Step(self.name, k, f"cell {_colname(problem, order[k])}",
                              (len(todo), len(gids)), nnz, plain, rows_out, len(keys), pruned,
                              int(keys.nbytes + mult.nbytes), time.perf_counter() - t0))
            limit.check(3 * (keys.nbytes + mult.nbytes) + held_back, f"sweep step {k}")
            if len(keys) == 0:
                break
        done = (keys & pmask) == full
        return self._result(stats, n, mult, done, count_only, backs, gpiece, grow)

    def _run_general(self, problem, *, count_only=False, kernel="auto", memory=None, on_step=None):
        """The sweep with multi-word states (wide windows, marks and forbids)."""
        kern = get_kernel(kernel)
        budget = _block_budget(memory)
        n = problem.n_columns
        order = sweep_order(problem)
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(n)
        wc = max(1, -(-n // 64))
        wm = -(-problem.n_marks // 64) if problem.n_marks else 0
        counted = [i for i, p in enumerate(problem.pieces) if p.count is not None]
        pbit = {p: k for k, p in enumerate(counted)}
        wp = -(-len(counted) // 64) if counted else 0
        multi = [p for p in counted if problem.pieces[p].count > 1]
        midx = {p: k for k, p in enumerate(multi)}
        width = wc + 2 * wm + wp

        # every placement, its piece, its first position, and its two packed rows
        gpiece, grow, test_rows, or_rows, first = [], [], [], [], []
        for p, pr in enumerate(problem.pieces):
            m = pr.matrix
            k = m.shape[0]
            if k == 0:
                continue
            sm = m.copy()
            sm.indices = pos[m.indices]  # columns renumbered to sweep positions
            cells = pack(sm, n)
            marks = pack(pr.marks, problem.n_marks) if pr.marks is not None else np.zeros((k, wm), np.uint64)
            forb = pack(pr.forbids, problem.n_marks) if pr.forbids is not None else np.zeros((k, wm), np.uint64)
            piece = np.zeros((k, wp), np.uint64)
            if p in pbit:
                piece[:, pbit[p] // 64] = np.uint64(1) << np.uint64(pbit[p] % 64)
            or_piece = piece if (p in pbit and pr.count == 1) else np.zeros_like(piece)
            test_rows.append(np.hstack([cells, forb, marks, piece]))
            or_rows.append(np.hstack([cells, marks, forb, or_piece]))
            gpiece.append(np.full(k, p))
            grow.append(np.arange(k))
            first.append(np.minimum.reduceat(pos[m.indices], m.indptr[:-1]))
        if test_rows:
            test_rows, or_rows = np.vstack(test_rows), np.vstack(or_rows)
            gpiece, grow, first = map(np.concatenate, (gpiece, grow, first))
        else:
            test_rows = or_rows = np.zeros((0, width), np.uint64)
            gpiece = grow = first = np.zeros(0, np.int64)
        gsort = np.argsort(first, kind="stable")
        gstart = np.searchsorted(first[gsort], np.arange(n + 1))
        primary_pos = problem.primary[order]
        need_pieces = np.zeros(wp, np.uint64)
        for p in counted:
            need_pieces[pbit[p] // 64] |= np.uint64(1) << np.uint64(pbit[p] % 64)
        count_of = np.array([p.count or 0 for p in problem.pieces], dtype=np.int64)

        multi_of = np.array([midx.get(p, -1) for p in range(len(problem.pieces))], dtype=np.int64)
        limit, held_back = _Budget(memory), 0
        state = np.zeros((1, width), np.uint64)
        cnt = np.zeros((1, len(multi)), np.int16)
        mult = np.ones(1, dtype=np.int64)
        w0 = 0  # cell words already swept off the left of ``state``
        stats, backs = _Stats(on_step), []
        for k in range(n):
            t0 = time.perf_counter()
            word, bit = k // 64 - w0, np.uint64(k % 64)
            covered = ((state[:, word] >> bit) & np.uint64(1)).astype(bool)
            pas = np.flatnonzero(covered) if primary_pos[k] else np.arange(len(state))
            todo = np.flatnonzero(~covered)
            gids = gsort[gstart[k]:gstart[k + 1]]
            gt = test_rows[gids][:, w0:]
            i, j = kern.pairs(state[todo], gt, block_bytes=budget)
            nnz = kern.last_nnz
            si = todo[i]
            g = gids[j]
            new = state[si] | or_rows[g][:, w0:]
            ncnt = cnt[si].copy() if len(multi) else cnt[si]
            if multi and len(g):
                mi = multi_of[gpiece[g]]
                hit = np.flatnonzero(mi >= 0)
                ncnt[hit, mi[hit]] += 1
                full = hit[ncnt[hit, mi[hit]] == count_of[gpiece[g[hit]]]]
                for r in full:  # few rows per step reach a piece's last copy
                    b = pbit[int(gpiece[g[r]])]
                    new[r, wc - w0 + 2 * wm + b // 64] |= np.uint64(1) << np.uint64(b % 64)
            rows_out = len(pas) + len(new)
            state = np.vstack([state[pas], new])
            cnt = np.vstack([cnt[pas], ncnt])
            mult = np.concatenate([mult[pas], mult[si]])
            plain = _total(mult)
            parent = np.concatenate([pas, si])
            placement = np.concatenate([np.full(len(pas), -1), g])
            state[:, word] &= ~(np.uint64(1) << bit)  # cell k is decided: forget it
            if (k + 1) % 64 == 0 and k + 1 < n:
                state = state[:, 1:]
                w0 += 1
            keys = np.hstack([state, cnt.astype(np.uint64)]) if len(multi) else state
            mg = _merge(np.ascontiguousarray(keys), mult)
            rep = mg.order[mg.starts[:-1]]
            state, cnt, mult = state[rep], cnt[rep], mg.mult
            if not count_only:
                backs.append((parent.astype(np.int64), placement.astype(np.int64), mg.order,
                              mg.starts[:-1], mg.starts[1:]))
                held_back += sum(a.nbytes for a in backs[-1])
            stats.append(Step(self.name, k, f"cell {_colname(problem, order[k])}",
                              (len(todo), len(gids)), nnz, plain, rows_out, len(mult), 0,
                              int(state.nbytes + mult.nbytes + cnt.nbytes),
                              time.perf_counter() - t0))
            limit.check(3 * (state.nbytes + mult.nbytes + cnt.nbytes) + held_back, f"sweep step {k}")
            if len(state) == 0:
                break
        if len(state) and wp:
            done = ((state[:, -wp:] & need_pieces[None, :]) == need_pieces[None, :]).all(axis=1)
        else:
            done = np.ones(len(state), dtype=bool)
        return self._result(stats, n, mult, done, count_only, backs, gpiece, grow)

    def _result(self, stats, n, mult, done, count_only, backs, gpiece, grow):
        """Count the final states with every piece placed; list them from the back-pointers."""
        finals = np.flatnonzero(done) if len(stats) == n else np.zeros(0, np.int64)
        count = _total(mult[finals]) if len(finals) else 0
        lister = None
        if not count_only:
            def lister():
                return _walk_sweep(backs, finals, gpiece, grow)
        return Result(count=count, stats=stats, plan=self.name, _lister=lister)


def _group_ends(flags, starts):
    """End of each kept group, given the group-start flags of the sorted rows."""
    all_starts = np.flatnonzero(flags)
    nxt = np.append(all_starts[1:], len(flags))
    return nxt[np.searchsorted(all_starts, starts)]


class _Lookahead:
    """Compiled check that the next empty primary cells of each state can be covered."""

    threshold = 2_000_000  # below this, pruning costs more time than it saves
    depth = 8

    def __init__(self, problem, pos, primary_pos, first, gwin, field, capfield):
        try:
            from ._compiled import sweep_alive
        except ImportError:  # without numba the sweep just does not prune
            self.fn = None
            return
        self.fn = sweep_alive
        n = problem.n_columns
        cells, owners = [], []
        g0 = 0
        for pr in problem.pieces:
            m = pr.matrix
            cells.append(pos[m.indices])
            owners.append(g0 + np.repeat(np.arange(m.shape[0]), np.diff(m.indptr)))
            g0 += m.shape[0]
        cells = np.concatenate(cells) if cells else np.zeros(0, np.int64)
        owners = np.concatenate(owners) if owners else np.zeros(0, np.int64)
        o = np.lexsort((-first[owners], cells))  # per cell, latest-starting placements first
        self.cover_g = owners[o].astype(np.int64)
        self.cover_start = np.searchsorted(cells[o], np.arange(n + 1)).astype(np.int64)
        self.primary = primary_pos.astype(np.bool_)
        self.first, self.gwin, self.field, self.cap = first.astype(np.int64), gwin, field, capfield

    def __bool__(self):
        return self.fn is not None

    def __call__(self, keys, shift, k1):
        return self.fn(keys, np.uint64(shift), k1, self.primary, self.cover_start, self.cover_g,
                       self.first, self.gwin, self.field, self.cap, self.depth)


def _span(problem, pos):
    """Longest extent of a placement in sweep positions (last - first + 1)."""
    span = 1
    for p in problem.pieces:
        m = p.matrix
        if m.shape[0]:
            ps = pos[m.indices]
            starts = m.indptr[:-1]
            span = max(span, int((np.maximum.reduceat(ps, starts) - np.minimum.reduceat(ps, starts)).max()) + 1)
    return span


def _placement_windows(problem, pos):
    """Every placement's piece, row, first sweep position and cells relative to it (uint64 bits)."""
    gpiece, grow, first, gwin = [], [], [], []
    for p, pr in enumerate(problem.pieces):
        m = pr.matrix
        if not m.shape[0]:
            continue
        ps = pos[m.indices]
        f = np.minimum.reduceat(ps, m.indptr[:-1])
        rel = (ps - np.repeat(f, np.diff(m.indptr))).astype(np.uint64)
        gwin.append(np.bitwise_or.reduceat(np.left_shift(np.uint64(1), rel), m.indptr[:-1]))
        gpiece.append(np.full(m.shape[0], p))
        grow.append(np.arange(m.shape[0]))
        first.append(f)
    if not gpiece:
        z = np.zeros(0, np.int64)
        return z, z, z, np.zeros(0, np.uint64)
    return (np.concatenate(gpiece), np.concatenate(grow), np.concatenate(first),
            np.concatenate(gwin).astype(np.uint64))


def _colname(problem, c):
    col = problem.columns[c]
    return str(col) if not isinstance(col, tuple) else "(" + ", ".join(map(str, col)) + ")"


def _walk_sweep(backs, finals, gpiece, grow):
    """Stream configurations by walking the sweep's back-pointers (no recursion)."""
    last = len(backs) - 1
    for f in finals:
        stack = [(last, int(f), ())]
        while stack:
            t, m, acc = stack.pop()
            if t < 0:
                yield Configuration(tuple(sorted(acc)))
                continue
            parent, placement, order, starts, ends = backs[t]
            for r in order[starts[m]:ends[m]][::-1]:
                g = placement[r]
                nxt = acc + ((int(gpiece[g]), int(grow[g])),) if g >= 0 else acc
                stack.append((t - 1, int(parent[r]), nxt))


# ---- choosing


class Auto(Plan):
    """Pick a plan from estimated sizes.

    The balanced tree when its largest node is estimated small (it is the
    clearest picture and fast there), else the sweep.
    """

    name = "auto"
    small = 2e5

    def __init__(self, tree=None):
        self.tree = tree

    def choose(self, problem):
        if self.tree is not None:
            return Balanced(tree=self.tree)
        bal = Balanced().estimate(problem)
        # the sweep's estimate is a loose upper bound: past "small", trust the sweep
        return Balanced() if bal <= self.small else Sweep()

    def run(self, problem, *, count_only=False, kernel="auto", memory=None, on_step=None):
        return self.choose(problem).run(problem, count_only=count_only, kernel=kernel, memory=memory,
                                        on_step=on_step)


_PLANS = {"auto": Auto, "balanced": Balanced, "sweep": Sweep}


def get_plan(plan, tree=None):
    """A plan instance from a name (``auto``, ``balanced``, ``sweep``) or an instance."""
    if isinstance(plan, Plan):
        return plan
    if plan not in _PLANS:
        raise UsageError(f"unknown plan {plan!r}; expected one of {', '.join(sorted(_PLANS))}")
    if plan == "sweep":
        if tree is not None:
            raise UsageError("--tree gives the shape of the balanced plan; it cannot be used with --plan sweep")
        return Sweep()
    return _PLANS[plan](tree=tree)


def available_memory():
    """Bytes of memory available now (``MemAvailable``), or the physical size.

    Examples
    --------
    >>> available_memory() > 0
    True
    """
    import os

    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


class _Budget:
    """The most a plan may hold between steps (default: 3/4 of the memory available)."""

    def __init__(self, memory):
        self.limit = int(memory) if memory is not None else max(256 << 20, available_memory() * 3 // 4)

    def check(self, held, where):
        if held > self.limit:
            raise MemoryBudgetError(
                f"{where}: the plan would hold {held / 2**20:,.1f} MiB, over the memory budget of "
                f"{self.limit / 2**20:,.1f} MiB; give a larger --memory, or --workers to cut the "
                "puzzle into subproblems")


def _block_budget(memory):
    """Bytes one join block may use: 1/64 of the memory budget (the rest holds the rows)."""
    return BLOCK_BYTES if memory is None else max(1 << 16, int(memory) // 64)
