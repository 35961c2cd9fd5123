"""Stage 2: orientations of pieces and the point symmetries of boards.

A *transform* is an integer ``ndim x ndim`` matrix with one ``±1`` per row and
column (a signed permutation).  Shapes are normalised by translating their
minimum corner to the origin and sorting their cells, so equal shapes compare
equal.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

__all__ = ["all_transforms", "allowed_transforms", "normalise", "orientations"]


@lru_cache(maxsize=None)
def all_transforms(ndim):
    """Every rotation and reflection of the ``ndim``-cube, identity first.

    Returns a tuple of ``(ndim, ndim)`` int arrays: 2 in 1-D, 8 in 2-D, 48 in 3-D.

    Examples
    --------
    >>> [len(all_transforms(n)) for n in (1, 2, 3)]
    [2, 8, 48]
    """
    mats = []
    for perm in itertools.permutations(range(ndim)):
        for signs in itertools.product((1, -1), repeat=ndim):
            m = np.zeros((ndim, ndim), dtype=np.int64)
            for i, (j, s) in enumerate(zip(perm, signs)):
                m[i, j] = s
            mats.append(m)
    mats.sort(key=lambda m: (round(np.linalg.det(m)) < 0, (m != np.eye(ndim, dtype=int)).sum()))
    for m in mats:
        m.setflags(write=False)
    return tuple(mats)


def _is_rotation(m):
    return round(np.linalg.det(m)) > 0


@lru_cache(maxsize=None)
def allowed_transforms(ndim, rotate, mirror):
    """The transforms a piece may undergo under the ``rotate`` / ``mirror`` rules.

    * 1-D: reversal if either flag is set.
    * 2-D: quarter turns (``rotate``), turning over (``mirror``); with
      ``rotate=False, mirror=True`` only the left-right flip.
    * 3-D: the 24 rotations (``rotate``), their mirror images (``mirror``);
      with ``rotate=False, mirror=True`` only the flip of the last axis.

    Examples
    --------
    >>> [len(allowed_transforms(2, r, m)) for r in (True, False) for m in (True, False)]
    [8, 4, 2, 1]
    >>> len(allowed_transforms(3, True, False)), len(allowed_transforms(1, False, True))
    (24, 2)
    """
    alls = all_transforms(ndim)
    ident = alls[0]
    if ndim == 1:
        return alls if (rotate or mirror) else (ident,)
    if rotate and mirror:
        return alls
    if rotate:
        return tuple(m for m in alls if _is_rotation(m))
    if mirror:
        flip = np.eye(ndim, dtype=np.int64)
        flip[-1, -1] = -1
        flip.setflags(write=False)
        return (ident, flip)
    return (ident,)


def normalise(cells, labels=None):
    """Translate cells to the origin and sort them (labels follow their cells).

    Parameters
    ----------
    cells : array_like of int, shape (k, ndim)
    labels : sequence of str, optional

    Returns
    -------
    tuple
        ``(cells, labels)``: a tuple of coordinate tuples and a tuple of labels.

    Examples
    --------
    >>> normalise([[2, 3], [1, 5]])
    (((0, 2), (1, 0)), ('#', '#'))
    """
    a = np.asarray(cells, dtype=np.int64)
    a = a - a.min(axis=0)
    labs = list(labels) if labels is not None else ["#"] * len(a)
    order = np.lexsort(a.T[::-1]) if a.size else np.zeros(0, np.int64)  # by first coordinate, then the next
    return tuple(map(tuple, a[order].tolist())), tuple(labs[i] for i in order.tolist())


def orientations(cells, labels=None, transforms=None):
    """The distinct orientations of a shape under the given transforms.

    Orientations that coincide (a symmetric piece) are listed once, in the
    order of the transforms that first produce them.

    Parameters
    ----------
    cells : sequence of tuple of int
    labels : sequence of str, optional
    transforms : sequence of ndarray, optional
        Default: all rotations and reflections.

    Returns
    -------
    list of (cells, labels) pairs, each normalised.

    Examples
    --------
    >>> len(orientations([(0, 0), (0, 1), (0, 2), (1, 1)]))  # the T tetromino
    4
    >>> len(orientations([(0, 0), (0, 1), (1, 1), (1, 2)]))  # S: turning over gives Z
    4
    """
    a = np.asarray(cells, dtype=np.int64)
    ndim = a.shape[1]
    if transforms is None:
        transforms = all_transforms(ndim)
    seen = {}
    for m in transforms:
        key = normalise(a @ m.T, labels)
        seen.setdefault(key, None)
    return list(seen)
