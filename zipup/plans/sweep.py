"""The sweep plan: a frontier sweep, one group of placements per cell.

The cells are ordered (the longest axis outermost), the placements grouped by
their first cell, and the running matrix is zipped with one group at a time (a
left-deep tree); every swept cell must be decided once its step is done, so
the running matrix only remembers the frontier.  With merging this is a
transfer-matrix method.
"""

from __future__ import annotations

import time

import numpy as np

from ..join import get_kernel, pack
from ..matrices import Configuration
from .base import Plan, Result, Step, _block_budget, _Budget, _Stats
from .states import _INT64_SAFE, _group_sum, _merge, _total

__all__ = ["Sweep", "sweep_order"]


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
