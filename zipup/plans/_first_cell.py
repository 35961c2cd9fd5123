"""The compiled loop of the depth plan's first-empty-cell rule (numba), imported only when it runs.

Cells are numbered in the order they are filled (see
:func:`zipup.plans.depth.cell_order`), and every placement is listed under
its *anchor*, its first cell in that order.  At every node the search takes
the first empty cell and tries the placements anchored there: every cell
before it is covered, so no other placement can cover it.  A node costs a
few words of ``AND`` per candidate, against hundreds of population counts
for the fewest-choices rule of :mod:`zipup.plans._search`: on a large board
of large pieces (Calibron's 56x56 square) that is the difference between
seconds and minutes.

Rectangle packings (every piece a rectangle, a rectangular board, cells
filled column by column) also keep the *profile*: per row, how far it is
filled.  A *well* (rows of equal height with higher rows, or the edge, on
both sides) can only be filled by pieces no wider than itself, so a well
narrower than every piece left ends the branch at once instead of when the
search reaches it.

The search state has the layout of :mod:`zipup.plans._search`'s (the
scalar array ``st`` and its slots, ``sol`` and ``sol_len``); see
:mod:`zipup.plans.depth` for the rest.
"""

import numba
import numpy as np

# the statuses and state slots are those of the fewest-choices loop (the driver reads them from either)
from ._search import (BATCH, BUDGET, COUNT, DEPTH, DONE, FIRST, FOUND, NODES, NSOL, STARTED,  # noqa: F401
                      _complete, _found, _low_bit)

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@numba.njit(cache=True, nogil=True, inline="always")
def _first_empty(cov, e, c, n):  # pragma: no cover - compiled
    """The first cell at or after ``c`` not covered at depth ``e`` (``n`` when every cell is)."""
    w = c >> 6
    x = ~cov[e, w] & ~((_ONE << np.uint64(c & 63)) - _ONE)
    nw = cov.shape[1]
    while True:
        if x:
            return min(n, w * 64 + np.int64(_low_bit(x)))
        w += 1
        if w == nw:
            return n
        x = ~cov[e, w]


@numba.njit(cache=True, nogil=True, inline="always")
def _fits(cov, d, t, wptr, words, masks):  # pragma: no cover - compiled
    for q in range(wptr[t], wptr[t + 1]):
        if cov[d, words[q]] & masks[q]:
            return False
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _place(d, r, cov, left, prof, wptr, words, masks, slot, span, fast, slow, pmin, anchor):  # pragma: no cover
    """Make depth ``d + 1`` from depth ``d`` with placement ``r``; False when a well shows it dead.

    ``prof`` has a column per row of the board (none when the profile is
    not kept) and ``span`` is the length of a row.
    """
    e = d + 1
    for k in range(cov.shape[1]):
        cov[e, k] = cov[d, k]
    for q in range(wptr[r], wptr[r + 1]):
        cov[e, words[q]] |= masks[q]
    npieces = left.shape[1]
    for k in range(npieces):
        left[e, k] = left[d, k]
    s = slot[r]
    if s >= 0:
        left[e, s] -= 1
    rows = prof.shape[1]
    if rows == 0:
        return True
    # the profile: rows y0 .. y0 + fast - 1 are now filled up to x0 + slow
    for k in range(rows):
        prof[e, k] = prof[d, k]
    x0 = anchor[r] // rows
    y0 = anchor[r] - x0 * rows
    for y in range(y0, y0 + fast[r]):
        prof[e, y] = x0 + slow[r]
    # a well can only have formed at the rows placed or beside them
    for y in (y0 - 1, y0, y0 + fast[r]):
        if y < 0 or y >= rows or prof[e, y] >= span:
            continue
        v = prof[e, y]
        a = y
        while a > 0 and prof[e, a - 1] == v:
            a -= 1
        b = y + 1
        while b < rows and prof[e, b] == v:
            b += 1
        if (a > 0 and prof[e, a - 1] < v) or (b < rows and prof[e, b] < v):
            continue  # not a well: a lower neighbour may rise to it and widen it
        fill = False
        for k in range(npieces):
            if left[e, k] > 0 and pmin[k] <= b - a:
                fill = True
                break
        if not fill:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def search(aptr, cand, wptr, words, masks, slot, n, span, fast, slow, pmin, anchor, cov, left, prof, cell, pos,
           chosen, sol, sol_len, st, budget, mode):  # pragma: no cover - compiled
    """Run the search from the state in the arrays until it must stop; return why.

    Returns and modes as :func:`zipup.plans._search.search`.  The
    candidates of cell ``c`` are ``cand[aptr[c]:aptr[c + 1]]``; ``pos[d]``
    is the next one to try at depth ``d``, whose first empty cell is
    ``cell[d]``.
    """
    if budget <= 0:  # a call that only loads (or compiles) this function
        return BUDGET
    nodes = 0
    if st[STARTED] == 0:
        st[STARTED] = 1
        c = _first_empty(cov, 0, 0, n)
        cell[0] = c
        pos[0] = aptr[c]
    d = st[DEPTH]
    while d >= 0:
        if nodes >= budget:
            st[DEPTH] = d
            st[NODES] += nodes
            return BUDGET
        c = cell[d]
        p = pos[d]
        end = aptr[c + 1]
        r = -1
        while p < end:
            t = cand[p]
            p += 1
            s = slot[t]
            if (s < 0 or left[d, s] > 0) and _fits(cov, d, t, wptr, words, masks):
                r = t
                break
        pos[d] = p
        if r < 0:
            d -= 1
            continue
        chosen[d] = r
        nodes += 1
        if not _place(d, r, cov, left, prof, wptr, words, masks, slot, span, fast, slow, pmin, anchor):
            continue
        e = d + 1
        c2 = _first_empty(cov, e, c, n)
        if c2 == n:
            if _complete(e, left):
                why = _found(e, chosen, sol, sol_len, st, mode)
                if why >= 0:
                    st[DEPTH] = d
                    st[NODES] += nodes
                    return why
            continue
        cell[e] = c2
        pos[e] = aptr[c2]
        d = e
    st[DEPTH] = d
    st[NODES] += nodes
    return DONE


@numba.njit(cache=True, nogil=True)
def probe(aptr, cand, wptr, words, masks, slot, n, span, fast, slow, pmin, anchor, cov, left, prof, fit,
          probes, seed):  # pragma: no cover - compiled
    """Knuth's estimate of the size of the search tree from ``probes`` random paths.

    Each path goes down from the root taking a child at random; the product
    of the numbers of children met on the way estimates how many nodes its
    depth holds.  Returns the estimated number of nodes; depth 0 of ``cov``,
    ``left`` and ``prof`` is the root and is left as it was, ``fit`` holds
    a cell's fitting candidates.
    """
    np.random.seed(seed)
    total = 0.0
    for _ in range(probes):
        d = 0
        c = _first_empty(cov, 0, 0, n)
        weight = 1.0
        while c < n:
            k = 0
            for p in range(aptr[c], aptr[c + 1]):
                t = cand[p]
                s = slot[t]
                if (s < 0 or left[d, s] > 0) and _fits(cov, d, t, wptr, words, masks):
                    fit[k] = t
                    k += 1
            if k == 0:
                break
            weight *= k
            total += weight
            r = fit[np.random.randint(k)]
            if not _place(d, r, cov, left, prof, wptr, words, masks, slot, span, fast, slow, pmin, anchor):
                break
            d += 1
            c = _first_empty(cov, d, c, n)
    return total / probes
