"""Compiled inner loops (numba), imported only when the compiled kernel runs."""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def sweep_expand(keys, shift, win, add, field, cap):  # pragma: no cover - compiled
    """See :meth:`zipup.join.Kernel.expand`; also returns the window nonzeros of A·Bᵀ.

    Output is grouped by placement, states in key order inside each group, so
    it is a few sorted runs that a stable sort merges quickly.
    """
    n = keys.shape[0]
    m = win.shape[0]
    per_g = np.zeros(m, np.int64)
    fits = np.empty(m, np.int64)
    nfit = 0
    nnz = 0
    prev = np.uint64(0)
    for s in range(n):
        w = keys[s] >> shift
        if s == 0 or w != prev:
            prev = w
            nfit = 0
            for g in range(m):
                if (w & win[g]) == 0:
                    fits[nfit] = g
                    nfit += 1
                else:
                    nnz += 1
        k = keys[s]
        for t in range(nfit):
            g = fits[t]
            if (k & field[g]) < cap[g]:
                per_g[g] += 1
    start = np.zeros(m + 1, np.int64)
    for g in range(m):
        start[g + 1] = start[g] + per_g[g]
    total = start[m]
    out_s = np.empty(total, np.int64)
    out_g = np.empty(total, np.int64)
    out_k = np.empty(total, np.uint64)
    fill = start[:m].copy()
    for s in range(n):
        w = keys[s] >> shift
        if s == 0 or w != prev:
            prev = w
            nfit = 0
            for g in range(m):
                if (w & win[g]) == 0:
                    fits[nfit] = g
                    nfit += 1
        k = keys[s]
        for t in range(nfit):
            g = fits[t]
            if (k & field[g]) < cap[g]:
                i = fill[g]
                out_s[i] = s
                out_g[i] = g
                out_k[i] = k + add[g]
                fill[g] = i + 1
    return out_s, out_g, out_k, nnz


@numba.njit(cache=True, nogil=True)
def sweep_alive(keys, shift, k1, primary, cover_start, cover_g, gfirst, gwin, gfield, gcap,
                depth):  # pragma: no cover - compiled
    """States whose next ``depth`` empty primary cells can each still be covered.

    A cell can be covered when some placement containing it, starting at or
    after the next swept position ``k1``, fits the state's window and has a
    piece left.  Dropping the other states changes no count.
    """
    n = keys.shape[0]
    ncells = primary.shape[0]
    room = 64 - shift
    alive = np.ones(n, np.bool_)
    for s in range(n):
        key = keys[s]
        w = key >> shift
        checked = 0
        p = 0
        while checked < depth and p < room and k1 + p < ncells:
            c = k1 + p
            if ((w >> np.uint64(p)) & np.uint64(1)) == 0 and primary[c]:
                found = False
                for t in range(cover_start[c], cover_start[c + 1]):
                    g = cover_g[t]
                    f = gfirst[g]
                    if f < k1:
                        continue
                    # bits shifted past the word are lost: that can only keep a state alive
                    if (w & (gwin[g] << np.uint64(f - k1))) == 0 and (key & gfield[g]) < gcap[g]:
                        found = True
                        break
                if not found:
                    alive[s] = False
                    break
                checked += 1
            p += 1
    return alive
