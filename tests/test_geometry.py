"""Stage 2: transforms and orientations, against hand-made geometry and known polyform counts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import polyforms, ref_orientations
from zipup.geometry import all_transforms, allowed_transforms, normalise, orientations


def as_sets(orients):
    """zipup orientations as a set of frozensets of (cell, label), like ref_orientations."""
    return {frozenset(zip(cells, labels)) for cells, labels in orients}


# ---------------------------------------------------------------- transforms


@pytest.mark.parametrize("ndim, n", [(1, 2), (2, 8), (3, 48)])
def test_all_transforms_are_the_signed_permutations(ndim, n):
    mats = all_transforms(ndim)
    assert len(mats) == n  # 2**ndim * ndim!
    assert np.array_equal(mats[0], np.eye(ndim, dtype=int))  # identity first
    keys = {m.tobytes() for m in mats}
    assert len(keys) == n  # all distinct
    for m in mats:
        assert sorted(np.abs(m).sum(axis=0)) == [1] * ndim
        assert sorted(np.abs(m).sum(axis=1)) == [1] * ndim
        assert set(np.unique(m)) <= {-1, 0, 1}
        assert not m.flags.writeable  # cached: must not be modified


def test_rotations_have_determinant_one():
    rot = allowed_transforms(3, True, False)
    assert len(rot) == 24
    assert all(round(np.linalg.det(m)) == 1 for m in rot)
    assert len(allowed_transforms(2, True, False)) == 4
    assert all(round(np.linalg.det(m)) == 1 for m in allowed_transforms(2, True, False))


@pytest.mark.parametrize("ndim, rotate, mirror, n", [
    (1, True, True, 2), (1, True, False, 2), (1, False, True, 2), (1, False, False, 1),
    (2, True, True, 8), (2, True, False, 4), (2, False, True, 2), (2, False, False, 1),
    (3, True, True, 48), (3, True, False, 24), (3, False, True, 2), (3, False, False, 1),
])
def test_allowed_transforms_counts(ndim, rotate, mirror, n):
    assert len(allowed_transforms(ndim, rotate, mirror)) == n


def test_allowed_transforms_form_groups():
    """Each allowed set is closed under composition (a group), so orientations are orbits."""
    for ndim in (1, 2, 3):
        for rotate, mirror in itertools.product((True, False), repeat=2):
            mats = allowed_transforms(ndim, rotate, mirror)
            keys = {m.tobytes() for m in mats}
            for a in mats:
                for b in mats:
                    assert (a @ b).astype(np.int64).tobytes() in keys


def test_mirror_without_rotation_is_the_left_right_flip():
    """2-D ``rotate = false, mirror = true``: as drawn or flipped left to right (the spec);
    3-D: the same flip of the column axis (zipup's reading, documented in docs)."""
    ell = [(0, 0), (1, 0), (1, 1), (1, 2)]
    got = as_sets(orientations(ell, transforms=allowed_transforms(2, False, True)))
    flipped = {(r, 2 - c) for r, c in ell}
    assert got == {frozenset((c, "#") for c in ell), frozenset((c, "#") for c in sorted(flipped))}
    ell3 = [(0, r, c) for r, c in ell]
    got3 = as_sets(orientations(ell3, transforms=allowed_transforms(3, False, True)))
    assert got3 == {frozenset(((0,) + c, "#") for c in ell), frozenset(((0,) + c, "#") for c in flipped)}


# ---------------------------------------------------------------- normalise


def test_normalise_translates_and_sorts_with_labels():
    cells, labels = normalise([[5, 1], [3, 4], [3, 2]], ["a", "b", "c"])
    assert cells == ((0, 1), (0, 3), (2, 0))
    assert labels == ("c", "b", "a")


@given(polyforms(3, 5), st.tuples(*[st.integers(-20, 20)] * 3))
def test_normalise_is_translation_invariant(shape, offset):
    cells = sorted(shape)
    moved = [tuple(a + b for a, b in zip(c, offset)) for c in cells]
    assert normalise(cells) == normalise(moved)
    out, _ = normalise(moved)
    assert all(min(c[i] for c in out) == 0 for i in range(3))


# ---------------------------------------------------------------- orientations


@pytest.mark.parametrize("ndim", [1, 2, 3])
@given(data=st.data())
def test_orientations_equal_the_hand_made_orbit(ndim, data):
    """zipup's orientations (signed permutation matrices) equal the closure of the shape under
    quarter turns and reflections of its coordinates, labels included."""
    shape = data.draw(polyforms(ndim, 6, labels=("#", "a", "b")))
    rotate, mirror = data.draw(st.booleans()), data.draw(st.booleans())
    cells = sorted(shape)
    labels = [shape[c] for c in cells]
    got = orientations(cells, labels, allowed_transforms(ndim, rotate, mirror))
    assert len(got) == len(as_sets(got))  # no orientation listed twice
    assert as_sets(got) == ref_orientations(shape, rotate, mirror)
    assert got[0] == normalise(cells, labels)  # as drawn comes first


def test_tetromino_orientations():
    """The five tetrominoes have 19 fixed forms (2+1+4+8+4), 7 one-sided classes."""
    shapes = {"I": [(0, 0), (0, 1), (0, 2), (0, 3)], "O": [(0, 0), (0, 1), (1, 0), (1, 1)],
              "T": [(0, 0), (0, 1), (0, 2), (1, 1)], "L": [(0, 0), (1, 0), (2, 0), (2, 1)],
              "S": [(0, 1), (0, 2), (1, 0), (1, 1)]}
    n = {k: len(orientations(v)) for k, v in shapes.items()}
    assert n == {"I": 2, "O": 1, "T": 4, "L": 8, "S": 4}
    rot = {k: len(orientations(v, transforms=allowed_transforms(2, True, False))) for k, v in shapes.items()}
    assert rot == {"I": 2, "O": 1, "T": 4, "L": 4, "S": 2}


def _fixed_polyforms(ndim, size):
    """Every fixed polyform (normalised, up to translation) with ``size`` cells, grown cell by cell."""
    level = {normalise([(0,) * ndim])[0]}
    for _ in range(size - 1):
        nxt = set()
        for shape in level:
            have = set(shape)
            for c in shape:
                for i in range(ndim):
                    for d in (-1, 1):
                        nb = c[:i] + (c[i] + d,) + c[i + 1:]
                        if nb not in have:
                            nxt.add(normalise(sorted(have | {nb}))[0])
        level = nxt
    return level


@pytest.mark.parametrize("ndim, size, fixed, one_sided, free", [
    (2, 4, 19, 7, 5),     # OEIS A001168, A000988, A000105
    (2, 5, 63, 18, 12),
    (2, 6, 216, 60, 35),
    (3, 4, 86, 8, 7),     # OEIS A001931, A000162, A038119
])
def test_orientation_classes_match_known_polyform_counts(ndim, size, fixed, one_sided, free):
    """Grouping all fixed polyforms into orientation classes gives the known counts of
    one-sided (rotations only) and free (rotations and mirrors) polyforms."""
    shapes = _fixed_polyforms(ndim, size)
    assert len(shapes) == fixed
    for rules, expected in (((True, False), one_sided), ((True, True), free)):
        transforms = allowed_transforms(ndim, *rules)
        classes = {frozenset(cells for cells, _ in orientations(s, transforms=transforms)) for s in shapes}
        assert len(classes) == expected
        assert sum(len(c) for c in classes) == fixed  # the classes partition the fixed forms


def test_orientations_are_listed_once_for_symmetric_pieces():
    plus = [(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)]
    assert len(orientations(plus)) == 1
    cube = list(itertools.product((0, 1), repeat=3))
    assert len(orientations(cube)) == 1
