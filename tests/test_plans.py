"""Stage 5: plans (trees of joins) against independent counts.

The central property: on many random small puzzles (1-D, 2-D, 3-D; copies, holes, partial
cover, labels under match, colour separation, per-piece rules) every plan with every kernel
lists exactly the configurations a plain recursive search finds (tests/strategies.py).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import zipup
from conftest import DOMINO_2X2
from strategies import (brute_force, engine_configurations, exact_cover_problems, examples, model_from_puzzle,
                        models, ref_placements, tree_texts)
from zipup.errors import UsageError
from zipup.join import AutoKernel, _KERNELS
from zipup.matrices import PieceRows, Problem
from zipup.plans import PLANS as PLANS_BY_NAME
from zipup.plans import Auto, Balanced, Plan, Sweep, get_plan, parse_tree
from zipup.plans.states import _group_sum, _mul, _total
from zipup.plans.sweep import _Lookahead
from zipup.puzzle import loads

KERNELS = sorted(_KERNELS)  # every registered kernel must give the same answers
PLANS = {"balanced": Balanced, "sweep": Sweep, "sweep-general": lambda: Sweep(compact=False),
         "sweep-no-prune": lambda: Sweep(prune=False), "auto": Auto}
ROOM_TREE = "((T,T),((S,V),Z))"


def listed(problem, result):
    got = engine_configurations(problem, result.configurations())
    assert len(got) == len(set(got)), "a configuration is listed twice"
    return set(got)


# ---------------------------------------------------------------- the room


@pytest.fixture(scope="module")
def room_reference(room):
    """The room's 52 configurations by the brute force."""
    return brute_force(model_from_puzzle(room))


def test_room_tree_node_sizes(room, room_problem):
    """rows_out of the tree ((T,T),((S,V),Z)) are 464, 544, 1212, 52 (zipup 0.1 issue), and these are
    the numbers of disjoint pairs/triples of placements found by hand."""
    r = zipup.solve(room_problem, "balanced", tree=ROOM_TREE)
    assert [s.label for s in r.stats] == ["(T,T)", "(S,V)", "((S,V),Z)", "((T,T),((S,V),Z))"]
    assert [s.rows_out for s in r.stats] == [464, 544, 1212, 52]
    assert r.count == 52 and r.plan == "balanced"

    board = dict(zip(room.board.cells, room.board.labels))
    T, S, V, Z = (ref_placements(dict(zip(p.cells, p.labels)), board, True, True, False) for p in room.pieces)
    assert sum(1 for a, b in itertools.combinations(T, 2) if not a & b) == 464
    assert sum(1 for s in S for v in V if not s & v) == 544
    sv = [s | v for s in S for v in V if not s & v]
    assert sum(1 for x in sv for z in Z if not x & z) == 1212


def test_room_count_is_52_by_brute_force(room_reference):
    assert len(room_reference) == 52


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("plan", sorted(PLANS))
def test_room_every_plan_and_kernel_agree(room_problem, room_reference, plan, kernel):
    r = PLANS[plan]().run(room_problem, kernel=kernel)
    assert r.count == 52
    assert listed(room_problem, r) == room_reference
    assert PLANS[plan]().run(room_problem, kernel=kernel, count_only=True).count == 52


def test_room_tree_merging_and_pruning_do_not_change_rows_out(room_problem):
    """rows_out is the plain zip-up's size, so it does not depend on merging; without merging no
    rows are merged (rows_formed == rows_merged == rows_out)."""
    plain = Balanced(tree=ROOM_TREE, merge=False, prune=False).run(room_problem)
    assert [s.rows_out for s in plain.stats] == [464, 544, 1212, 52]
    assert all(s.rows_formed == s.rows_merged == s.rows_out for s in plain.stats)
    merged = Balanced(tree=ROOM_TREE).run(room_problem)
    assert all(s.rows_merged <= s.rows_formed <= s.rows_out for s in merged.stats)
    assert merged.stats[0].rows_merged < 464  # equal states were merged


def test_room_stats_fields(room_problem):
    seen = []
    r = zipup.solve(room_problem, "balanced", tree=ROOM_TREE, on_step=seen.append)
    assert seen == list(r.stats)  # reported as each step finishes
    for k, s in enumerate(r.stats):
        assert s.plan == "balanced" and s.index == k
        assert s.nnz is None or 0 <= s.nnz <= s.rows_in[0] * s.rows_in[1]
        assert s.bytes >= 0 and s.seconds >= 0 and s.pruned >= 0
        assert set(s.as_dict()) >= {"label", "rows_in", "nnz", "rows_out", "rows_formed", "rows_merged"}
    first = r.stats[0]
    assert first.rows_in == (44, 44)
    # (T,T): every pair of T placements either collides or not; 44*44 pairs in all
    assert first.nnz == 44 * 44 - 2 * 464  # ordered pairs that collide (the diagonal included)


# ---------------------------------------------------------------- random puzzles


@examples(70)
@given(models(), st.sampled_from(["bits", "sparse"]))
def test_engine_equals_brute_force(model, kernel):
    """Counts and the sets of configurations equal the brute force's for every plan (listing and
    counting only); zipup.enumerate (plan + filters) and zipup.count agree too.  (The kernels
    are compared pair by pair in test_join.py; the compiled ones below.)"""
    problem = zipup.as_problem(loads(model.toml()))
    want = brute_force(model)
    for name in ("balanced", "sweep", "sweep-general"):
        r = PLANS[name]().run(problem, kernel=kernel)
        assert r.count == len(want), name
        assert listed(problem, r) == want, name
        assert PLANS[name]().run(problem, kernel=kernel, count_only=True).count == len(want), name
    assert set(engine_configurations(problem, zipup.enumerate(problem))) == want
    assert zipup.count(problem) == len(want)


@examples(50)
@given(st.data())
def test_any_tree_shape_gives_the_same_configurations(data):
    model = data.draw(models())
    tree = data.draw(tree_texts(model))
    merge, prune = data.draw(st.booleans()), data.draw(st.booleans())
    problem = zipup.as_problem(loads(model.toml()))
    want = brute_force(model)
    r = Balanced(tree=tree, merge=merge, prune=prune).run(problem)
    assert r.count == len(want) and listed(problem, r) == want
    assert Balanced(tree=tree).run(problem, count_only=True).count == len(want)
    assert zipup.count(problem, tree=tree) == len(want)


@examples(40)
@given(models())
def test_compiled_paths_forced_on_small_puzzles(model):
    """The look-ahead pruning and the auto kernel's switch to compiled loops only start on big
    steps; with their thresholds at zero they must not change anything either."""
    problem = zipup.as_problem(loads(model.toml()))
    want = brute_force(model)
    old = _Lookahead.threshold, AutoKernel.threshold
    try:
        _Lookahead.threshold, AutoKernel.threshold = 0, 0
        r = Sweep().run(problem, kernel="auto")
        assert r.count == len(want) and listed(problem, r) == want
        assert Sweep().run(problem, kernel="auto", count_only=True).count == len(want)
        assert Sweep().run(problem, kernel="compiled", count_only=True).count == len(want)
    finally:
        _Lookahead.threshold, AutoKernel.threshold = old


# ---------------------------------------------------------------- exact cover without geometry


def options_problem(options, primary):
    rows = PieceRows(name="options", label="o", count=None, colour=None, matrix=sp.csr_array(options))
    return Problem(name="dlx", columns=tuple(f"c{k}" for k in range(options.shape[1])), primary=primary,
                   pieces=(rows,))


@examples(50)
@given(exact_cover_problems(max_options=8))
def test_options_any_number_of_times_equal_subset_search(ec):
    """Pieces with count None (exact-cover options): every subset of disjoint options that covers
    the primary columns, found by trying all subsets."""
    options, primary = ec
    want = set()
    for k in range(len(options) + 1):
        for subset in itertools.combinations(range(len(options)), k):
            hits = options[list(subset)].sum(axis=0) if subset else np.zeros(options.shape[1])
            if (hits <= 1).all() and (hits[primary] == 1).all():
                want.add(frozenset(subset))
    problem = options_problem(options, primary)
    for plan in ("sweep", "auto"):
        r = zipup.solve(problem, plan)
        got = [frozenset(row for _, row in c.placements) for c in r.configurations()]
        assert len(got) == len(set(got)) and set(got) == want
        assert r.count == len(want)
    with pytest.raises(UsageError, match="balanced"):
        zipup.solve(problem, "balanced")


# ---------------------------------------------------------------- dominoes: independent counts


def kasteleyn(m, n):
    """Domino tilings of an m x n rectangle, Kasteleyn's product formula (floating point)."""
    p = 1.0
    for j in range(1, (m + 1) // 2 + 1):
        for k in range(1, (n + 1) // 2 + 1):
            p *= 4 * math.cos(math.pi * j / (m + 1)) ** 2 + 4 * math.cos(math.pi * k / (n + 1)) ** 2
    return round(p) if m * n % 2 == 0 else 0


def profile_dp(m, n):
    """Domino tilings by the broken-profile transfer matrix, exact Python ints."""
    m, n = max(m, n), min(m, n)  # the profile runs along the short side
    states = {0: 1}
    for idx in range(m * n):
        r, c = divmod(idx, n)
        nxt = defaultdict(int)
        for mask, v in states.items():
            if mask & 1:
                nxt[mask >> 1] += v
                continue
            if r + 1 < m:
                nxt[(mask >> 1) | (1 << (n - 1))] += v
            if c + 1 < n and not mask & 2:
                nxt[(mask >> 1) | 1] += v
        states = nxt
    return states.get(0, 0)


def dominoes(m, n):
    return loads(f'name = "d"\n[board]\nsize = [{m}, {n}]\n[[piece]]\nname = "d"\ncount = {m * n // 2}\n'
                 'cells = "##"\n')


@pytest.mark.parametrize("m, n", [(2, 2), (2, 3), (3, 4), (4, 4), (4, 5), (5, 6), (6, 6), (2, 40), (3, 30),
                                  (8, 9), (4, 17)])
def test_domino_tilings_match_kasteleyn(m, n):
    want = kasteleyn(m, n)
    assert want == profile_dp(m, n)
    problem = zipup.as_problem(dominoes(m, n))
    assert Sweep().run(problem, count_only=True).count == want
    assert Sweep(compact=False).run(problem, count_only=True).count == want  # multi-word rows past 64 cells
    assert zipup.count(problem) == want
    if m * n <= 16:
        assert Balanced().run(problem, count_only=True).count == want


def test_domino_listing_on_a_strip():
    """2 x 12: the Fibonacci number F(13) = 233 tilings, all distinct and all valid."""
    problem = zipup.as_problem(dominoes(2, 12))
    for plan in ("sweep", "auto"):
        confs = set(engine_configurations(problem, zipup.solve(problem, plan).configurations()))
        assert len(confs) == 233
        for conf in confs:
            cells = [c for _, cs in conf for c in cs]
            assert len(cells) == len(set(cells)) == 24


@pytest.mark.parametrize("m, n", [(4, 46), (10, 16)])
def test_counts_beyond_int64_are_exact(m, n):
    """4 x 46 has about 3.8e20 tilings: more than int64 holds; the count is a Python int."""
    want = profile_dp(m, n)
    problem = zipup.as_problem(dominoes(m, n))
    for plan in (Sweep(), Sweep(compact=False)):
        got = plan.run(problem, count_only=True).count
        assert type(got) is int and got == want
    assert (want > 2**64) == (m == 4)


def test_exact_multiplicity_helpers():
    big = np.array([2**40, 3, 2**40], dtype=np.int64)
    prod = _mul(big, big)
    assert [int(x) for x in prod] == [2**80, 9, 2**80]
    assert _total(np.array([2**62, 2**62, 2**62], dtype=np.int64)) == 3 * 2**62
    sums = _group_sum(np.array([2**62, 2**62, 5], dtype=np.int64), np.array([0, 2]))
    assert [int(x) for x in sums] == [2**63, 5]
    assert _total(np.zeros(0, dtype=np.int64)) == 0


@pytest.mark.slow
def test_21_distinct_monominoes_count_21_factorial():
    p = loads('name = "x"\n[board]\ncells = "' + "#" * 21 + '"\n'
              + "".join(f'[[piece]]\nname = "m{k}"\ncells = "#"\n' for k in range(21)))
    assert zipup.count(p, "sweep") == math.factorial(21)


def test_copies_are_interchangeable():
    """Copies give one configuration per set of placements: C(6, 3) = 20 for three monomino
    copies on a 2x3 board, against 6*5*4 = 120 for three distinct monominoes."""
    copies = loads('name = "x"\n[board]\nsize = [2, 3]\ncover = "partial"\n'
                   '[[piece]]\nname = "o"\ncount = 3\ncells = "#"\n')
    distinct = loads('name = "x"\n[board]\nsize = [2, 3]\ncover = "partial"\n'
                     + "".join(f'[[piece]]\nname = "o{k}"\ncells = "#"\n' for k in range(3)))
    for plan in ("balanced", "sweep"):
        assert zipup.count(copies, plan) == math.comb(6, 3)
        assert zipup.count(distinct, plan) == 6 * 5 * 4


@pytest.mark.parametrize("separate, count", [("none", 44), ("edge", 12), ("corner", 8)])
def test_separate_example_of_the_format_guide(separate, count):
    """Two red domino copies on a 3x3 board, partial cover (docs/puzzle-format.md)."""
    text = ('name = "x"\n[board]\nsize = [3, 3]\ncover = "partial"\n'
            f'[rules]\nseparate = "{separate}"\n'
            '[[piece]]\nname = "r"\ncolour = "red"\ncount = 2\ncells = "##"\n')
    p = loads(text)
    assert len(brute_force(model_from_puzzle(p))) == count
    for plan in ("balanced", "sweep"):
        assert zipup.count(p, plan) == count


def test_no_solution_and_single_piece():
    single = loads('name = "x"\n[board]\ncells = "###"\n[[piece]]\nname = "I"\ncells = "###"\n')
    stuck = loads('name = "x"\n[board]\ncells = """\n##.\n.##\n"""\n[[piece]]\nname = "L"\n'
                  'cells = """\n###\n#..\n"""\n')  # an L tetromino in an S-shaped board
    for plan in ("balanced", "sweep", "auto"):
        assert zipup.count(single, plan) == 1
        assert zipup.count(stuck, plan) == 0
        assert list(zipup.enumerate(stuck, plan)) == []


# ---------------------------------------------------------------- trees and plan choice


def test_parse_tree(room_problem):
    assert parse_tree(ROOM_TREE, room_problem) == ((0, 0), ((1, 2), 3))
    assert parse_tree(" ( T , T , S , V , Z ) ", room_problem) == ((((0, 0), 1), 2), 3)
    assert parse_tree("(((T)),(T,(S,(V,Z))))", room_problem) == (0, (0, (1, (2, 3))))


@pytest.mark.parametrize("tree, message", [
    ("((T,T),((S,V),X))", "unknown piece 'X'"),
    ("((T,T),(S,V))", "'Z' appears 0 times, expected 1"),
    ("((T,S),(V,Z))", "'T' appears 1 times, expected 2"),
    ("((T,T,T),((S,V),Z))", "'T' appears 3 times"),
    ("((T,T),((S,V),Z)", "expected ')'"),
    ("((T,T),((S,V),Z)))", "unexpected ')'"),
    ("", "ended early"),
    ("(,T)", "unexpected ','"),
])
def test_parse_tree_errors(room_problem, tree, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_tree(tree, room_problem)


def test_get_plan():
    assert isinstance(get_plan("balanced"), Balanced) and isinstance(get_plan("sweep"), Sweep)
    assert isinstance(get_plan("auto"), Auto)
    plan = Sweep()
    assert get_plan(plan) is plan
    with pytest.raises(UsageError, match="unknown plan 'nope'"):
        get_plan("nope")
    with pytest.raises(UsageError, match="--tree"):
        get_plan("sweep", tree="(T,T)")
    assert get_plan("balanced", tree="(T,T)").tree == "(T,T)" and get_plan("auto", tree="(T,T)").tree == "(T,T)"


def test_every_registered_plan_is_a_plan_under_its_own_name():
    assert sorted(PLANS_BY_NAME) == ["auto", "balanced", "depth", "sweep"]
    for name, cls in PLANS_BY_NAME.items():
        assert issubclass(cls, Plan) and cls.name == name and get_plan(name).name == name


def test_auto_picks_a_plan_and_runs_it(room_problem):
    assert isinstance(Auto().choose(room_problem), (Balanced, Sweep))
    assert isinstance(Auto(tree=ROOM_TREE).choose(room_problem), Balanced)
    r = zipup.solve(room_problem, "auto", count_only=True)
    assert r.count == 52 and r.plan in ("balanced", "sweep")
    assert Balanced().estimate(room_problem) > 0 and Sweep().estimate(room_problem) > 0


def test_count_only_results_cannot_list(room_problem):
    r = zipup.solve(room_problem, "balanced", count_only=True)
    with pytest.raises(UsageError, match="count_only"):
        r.configurations()


def test_memory_budget_does_not_change_results(room_problem, room_reference):
    # a small budget means small join blocks (1/64 of it), never other results
    for plan in ("balanced", "sweep"):
        r = zipup.solve(room_problem, plan, memory=4 << 20)
        assert listed(room_problem, r) == room_reference


def test_a_budget_too_small_stops_with_a_memory_budget_error(room_problem):
    for plan in ("balanced", "sweep"):
        with pytest.raises(zipup.errors.MemoryBudgetError, match="over the memory budget"):
            zipup.solve(room_problem, plan, memory=1)


def test_dominoes_2x2_listing():
    problem = zipup.as_problem(loads(DOMINO_2X2))
    want = {frozenset({("I", frozenset({(0, 0), (0, 1)})), ("I", frozenset({(1, 0), (1, 1)}))}),
            frozenset({("I", frozenset({(0, 0), (1, 0)})), ("I", frozenset({(0, 1), (1, 1)}))})}
    for plan in ("balanced", "sweep"):
        assert listed(problem, zipup.solve(problem, plan)) == want


@pytest.mark.slow
@pytest.mark.parametrize("fixed, want", [(False, 32), (True, 4)])
def test_north_colours_against_brute_force(fixed, want):
    """Seed 000's puzzle: 32 configurations; 4 with the red ell's orientation fixed."""
    import dataclasses

    from strategies import Model, PieceModel, brute_force

    puzzle = zipup.load("puzzles/north-colours.toml")
    if fixed:
        ell = dataclasses.replace(puzzle.pieces[0], rotate=False, mirror=False)
        puzzle = dataclasses.replace(puzzle, pieces=(ell,) + puzzle.pieces[1:])
    model = Model(ndim=2, box=puzzle.board.shape, board=dict(zip(puzzle.board.cells, puzzle.board.labels)),
                  pieces=[PieceModel(p.name, dict(zip(p.cells, p.labels)), p.count, p.colour, p.rotate,
                                     p.mirror) for p in puzzle.pieces],
                  separate=puzzle.separate)
    assert zipup.count(puzzle) == want
    assert len(brute_force(model)) == want
