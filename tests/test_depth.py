"""The depth plan (zipup/plans/depth.py): the compiled depth-first search against independent methods.

Its configurations are compared as sets with the brute force of tests/strategies.py on random
full-cover puzzles, with the breadth-first plans, with a plain recursive exact-cover search on
the matrices, and with the exact-cover package (dancing links, in C) on the Morse alphabets; a
search stopped and resumed at every node must find the same.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st

import zipup
from strategies import (brute_force, engine_configurations, exact_cover_problems, exact_covers, examples, models,
                        peer_exact_covers, rectangle_packings)
from zipup import api
from zipup.errors import UsageError
from zipup.matrices import PieceRows, Problem
from zipup.plans import Balanced, Depth, SearchStats, Sweep, branching, depth
from zipup.puzzle import loads


def placements(result):
    got = [c.placements for c in result.configurations()]
    assert len(got) == len(set(got)), "a configuration is listed twice"
    return set(got)


RULES = ("fewest", "first-cell")


@pytest.mark.parametrize("rule", RULES)
@examples(60)
@given(model=models(covers=("exact",), separate=("none",)))
def test_depth_equals_brute_force_and_the_other_plans(rule, model):
    """Random full-cover puzzles (1-D to 3-D, copies, holes, labels under match): under either
    branching rule, the same count and the same configurations as the brute force, the balanced tree
    and the sweep."""
    problem = zipup.as_problem(loads(model.toml()))
    want = brute_force(model)
    r = Depth(rule).run(problem)
    got = engine_configurations(problem, r.configurations())
    assert len(got) == len(set(got)) and set(got) == want
    assert r.count == len(want) and type(r.count) is int
    assert Depth(rule).run(problem, count_only=True).count == len(want)
    for other in (Balanced(), Sweep()):
        assert placements(other.run(problem)) == placements(Depth(rule).run(problem))


@pytest.mark.parametrize("rule", RULES)
@examples(40)
@given(ec=exact_cover_problems(max_options=9))
def test_depth_on_options_usable_any_number_of_times(rule, ec):
    """Exact-cover options (count None), every column primary: the covers the recursive search finds."""
    options, _ = ec
    problem = Problem(name="dlx", columns=tuple(f"c{k}" for k in range(options.shape[1])),
                      primary=np.ones(options.shape[1], dtype=bool),
                      pieces=(PieceRows(name="options", label="o", count=None, colour=None,
                                        matrix=sp.csr_array(options)),))
    r = Depth(rule).run(problem)
    assert placements(r) == exact_covers(problem)
    assert r.count == len(exact_covers(problem))


@pytest.mark.parametrize("rule", RULES)
@examples(30)
@given(model=models(covers=("exact",), separate=("none",), ndims=(2, 3)))
def test_stopping_and_resuming_changes_nothing(rule, model):
    problem = zipup.as_problem(loads(model.toml()))
    want = placements(Depth(rule).run(problem))
    with pytest.MonkeyPatch.context() as mp:
        for module, name, value in ((depth, "_LIST_BUDGET", 1), (depth, "_COUNT_BUDGET", 1), (depth, "_BATCH", 1),
                                    (branching, "_BATCH", 1), (branching, "_CONFLICT_BYTES", 0)):
            mp.setattr(module, name, value)
        r = Depth(rule).run(problem)
        assert placements(r) == want
        assert Depth(rule).run(problem, count_only=True).count == len(want)


@pytest.mark.parametrize("path, known", [("puzzles/morse.toml", 8574), ("puzzles/morse-shifted.dpf", 48)])
def test_morse_equals_a_dancing_links_peer(path, known):
    """The seed's Morse alphabet (26 letters, each once): the same covers as the exact-cover package."""
    problem = zipup.as_problem(zipup.load(path))
    want = peer_exact_covers(problem)
    assert len(want) == known
    r = zipup.solve(problem, "depth")
    assert placements(r) == want and r.count == known


def test_identical_copies_are_ordered():
    """Eight dominoes (one piece, eight copies) on a 4x4 board: each tiling once (36, Kasteleyn)."""
    pz = loads('name = "d"\n[board]\nsize = [4, 4]\n[[piece]]\nname = "d"\ncells = "##"\ncount = 8\n')
    problem = zipup.as_problem(pz)
    r = Depth().run(problem)
    assert r.count is None  # counted as it lists
    assert len(placements(r)) == r.count == 36 == len(exact_covers(problem))
    assert all(len(c) == 8 and list(c) == sorted(c) for c in placements(r))


def test_configurations_stream_before_the_search_ends():
    problem = zipup.as_problem(zipup.load("puzzles/pentomino-6x10.toml"))
    r = zipup.solve(problem, "depth")
    first = next(iter(r.configurations()))
    rec = r.stats[-1]
    assert isinstance(rec, SearchStats) and rec.mode == "list"
    assert not rec.finished and 1 <= rec.configurations < 9356 and rec.first is not None
    cells = np.concatenate(first.cells(problem))
    assert sorted(cells.tolist()) == list(range(60))


def test_count_is_known_only_once_the_listing_ends():
    """A reader that stops early never pays for the rest of the tree: no count is invented."""
    problem = zipup.as_problem(zipup.load("puzzles/soma.toml"))
    r = zipup.solve(problem, "depth")
    it = iter(r.configurations())
    next(it)
    assert r.count is None and [s.mode for s in r.stats] == ["list"] and not r.stats[0].finished
    assert sum(1 for _ in it) == 11520 - 1
    assert r.count == 11520 == zipup.solve(problem, "depth", count_only=True).count and r.stats[0].finished


def test_stats_record(room_problem):
    r = zipup.solve(zipup.load("puzzles/soma.toml"), "depth", count_only=True)
    (rec,) = r.stats
    assert rec.finished and rec.configurations == r.count == 11520
    assert rec.nodes >= r.count and rec.rate > 0 and 0 < rec.first <= rec.seconds and rec.bytes > 0
    assert set(rec.as_dict()) >= {"nodes", "rate", "first", "seconds", "load"}


def test_no_cells_and_unplaceable_pieces():
    empty = Problem(name="e", columns=(), primary=np.ones(0, bool), pieces=())
    assert [c.placements for c in Depth().run(empty).configurations()] == [()]
    one = sp.csr_array(np.ones((1, 1), np.uint8))
    none = sp.csr_array((0, 1), dtype=np.uint8)
    rows = (PieceRows(name="a", label="a", count=1, colour=None, matrix=none),
            PieceRows(name="b", label="b", count=1, colour=None, matrix=one))
    stuck = Problem(name="s", columns=("c",), primary=np.ones(1, bool), pieces=rows)
    assert Depth().run(stuck, count_only=True).count == 0 == len(exact_covers(stuck))
    assert Depth().run(dataclasses.replace(stuck, pieces=rows[1:]), count_only=True).count == 1


@pytest.mark.parametrize("text, feature", [
    ('[board]\ncover = "partial"\nsize = [2, 2]\n', "partial cover"),
    ('[rules]\nseparate = "edge"\n[board]\nsize = [1, 3]\n[[piece]]\nname = "b"\ncells = "#"\ncolour = "red"\n', "separation"),
])
def test_refuses_what_it_does_not_solve(text, feature):
    pz = loads('name = "x"\n' + text + '[[piece]]\nname = "a"\ncells = "#"\ncolour = "red"\ncount = 2\n')
    with pytest.raises(UsageError, match=f"depth plan solves full covers only; 'x' needs {feature}"):
        zipup.solve(pz, "depth")


def test_refuses_optional_cells():
    pz = loads('name = "x"\n[board]\nsize = [1, 2]\n[[piece]]\nname = "a"\ncells = "#"\ncount = 2\n')
    pz = dataclasses.replace(pz, board=dataclasses.replace(pz.board, optional=frozenset({(0, 1)})))
    with pytest.raises(UsageError, match="optional cells"):
        zipup.solve(pz, "depth")


def test_refuses_secondary_columns_and_colours(tmp_path):
    dlx = tmp_path / "c.dlx"
    dlx.write_text("a b | c\na c\nb\n")
    with pytest.raises(UsageError, match="secondary columns"):
        zipup.count(zipup.load(dlx), "depth")
    dlx.write_text("a | c\na c:1\n")
    with pytest.raises(UsageError, match="colours"):
        zipup.count(zipup.load(dlx), "depth")


def test_runs_in_one_process_whatever_the_workers(tmp_path):
    soma = zipup.load("puzzles/soma.toml")
    assert zipup.count(soma, "depth", workers=2) == 11520
    assert sum(1 for _ in zipup.enumerate(soma, "depth", workers=2, limit=5)) == 5
    with pytest.raises(UsageError, match="one process"):
        zipup.count(soma, "depth", checkpoint=tmp_path / "ck.jsonl")


# ---------------------------------------------------------------- a listing that stops early


@examples(40)
@given(models(covers=("exact", "partial"), separate=("none",)), st.integers(0, 4))
def test_a_limit_stops_at_the_first_configurations(model, limit):
    """Under auto, ``limit`` gives the first configurations of whichever plan runs: distinct, among
    the brute force's, as many as asked for (or all), and the search is left where it stopped."""
    problem = zipup.as_problem(loads(model.toml()))
    want = brute_force(model)
    got = engine_configurations(problem, zipup.enumerate(problem, limit=limit))
    assert len(got) == len(set(got)) == min(limit, len(want)) and set(got) <= want
    plan = api.listing_plan(problem, limit=limit)
    assert (getattr(plan, "name", plan) == "depth") == (depth.refusal(problem) is None)
    assert api.listing_plan(problem) == "auto"


def test_a_limit_takes_the_depth_listing_s_first_and_searches_no_further():
    problem = zipup.as_problem(zipup.load("puzzles/soma.toml"))
    first = list(zipup.enumerate(problem, limit=5))
    r = zipup.solve(problem, "depth")
    it = iter(r.configurations())
    assert first == [next(it) for _ in range(5)]
    # the search goes on in batches that double from one: it stopped before finding ten
    assert r.count is None and r.stats[0].configurations < 2 * 5 and not r.stats[0].finished


def test_a_limit_keeps_auto_where_the_depth_plan_refuses_or_subproblems_are_asked_for(room_problem, tmp_path):
    soma = zipup.as_problem(zipup.load("puzzles/soma.toml"))
    assert api.listing_plan(room_problem, limit=1) == "auto"  # a partial cover
    assert api.listing_plan(soma, limit=1, checkpoint=tmp_path / "ck") == "auto"
    assert api.listing_plan(soma, "sweep", limit=1) == "sweep"  # a plan named is the plan run
    assert api.listing_plan(soma, tree="((V,L),(T,(Z,(A,(B,P)))))", limit=1) == "auto"


@examples(60)
@given(text=rectangle_packings(max_side=6))
def test_rectangle_packings_under_the_profile(text):
    """Rectangles into a rectangle: the first-cell rule keeps a profile and prunes wells instead of
    testing cells; it finds exactly the configurations the fewest-choices rule and the sweep find."""
    problem = zipup.as_problem(loads(text))
    rows = branching.Rows(problem)
    assert branching.FirstCell(rows, "count").prof.shape[1] == min(problem.puzzle.board.shape) or \
        max(problem.puzzle.board.shape) > 63
    count = Sweep().run(problem, count_only=True).count  # merged states: quick however many there are
    assert count >= 1, "a guillotine cut is always a configuration"
    assume(count <= 2000)  # a board of many small pieces has too many configurations to search one by one
    assert Depth("first-cell").run(problem, count_only=True).count == count
    want = placements(Sweep().run(problem))
    assert placements(Depth("first-cell").run(problem)) == want == placements(Depth("fewest").run(problem))
    assert len(want) == count


def test_calibron_is_one_configuration_and_its_eight_images():
    """Calibron 12 (twelve rectangles into a 56x56 square): the depth plan lists 8 configurations,
    each a tiling of the square, and they are exactly the images of one under the square's 8
    symmetries, as the puzzle's single known solution up to symmetry says they must be."""
    problem = zipup.as_problem(zipup.load("puzzles/calibron.toml"))
    r = zipup.solve(problem, "depth")
    tilings = set()
    for conf in r.configurations():
        grid = np.full(56 * 56, -1)
        for (piece, _), cells in zip(conf.placements, conf.cells(problem)):
            assert (grid[cells] == -1).all()
            grid[cells] = piece
        assert (grid >= 0).all()
        tilings.add(grid.reshape(56, 56).tobytes())
    assert r.count == len(tilings) == 8 and r.stats[0].rule == "first-cell"
    one = np.frombuffer(next(iter(tilings)), dtype=grid.dtype).reshape(56, 56)
    images = {np.ascontiguousarray(np.rot90(g, k)).tobytes() for g in (one, one.T) for k in range(4)}
    assert images == tilings


@pytest.mark.parametrize("path", ["puzzles/domino-6x6.toml", "puzzles/pentomino-3x20.toml", "puzzles/soma.toml"])
@pytest.mark.parametrize("rule", RULES)
def test_knuth_s_estimate_sizes_the_tree_the_search_walks(path, rule):
    """The random paths that choose a rule estimate its tree: within 25% of the nodes the search visits."""
    rows = branching.Rows(zipup.as_problem(zipup.load(path)))
    search = branching.RULES[rule](rows, "count")
    search.load()
    estimate = search.probe(20000, 7)
    search.reset()
    while search.search(1 << 30, 0) != search.k.DONE:
        pass
    nodes = int(search.st[search.k.NODES])
    assert 0.75 * nodes <= estimate <= 1.25 * nodes


@pytest.mark.parametrize("path, rule", [("puzzles/morse.toml", "fewest"), ("puzzles/scott-8x8.toml", "fewest"),
                                        ("puzzles/calibron.toml", "first-cell")])
def test_auto_picks_the_rule_estimated_faster(path, rule):
    """Where one rule is several times faster than the other (benchmark: analysis/branching-rules.md),
    auto picks it and says why; the other rule gives the same count."""
    problem = zipup.as_problem(zipup.load(path))
    r = zipup.solve(problem, "depth", count_only=True)
    (rec,) = r.stats
    assert rec.rule == rule and rec.why.startswith("estimated") and rule in rec.estimates
    if path != "puzzles/calibron.toml":  # the fewest rule takes a minute there
        assert Depth("first-cell" if rule == "fewest" else "fewest").run(problem, count_only=True).count == r.count
