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
    nw = cov.shape[1]
    wr = live.shape[1]
    npieces = left.shape[1]
    held = conf.shape[0] > 0
    nodes = 0
    if st[STARTED] == 0:
        st[STARTED] = 1
        m = 0
        for w in range(wr):
            if live[0, w]:
                nzw[0, m] = w
                m += 1
        nnz[0] = m
        if not _choose(0, n, cov, live, nzw, nnz, cellm, pmask, prange, left, item, pos, lim):
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
                        r = w * 64 + np.int64(_low_bit(x))
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
        if _choose(e, n, cov, live, nzw, nnz, cellm, pmask, prange, left, item, pos, lim):
            d = e
    st[DEPTH] = d
    st[NODES] += nodes
    return DONE
