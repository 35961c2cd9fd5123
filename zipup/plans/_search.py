"""The compiled loop of the depth-first plan (numba), imported only when it runs.

The search state lives in arrays the caller owns, so :func:`search` can
stop (a batch of configurations is ready, a node budget is spent, the
first configuration is found) and be called again to go on exactly where it
stopped.  See :mod:`zipup.plans.depth` for the layout of the arrays.

The placements that still fit at a depth are a bit set over all placements,
so that a child is its parent's set less the placements that collide with
the one just placed: a few words of ``AND NOT`` per node.  The choices of
a cell or a piece are counted when the next item is chosen, by population
counts of that set against the cell's or piece's own set, each count given
up as soon as it cannot beat the best so far.
"""

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

# what search() returns
DONE, BATCH, BUDGET, FIRST = 0, 1, 2, 3
# the slots of the scalar state array ``st``
DEPTH, NSOL, COUNT, NODES, FOUND, STARTED = 0, 1, 2, 3, 4, 5

_ONE = np.uint64(1)


@intrinsic
def _popcount(typingctx, x):
    """The number of one bits of a uint64 (LLVM's ctpop: one instruction where the CPU has it)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@intrinsic
def _low_bit(typingctx, x):
    """The index of the lowest one bit of a nonzero uint64 (LLVM's cttz)."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return types.uint64(types.uint64), codegen


@numba.njit(cache=True, nogil=True, inline="always")
def _choose(d, n, cov, live, nzw, nnz, cellm, pmask, prange, left, item, pos, lim):  # pragma: no cover
    """Pick the item with the fewest choices at depth ``d``; False when one has none.

    Items are the uncovered cells (``0 .. n-1``) and the pieces with copies
    left (``n + slot``).  A piece with ``c`` copies left and ``k`` fitting
    placements has ``k - c + 1`` choices: its copies take placements in
    increasing order, so the first copy placed next can only take one of the
    first ``k - c + 1``.  Ties go to the first cell, then the first piece.
    """
    best = -1
    bestn = np.int64(1) << 62
    m = nnz[d]
    for w in range(cov.shape[1]):
        free = ~cov[d, w]
        if w == cov.shape[1] - 1 and n & 63:
            free &= (_ONE << np.uint64(n & 63)) - _ONE
        while free:
            c = w * 64 + np.int64(_low_bit(free))
            free &= free - _ONE
            k = np.int64(0)
            for j in range(m):
                v = nzw[d, j]
                k += np.int64(_popcount(live[d, v] & cellm[c, v]))
                if k >= bestn:
                    break
            if k < bestn:
                if k == 0:
                    return False
                bestn = k
                best = c
    for s in range(left.shape[1]):
        c = left[d, s]
        if c > 0:
            k = np.int64(0)
            for v in range(prange[s, 0], prange[s, 1]):
                k += np.int64(_popcount(live[d, v] & pmask[s, v]))
                if k - c + 1 >= bestn:
                    break
            k = k - c + 1
            if k <= 0:
                return False
            if k < bestn:
                bestn = k
                best = n + s
    item[d] = best
    pos[d] = 0
    lim[d] = bestn
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _child(d, r, on_piece, conf, pmask, wptr, words, masks, size, slot, live, nzw, nnz, cov, left,
           ncov):  # pragma: no cover - compiled
    """Make depth ``d + 1`` from depth ``d`` with placement ``r`` (chosen for a piece when ``on_piece``)."""
    nw = cov.shape[1]
    npieces = left.shape[1]
    held = conf.shape[0] > 0
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
    order = on_piece and not gone
    rw = r >> 6
    below = (np.uint64(2) << np.uint64(r & 63)) - _ONE  # bits 0 .. r & 63 (all when 63)
    # row e's words outside nzw[e] are zero: clear what its last visit left, then fill
    for j in range(nnz[e]):
        live[e, nzw[e, j]] = 0
    m = 0
    for j in range(nnz[d]):
        w = nzw[d, j]
        x = live[d, w]
        if held:
            x &= ~conf[r, w]
        else:  # each fitting placement against the cells now covered
            y = x
            while y:
                low = y & (~y + _ONE)
                y ^= low
                t = w * 64 + np.int64(_low_bit(low))
                for q in range(wptr[t], wptr[t + 1]):
                    if cov[e, words[q]] & masks[q]:
                        x ^= low
                        break
        if ps >= 0:
            if gone or (order and w < rw):
                x &= ~pmask[ps, w]
            elif order and w == rw:
                x &= ~(pmask[ps, w] & below)
        live[e, w] = x
        if x:
            nzw[e, m] = w
            m += 1
    nnz[e] = m


@numba.njit(cache=True, nogil=True, inline="always")
def _next(d, it, p, n, live, cellm, pmask):  # pragma: no cover - compiled
    """The first placement from ``p`` on still fitting at depth ``d`` of item ``it`` (cell or piece); -1 if none."""
    wr = live.shape[1]
    w = p >> 6
    if w >= wr:
        return -1
    if it < n:
        x = live[d, w] & cellm[it, w]
    else:
        x = live[d, w] & pmask[it - n, w]
    x &= ~((_ONE << np.uint64(p & 63)) - _ONE)
    while True:
        if x:
            return w * 64 + np.int64(_low_bit(x))
        w += 1
        if w == wr:
            return -1
        if it < n:
            x = live[d, w] & cellm[it, w]
        else:
            x = live[d, w] & pmask[it - n, w]


@numba.njit(cache=True, nogil=True, inline="always")
def _complete(e, left):  # pragma: no cover - compiled
    """Whether every copy of every piece is placed at depth ``e``."""
    for k in range(left.shape[1]):
        if left[e, k] != 0:
            return False
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _found(e, chosen, sol, sol_len, st, mode):  # pragma: no cover - compiled
    """Count the configuration ``chosen[:e]`` (and keep it when listing); why the search must return, or -1."""
    st[COUNT] += 1
    if mode == 1:
        h = st[NSOL]
        for k in range(e):
            sol[h, k] = chosen[k]
        sol_len[h] = e
        st[NSOL] = h + 1
    if st[FOUND] == 0:
        st[FOUND] = 1
        return FIRST
    if mode == 1 and st[NSOL] == sol.shape[0]:
        return BATCH
    return -1


@numba.njit(cache=True, nogil=True, inline="always")
def _root(live, nzw, nnz):  # pragma: no cover - compiled
    """List the nonzero words of the root's fitting placements (depth 0 of ``nzw`` and ``nnz``)."""
    m = 0
    for w in range(live.shape[1]):
        if live[0, w]:
            nzw[0, m] = w
            m += 1
    nnz[0] = m


@numba.njit(cache=True, nogil=True, inline="always")
def _pause(st, d, nodes, why):  # pragma: no cover - compiled
    """Keep where the search stands (depth ``d``, ``nodes`` more visited) for the next call; return ``why``."""
    st[DEPTH] = d
    st[NODES] += nodes
    return why


@numba.njit(cache=True, nogil=True)
def search(conf, cellm, pmask, prange, wptr, words, masks, size, slot, n, live, nzw, nnz, item, pos, lim, chosen,
           cov, left, ncov, sol, sol_len, st, budget, mode):  # pragma: no cover - compiled
    """Run the search from the state in the arrays until it must stop; return why.

    ``mode`` 0 counts, 1 also writes each configuration (its rows, by depth)
    into ``sol``.  Returns ``DONE`` (the tree is exhausted), ``BATCH``
    (``sol`` is full), ``BUDGET`` (``budget`` nodes visited) or ``FIRST``
    (the first configuration of the run was just found).  ``conf`` holds,
    per placement, the set of placements it collides with; when it has no
    rows (too big to hold), each placement still fitting is tested against
    the cells covered instead.
    """
    if budget <= 0:  # a call that only loads (or compiles) this function
        return BUDGET
    nodes = 0
    if st[STARTED] == 0:
        st[STARTED] = 1
        _root(live, nzw, nnz)
        if not _choose(0, n, cov, live, nzw, nnz, cellm, pmask, prange, left, item, pos, lim):
            st[DEPTH] = -1
            return DONE
    d = st[DEPTH]
    while d >= 0:
        if nodes >= budget:
            return _pause(st, d, nodes, BUDGET)
        # the next candidate at depth d: a fitting placement covering the cell, or of the piece
        it = item[d]
        r = _next(d, it, pos[d], n, live, cellm, pmask) if lim[d] > 0 else -1
        if r < 0:
            d -= 1
            continue
        pos[d] = r + 1
        if it >= n:
            lim[d] -= 1
        chosen[d] = r
        nodes += 1
        _child(d, r, it >= n, conf, pmask, wptr, words, masks, size, slot, live, nzw, nnz, cov, left, ncov)
        e = d + 1
        if ncov[e] == n:
            if _complete(e, left):
                why = _found(e, chosen, sol, sol_len, st, mode)
                if why >= 0:
                    return _pause(st, d, nodes, why)
            continue
        if _choose(e, n, cov, live, nzw, nnz, cellm, pmask, prange, left, item, pos, lim):
            d = e
    return _pause(st, d, nodes, DONE)


@numba.njit(cache=True, nogil=True)
def probe(conf, cellm, pmask, prange, wptr, words, masks, size, slot, n, live, nzw, nnz, item, pos, lim, cov, left,
          ncov, probes, seed):  # pragma: no cover - compiled
    """Knuth's estimate of the size of the search tree from ``probes`` random paths.

    Each path goes down from the root taking one of the chosen item's
    choices at random; the product of the numbers of choices met on the way
    estimates how many nodes its depth holds.  Depth 0 of the state is the
    root and is left as it was.
    """
    np.random.seed(seed)
    _root(live, nzw, nnz)
    total = 0.0
    for _ in range(probes):
        d = 0
        weight = 1.0
        while ncov[d] < n and _choose(d, n, cov, live, nzw, nnz, cellm, pmask, prange, left, item, pos, lim):
            weight *= lim[d]
            total += weight
            it = item[d]
            r = _next(d, it, 0, n, live, cellm, pmask)
            for _j in range(np.random.randint(lim[d])):
                r = _next(d, it, r + 1, n, live, cellm, pmask)
            _child(d, r, it >= n, conf, pmask, wptr, words, masks, size, slot, live, nzw, nnz, cov, left, ncov)
            d += 1
    return total / probes
