"""The compiled loop of the depth-first plan (numba), imported only when it runs.

The search state lives in arrays the caller owns, so :func:`search` can
stop (a batch of configurations is ready, a node budget is spent, the
first configuration is found) and be called again to go on exactly where it
stopped.  See :mod:`zipup.plans.depth` for the layout of the arrays.

The placements that still fit at a depth are a bit set over all placements,
so that a child is its parent's set less the placements that collide with
the one just placed: a few words of ``AND NOT`` per node, and only the
placements removed are visited, to keep the tallies that choose the next
item.
"""

import numba
import numpy as np

# what search() returns
DONE, BATCH, BUDGET, FIRST = 0, 1, 2, 3
# the slots of the scalar state array ``st``
DEPTH, NSOL, COUNT, NODES, FOUND, STARTED = 0, 1, 2, 3, 4, 5

_ONE = np.uint64(1)
# the tally of a covered cell starts here (so that choosing needs no look at the covered cells)
_COVERED = 1 << 40
# count trailing zeros of a one-bit word by a de Bruijn sequence (numba has no ctz)
_DEBRUIJN = np.uint64(0x03F79D71B4CA8B09)
_CTZ = np.zeros(64, np.int64)
_CTZ[[((0x03F79D71B4CA8B09 << k) & 0xFFFFFFFFFFFFFFFF) >> 58 for k in range(64)]] = np.arange(64)


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
    bestn = _COVERED >> 1  # above every uncovered cell's tally, below every covered one's
    for c in range(n):
        k = cnt[d, c]  # a covered cell's tally is _COVERED or a little less: never chosen
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
def search(conf, cptr, cells, cellm, pmask, wptr, words, masks, size, slot, n, live, item, pos, lim, chosen, cov, left, ncov,
           cnt, pcnt, sol, sol_len, st, budget, mode):  # pragma: no cover - compiled
    """Run the search from the state in the arrays until it must stop; return why.

    ``mode`` 0 counts, 1 also writes each configuration (its rows, by depth)
    into ``sol``.  Returns ``DONE`` (the tree is exhausted), ``BATCH``
    (``sol`` is full), ``BUDGET`` (``budget`` nodes visited) or ``FIRST``
    (the first configuration of the run was just found).  ``conf`` holds,
    per placement, the set of placements it collides with, and ``cells``
    (with ``cptr``) its cell numbers; when they have no rows (too big to
    hold), each placement still fitting is tested against the cells covered
    instead, and the cells of one removed are read off its words.
    """
    if budget <= 0:  # a call that only loads (or compiles) this function
        return BUDGET
    nw = cov.shape[1]
    wr = live.shape[1]
    npieces = left.shape[1]
    nodes = 0
    if st[STARTED] == 0:
        st[STARTED] = 1
        if not _choose(0, n, cov, left, cnt, pcnt, item, pos, lim):
            st[DEPTH] = -1
            return DONE
    d = st[DEPTH]
    while d >= 0:
        if nodes >= budget:
            st[DEPTH] = d
            st[NODES] += nodes
            return BUDGET
        # the next candidate at depth d: a fitting placement covering the cell, or of the piece
        it = item[d]
        r = -1
        if lim[d] > 0:
            p = pos[d]
            w = p >> 6
            if w < wr:
                if it < n:
                    x = live[d, w] & cellm[it, w]
                else:
                    x = live[d, w] & pmask[it - n, w]
                x &= ~((_ONE << np.uint64(p & 63)) - _ONE)
                while True:
                    if x:
                        r = w * 64 + _CTZ[((x & (~x + _ONE)) * _DEBRUIJN) >> np.uint64(58)]
                        break
                    w += 1
                    if w == wr:
                        break
                    if it < n:
                        x = live[d, w] & cellm[it, w]
                    else:
                        x = live[d, w] & pmask[it - n, w]
        if r < 0:
            d -= 1
            continue
        pos[d] = r + 1
        if it >= n:
            lim[d] -= 1
        chosen[d] = r
        nodes += 1
        # the child: r placed
        e = d + 1
        for k in range(nw):
            cov[e, k] = cov[d, k]
        for q in range(wptr[r], wptr[r + 1]):
            cov[e, words[q]] |= masks[q]
        for k in range(npieces):
            left[e, k] = left[d, k]
        ncov[e] = ncov[d] + size[r]
        ps = slot[r]
        gone = False
        if ps >= 0:
            left[e, ps] -= 1
            gone = left[e, ps] == 0
        # later copies of a piece branched on come after r
        order = it >= n and not gone
        rw = r >> 6
        below = (np.uint64(2) << np.uint64(r & 63)) - _ONE  # bits 0 .. r & 63 (all when 63)
        held = conf.shape[0] > 0
        # the child's tallies are the parent's less the placements that no longer fit
        for k in range(n):
            cnt[e, k] = cnt[d, k]
        if held:
            for q in range(cptr[r], cptr[r + 1]):
                cnt[e, cells[q]] = _COVERED
        else:
            for q in range(wptr[r], wptr[r + 1]):
                b = masks[q]
                while b:
                    lb = b & (~b + _ONE)
                    b ^= lb
                    cnt[e, words[q] * 64 + _CTZ[(lb * _DEBRUIJN) >> np.uint64(58)]] = _COVERED
        for k in range(npieces):
            pcnt[e, k] = pcnt[d, k]
        for w in range(wr):
            x = live[d, w]
            if x == 0:
                live[e, w] = 0
                continue
            if held:
                rm = x & conf[r, w]
            else:  # each fitting placement against the cells now covered
                rm = np.uint64(0)
                y = x
                while y:
                    low = y & (~y + _ONE)
                    y ^= low
                    t = w * 64 + _CTZ[(low * _DEBRUIJN) >> np.uint64(58)]
                    for q in range(wptr[t], wptr[t + 1]):
                        if cov[e, words[q]] & masks[q]:
                            rm |= low
                            break
            if ps >= 0:
                if gone or (order and w < rw):
                    rm |= x & pmask[ps, w]
                elif order and w == rw:
                    rm |= x & pmask[ps, w] & below
            live[e, w] = x & ~rm
            while rm:
                low = rm & (~rm + _ONE)
                rm ^= low
                t = w * 64 + _CTZ[(low * _DEBRUIJN) >> np.uint64(58)]
                if held:  # the cell numbers are held beside the collision sets
                    for q in range(cptr[t], cptr[t + 1]):
                        cnt[e, cells[q]] -= 1
                else:
                    for q in range(wptr[t], wptr[t + 1]):
                        b = masks[q]
                        while b:
                            lb = b & (~b + _ONE)
                            b ^= lb
                            cnt[e, words[q] * 64 + _CTZ[(lb * _DEBRUIJN) >> np.uint64(58)]] -= 1
                ts = slot[t]
                if ts >= 0:
                    pcnt[e, ts] -= 1
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
                full = mode == 1 and st[NSOL] == sol.shape[0]
                if first or full:
                    st[DEPTH] = d
                    st[NODES] += nodes
                    return FIRST if first else BATCH
            continue
        if _choose(e, n, cov, left, cnt, pcnt, item, pos, lim):
            d = e
    st[DEPTH] = d
    st[NODES] += nodes
    return DONE
