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
