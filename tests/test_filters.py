"""Stage 6: post-stage filters, against slide and touch tests written from the spec."""

from __future__ import annotations

import itertools
from collections import deque

import pytest
from hypothesis import given
from hypothesis import strategies as st

import zipup
from strategies import brute_force, engine_configurations, examples, models, neighbours
from zipup.errors import UsageError
from zipup.filters import Cover, Separation, Slidable, default_filters, parse_filter
from zipup.matrices import Configuration, Problem
from zipup.puzzle import loads

# ---------------------------------------------------------------- the slide test, by hand


class Room:
    """Space as the spec describes it: room cells, doorways, walls ('.' inside the drawing) and the
    open floor beyond the drawing."""

    def __init__(self, board_cells, doors, extent):
        self.room = frozenset(board_cells)
        self.doors = frozenset(doors)
        self.extent = tuple(extent)
        nd = len(self.extent)
        self.steps = [tuple(d if i == ax else 0 for i in range(nd)) for ax in range(nd) for d in (1, -1)]

    def walkable(self, cell):
        if cell in self.room or cell in self.doors:
            return True
        return any(x < 0 or x >= e for x, e in zip(cell, self.extent))  # beyond the drawing

    def moved(self, piece, step):
        return frozenset(tuple(a + b for a, b in zip(c, step)) for c in piece)

    def can_move(self, piece, step, others):
        return all(self.walkable(c) and c not in others for c in self.moved(piece, step))

    def movable(self, piece, pieces):
        others = frozenset().union(*(q for q in pieces if q is not piece))
        return any(self.can_move(piece, s, others) for s in self.steps)

    def quick(self, pieces):
        """Some piece can move one step, and once it is taken out another can still move."""
        for p in pieces:
            if self.movable(p, pieces):
                rest = [q for q in pieces if q is not p]
                if any(self.movable(q, rest) for q in rest):
                    return True
        return False

    def exact(self, pieces):
        """All pieces can be taken out one after another (breadth-first over positions)."""
        start = frozenset(pieces)
        seen, todo = {start}, deque([start])
        while todo:
            state = todo.popleft()
            if not state:
                return True
            for p in state:
                others = frozenset().union(*(q for q in state if q != p))
                for s in self.steps:
                    if not self.can_move(p, s, others):
                        continue
                    q = self.moved(p, s)
                    nxt = state - {p} if not (q & self.room) else (state - {p}) | {q}
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
        return False


def slide_reference(puzzle, mode):
    room = Room(puzzle.board.cells, puzzle.board.doors, puzzle.board.shape)
    return (lambda conf: room.quick([c for _, c in conf])) if mode == "quick" else \
        (lambda conf: room.exact([c for _, c in conf]))


# ---------------------------------------------------------------- the room


def test_room_three_configurations_pass_quick(room, room_problem):
    """3 of the 52 pass slidable = "quick" (zipup 0.1 issue), and the hand-made test agrees."""
    every = set(engine_configurations(room_problem, zipup.enumerate(room_problem, slidable="none")))
    assert len(every) == 52
    quick = engine_configurations(room_problem, zipup.enumerate(room_problem))  # the file asks for quick
    assert len(quick) == 3 == len(set(quick))
    keep = slide_reference(room, "quick")
    assert set(quick) == {c for c in every if keep(c)}
    assert zipup.count(room_problem) == 3
    assert zipup.count(room_problem, slidable="quick") == 3 and zipup.count(room_problem, slidable="none") == 52


def test_room_exact_slide_agrees_with_the_hand_made_search(room, room_problem):
    every = set(engine_configurations(room_problem, zipup.enumerate(room_problem, slidable="none")))
    exact = set(engine_configurations(room_problem, zipup.enumerate(room_problem, slidable="exact")))
    keep = slide_reference(room, "exact")
    assert exact == {c for c in every if keep(c)}
    # taking every piece out one after another includes a first and a second move
    quick = set(engine_configurations(room_problem, zipup.enumerate(room_problem, slidable="quick")))
    assert exact <= quick


# ---------------------------------------------------------------- random puzzles


@examples(60)
@given(models(separate=("none",)))
def test_quick_slide_filter_equals_the_hand_made_test(model):
    """On random boards with holes, doorways and empty cells: the configurations that pass are
    exactly those the hand-made slide test keeps, and a subset of the unfiltered ones."""
    puzzle = loads(model.toml())
    assert puzzle.board.shape == model.box
    problem = zipup.as_problem(puzzle)
    every = brute_force(model)
    got = engine_configurations(problem, zipup.enumerate(problem, slidable="quick"))
    assert len(got) == len(set(got))
    assert set(got) <= every
    keep = slide_reference(puzzle, "quick")
    assert set(got) == {c for c in every if keep(c)}
    assert zipup.count(problem, slidable="quick") == len(got)


@examples(30)
@given(models(separate=("none",), max_copies=3))
def test_exact_slide_filter_equals_the_hand_made_search(model):
    """The exact slide test searches every position (open boards make that slow), so: at most
    three pieces, and the first few configurations only."""
    puzzle = loads(model.toml())
    problem = zipup.as_problem(puzzle)
    confs = list(itertools.islice(zipup.solve(problem, "sweep").configurations(), 6))
    keep = slide_reference(puzzle, "exact")
    exact = Slidable("exact")
    for conf, mine in zip(confs, engine_configurations(problem, confs)):
        assert exact.keep(problem, conf) == keep(mine)


@examples(40)
@given(models(), st.sampled_from(["none", "quick"]))
def test_filters_only_remove_configurations(model, mode):
    """zipup.enumerate with filters gives a subset of the unfiltered listing (separation and
    cover filters included, as the file asks)."""
    problem = zipup.as_problem(loads(model.toml()))
    every = engine_configurations(problem, zipup.enumerate(problem, filters=[]))
    filtered = engine_configurations(problem, zipup.enumerate(problem, slidable=mode))
    assert set(filtered) <= set(every)
    assert len(set(filtered)) == len(filtered)
    if mode == "none":
        assert set(filtered) == set(every)


@examples(50)
@given(models(separate=("none",)), st.sampled_from(["edge", "corner"]))
def test_separation_filter_equals_the_touch_test(model, rule):
    """Separation(rule) keeps exactly the configurations where no two pieces (copies included) of
    one colour touch, checked on all configurations of the same puzzle without the rule."""
    problem = zipup.as_problem(loads(model.toml()))
    colour = {p.name: p.colour for p in model.pieces}
    sep = Separation(rule)

    def apart(conf):
        for (na, a), (nb, b) in itertools.combinations(conf, 2):
            if colour[na] is not None and colour[na] == colour[nb]:
                if {nb_ for c in a for nb_ in neighbours(c, rule)} & b:
                    return False
        return True

    confs = list(zipup.solve(problem, "sweep").configurations())
    for conf, mine in zip(confs, engine_configurations(problem, confs)):
        assert sep.keep(problem, conf) == apart(mine)
        assert Cover().keep(problem, conf)


# ---------------------------------------------------------------- filters one by one


def test_cover_rejects_overlaps_and_gaps():
    problem = zipup.as_problem(loads('name = "x"\n[board]\ncells = "###"\n'
                                     '[[piece]]\nname = "I"\ncells = "##"\n[[piece]]\nname = "o"\ncells = "#"\n'))
    rows = {tuple(problem.pieces[0].matrix.toarray()[r].tolist()): r for r in range(2)}
    left, right = rows[(1, 1, 0)], rows[(0, 1, 1)]
    cover = Cover()
    assert cover.keep(problem, Configuration(((0, left), (1, 2))))  # II o
    assert not cover.keep(problem, Configuration(((0, left), (1, 1))))  # o on top of I
    assert not cover.keep(problem, Configuration(((0, right),)))  # cell 0 left empty
    assert cover.in_plan and cover.name == "cover"


def test_default_filters_follow_the_file_and_the_override(room_problem):
    assert [repr(f) for f in default_filters(room_problem)] == ["Cover()", "Slidable('quick')"]
    assert [repr(f) for f in default_filters(room_problem, "none")] == ["Cover()"]
    assert [repr(f) for f in default_filters(room_problem, "exact")] == ["Cover()", "Slidable('exact')"]
    north = zipup.as_problem(loads('name = "x"\n[board]\nsize = [1, 2]\n[rules]\nseparate = "edge"\n'
                                   '[[piece]]\nname = "a"\ncolour = "red"\ncells = "#"\n'
                                   '[[piece]]\nname = "b"\ncolour = "red"\ncells = "#"\n'))
    assert [repr(f) for f in default_filters(north)] == ["Cover()", "Separation('edge')"]
    assert zipup.count(north) == 0  # two red cells side by side always touch


def test_filters_passed_explicitly(room_problem):
    everything = list(zipup.enumerate(room_problem, filters=[]))
    assert len(everything) == 52
    assert len(list(zipup.enumerate(room_problem, filters=[Cover(), Slidable("quick")]))) == 3
    assert zipup.count(room_problem, filters=[Cover()]) == 52
    assert len(list(zipup.enumerate(room_problem, slidable="none", limit=5))) == 5


@pytest.mark.parametrize("text, value", [("slidable=quick", "quick"), ("slidable=none", "none"),
                                          ("slidable = exact", "exact")])
def test_parse_filter(text, value):
    assert parse_filter(text) == ("slidable", value)


@pytest.mark.parametrize("text", ["slidable=maybe", "slidable", "sliding=quick", "=quick", ""])
def test_parse_filter_errors(text):
    with pytest.raises(UsageError, match="expected slidable=none, slidable=quick or slidable=exact"):
        parse_filter(text)


def test_slidable_rejects_unknown_modes():
    with pytest.raises(UsageError, match="expected none, quick or exact"):
        Slidable("maybe")


def test_exact_slide_gives_up_with_a_usage_error(room_problem):
    conf = next(iter(zipup.enumerate(room_problem, slidable="quick")))  # a piece can move
    with pytest.raises(UsageError, match="gave up after 1 positions"):
        Slidable("exact", max_states=1).keep(room_problem, conf)


def test_slide_test_needs_geometry(room_problem):
    bare = Problem(name="bare", columns=room_problem.columns, primary=room_problem.primary,
                   pieces=room_problem.pieces)
    conf = next(iter(zipup.enumerate(bare, filters=[])))
    with pytest.raises(UsageError, match="geometry"):
        Slidable("quick").keep(bare, conf)


def test_a_board_without_doors_opens_at_the_drawing_edges():
    """A 1x2 bar with two monominoes: the end piece slides out beyond the drawing, then the other."""
    p = loads('name = "x"\n[board]\nsize = [2, 2]\ncover = "partial"\n'
              '[[piece]]\nname = "a"\ncells = "#"\n[[piece]]\nname = "b"\ncells = "#"\n')
    assert zipup.count(p, slidable="exact") == 12 == zipup.count(p, slidable="none")
    walled = loads('name = "x"\n[board]\ncells = """\n....\n.##.\n....\n"""\n'
                   '[[piece]]\nname = "a"\ncells = "#"\n[[piece]]\nname = "b"\ncells = "#"\n')
    assert zipup.count(walled, slidable="none") == 2
    assert zipup.count(walled, slidable="quick") == 0 == zipup.count(walled, slidable="exact")
    door = loads('name = "x"\n[board]\ncells = """\n....\n.##D\n....\n"""\n'
                 '[[piece]]\nname = "a"\ncells = "#"\n[[piece]]\nname = "b"\ncells = "#"\n')
    assert zipup.count(door, slidable="exact") == 2 == zipup.count(door, slidable="quick")
