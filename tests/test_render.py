"""Stage 9: text drawings, JSON records, SVG sheets, tables."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given

import zipup
from strategies import engine_configurations, examples, models
from zipup import render
from zipup.errors import UsageError
from zipup.matrices import Problem
from zipup.puzzle import loads

SVG = "{http://www.w3.org/2000/svg}"

#: The three room configurations that pass slidable = "quick" (zipup 0.1 issue).
ROOM_QUICK = {
    "T T T T Z Z / T T T . Z V / T S S Z Z V / S S . V V V",
    "V V V T T T / V . Z Z T T / V S S Z T T / S S . Z Z T",
    "V V V . S S / V Z Z S S T / V Z . T T T / Z Z T T T T",
}


def test_room_quick_drawings(room_problem):
    got = {render.text(room_problem, c) for c in zipup.enumerate(room_problem)}
    assert got == {d.replace(" / ", "\n") for d in ROOM_QUICK}


def parse_drawing(text, ndim, extent):
    """Read a text drawing back: {position in the room's bounding box: character}."""
    lines = text.split("\n")
    out = {}
    if ndim == 1:
        for c, ch in enumerate(lines[0][::2]):
            out[(c,)] = ch
    elif ndim == 2:
        for r, line in enumerate(lines):
            for c, ch in enumerate(line[::2]):
                out[(r, c)] = ch
    else:
        width = 2 * extent[2] - 1 + 3  # a layer's row, then three spaces
        for r, line in enumerate(lines):
            for l in range(extent[0]):
                part = line[l * width:l * width + 2 * extent[2] - 1]
                for c, ch in enumerate(part[::2]):
                    out[(l, r, c)] = ch
    return out


@examples(40)
@given(models())
def test_text_drawings_read_back(model):
    """Every piece's label stands on exactly its cells, '.' on empty room cells, nothing else;
    cells are separated by single spaces and lines carry no trailing spaces."""
    problem = zipup.as_problem(loads(model.toml()))
    labels = {p.name: p.label for p in problem.pieces}
    lo = [min(c[i] for c in model.board) for i in range(model.ndim)]
    hi = [max(c[i] for c in model.board) for i in range(model.ndim)]
    extent = [h - l + 1 for h, l in zip(hi, lo)]
    confs = list(zipup.solve(problem, "sweep").configurations())[:20]
    for conf, mine in zip(confs, engine_configurations(problem, confs)):
        text = render.text(problem, conf)
        assert all(line == line.rstrip() for line in text.split("\n"))
        assert len(text.split("\n")) == (1 if model.ndim == 1 else extent[-2])
        grid = parse_drawing(text, model.ndim, extent)
        want = {tuple(x - l for x, l in zip(c, lo)): "." for c in model.board}
        for name, cells in mine:
            want.update({tuple(x - l for x, l in zip(c, lo)): labels[name] for c in cells})
        assert {k: v for k, v in grid.items() if v != " "} == want


def test_text_in_3d_draws_layers_side_by_side():
    p = loads('name = "x"\n[board]\nsize = [2, 1, 2]\n[[piece]]\nname = "A"\ncoords = [[0, 0, 0], [1, 0, 0]]\n'
              '[[piece]]\nname = "B"\ncoords = [[0, 0, 0], [1, 0, 0]]\n')
    problem = zipup.as_problem(p)
    drawings = sorted(render.text(problem, c) for c in zipup.enumerate(problem))
    # both upright (one column each), or both lying in a layer
    assert drawings == ["A A   B B", "A B   A B", "B A   B A", "B B   A A"]


def test_text_without_geometry_lists_locations(room_problem):
    bare = Problem(name="bare", columns=tuple(f"c{k}" for k in range(24)), primary=room_problem.primary,
                   pieces=room_problem.pieces)
    conf = next(iter(zipup.enumerate(bare, filters=[])))
    lines = render.text(bare, conf).split("\n")
    assert [ln.split(":")[0] for ln in lines] == ["T", "T", "S", "V", "Z"]
    assert all(len(ln.split()) == 5 or len(ln.split()) == 6 for ln in lines)  # name + 4 or 5 cells


@examples(30)
@given(models())
def test_json_records_hold_every_copy(model):
    problem = zipup.as_problem(loads(model.toml()))
    confs = list(zipup.solve(problem, "sweep").configurations())[:10]
    for k, (conf, mine) in enumerate(zip(confs, engine_configurations(problem, confs)), 1):
        rec = json.loads(render.dumps(render.as_record(problem, conf, k)))
        assert rec["index"] == k and set(rec) == {"index", "pieces"}
        assert {name: len(copies) for name, copies in rec["pieces"].items()} == {
            p.name: p.count for p in model.pieces}
        back = {(name, frozenset(tuple(c) for c in cells)) for name, copies in rec["pieces"].items()
                for cells in copies}
        assert back == set(mine)
        for copies in rec["pieces"].values():
            for cells in copies:
                assert all(isinstance(c, list) and len(c) == model.ndim for c in cells)


def test_svg_sheet_is_well_formed(room_problem):
    confs = list(zipup.enumerate(room_problem, slidable="none"))
    doc = render.svg(room_problem, confs, columns=5)
    root = ET.fromstring(doc)
    assert root.tag == SVG + "svg"
    groups = root.findall(SVG + "g")
    assert len(groups) == 52
    for k, g in enumerate(groups, 1):
        assert g.find(SVG + "title").text == f"configuration {k}"
        assert len(g.findall(SVG + "rect")) == 24 + 22  # the room, then the 22 piece cells
    assert float(root.get("width")) > 0 and float(root.get("height")) > 0


def test_svg_escapes_names_and_handles_empty_sheets():
    p = loads('name = "<A & B>"\n[board]\nsize = [2, 2]\n[[piece]]\nname = "I"\ncount = 2\ncolour = "#123456"\n'
              'cells = "##"\n')
    problem = zipup.as_problem(p)
    root = ET.fromstring(render.svg(problem, zipup.enumerate(problem)))
    assert root.find(SVG + "title").text == "<A & B>"
    assert len(root.findall(SVG + "g")) == 2
    fills = {r.get("fill") for r in root.iter(SVG + "rect")}
    assert "#123456" in fills
    empty = ET.fromstring(render.svg(problem, []))
    assert empty.findall(SVG + "g") == []


def test_svg_needs_geometry(room_problem):
    bare = Problem(name="bare", columns=room_problem.columns, primary=room_problem.primary,
                   pieces=room_problem.pieces)
    with pytest.raises(UsageError, match="geometry"):
        render.svg(bare, [])


def test_header_lists_pieces_and_placements(room_problem):
    lines = render.header(room_problem)
    assert lines[0] == "puzzle: Wooden room"
    assert lines[1].startswith("board: 2-D, drawing 6x8, 24 cells, cover = partial, 2 doorway cells")
    rows = [ln.split() for ln in lines[3:]]
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("T", "T", "2", "4", "44"), ("S", "S", "1", "4", "44"), ("V", "V", "1", "5", "32"),
        ("Z", "Z", "1", "5", "32")]


def test_stats_table_has_a_line_per_step(room_problem):
    r = zipup.solve(room_problem, "balanced", tree="((T,T),((S,V),Z))")
    lines = render.stats_table(r.stats)
    assert len(lines) == 1 + len(r.stats)
    assert lines[0].split()[:3] == ["step", "joins", "rows"]
    assert len({len(ln) for ln in lines}) == 1  # aligned columns
    assert [ln.split()[5] for ln in lines[1:]] == ["464", "544", "1212", "52"]
