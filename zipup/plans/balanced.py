"""The balanced plan: a balanced binary tree of zip-up joins over the piece copies.

The seed method and the picture to teach with: leaves are the pieces'
configuration matrices, every inner node joins its two children, and equal
states are merged after every join.  ``--tree`` gives the shape by hand.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..join import get_kernel, pack
from ..matrices import Configuration
from .base import Plan, Result, Step, _block_budget, _Budget, _Stats
from .states import _merge, _mul, _total

__all__ = ["Balanced", "default_tree", "parse_tree", "tree_label"]


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
