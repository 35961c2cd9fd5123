"""The compiled loop of the depth-first plan (numba), imported only when it runs.

The search state lives in arrays the caller owns, so :func:`search` can
stop (a batch of configurations is ready, a node budget is spent, the
first configuration is found, the list buffer is full) and be called again
to go on exactly where it stopped.  See :mod:`zipup.plans.depth` for the
layout of the arrays.
"""

import numba
import numpy as np

# what search() returns
DONE, BATCH, BUDGET, FIRST, SPACE = 0, 1, 2, 3, 4
# the slots of the scalar state array ``st``
DEPTH, NSOL, COUNT, NODES, FOUND = 0, 1, 2, 3, 4


@numba.njit(cache=True, nogil=True, inline="always")
def _choose(d, n, cov, left, cnt, pcnt, item, pos, lim):  # pragma: no cover - compiled
    """Pick the item with the fewest choices at depth ``d``; False when one has none.

    Items are the uncovered cells (``0 .. n-1``) and the pieces with copies
    left (``n + slot``).  A piece with ``c`` copies left and ``k`` fitting
    placements has ``k - c + 1`` choices: its copies take placements in
    increasing order, so the first copy placed next can only take one of the
    first ``k - c + 1``.
    """
    best = -1
    bestn = 1 << 62
    for c in range(n):
        if (cov[d, c >> 6] >> np.uint64(c & 63)) & np.uint64(1):
            continue
        k = cnt[d, c]
        if k < bestn:
            bestn = k
            best = c
            if k == 0:
                return False
    for s in range(left.shape[1]):
        c = left[d, s]
        if c > 0:
            k = pcnt[d, s] - c + 1
            if k <= 0:
                return False
            if k < bestn:
                bestn = k
                best = n + s
    item[d] = best
    pos[d] = 0
    lim[d] = bestn
    return True


@numba.njit(cache=True, nogil=True)
def search(bits, wptr, words, masks, cptr, cells, slot, n, live, lstart, llen, item, pos, lim,
           chosen, cov, left, ncov, cnt, pcnt, sol, sol_len, st, budget, mode):  # pragma: no cover
    """Run the search from the state in the arrays until it must stop; return why.

    ``mode`` 0 counts, 1 also writes each configuration (its rows, by depth)
    into ``sol``.  Returns ``DONE`` (the tree is exhausted), ``BATCH``
    (``sol`` is full), ``BUDGET`` (``budget`` nodes visited), ``FIRST`` (the
    first configuration of the run was just found) or ``SPACE`` (``live``
    must grow before the next node; nothing was changed).
    """
    if budget <= 0:  # a call that only loads (or compiles) this function
        return BUDGET
    nw = bits.shape[1]
    npieces = left.shape[1]
    nodes = 0
    d = st[DEPTH]
    while d >= 0:
        it = item[d]
        base = lstart[d]
        end = base + llen[d]
        # the next candidate at depth d: a placement covering the cell, or of the piece
        r = -1
        if lim[d] > 0:
            i = base + pos[d]
            if it < n:
                w = it >> 6
                b = np.uint64(1) << np.uint64(it & 63)
                while i < end:
                    if bits[live[i], w] & b:
                        r = live[i]
                        break
                    i += 1
            else:
                s = it - n
                while i < end:
                    if slot[live[i]] == s:
                        r = live[i]
                        break
                    i += 1
        if r < 0:
            d -= 1
            continue
        if end + llen[d] > live.shape[0]:
            st[DEPTH] = d
            return SPACE
        pos[d] = i + 1 - base
        if it >= n:
            lim[d] -= 1
        chosen[d] = r
        nodes += 1
        # the child: what still fits beside r
        e = d + 1
        for k in range(nw):
            cov[e, k] = cov[d, k] | bits[r, k]
        for k in range(npieces):
            left[e, k] = left[d, k]
        ncov[e] = ncov[d] + (cptr[r + 1] - cptr[r])
        gone = -2  # no piece runs out (-1 is the slot of the options without copies)
        ps = slot[r]
        if ps >= 0:
            left[e, ps] -= 1
            if left[e, ps] == 0:
                gone = ps
        below = r if it >= n else -1  # later copies of a piece branched on come after r
        # the child's tallies are the parent's less the placements that no longer fit
        for k in range(n):
            cnt[e, k] = cnt[d, k]
        for k in range(npieces):
            pcnt[e, k] = pcnt[d, k]
        m = 0
        for j in range(base, end):
            t = live[j]
            ts = slot[t]
            keep = not (ts == gone or (ts == ps and t <= below))
            if keep:
                for q in range(wptr[r], wptr[r + 1]):
                    if bits[t, words[q]] & masks[q]:
                        keep = False
                        break
            if keep:
                live[end + m] = t
                m += 1
            else:
                for q in range(cptr[t], cptr[t + 1]):
                    cnt[e, cells[q]] -= 1
                if ts >= 0:
                    pcnt[e, ts] -= 1
        lstart[e] = end
        llen[e] = m
        if ncov[e] == n:
            done = True
            for k in range(npieces):
                if left[e, k] != 0:
                    done = False
            if done:
                st[COUNT] += 1
                if mode == 1:
                    h = st[NSOL]
                    for k in range(e):
                        sol[h, k] = chosen[k]
                    sol_len[h] = e
                    st[NSOL] = h + 1
                first = st[FOUND] == 0
                st[FOUND] = 1
                if first or (mode == 1 and st[NSOL] == sol.shape[0]) or nodes >= budget:
                    st[DEPTH] = d
                    st[NODES] += nodes
                    return FIRST if first else (BATCH if mode == 1 and st[NSOL] == sol.shape[0] else BUDGET)
            continue
        if _choose(e, n, cov, left, cnt, pcnt, item, pos, lim):
            d = e
        if nodes >= budget:
            st[DEPTH] = d
            st[NODES] += nodes
            return BUDGET
    st[DEPTH] = d
    st[NODES] += nodes
    return DONE


@numba.njit(cache=True, nogil=True)
def start(cptr, cells, slot, n, live, llen, item, pos, lim, cov, left, cnt, pcnt):  # pragma: no cover
    """Tally the root's list (``live[:llen[0]]``) and choose its item; False when it is dead."""
    cnt[0, :] = 0
    pcnt[0, :] = 0
    for j in range(llen[0]):
        t = live[j]
        for q in range(cptr[t], cptr[t + 1]):
            cnt[0, cells[q]] += 1
        if slot[t] >= 0:
            pcnt[0, slot[t]] += 1
    return _choose(0, n, cov, left, cnt, pcnt, item, pos, lim)
