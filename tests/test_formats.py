"""Other people's formats (zipup/formats.py): DPF, geometric DPF, DLX, BurrTools, TOML export.

Counts are checked by two small counters written here, independent of zipup's engine:
``subset_count`` tries every set of rows (the definition, for tiny problems) and
``brute_count`` is a plain exact-cover backtracker.  Where the engine exists
(``zipup.count``) and xcover is installed, they must agree too.
"""

from __future__ import annotations

import dataclasses
import gzip
import itertools
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import zipup
from conftest import BAR_1D, DOMINO_2X2, SMALL_ROOM
from zipup.errors import PuzzleFileError, UsageError, ZipupError
from zipup.formats import MAX_XML_BYTES, export, read, reads
from zipup.matrices import PieceRows, Problem, configuration_matrices
from zipup.puzzle import loads

ROOT = Path(__file__).resolve().parent.parent
PUZZLES = ROOT / "puzzles"
ENGINE = hasattr(zipup, "count")


# ---------------------------------------------------------------- independent counters


def _rows(m, r):
    if m is None:
        return set()
    m = sp.csr_array(m)
    lo, hi = m.indptr[r], m.indptr[r + 1]
    return {int(c) for c, v in zip(m.indices[lo:hi], m.data[lo:hi]) if v}


def subset_count(problem):
    """Configurations by definition: every choice of rows, checked (tiny problems only)."""
    choices = []
    for p, pr in enumerate(problem.pieces):
        rows = [(p, r) for r in range(pr.n_placements)]
        if pr.count is None:
            choices.append([c for k in range(len(rows) + 1) for c in itertools.combinations(rows, k)])
        else:
            choices.append(list(itertools.combinations(rows, pr.count)))
    assert np.prod([len(c) for c in choices], dtype=float) <= 2e5, "subset_count is for tiny problems"
    cells, marks, forbids = {}, {}, {}
    for p, pr in enumerate(problem.pieces):
        for r in range(pr.n_placements):
            cells[p, r] = _rows(pr.matrix, r)
            marks[p, r] = _rows(pr.marks, r)
            forbids[p, r] = _rows(pr.forbids, r)
    total = 0
    for combo in itertools.product(*choices):
        chosen = [x for part in combo for x in part]
        cover = [0] * problem.n_columns
        for x in chosen:
            for c in cells[x]:
                cover[c] += 1
        if any(n > 1 for n in cover) or any(p and n != 1 for p, n in zip(problem.primary, cover)):
            continue
        if any(marks[a] & forbids[b] for a in chosen for b in chosen if a != b):
            continue
        total += 1
    return total


def brute_count(problem):
    """Configurations by backtracking on the uncovered item with the fewest options.

    Items: primary columns and one per piece copy; copies of a piece take rows in
    increasing order so that each set of rows is counted once.
    """
    primary = [i for i in range(problem.n_columns) if problem.primary[i]]
    item_of = {c: k for k, c in enumerate(primary)}
    n_items = len(primary)
    copy_item = {}
    for p, pr in enumerate(problem.pieces):
        for j in range(pr.count or 0):
            copy_item[p, j] = n_items
            n_items += 1
    options = []
    for p, pr in enumerate(problem.pieces):
        for r in range(pr.n_placements):
            cols = _rows(pr.matrix, r)
            colmask = sum(1 << c for c in cols)
            items = [item_of[c] for c in cols if c in item_of]
            mk = sum(1 << c for c in _rows(pr.marks, r))
            fb = sum(1 << c for c in _rows(pr.forbids, r))
            if pr.count is None:
                if not items:
                    raise NotImplementedError("count=None row without a primary column")
                options.append((sum(1 << i for i in items), items, colmask, mk, fb, p, None, r))
            for j in range(pr.count or 0):
                its = items + [copy_item[p, j]]
                options.append((sum(1 << i for i in its), its, colmask, mk, fb, p, j, r))

    def rec(active, need, cols, mk, fb, pos):
        if not need:
            return 1
        compat, counts = [], {}
        for o in active:
            bits, items, cm, om, of, p, j, r = o
            if bits & ~need or cm & cols or om & fb or of & mk:
                continue
            if j is not None and (((p, j - 1) in pos and r <= pos[p, j - 1])
                                  or ((p, j + 1) in pos and r >= pos[p, j + 1])):
                continue
            compat.append(o)
            for i in items:
                counts[i] = counts.get(i, 0) + 1
        best, best_n, x = None, None, need
        while x:
            low = x & -x
            x ^= low
            k = counts.get(low.bit_length() - 1, 0)
            if k == 0:
                return 0
            if best_n is None or k < best_n:
                best, best_n = low, k
        total = 0
        for o in compat:
            if o[0] & best:
                bits, _, cm, om, of, p, j, r = o
                if j is not None:
                    pos[p, j] = r
                total += rec(compat, need & ~bits, cols | cm, mk | om, fb | of, pos)
                if j is not None:
                    del pos[p, j]
        return total

    return rec(options, (1 << n_items) - 1, 0, 0, 0, {})


def dlx_count(text):
    """Knuth's semantics read straight off a DLX text: a small Algorithm C.

    Primary items are covered exactly once; a secondary item is used at most
    once, or any number of times with one and the same colour.
    """
    lines = [ln.strip() for ln in text.split("\n")]
    lines = [ln for ln in lines if ln and not ln.startswith("|")]
    primary = set(lines[0].split("|")[0].split())
    options = [[(t.partition(":")[0], t.partition(":")[2]) for t in ln.split()] for ln in lines[1:]]
    options = [o for o in options if any(i in primary for i, _ in o)]

    def fits(o, covered, colour):
        return all(i not in covered for i, _ in o if i in primary) and all(
            i not in colour or (c and colour[i] == c) for i, c in o if i not in primary)

    def rec(covered, colour):
        if covered == primary:
            return 1
        usable = [o for o in options if fits(o, covered, colour)]
        item = min(primary - covered, key=lambda p: sum(1 for o in usable if any(i == p for i, _ in o)))
        total = 0
        for o in usable:
            if any(i == item for i, _ in o):
                new = dict(colour)
                new.update((i, c) for i, c in o if i not in primary)
                total += rec(covered | {i for i, _ in o if i in primary}, new)
        return total

    return rec(set(), {})


def xcover_count(text, tmp_path):
    xcover = pytest.importorskip("xcover")
    from xcover.io import read_xcover_from_file

    path = tmp_path / "x.dlx"
    path.write_text(text)
    options, primary, secondary, coloured = read_xcover_from_file(path)
    # xcover 0.2.6 fails ("pop from empty list") on a secondary item no option uses, and
    # with a single item; an extra item in an extra option of its own changes no count.
    used = {t.partition(":")[0] for o in options for t in o}
    secondary = [s for s in secondary or () if s in used]
    options, primary = options + [["pad_"]], list(primary) + ["pad_"]
    return sum(1 for _ in xcover.covers(options, primary=primary, secondary=secondary, colored=coloured))


def test_counters_agree_on_a_tiny_problem():
    p = zipup.as_problem(loads(DOMINO_2X2))
    assert subset_count(p) == brute_count(p) == 2


# ---------------------------------------------------------------- the shipped puzzles

KNOWN = [  # file, configurations, fast enough for the brute-force counter in a fast test
    ("dpf-dominoes-2x3.dpf", 1, True),
    ("dpf-cutting-stick.dpf", 3, True),
    ("morse-shifted.dpf", 48, True),
    ("domino-7x8.toml", 20160, True),
    ("domino-7x8.dpf", 20160, False),
    ("morse.toml", 8574, False),  # about a minute
]
SLOW = pytest.mark.slow


@pytest.mark.parametrize("name,known", [pytest.param(n, k, id=n, marks=() if fast else SLOW)
                                        for n, k, fast in KNOWN])
def test_known_counts_brute_force(name, known):
    assert brute_count(zipup.as_problem(read(PUZZLES / name))) == known


@pytest.mark.skipif(not ENGINE, reason="zipup.count not there yet")
@pytest.mark.parametrize("name,known", [pytest.param(n, k, id=n) for n, k, _ in KNOWN])
def test_known_counts_engine(name, known):
    assert zipup.count(read(PUZZLES / name)) == known


def test_dpf_examples_are_the_seed_examples():
    p = read(PUZZLES / "dpf-dominoes-2x3.dpf")
    assert p.columns == tuple(range(6)) and p.primary.all() and p.puzzle is None
    assert [r.name for r in p.pieces] == ["1", "2", "3"]
    assert [r.count for r in p.pieces] == [1, 1, 1]
    assert p.pieces[1].matrix.toarray().tolist() == [[1, 0, 1, 0, 0, 0], [0, 0, 1, 0, 1, 0],
                                                     [0, 0, 0, 0, 1, 1]]
    assert all(r.matrix.dtype == np.uint8 and isinstance(r.matrix, sp.csr_array) for r in p.pieces)
    stick = read(PUZZLES / "dpf-cutting-stick.dpf")
    assert stick.pieces[2].matrix.toarray().tolist() == [[1, 0, 0, 0, 1], [0, 1, 0, 1, 0], [1, 1, 1, 0, 0]]


def test_morse_shifted_is_morse_without_original_offsets():
    puzzle = read(PUZZLES / "morse.toml")
    prob = configuration_matrices(puzzle)
    offset, pieces = 0, []
    for piece, rows in zip(puzzle.pieces, prob.pieces):
        m = rows.matrix
        keep = [r for r in range(m.shape[0]) if m.indices[m.indptr[r]:m.indptr[r + 1]].min() != offset]
        pieces.append(dataclasses.replace(rows, matrix=m[keep]))
        offset += len(piece.cells)
    shifted = dataclasses.replace(prob, pieces=tuple(pieces), puzzle=None)
    assert export(shifted, "dpf") == (PUZZLES / "morse-shifted.dpf").read_text()


def test_morse_board_is_the_alphabet():
    puzzle = read(PUZZLES / "morse.toml")
    assert puzzle.ndim == 1 and len(puzzle.board.cells) == 82 and puzzle.board.match
    assert "".join(puzzle.board.labels).startswith("o--ooo-o-o-oo")  # A B C D
    assert not any(p.rotate or p.mirror for p in puzzle.pieces)


def test_domino_dpf_is_the_toml_exported():
    assert export(read(PUZZLES / "domino-7x8.toml"), "dpf") == (PUZZLES / "domino-7x8.dpf").read_text()


def test_domino_grid_has_every_number_eight_times():
    labels = read(PUZZLES / "domino-7x8.toml").board.labels
    assert sorted(labels.count(d) for d in "0123456") == [8] * 7


@pytest.mark.parametrize("name", ["morse.toml", "domino-7x8.toml"])
def test_notes_state_counts_and_source(name):
    puzzle = read(PUZZLES / name)
    known = {n: k for n, k, _ in KNOWN}[name]
    assert str(known) in puzzle.notes and "Faase" in puzzle.notes + puzzle.source


def test_domino_notes_explain_the_typo():
    notes = read(PUZZLES / "domino-7x8.toml").notes
    assert "5 4 6 3 4 5 6 5" in notes and "5 5 6 3 4 5 6 5" in notes


# ---------------------------------------------------------------- round trips through DPF and DLX

@pytest.mark.parametrize("text", [DOMINO_2X2, BAR_1D, SMALL_ROOM], ids=["dominoes", "bar", "small-room"])
@pytest.mark.parametrize("fmt", ["dpf", "dlx"])
def test_export_keeps_the_count_small(text, fmt):
    puzzle = loads(text)
    want = subset_count(zipup.as_problem(puzzle))
    back = reads(export(puzzle, fmt), fmt)
    assert brute_count(back) == want
    if ENGINE:
        assert zipup.count(back) == want


@pytest.mark.parametrize("name", ["dpf-dominoes-2x3.dpf", "dpf-cutting-stick.dpf", "room.toml",
                                  "north-colours.toml", pytest.param("morse-shifted.dpf", marks=SLOW),
                                  pytest.param("domino-7x8.toml", marks=SLOW)])
def test_export_dlx_keeps_the_count(name):
    obj = read(PUZZLES / name)
    problem = zipup.as_problem(obj)
    back = reads(export(obj, "dlx"), "dlx", path=name)
    want = brute_count(problem)
    assert brute_count(back) == want
    if ENGINE:
        assert zipup.count(back) == zipup.count(problem, filters=[]) == want


@pytest.mark.skipif(not ENGINE, reason="zipup.count not there yet")
@pytest.mark.parametrize("name", ["dpf-dominoes-2x3.dpf", "dpf-cutting-stick.dpf", "morse-shifted.dpf",
                                  "domino-7x8.toml", "morse.toml", pytest.param("room.toml", marks=SLOW)])
def test_export_dpf_keeps_the_engine_count(name):
    obj = read(PUZZLES / name)
    back = reads(export(obj, "dpf"), "dpf")
    assert zipup.count(back) == zipup.count(obj, filters=[])


def test_dpf_round_trip_is_exact():
    text = (PUZZLES / "dpf-cutting-stick.dpf").read_text()
    once = export(reads(text, "dpf"), "dpf")
    assert export(reads(once, "dpf"), "dpf") == once
    assert [ln.split() for ln in once.splitlines()] == [ln.split() for ln in text.splitlines()]


def test_dpf_refuses_colour_constraints():
    with pytest.raises(ZipupError, match="DPF cannot express"):
        export(read(PUZZLES / "north-colours.toml"), "dpf")
    with pytest.raises(ZipupError, match="DPF cannot express"):
        export(reads("a | s\na s:x\n", "dlx"), "dpf")


def test_dlx_export_text():
    text = export(read(PUZZLES / "dpf-dominoes-2x3.dpf"), "dlx")
    lines = [ln for ln in text.splitlines() if not ln.startswith("|")]
    assert lines[0] == "c0 c1 c2 c3 c4 c5 p0 p1 p2"
    assert lines[1:3] == ["p0 c0 c1", "p0 c2 c3"] and len(lines) == 8
    room = export(read(PUZZLES / "room.toml"), "dlx")
    head = next(ln for ln in room.splitlines() if not ln.startswith("|"))
    primary, secondary = head.split("|")
    assert primary.split() == ["T.1", "T.2", "S", "V", "Z"]
    assert "r1c1" in secondary.split() and len(secondary.split()) == 24 + 44  # cells, order items
    names = head.replace("|", " ").split()
    assert all(len(n) <= 8 and ":" not in n for n in names)


def test_dlx_export_copies_count_once(tmp_path):
    # Two copies on three cells of a bar: {0,1}+{2,3}... here 3 one-cell pieces in 4 cells.
    problem = Problem(name="bar", columns=(0, 1, 2, 3), primary=np.zeros(4, bool),
                      pieces=(PieceRows("x", "x", 3, None, sp.csr_array(np.eye(4, dtype=np.uint8))),))
    assert subset_count(problem) == 4  # C(4, 3)
    text = export(problem, "dlx")
    assert dlx_count(text) == 4
    assert brute_count(reads(export(problem, "dpf"), "dpf")) == 4


def test_export_nothing_to_place():
    empty = Problem(name="empty", columns=("a",), primary=np.zeros(1, bool),
                    pieces=(PieceRows("x", "x", None, None, sp.csr_array((0, 1), dtype=np.uint8)),))
    assert subset_count(empty) == 1
    text = export(empty, "dlx")
    assert not next(ln for ln in text.splitlines() if not ln.startswith("|")).lstrip().startswith("|")
    assert dlx_count(text) == 1
    assert brute_count(reads(export(empty, "dpf"), "dpf")) == 1


@st.composite
def problems(draw, marks=True):
    """Tiny random Problems: mixed primary columns, counts 1, 2 or None, optional marks."""
    n = draw(st.integers(1, 4))
    primary = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    n_marks = draw(st.integers(0, 2)) if marks else 0
    pieces = []
    budget = 9
    for i in range(draw(st.integers(1, 3))):
        k = draw(st.integers(1, max(1, min(4, budget))))
        budget -= k
        rows = [draw(st.lists(st.booleans(), min_size=n, max_size=n)) for _ in range(k)]
        mat = sp.csr_array(np.array(rows, dtype=np.uint8).reshape(k, n))
        mk = fb = None
        if n_marks:
            bits = st.lists(st.booleans(), min_size=k * n_marks, max_size=k * n_marks)
            mk = sp.csr_array(np.array(draw(bits), dtype=np.uint8).reshape(k, n_marks))
            fb = sp.csr_array(np.array(draw(bits), dtype=np.uint8).reshape(k, n_marks))
        count = draw(st.sampled_from([1, 1, 2, None]))
        pieces.append(PieceRows(f"P{i}", str(i), count, None, mat, marks=mk, forbids=fb))
        if budget <= 0:
            break
    return Problem(name="random", columns=tuple(range(n)), primary=primary, pieces=tuple(pieces),
                   n_marks=n_marks)


def _no_empty_counted_rows(problem):
    return all(pr.count is None or np.diff(pr.matrix.indptr).all() for pr in problem.pieces)


@settings(max_examples=60)
@given(problems())
def test_dlx_export_is_exact_random(problem):
    want = subset_count(problem)
    text = export(problem, "dlx")
    assert dlx_count(text) == want
    assert brute_count(reads(text, "dlx")) == want


@settings(max_examples=60)
@given(problems(marks=False))
def test_dpf_export_is_exact_random(problem):
    try:
        text = export(problem, "dpf")
    except ZipupError as e:
        # Only a placement of a counted piece that covers nothing has no DPF orientation.
        assert "covers no cell" in str(e) and not _no_empty_counted_rows(problem)
        return
    back = reads(text, "dpf")
    assert back.primary.all() and all(pr.count == 1 for pr in back.pieces)
    assert brute_count(back) == subset_count(problem)


@settings(max_examples=40)
@given(problem=problems())
def test_xcover_agrees_random(problem, tmp_path_factory):
    pytest.importorskip("xcover")
    text = export(problem, "dlx")
    assert xcover_count(text, tmp_path_factory.mktemp("x")) == subset_count(problem)


@pytest.mark.parametrize("name", ["dpf-dominoes-2x3.dpf", "dpf-cutting-stick.dpf", "morse-shifted.dpf",
                                  "room.toml", "north-colours.toml", "domino-7x8.toml", "morse.toml"])
def test_xcover_counts_exported_dlx(name, tmp_path):
    pytest.importorskip("xcover")
    obj = read(PUZZLES / name)
    known = {n: k for n, k, _ in KNOWN}
    want = {"room.toml": 52, "north-colours.toml": 32}.get(name, known.get(name))
    assert xcover_count(export(obj, "dlx"), tmp_path) == want


# ---------------------------------------------------------------- DLX reading


def test_dlx_colours_become_marks():
    p = reads("| a comment\n\na b | s t\n| another\na s:x t\nb s:x\nb s:y\nb s\n", "dlx", path="x.dlx")
    assert p.name == "x" and p.columns == ("a", "b", "s", "t")
    assert p.primary.tolist() == [True, True, False, False]
    rows = p.pieces[0]
    assert (rows.name, rows.count, p.n_marks) == ("options", None, 2)  # (s, x), (s, y)
    assert rows.matrix.toarray().tolist() == [[1, 0, 0, 1], [0, 1, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0]]
    assert rows.marks.toarray().tolist() == [[1, 0], [1, 0], [0, 1], [0, 0]]
    assert rows.forbids.toarray().tolist() == [[0, 1], [0, 1], [1, 0], [1, 1]]
    assert subset_count(p) == 1  # {a s:x t, b s:x}; 'b s:y' and 'b s' clash with a's s:x


def test_dlx_options_without_primary_items_are_dropped():
    p = reads("a | s\ns\na\n", "dlx")
    assert p.pieces[0].n_placements == 1 and subset_count(p) == 1


@settings(max_examples=80)
@given(st.lists(st.lists(st.tuples(st.sampled_from("abcstu"), st.sampled_from(["", ":x", ":y"])),
                         max_size=4), max_size=8))
def test_dlx_reading_matches_knuth_random(raw):
    lines = []
    for opt in raw:
        seen, toks = set(), []
        for item, colour in opt:
            if item in seen:
                continue
            seen.add(item)
            toks.append(item + (colour if item in "stu" else ""))
        if toks:
            lines.append(" ".join(toks))
    text = "a b c | s t u\n" + "\n".join(lines) + "\n"
    problem = reads(text, "dlx")
    assert subset_count(problem) == dlx_count(text)


# ---------------------------------------------------------------- geometric DPF

DPFG_2D = """\
2 1
6
  0 0 1   1 0 2   2 0 1
  0 1 2   1 1 1   2 1 2
3
  2 2   0 0 1  1 0 2
  2 2   0 0 1  0 1 2
  2 3   5 5 2  6 5 1
"""


def test_dpfg_2d_colours():
    p = reads(DPFG_2D, "dpfg", path="tiny.dpfg")
    b = p.board
    assert (b.ndim, b.shape, b.match, b.cover) == (2, (2, 3), True, "exact")
    assert b.cells == ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2))
    assert b.labels == ("1", "2", "1", "2", "1", "2")  # (row, col) = (y, x)
    assert [(q.name, q.rotate, q.mirror) for q in p.pieces] == [("1", True, False), ("2", True, False),
                                                                ("3", True, True)]
    assert p.pieces[1].cells == ((0, 0), (1, 0)) and p.pieces[1].labels == ("1", "2")
    assert p.pieces[2].labels == ("2", "1")
    assert brute_count(configuration_matrices(p)) == subset_count(configuration_matrices(p))


def test_dpfg_v_values_and_dimensions():
    one = reads("1 0\n4\n0\n1\n2\n3\n2\n2 1  5 6\n2 2  0 1\n", "dpfg")
    assert one.ndim == 1 and one.board.cells == ((0,), (1,), (2,), (3,)) and not one.board.match
    assert [(q.rotate, q.mirror) for q in one.pieces] == [(False, False), (True, False)]
    assert brute_count(configuration_matrices(one)) == 2
    three = reads("3 0\n4\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n2\n2 3  0 0 0 0 0 1\n2 1  0 0 0 1 0 0\n", "dpfg")
    assert three.ndim == 3 and three.board.shape == (1, 2, 2)
    assert [(q.rotate, q.mirror) for q in three.pieces] == [(True, False), (False, False)]
    assert brute_count(configuration_matrices(three)) == 2  # the fixed one lies along x: two places


def test_dpfg_matches_toml_domino():
    toml = read(PUZZLES / "domino-7x8.toml")
    lines = ["2 1", str(len(toml.board.cells))]
    lines += [f"{c} {r} {lab}" for (r, c), lab in zip(toml.board.cells, toml.board.labels)]
    lines.append(str(len(toml.pieces)))
    for piece in toml.pieces:
        lines.append("2 2")
        lines += [f"{c} {r} {lab}" for (r, c), lab in zip(piece.cells, piece.labels)]
    p = reads("\n".join(lines) + "\n", "dpfg")
    assert p.board == toml.board
    a, b = configuration_matrices(p), configuration_matrices(toml)
    assert [(x.matrix != y.matrix).nnz for x, y in zip(a.pieces, b.pieces)] == [0] * 28


def test_dpfg_to_toml_round_trip():
    p = reads(DPFG_2D, "dpfg", path="tiny.dpfg")
    assert loads(export(p, "toml"), path="tiny.dpfg") == p


# ---------------------------------------------------------------- TOML export


@pytest.mark.parametrize("path", sorted(PUZZLES.glob("*.toml")), ids=lambda p: p.name)
def test_toml_round_trip(path):
    puzzle = zipup.load(path)
    assert loads(export(puzzle, "toml"), path=puzzle.path) == puzzle
    assert loads(export(configuration_matrices(puzzle), "toml"), path=puzzle.path) == puzzle


def test_toml_escapes_text():
    puzzle = dataclasses.replace(loads(DOMINO_2X2), name='q"\\\t', notes='a"b\\c\n"""x\n"', source="s\x7f")
    assert loads(export(puzzle, "toml")) == puzzle


def test_toml_refuses_what_it_cannot_say():
    with pytest.raises(ZipupError, match="no geometry"):
        export(read(PUZZLES / "dpf-cutting-stick.dpf"), "toml")
    puzzle = loads(DOMINO_2X2)
    holes = dataclasses.replace(puzzle, board=dataclasses.replace(puzzle.board, optional=frozenset({(0, 0)})))
    with pytest.raises(ZipupError, match="may stay empty"):
        export(holes, "toml")
    flat = reads("2 0\n3\n0 0\n2 0\n3 0\n1\n3 1 0 0 2 0 3 0\n", "dpfg")  # a one-row 2-D board with a hole
    with pytest.raises(ZipupError, match="one row high"):
        export(flat, "toml")
    with pytest.raises(UsageError, match="cannot write"):
        export(puzzle, "xmpuzzle")


# ---------------------------------------------------------------- BurrTools


def _burr(result, pieces, extra="", problem_attrs="", grid="0", colours=""):
    """A BurrTools document: result and pieces as (x, y, z, voxels[, count]) tuples."""
    shapes = [result] + [p[:4] for p in pieces]
    vox = "".join(f'<voxel x="{x}" y="{y}" z="{z}" type="0">{v}</voxel>\n' for x, y, z, v in shapes)
    parts = "".join(f'<shape id="{i + 1}" count="{p[4] if len(p) > 4 else 1}"/>'
                    for i, p in enumerate(pieces))
    return (f'<?xml version="1.0"?>\n<puzzle version="2">\n<gridType type="{grid}"/>\n'
            f'<colors>{colours}</colors>\n'
            f'<shapes>\n{vox}</shapes>\n<problems>\n<problem {problem_attrs}>\n<shapes>{parts}</shapes>\n'
            f'<result id="0"/>\n{extra}</problem>\n</problems>\n</puzzle>\n')


def test_xmpuzzle_box_of_dominoes(tmp_path):
    text = _burr((2, 2, 1, "####"), [(2, 1, 1, "##", 2)])
    path = tmp_path / "box.xmpuzzle"
    path.write_bytes(gzip.compress(text.encode()))
    p = read(path)
    assert p.ndim == 3 and p.board.shape == (1, 2, 2) and p.board.cover == "exact" and not p.board.optional
    assert [(q.name, q.count, q.rotate, q.mirror) for q in p.pieces] == [("S2", 2, True, False)]
    assert brute_count(configuration_matrices(p)) == 2
    assert read(path, format="xmpuzzle") == reads(text, "xmpuzzle", path=str(path))  # plain XML too
    assert loads(export(p, "toml"), path=str(path)) == p


def test_xmpuzzle_variable_voxels_and_problem_choice():
    text = _burr((3, 1, 1, "#+#"), [(1, 1, 1, "#", 2)]).replace(
        "</problems>", '<problem name="second"><shapes><shape id="1" count="3"/></shapes><result id="0"/>'
                       "</problem></problems>")
    p = reads(text, "xmpuzzle")
    assert p.board.optional == frozenset({(0, 0, 1)}) and len(p.board.cells) == 3
    prob = configuration_matrices(p)
    assert prob.primary.tolist() == [True, False, True]
    assert brute_count(prob) == 1  # the middle stays empty; the copies are interchangeable
    q = reads(text, "xmpuzzle", problem="second", path="m.xmpuzzle")
    assert q == reads(text, "xmpuzzle", problem=1, path="m.xmpuzzle")
    assert q.name == "m: second" and q.pieces[0].count == 3
    with pytest.raises(UsageError, match="2 problems"):
        reads(text, "xmpuzzle", problem=5)
    with pytest.raises(UsageError, match="no problem named"):
        reads(text, "xmpuzzle", problem="third")


def test_xmpuzzle_coordinates_and_rotations():
    # Voxels run x fastest, then y, then z; zipup's cells are (layer, row, col) = (z, y, x).
    text = _burr((2, 2, 2, "########"), [(2, 2, 1, "###_"), (2, 2, 1, "#___"), (2, 2, 1, "####")])
    p = reads(text, "xmpuzzle")
    assert p.board.shape == (2, 2, 2)
    assert p.pieces[0].cells == ((0, 0, 0), (0, 0, 1), (0, 1, 0))
    # The square fills one of 6 half-cubes; the L takes 3 of the other 4 cells (4 ways).
    assert brute_count(configuration_matrices(p)) == 24


def test_xmpuzzle_colours():
    colours = '<color red="255" green="0" blue="0"/><color red="0" green="0" blue="255"/>'
    pairs = '<bitmap><pair piece="0" result="0"/><pair piece="1" result="1"/></bitmap>\n'
    text = _burr((2, 1, 1, "#1#2"), [(1, 1, 1, "#1"), (1, 1, 1, "#2")], extra=pairs, colours=colours)
    p = reads(text, "xmpuzzle")
    assert p.board.match and p.board.labels == ("0", "1")
    assert [q.labels for q in p.pieces] == [("0",), ("1",)]
    assert brute_count(configuration_matrices(p)) == 1
    # Without colours defined, colour numbers mean nothing: both orders.
    assert brute_count(configuration_matrices(reads(text.replace(colours, ""), "xmpuzzle"))) == 2


def _raises(text, fragments, line=None, path="bad.xmpuzzle", **kw):
    with pytest.raises(PuzzleFileError) as e:
        reads(text, kw.pop("format", "xmpuzzle"), path=path, **kw)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(path)
    for f in fragments:
        assert f in msg, (f, msg)
    assert e.value.line == line, msg
    return e.value


GOOD = _burr((2, 1, 1, "##"), [(1, 1, 1, "#", 2)])

BAD_XML = [
    ("not-xml", "<puzzle><shapes></puzzle>", ["not well-formed XML", "mismatched tag"], 1),
    ("truncated", GOOD[:200], ["not well-formed XML"], None),
    ("doctype", '<?xml version="1.0"?>\n<!DOCTYPE puzzle [<!ENTITY a "b">]>\n<puzzle/>', ["DOCTYPE"], 2),
    ("billion-laughs", '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
     ' <!ENTITY lol2 "&lol;&lol;&lol;">\n]>\n<lolz>&lol2;</lolz>', ["DOCTYPE"], 2),
    ("not-a-puzzle", "<?xml version='1.0'?>\n<html/>", ["<puzzle>", "<html>"], 2),
    ("other-grid", GOOD.replace('type="0"/>', 'type="2"/>', 1), ["grid type 2", "spheres", "cube"], 3),
    ("voxel-count", GOOD.replace(">##<", ">###<"), ["shape 0", "needs 2 voxels", "found 3"], 6),
    ("voxel-char", GOOD.replace(">##<", ">#x<"), ["voxel 2 of shape 0", "'x'", "'_', '#' or '+'"], 6),
    ("voxel-size", GOOD.replace('x="2"', 'x="two"'), ["x='two'", "integer"], 6),
    ("no-problems", GOOD.split("<problems>")[0] + "<problems/></puzzle>", ["no <problem>"], 9),
    ("bad-shape-id", GOOD.replace('<shape id="1"', '<shape id="7"'), ["id=7", "0 to 1"], 11),
    ("no-result", GOOD.replace('<result id="0"/>', ""), ["no <result>"], 10),
    ("min-max", GOOD.replace('count="2"', 'min="1" max="2"'), ["1 to 2 times", "min = max"], 11),
    ("area", GOOD.replace('count="2"', 'count="3"'), ["3 voxels", "expected 2:", "no assembly"], 10),
    ("max-holes", _burr((3, 1, 1, "#++"), [(1, 1, 1, "#")], problem_attrs='maxHoles="1"'),
     ["at most 1 holes", "leave 2"], 10),
    ("variable-piece", GOOD.replace(">#<", ">+<"), ["variable voxels", "result shape"], 7),
    ("neutral-mix", _burr((2, 1, 1, "#1#"), [(1, 1, 1, "#1"), (1, 1, 1, "#")],
                          colours='<color red="1" green="1" blue="1"/>'), ["neutral and coloured"], 11),
    ("partial-colours", _burr((2, 1, 1, "#1#2"), [(1, 1, 1, "#1"), (1, 1, 1, "#2")],
                              extra='<bitmap><pair piece="0" result="0"/><pair piece="0" result="1"/>'
                                    '<pair piece="1" result="1"/></bitmap>',
                              colours='<color red="1" green="1" blue="1"/>'
                                      '<color red="2" green="2" blue="2"/>'),
     ["only partly allowed"], 11),
]


@pytest.mark.parametrize("text,fragments,line", [pytest.param(t, f, n, id=i) for i, t, f, n in BAD_XML])
def test_xmpuzzle_errors(text, fragments, line):
    if line is None:
        with pytest.raises(PuzzleFileError) as e:
            reads(text, "xmpuzzle", path="bad.xmpuzzle")
        assert "\n" not in str(e.value) and e.value.line is not None
        for f in fragments:
            assert f in str(e.value)
        return
    _raises(text, fragments, line)


def test_xmpuzzle_gzip_bomb_and_bad_gzip(tmp_path):
    # gzip members may be concatenated: 65 copies of a 1 MiB member make a 65 MiB stream.
    bomb = gzip.compress(b" " * 2**20) * (MAX_XML_BYTES // 2**20 + 1)
    assert len(bomb) < 2**20
    e = _raises(bomb, ["decompresses to more than 64 MiB"])
    assert e.line is None
    _raises(b"\x1f\x8b\x08\x00garbage", ["not a valid gzip file"])
    _raises(gzip.compress(GOOD.encode())[:-20], ["not a valid gzip file"])


# ---------------------------------------------------------------- DPF, DPFG and DLX errors

BAD_TEXT = [
    # DPF
    ("dpf-truncated", "dpf", "6\n3\n  2\n    2 0 1\n", ["end of the file", "piece 1, orientation 2"], 4),
    ("dpf-too-many-pieces", "dpf", "2\n1\n1\n2 0 1\n1\n1 0\n", ["end of the file", "'1'"], 5),
    ("dpf-negative", "dpf", "6\n1\n1\n2 0 -1\n", ["location 2 of piece 1, orientation 1", "0 to 5", "-1"], 4),
    ("dpf-out-of-range", "dpf", "6\n1\n1\n2\n0\n6\n", ["0 to 5", "found 6"], 6),
    ("dpf-not-a-number", "dpf", "6\n3\nx\n", ["number of orientations of piece 1", "'x'"], 3),
    ("dpf-float", "dpf", "6.0\n", ["number of locations", "'6.0'"], 1),
    ("dpf-zero-locations", "dpf", "0\n1\n", ["number of locations", ">= 1", "found 0"], 1),
    ("dpf-long-orientation", "dpf", "2\n1\n1\n3 0 1 0\n", ["locations of piece 1", "1 to 2", "3"], 4),
    ("dpf-repeated", "dpf", "3\n1\n1\n2 1 1\n", ["location 1 twice"], 4),
    ("dpf-empty", "dpf", "", ["number of locations", "end of the file"], 1),
    # DPFG
    ("dpfg-dims", "dpfg", "4 0\n", ["number of dimensions", "1 to 3", "4"], 1),
    ("dpfg-colours-flag", "dpfg", "2 2\n", ["use-colours", "0 to 1"], 1),
    ("dpfg-truncated", "dpfg", "2 1\n2\n0 0 1\n1 0\n", ["colour of location 1", "end of the file"], 4),
    ("dpfg-repeated-location", "dpfg", "1 0\n2\n3\n3\n", ["location 1", "location 0", "distinct"], 4),
    ("dpfg-v", "dpfg", "1 0\n1\n0\n1\n1 4 0\n", ["v-value", "1 to 3", "4"], 5),
    ("dpfg-v2-in-3d", "dpfg", "3 0\n1\n0 0 0\n1\n1 2\n0 0 0\n", ["v = 2", "3-D"], 5),
    ("dpfg-area", "dpfg", "1 0\n2\n0\n1\n1\n1 1 0\n", ["1 cells", "2 locations"], 5),
    ("dpfg-colour-missing", "dpfg", "1 1\n1\n0 1\n1\n1 1 0 2\n", ["colour 2", "no location"], 5),
    ("dpfg-too-long", "dpfg", "1 0\n1\n0\n1\n1 1 0\n9\n", ["end of the file after", "'9'"], 6),
    # DLX
    ("dlx-empty", "dlx", "| only a comment\n\n", ["line of item names"], 2),
    ("dlx-unknown", "dlx", "a b\na\nb c\n", ["unknown item 'c'", "line 1"], 3),
    ("dlx-twice-in-option", "dlx", "a b\na a\n", ["'a' appears twice"], 2),
    ("dlx-primary-colour", "dlx", "a | s\na:x s\n", ["primary item 'a'", "colour"], 2),
    ("dlx-empty-colour", "dlx", "a | s\na s:\n", ["non-empty colour", "'s:'"], 2),
    ("dlx-duplicate-item", "dlx", "| c\na b a\n", ["'a' is named twice"], 2),
    ("dlx-two-bars", "dlx", "a | b | c\n", ["at most one '|'"], 1),
    ("dlx-colon-in-name", "dlx", "a b:x\n", ["contains ':'"], 1),
]


@pytest.mark.parametrize("fmt,text,fragments,line", [pytest.param(f, t, fr, n, id=i)
                                                     for i, f, t, fr, n in BAD_TEXT])
def test_text_format_errors(fmt, text, fragments, line, tmp_path):
    path = tmp_path / f"bad.{fmt}"
    path.write_text(text)
    with pytest.raises(PuzzleFileError) as e:
        read(path)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{path}, line {line}: "), msg
    assert e.value.line == line and e.value.path == str(path)
    for f in fragments:
        assert f in msg, (f, msg)


def test_read_dispatch(tmp_path):
    dpf = (PUZZLES / "dpf-cutting-stick.dpf").read_text()
    odd = tmp_path / "stick.txt"
    odd.write_text(dpf)
    with pytest.raises(UsageError, match="extension '.txt'"):
        read(odd)
    assert read(odd, format="dpf").n_columns == 5
    assert zipup.load(odd, format="dpf").n_columns == 5
    with pytest.raises(UsageError, match="unknown format"):
        read(odd, format="burr")
    with pytest.raises(PuzzleFileError, match="no such file"):
        read(tmp_path / "missing.dpf")
    with pytest.raises(UsageError, match="only applies to BurrTools"):
        read(PUZZLES / "dpf-cutting-stick.dpf", problem=1)
    assert read(PUZZLES / "room.toml") == zipup.load(PUZZLES / "room.toml")
    bad = tmp_path / "bad.dlx"
    bad.write_bytes(b"a b\n\xff\n")
    with pytest.raises(PuzzleFileError, match="not UTF-8") as e:
        read(bad)
    assert e.value.line == 2
