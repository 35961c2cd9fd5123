"""Merged states: exact multiplicities and the merging of equal rows.

Two partial configurations that occupy the same cells with the same pieces are
interchangeable for every join above them, so a plan keeps them as one row
whose multiplicity is the sum of theirs.  Multiplicities stay ``int64`` while
no product or sum can pass 2**62 and become Python ints (``object`` arrays)
beyond, so counts are exact however large.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_INT64_SAFE = 2**62



def _mul(a, b):
    """Exact elementwise product: int64 while safe, Python ints beyond."""
    if a.dtype != object and b.dtype != object and len(a):
        if int(a.max()) * int(b.max()) < _INT64_SAFE:
            return a * b
    return a.astype(object) * b.astype(object)


def _group_sum(values, starts):
    """Exact sums of consecutive groups (``values`` sorted by group)."""
    if not len(values):
        return values
    if values.dtype != object and int(values.max()) * len(values) >= _INT64_SAFE:
        values = values.astype(object)
    return np.add.reduceat(values, starts)


def _total(values):
    """Exact sum as a Python int."""
    if values.dtype != object and (not len(values) or int(values.max()) * len(values) < _INT64_SAFE):
        return int(values.sum())
    return int(sum(values.tolist()))


# ------------------------------------------------------------ merging


@dataclass
class _Merge:
    keys: np.ndarray  # (n_unique, K) uint64
    mult: np.ndarray  # (n_unique,)
    order: np.ndarray  # pre-merge rows sorted by group
    starts: np.ndarray  # (n_unique + 1,) group boundaries in ``order``


def _merge(keys, mult):
    """Merge equal rows of ``keys`` (n, K) uint64, summing multiplicities."""
    n, k = keys.shape
    if n == 0:
        return _Merge(keys, mult, np.zeros(0, np.int64), np.zeros(1, np.int64))
    if k == 0:
        order = np.arange(n)
        flags = np.zeros(n, dtype=bool)
        flags[0] = True
    else:
        order = np.argsort(keys[:, 0], kind="stable") if k == 1 else np.lexsort(keys.T[::-1])
        s = keys[order]
        flags = np.empty(n, dtype=bool)
        flags[0] = True
        np.any(s[1:] != s[:-1], axis=1, out=flags[1:])
    starts = np.flatnonzero(flags)
    merged = _group_sum(mult[order], starts)
    return _Merge(keys[order[starts]], merged, order, np.append(starts, n))
