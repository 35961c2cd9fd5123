"""The compiled loop of the depth plan's first-empty-cell rule (numba), imported only when it runs.

Cells are numbered in the order they are filled (the sweep's, see
:func:`zipup.plans.sweep.sweep_order`), and every placement is listed under
its *anchor*, its first cell in that order.  At every node the search takes
the first empty cell and tries the placements anchored there: every cell
before it is covered, so no other placement can cover it.  A node costs a
few words of ``AND`` per candidate, against hundreds of population counts
for the fewest-choices rule of :mod:`zipup.plans._search`: on a large board
of large pieces (Calibron's 56x56 square) that is the difference between
seconds and minutes.

Rectangle packings (every piece a rectangle, a rectangular board, cells
filled column by column) keep a *profile* instead of the covered cells:
per row, how far it is filled (every row is filled from its start).  The
first empty cell is then the start of the lowest run of rows, a placement
fits when it is no wider than that run (the candidates come narrowest
first, so the first too wide ends the cell), and placing it raises the
rows it spans.  A *well* (rows of equal height with higher rows, or the
edge, on both sides) has its floor covered by pieces side by side, so a
well whose width is no sum of the widths of the pieces left ends the
branch at once instead of when the search reaches it.

The search state has the layout of :mod:`zipup.plans._search`'s (the
scalar array ``st`` and its slots, ``sol`` and ``sol_len``); see
:class:`zipup.plans.branching.FirstCell` for the rest.
"""

import numba
import numpy as np

# the statuses and state slots are those of the fewest-choices loop (the driver reads them from either)
from ._search import (BATCH, BUDGET, COUNT, DEPTH, DONE, FIRST, FOUND, NODES, NSOL, STARTED,  # noqa: F401
                      _complete, _found, _low_bit, _pause)

_ONE = np.uint64(1)


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
def _lowest(prof, e, n, span):  # pragma: no cover - compiled
    """The first empty cell of the profile at depth ``e`` (``n`` when full) and the width of its run."""
    rows = prof.shape[1]
    y = 0
    for k in range(1, rows):
        if prof[e, k] < prof[e, y]:
            y = k
    x = prof[e, y]
    if x >= span:
        return n, 0
    b = y + 1
    while b < rows and prof[e, b] == x:
        b += 1
    return x * rows + y, b - y


@numba.njit(cache=True, nogil=True, inline="always")
def _next_cell(cov, prof, e, c, n, span, room):  # pragma: no cover - compiled
    """The first empty cell at depth ``e`` (at or after ``c``), keeping its run's width in ``room[e]``."""
    if prof.shape[1] == 0:
        return _first_empty(cov, e, c, n)
    c2, width = _lowest(prof, e, n, span)
    room[e] = width
    return c2


@numba.njit(cache=True, nogil=True, inline="always")
def _fits(cov, d, t, wptr, words, masks):  # pragma: no cover - compiled
    for q in range(wptr[t], wptr[t + 1]):
        if cov[d, words[q]] & masks[q]:
            return False
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _candidate(d, p, end, cov, left, prof, room, cand, wptr, words, masks, slot, fast):  # pragma: no cover
    """The first candidate from ``cand[p]`` on (up to ``end``) that fits at depth ``d``, and where to go on.

    Returns ``(placement, next p)``, the placement -1 when none is left.
    """
    rect = prof.shape[1] > 0
    while p < end:
        t = cand[p]
        p += 1
        if rect and fast[t] > room[d]:
            return -1, end  # the rest are wider still
        s = slot[t]
        if s >= 0 and left[d, s] == 0:
            continue
        if rect or _fits(cov, d, t, wptr, words, masks):
            return t, p
    return -1, end


@numba.njit(cache=True, nogil=True, inline="always")
def _place(d, r, cov, left, prof, wptr, words, masks, slot, span, fast, slow, pext, anchor):  # pragma: no cover
    """Make depth ``d + 1`` from depth ``d`` with placement ``r``; False when a well shows it dead.

    ``prof`` has a column per row of the board (none when the profile is
    not kept, and then ``cov`` is kept) and ``span`` is the length of a row.
    """
    e = d + 1
    npieces = left.shape[1]
    for k in range(npieces):
        left[e, k] = left[d, k]
    s = slot[r]
    if s >= 0:
        left[e, s] -= 1
    rows = prof.shape[1]
    if rows == 0:
        for k in range(cov.shape[1]):
            cov[e, k] = cov[d, k]
        for q in range(wptr[r], wptr[r + 1]):
            cov[e, words[q]] |= masks[q]
        return True
    # the profile: rows y0 .. y0 + fast - 1 are now filled up to x0 + slow
    for k in range(rows):
        prof[e, k] = prof[d, k]
    x0 = anchor[r] // rows
    y0 = anchor[r] - x0 * rows
    for y in range(y0, y0 + fast[r]):
        prof[e, y] = x0 + slow[r]
    # every well must still be fillable by the pieces left: checked whole, since a well that
    # could be filled before may have lost the pieces it needed
    y = 0
    while y < rows:
        v = prof[e, y]
        b = y + 1
        while b < rows and prof[e, b] == v:
            b += 1
        if v < span and (y == 0 or prof[e, y - 1] > v) and (b == rows or prof[e, b] > v):
            if not _fillable(e, b - y, left, pext):
                return False
        y = b
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _fillable(e, width, left, pext):  # pragma: no cover - compiled
    """Whether ``width`` is a sum of widths of pieces left at depth ``e``, one width per copy.

    The floor of a well is covered by pieces anchored on it, side by side,
    so its width must be such a sum.  ``pext[s]`` has bit ``k`` set when
    piece ``s`` has a placement ``k`` rows wide.
    """
    reach = _ONE
    want = _ONE << np.uint64(width)
    for s in range(left.shape[1]):
        for _ in range(left[e, s]):
            x = pext[s]
            grown = reach
            while x:
                grown |= reach << _low_bit(x)
                x &= x - _ONE
            reach = grown
            if reach & want:
                return True
    return False


@numba.njit(cache=True, nogil=True)
def search(aptr, cand, wptr, words, masks, slot, n, span, fast, slow, pext, anchor, cov, left, prof, room, cell,
           pos, chosen, sol, sol_len, st, budget, mode):  # pragma: no cover - compiled
    """Run the search from the state in the arrays until it must stop; return why.

    Returns and modes as :func:`zipup.plans._search.search`.  The
    candidates of cell ``c`` are ``cand[aptr[c]:aptr[c + 1]]``; ``pos[d]``
    is the next one to try at depth ``d``, whose first empty cell is
    ``cell[d]`` (and, with a profile, ``room[d]`` the width of its run).
    """
    if budget <= 0:  # a call that only loads (or compiles) this function
        return BUDGET
    nodes = 0
    if st[STARTED] == 0:
        st[STARTED] = 1
        c = _next_cell(cov, prof, 0, 0, n, span, room)
        cell[0] = c
        pos[0] = aptr[c]
    d = st[DEPTH]
    while d >= 0:
        if nodes >= budget:
            return _pause(st, d, nodes, BUDGET)
        c = cell[d]
        r, pos[d] = _candidate(d, pos[d], aptr[c + 1], cov, left, prof, room, cand, wptr, words, masks, slot, fast)
        if r < 0:
            d -= 1
            continue
        chosen[d] = r
        nodes += 1
        if not _place(d, r, cov, left, prof, wptr, words, masks, slot, span, fast, slow, pext, anchor):
            continue
        e = d + 1
        c2 = _next_cell(cov, prof, e, c, n, span, room)
        if c2 == n:
            if _complete(e, left):
                why = _found(e, chosen, sol, sol_len, st, mode)
                if why >= 0:
                    return _pause(st, d, nodes, why)
            continue
        cell[e] = c2
        pos[e] = aptr[c2]
        d = e
    return _pause(st, d, nodes, DONE)


@numba.njit(cache=True, nogil=True)
def probe(aptr, cand, wptr, words, masks, slot, n, span, fast, slow, pext, anchor, cov, left, prof, room, fit,
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
        c = _next_cell(cov, prof, 0, 0, n, span, room)
        weight = 1.0
        while c < n:
            k = 0
            p = aptr[c]
            end = aptr[c + 1]
            while True:
                t, p = _candidate(d, p, end, cov, left, prof, room, cand, wptr, words, masks, slot, fast)
                if t < 0:
                    break
                fit[k] = t
                k += 1
            if k == 0:
                break
            weight *= k
            total += weight
            r = fit[np.random.randint(k)]
            if not _place(d, r, cov, left, prof, wptr, words, masks, slot, span, fast, slow, pext, anchor):
                break
            d += 1
            c = _next_cell(cov, prof, d, c, n, span, room)
    return total / probes
