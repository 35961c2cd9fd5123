"""Counting up to symmetry, symmetry breaking and labelled counts (zipup.symmetry).

Known counts, with where they come from:

* north-colours: 32 configurations; 2 up to symmetry (Ben North, seed 000: the square's 8
  symmetries combined with swapping yellow and blue, order 16); 128 with copies told apart
  (2 pairs of copies: 32 x 2! x 2!).
* room: 52 (the seed notebook's listing); the doorway leaves no symmetry, so 52 up to
  symmetry; without the doorway the 4x6 room's 4 symmetries act freely: 13.
* pentominoes 6x10: 9356 / 2339 (Knuth, 'Dancing links'); Soma: 11520 / 240 (Conway and
  Guy); Calibron: 8 / 1, 32 with copies told apart (its file's notes).
* domino 6x6: 6728 tilings, 930 up to the square's symmetries (checked by an independent
  tiling enumerator and orbit count while writing this test).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import BAR_1D
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import brute_force, models

import zipup
from zipup.cli import main
from zipup.puzzle import loads
from zipup.symmetry import (count_unique, enumerate_unique, labelled_count, restrict_rows,
                            solve_unique, symmetry_breaking, symmetry_group)

ROOM_WITHOUT_DOOR = open(os.path.join(os.path.dirname(__file__), "..", "puzzles", "room.toml"),
                         encoding="utf-8").read().replace(".DD.....", "........")


@pytest.fixture(scope="module")
def north():
    return zipup.as_problem(zipup.load("puzzles/north-colours.toml"))


# ----------------------------------------------------------------------------- the group


def test_north_colours_group(north):
    g = symmetry_group(north)
    assert g.order == 16 and g.n_motions == 8 and len(g.renamings) == 2
    swap = [e for e in g.renamings if e.is_motion is False and e.renaming != tuple(range(6))]
    assert len(swap) == 1
    names = [p.name for p in north.pieces]
    moved = {names[a]: names[b] for a, b in enumerate(swap[0].renaming) if a != b}
    assert moved == {"yellow bar": "blue bar", "yellow elbow": "blue elbow",
                     "blue bar": "yellow bar", "blue elbow": "yellow elbow"}
    assert dict(swap[0].colours) == {"yellow": "blue", "blue": "yellow"}


def test_no_colour_swap_without_separate(north):
    """Without ``separate`` colours mean nothing: the same-shaped bars are interchangeable too."""
    pz = dataclasses.replace(north.puzzle, separate="none")
    g = symmetry_group(zipup.configuration_matrices(pz))
    # the three bars permute freely (3!), the two elbow pieces swap (2!), the ell stays
    assert g.order == 8 * 6 * 2


def test_room_door_breaks_symmetry(room):
    assert symmetry_group(room).order == 1
    assert symmetry_group(loads(ROOM_WITHOUT_DOOR)).order == 4


def test_soma_reflections_swap_the_chiral_pair():
    prob = zipup.as_problem(zipup.load("puzzles/soma.toml"))
    g = symmetry_group(prob)
    assert g.order == 48 and len(g.renamings) == 1
    names = [p.name for p in prob.pieces]
    for e in g:
        det = round(np.linalg.det(e.transform))
        moved = {names[a]: names[b] for a, b in enumerate(e.renaming) if a != b}
        assert moved == ({} if det > 0 else {"A": "B", "B": "A"})


def test_pentomino_group_and_breaking():
    prob = zipup.as_problem(zipup.load("puzzles/pentomino-6x10.toml"))
    g = symmetry_group(prob)
    assert g.order == 4
    b = symmetry_breaking(g)
    assert prob.pieces[b.piece].name == "X" and len(b.free) == 8 and len(b.fixed) == 0
    # a forced piece must be suitable
    assert symmetry_breaking(g, "I").piece == 1
    with pytest.raises(zipup.UsageError):
        symmetry_breaking(g, "nope")


def test_one_dimensional():
    prob = zipup.as_problem(loads(BAR_1D))
    g = symmetry_group(prob)
    assert g.order == 2
    r = count_unique(prob)
    assert (r.count, r.unique, r.labelled) == (1, 1, 2)
    (orbit,) = solve_unique(prob).orbits()
    assert orbit.size == 1 and orbit.stabiliser == 2


def test_labels_matter_only_under_match():
    text = ('name = "x"\n[board]\ncells = """\nab\n##\n"""\n{match}\n[[piece]]\nname = "I"\n'
            'cells = "##"\n[[piece]]\nname = "J"\ncells = "##"\n')
    # without match: a plain 2x2 square, and the dominoes I and J are interchangeable
    assert symmetry_group(loads(text.format(match=""))).order == 8 * 2
    # with match: the labelled top row admits no motion; I and J still swap
    assert symmetry_group(loads(text.format(match="match = true"))).order == 2


def test_walls_count_only_for_the_slide_test():
    # a 2x2 room with a wall column on its right: walls break the square's symmetry
    text = 'name = "x"\n[board]\ncells = """\n##.\n##.\n"""\n[[piece]]\nname = "I"\ncount = 2\ncells = "##"\n'
    prob = zipup.as_problem(loads(text))
    assert symmetry_group(prob).order == 8
    assert symmetry_group(prob, walls=True).order == 2  # only the flip of the rows
    res = count_unique(prob, slidable="quick")
    assert res.order == 2


def test_problems_without_geometry_have_the_trivial_group(north):
    prob = dataclasses.replace(north, puzzle=None)
    g = symmetry_group(prob)
    assert g.order == 1
    r = count_unique(prob)
    assert (r.count, r.unique, r.labelled) == (32, 32, 128)


def test_group_acts_on_configurations(north):
    g = symmetry_group(north)
    confs = list(zipup.enumerate(north))
    listed = set(confs)
    for c in confs[:4]:
        images = g.images(c)
        assert set(images) <= listed
        assert g.canonical(c) == min(images) == g.orbit(c)[0]
        assert g.is_canonical(g.canonical(c))
        assert g.orbit_size(c) * len(g.stabiliser(c)) == g.order
        # composition: applying two elements is applying some element
        for a, b in itertools.product(g.elements[:5], g.elements[-5:]):
            assert a(b(c)) in images


def test_labelled_count():
    assert labelled_count(zipup.load("puzzles/north-colours.toml"), 32) == 128
    assert labelled_count(zipup.load("puzzles/calibron.toml"), 8) == 32


# ----------------------------------------------------------------------------- counts


@pytest.mark.parametrize("breaking", [True, False])
def test_north_colours_counts(north, breaking):
    r = count_unique(north, breaking=breaking)
    assert (r.count, r.unique, r.order, r.labelled) == (32, 2, 16, 128)
    assert r.summary() == "32 configurations, 2 up to symmetry (group of order 16), 128 with copies told apart"
    listed = solve_unique(north, breaking=breaking)
    reps = [o.representative for o in listed.orbits()]
    assert (listed.count, listed.unique, listed.labelled) == (32, 2, 128)
    g = listed.group
    assert len(set(reps)) == 2 and all(g.is_canonical(c) for c in reps)


def test_north_colours_with_the_ell_fixed_by_hand(north):
    """The seed's own breaking: the red ell as drawn gives 4 = 2 orbits x the colour swap."""
    pz = north.puzzle
    fixed = dataclasses.replace(pz, pieces=(dataclasses.replace(pz.pieces[0], rotate=False, mirror=False),)
                                + pz.pieces[1:])
    assert zipup.count(fixed) == 4


def test_room_counts(room):
    r = count_unique(room, slidable="none")
    assert (r.count, r.unique, r.order) == (52, 52, 1)
    r = count_unique(loads(ROOM_WITHOUT_DOOR), slidable="none")
    assert (r.count, r.unique, r.order) == (52, 13, 4)
    assert r.breaking is not None
    r = count_unique(loads(ROOM_WITHOUT_DOOR), slidable="none", breaking=False)
    assert (r.count, r.unique) == (52, 13)


def test_post_filters_are_counted_on_orbits(room):
    r = count_unique(room)  # slidable = quick from the file
    assert (r.before_filters, r.count, r.unique, r.labelled) == (52, 3, 3, 6)


def test_restricted_problem_keeps_the_rows(room_problem):
    small, back = restrict_rows(room_problem, 2, [3, 1])
    assert small.pieces[2].n_placements == 2
    got = {back(c) for c in zipup.enumerate(small, slidable="none")}
    want = {c for c in zipup.enumerate(room_problem, slidable="none")
            if any(p == (2, 1) or p == (2, 3) for p in c.placements)}
    assert got == want


@pytest.mark.slow
@pytest.mark.parametrize("breaking", [True, False])
def test_pentominoes_6x10(breaking):
    r = count_unique(zipup.load("puzzles/pentomino-6x10.toml"), breaking=breaking)
    assert (r.count, r.unique, r.order, r.labelled) == (9356, 2339, 4, 9356)


@pytest.mark.slow
def test_soma():
    r = count_unique(zipup.load("puzzles/soma.toml"))
    assert (r.count, r.unique, r.order) == (11520, 240, 48)


@pytest.mark.slow
def test_soma_without_breaking_lists_canonical_forms():
    res = solve_unique(zipup.load("puzzles/soma.toml"), breaking=False)
    orbits = list(res.orbits())
    assert len(orbits) == 240 and all(o.size == 48 for o in orbits)


@pytest.mark.slow
def test_domino_6x6_needs_no_breaking_piece():
    prob = zipup.as_problem(zipup.load("puzzles/domino-6x6.toml"))
    r = count_unique(prob)
    assert r.breaking is None  # one piece with 18 copies: nothing to restrict
    assert (r.count, r.unique, r.order) == (6728, 930, 8)


@pytest.mark.slow
def test_calibron_group():
    prob = zipup.as_problem(zipup.load("puzzles/calibron.toml"))
    g = symmetry_group(prob)
    assert g.order == 8 and symmetry_breaking(g) is not None


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ZIPUP_CALIBRON"),
                    reason="the plans cannot solve Calibron (56x56) in reasonable time yet; "
                           "set ZIPUP_CALIBRON=1 to try")
def test_calibron_counts():
    r = count_unique(zipup.load("puzzles/calibron.toml"))
    assert (r.count, r.unique, r.labelled) == (8, 1, 32)


# ----------------------------------------------------------------------------- command line


def test_cli_unique_count(root):
    out = CliRunner().invoke(main, ["enumerate", str(root / "puzzles/north-colours.toml"), "--unique",
                                    "--count"])
    assert out.exit_code == 0, out.output
    assert out.output.strip().splitlines()[-1].startswith(
        "32 configurations, 2 up to symmetry (group of order 16), 128 with copies told apart [plan ")


def test_cli_unique_listing(root):
    out = CliRunner().invoke(main, ["enumerate", str(root / "puzzles/north-colours.toml"), "--unique"])
    assert out.exit_code == 0, out.output
    assert out.output.count("\n#") == 2 and "#2 (orbit of 16)" in out.output
    out = CliRunner().invoke(main, ["enumerate", str(root / "puzzles/north-colours.toml"), "--unique",
                                    "--format", "json", "--limit", "1"])
    doc = json.loads(out.stdout if hasattr(out, "stdout") else out.output)
    assert (doc["count"], doc["shown"], doc["unique"], doc["group_order"], doc["labelled"]) == (32, 1, 2, 16, 128)
    assert doc["configurations"][0]["orbit"] == 16


def test_cli_unique_with_filter(root):
    out = CliRunner().invoke(main, ["enumerate", str(root / "puzzles/room.toml"), "--unique", "--count"])
    assert out.exit_code == 0, out.output
    assert "52 configurations, 3 pass slidable=quick, 3 up to symmetry (group of order 1), " \
           "6 with copies told apart" in out.output


# ----------------------------------------------------------------------------- properties


def _cells_of(problem, conf):
    return frozenset((problem.pieces[p].name, frozenset(problem.columns[c] for c in cells))
                     for (p, _), cells in zip(conf.placements, conf.cells(problem)))


# a share of the profile's examples (HYPOTHESIS_PROFILE=thorough runs ten times more)
_EXAMPLES = settings.default.max_examples


@settings(max_examples=max(10, _EXAMPLES * 3 // 5))
@given(models(max_copies=4))
def test_orbits_partition_the_configurations(model):
    problem = zipup.as_problem(loads(model.toml()))
    group = symmetry_group(problem)
    confs = list(zipup.enumerate(problem, slidable="none"))
    listed = set(confs)
    # the group maps the listing onto itself, and its elements are true symmetries: checked in
    # the brute force's terms (cells and piece names), independently of zipup's rows
    truth = brute_force(model)
    assert {_cells_of(problem, c) for c in confs} == truth
    for g in group:
        for c in confs:
            image = g(c)
            assert image in listed
            assert len(image.placements) == len(c.placements)
        cell_map = {problem.columns[a]: problem.columns[b] for a, b in enumerate(g.columns)}
        names = [p.name for p in problem.pieces]
        rename = {names[a]: names[b] for a, b in enumerate(g.renaming)}
        for s in truth:
            assert frozenset((rename[n], frozenset(cell_map[x] for x in cells)) for n, cells in s) in truth
    # orbits add up: sum over orbits of |G| / |stabiliser| is the total
    canon = {group.canonical(c) for c in confs}
    assert sum(group.order // len(group.stabiliser(c)) for c in canon) == len(confs)
    assert sum(group.orbit_size(c) for c in canon) == len(confs)
    # counting and listing, with and without breaking, agree
    for breaking in (True, False):
        r = count_unique(problem, slidable="none", breaking=breaking, group=group)
        assert (r.count, r.unique) == (len(confs), len(canon))
        assert r.labelled == labelled_count(problem, len(confs))
        reps = list(enumerate_unique(problem, slidable="none", breaking=breaking, group=group))
        assert len(reps) == len(set(reps)) and set(reps) == canon


@settings(max_examples=max(10, _EXAMPLES * 3 // 10))
@given(models(ndims=(2,), separate=("edge", "corner"), match=(False,)), st.data())
def test_forced_breaking_piece_gives_the_same_counts(model, data):
    problem = zipup.as_problem(loads(model.toml()))
    group = symmetry_group(problem)
    plain = count_unique(problem, slidable="none", breaking=False, group=group)
    for p in range(len(problem.pieces)):
        if symmetry_breaking(group, p) is None:
            continue
        r = count_unique(problem, slidable="none", breaking=p, group=group)
        assert (r.count, r.unique) == (plain.count, plain.unique)


@settings(max_examples=max(10, _EXAMPLES * 3 // 10))
@given(models(ndims=(2, 3), covers=("partial",), match=(False,)))
def test_unique_counts_under_the_slide_test(model):
    """The group keeps walls fixed under a slide test, so orbits of passing configurations are
    whole orbits: the weighted sum still gives the number that pass."""
    problem = zipup.as_problem(loads(model.toml()))
    passing = list(zipup.enumerate(problem, slidable="quick"))
    for breaking in (True, False):
        r = solve_unique(problem, slidable="quick", breaking=breaking)
        orbits = list(r.orbits())
        assert r.count == len(passing) == sum(o.size for o in orbits)
        assert r.before_filters == zipup.count(problem, slidable="none")
        assert all(r.group.is_canonical(o.representative) for o in orbits)
