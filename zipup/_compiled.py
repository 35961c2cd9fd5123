"""Compiled inner loops (numba), imported only when the compiled kernel runs."""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _fitting(w, win, fits):  # pragma: no cover - compiled
    """Write into ``fits`` the placements whose window misses ``w``; return (how many, collisions)."""
    nfit = 0
    for g in range(win.shape[0]):
        if (w & win[g]) == 0:
            fits[nfit] = g
            nfit += 1
    return nfit, win.shape[0] - nfit


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
            nfit, hit = _fitting(w, win, fits)
            nnz += hit
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
            nfit, _ = _fitting(w, win, fits)
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


@numba.njit(cache=True, nogil=True)
def _merge_runs(keys, mult, bounds):  # pragma: no cover - compiled
    """Merge sorted runs ``keys[bounds[r]:bounds[r+1]]`` pairwise (a balanced tree of
    merges), adding the multiplicities of equal keys.  Each run has distinct keys."""
    n = keys.shape[0]
    a_k, a_m = keys, mult
    b_k = np.empty(n, np.uint64)
    b_m = np.empty(n, np.int64)
    runs = bounds.copy()
    nr = runs.shape[0] - 1
    while nr > 1:
        out = 0
        new_runs = np.empty(nr // 2 + 2, np.int64)
        new_runs[0] = 0
        q = 0
        r = 0
        while r < nr:
            i, ie = runs[r], runs[r + 1]
            if r + 1 < nr:
                j, je = runs[r + 1], runs[r + 2]
            else:
                j, je = ie, ie
            while i < ie and j < je:
                if a_k[i] < a_k[j]:
                    b_k[out] = a_k[i]
                    b_m[out] = a_m[i]
                    i += 1
                elif a_k[j] < a_k[i]:
                    b_k[out] = a_k[j]
                    b_m[out] = a_m[j]
                    j += 1
                else:
                    b_k[out] = a_k[i]
                    b_m[out] = a_m[i] + a_m[j]
                    i += 1
                    j += 1
                out += 1
            while i < ie:
                b_k[out] = a_k[i]
                b_m[out] = a_m[i]
                i += 1
                out += 1
            while j < je:
                b_k[out] = a_k[j]
                b_m[out] = a_m[j]
                j += 1
                out += 1
            q += 1
            new_runs[q] = out
            r += 2
        runs = new_runs[:q + 1].copy()
        nr = q
        if a_k is keys:  # never write into the caller's arrays' view twice
            a_k = np.empty(n, np.uint64)
            a_m = np.empty(n, np.int64)
        a_k, b_k = b_k, a_k
        a_m, b_m = b_m, a_m
    total = runs[nr] if nr >= 1 else 0
    return a_k[:total].copy(), a_m[:total].copy()


@numba.njit(cache=True, nogil=True)
def sweep_step_count(keys, mult, shift, primary, win, add, field, cap):  # pragma: no cover
    """One whole counting step of the compact sweep: join, forget the swept cell, merge.

    ``keys`` are sorted; the result is sorted.  Output runs (states passing
    the cell uncovered, passing it covered, and one per placement) stay sorted
    after the swept bit is removed, so merging them is a tree of linear
    merges, no sort.  The caller guarantees the multiplicities cannot
    overflow int64.

    Returns
    -------
    keys, mult, nnz (window pairs that collide), rows (before merging), plain
    (sum of the multiplicities before merging)
    """
    n = keys.shape[0]
    m = win.shape[0]
    one = np.uint64(1)
    low = (one << shift) - one
    up = shift + one
    per = np.zeros(m + 2, np.int64)
    fits = np.empty(m, np.int64)
    nfit = 0
    nnz = 0
    prev = np.uint64(0)
    first = True
    for s in range(n):
        k = keys[s]
        if (k >> shift) & one:
            per[1] += 1
            continue
        if not primary:
            per[0] += 1
        w = k >> shift
        if first or w != prev:
            first = False
            prev = w
            nfit, hit = _fitting(w, win, fits)
            nnz += hit
        for t in range(nfit):
            g = fits[t]
            if (k & field[g]) < cap[g]:
                per[g + 2] += 1
    bounds = np.zeros(m + 3, np.int64)
    for r in range(m + 2):
        bounds[r + 1] = bounds[r] + per[r]
    total = bounds[m + 2]
    out_k = np.empty(total, np.uint64)
    out_m = np.empty(total, np.int64)
    fill = bounds[:m + 2].copy()
    first = True
    plain = 0
    for s in range(n):
        k = keys[s]
        ms = mult[s]
        if (k >> shift) & one:
            i = fill[1]
            out_k[i] = ((k >> up) << shift) | (k & low)
            out_m[i] = ms
            fill[1] = i + 1
            plain += ms
            continue
        if not primary:
            i = fill[0]
            out_k[i] = ((k >> up) << shift) | (k & low)
            out_m[i] = ms
            fill[0] = i + 1
            plain += ms
        w = k >> shift
        if first or w != prev:
            first = False
            prev = w
            nfit, _ = _fitting(w, win, fits)
        for t in range(nfit):
            g = fits[t]
            if (k & field[g]) < cap[g]:
                nk = k + add[g]
                i = fill[g + 2]
                out_k[i] = ((nk >> up) << shift) | (nk & low)
                out_m[i] = ms
                fill[g + 2] = i + 1
                plain += ms
    # drop empty runs so the merge tree is no deeper than needed
    nb = 1
    for r in range(m + 2):
        if bounds[r + 1] > bounds[r]:
            nb += 1
    tight = np.zeros(nb, np.int64)
    q = 0
    for r in range(m + 2):
        if bounds[r + 1] > bounds[r]:
            q += 1
            tight[q] = bounds[r + 1]
    mk, mm = _merge_runs(out_k, out_m, tight)
    return mk, mm, nnz, total, plain
