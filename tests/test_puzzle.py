"""Stage 1: loading and validating TOML puzzle files (docs/puzzle-format.md)."""

from __future__ import annotations

import pytest
from hypothesis import given

import zipup
from conftest import DOMINO_2X2
from strategies import examples, models
from zipup.errors import PuzzleFileError, ZipupError
from zipup.puzzle import loads

HEAD = 'name = "x"\n[board]\n'


# ---------------------------------------------------------------- the room


def test_room_loads(room):
    assert room.name == "Wooden room"
    assert room.source.startswith("romyjw.github.io")
    b = room.board
    assert (b.ndim, b.shape, len(b.cells), b.cover, b.match, b.door) == (2, (6, 8), 24, "partial", False, "D")
    assert b.cells[0] == (1, 1) and b.cells[-1] == (4, 6)
    assert b.cells == tuple(sorted(b.cells))  # row-major order
    assert set(b.labels) == {"#"}
    assert b.doors == ((5, 1), (5, 2))
    assert [(p.name, p.label, p.count, p.colour, len(p.cells)) for p in room.pieces] == [
        ("T", "T", 2, "red", 4), ("S", "S", 1, "yellow", 4), ("V", "V", 1, "blue", 5),
        ("Z", "Z", 1, "magenta", 5)]
    assert room.pieces[0].cells == ((0, 0), (0, 1), (0, 2), (1, 1))
    assert all(p.rotate and p.mirror for p in room.pieces)
    assert (room.separate, room.slidable) == ("none", "quick")
    assert room.path.endswith("room.toml")


def test_load_accepts_str_and_path(room_path):
    assert zipup.load(str(room_path)) == zipup.load(room_path)


# ---------------------------------------------------------------- drawings and defaults


def test_one_row_board_is_1d_and_pieces_follow():
    p = loads(HEAD + 'cells = "#.##"\ncover = "partial"\n[[piece]]\nname = "I"\ncells = "##"\n')
    assert p.ndim == 1 and p.board.cells == ((0,), (2,), (3,)) and p.board.shape == (4,)
    assert p.pieces[0].cells == ((0,), (1,))
    assert p.pieces[0].rotate and p.pieces[0].mirror


def test_size_gives_a_full_box_in_any_dimension():
    p = loads(HEAD + 'size = [2, 3]\n[[piece]]\nname = "I"\ncount = 3\ncells = "##"\n')
    assert p.ndim == 2 and len(p.board.cells) == 6 and p.board.shape == (2, 3)
    p = loads(HEAD + 'size = [2, 1, 2]\n[[piece]]\nname = "I"\ncount = 2\ncells = "##"\n')
    assert p.ndim == 3 and p.board.cells == ((0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 0, 1))
    assert p.pieces[0].cells == ((0, 0, 0), (0, 0, 1))  # a plain drawing lies in one layer


def test_mirror_defaults_to_false_in_3d_and_true_below():
    three = loads(HEAD + 'size = [1, 1, 2]\n[[piece]]\nname = "I"\ncoords = [[5, 5, 5], [5, 5, 6]]\n')
    assert three.pieces[0].rotate and not three.pieces[0].mirror
    assert three.pieces[0].cells == ((0, 0, 0), (0, 0, 1))  # coordinates: any origin
    two = loads(DOMINO_2X2)
    assert two.pieces[0].rotate and two.pieces[0].mirror


def test_rules_and_per_piece_overrides():
    p = loads(HEAD + 'size = [2, 2]\n[rules]\nrotate = false\nmirror = false\nseparate = "corner"\n'
              '[[piece]]\nname = "A"\nrotate = true\ncells = "##"\n'
              '[[piece]]\nname = "B"\nmirror = true\ncells = "##"\n')
    assert [(q.rotate, q.mirror) for q in p.pieces] == [(True, False), (False, True)]
    assert p.separate == "corner"


def test_drawing_rows_may_differ_and_blank_lines_are_ignored():
    p = loads(HEAD + 'cells = """\n\n\n##\n#.#\n###\n\n"""\ncover = "partial"\n'
              '[[piece]]\nname = "I"\ncells = """\n\n##\n\n"""\n')
    assert p.board.cells == ((0, 0), (0, 1), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2))
    assert p.board.shape == (3, 3)
    assert p.pieces[0].cells == ((0, 0), (0, 1))


def test_layers_labels_and_doors():
    p = loads(HEAD + 'layers = ["""\nab\n.D\n""", """\n##\n#.\n"""]\ncover = "partial"\n'
              '[[piece]]\nname = "I"\nlayers = ["#", "a"]\n')
    b = p.board
    assert b.ndim == 3 and b.shape == (2, 2, 2)
    assert dict(zip(b.cells, b.labels)) == {(0, 0, 0): "a", (0, 0, 1): "b", (1, 0, 0): "#", (1, 0, 1): "#",
                                            (1, 1, 0): "#"}
    assert b.doors == ((0, 1, 1),)
    assert p.pieces[0].cells == ((0, 0, 0), (1, 0, 0)) and p.pieces[0].labels == ("#", "a")


def test_custom_door_character_makes_D_a_label():
    p = loads(HEAD + 'cells = """\nD#\n++\n"""\ndoor = "+"\n[[piece]]\nname = "I"\ncells = "D#"\n')
    assert p.board.cells == ((0, 0), (0, 1)) and p.board.labels == ("D", "#")
    assert p.board.doors == ((1, 0), (1, 1)) and p.board.door == "+"


def test_labels_default_to_the_first_character_made_unique():
    p = loads(HEAD + 'size = [1, 5]\ncover = "partial"\n'
              '[[piece]]\nname = "Tee"\ncells = "#"\n'
              '[[piece]]\nname = "Tau"\ncells = "#"\n'
              '[[piece]]\nname = "x"\nlabel = "T"\ncells = "#"\n'
              '[[piece]]\nname = "Tom"\ncells = "#"\n')
    labels = [q.label for q in p.pieces]
    assert labels[2] == "T"  # asked for: kept
    assert len(set(labels)) == 4 and all(len(x) == 1 for x in labels)
    assert labels[0] == "t"  # 'T' is taken by the explicit label, so the lower case
    assert {labels[1], labels[3]} <= set("TtaueomTM") | set("ABCDEFGHIJKLMNOPQRSVWXYZ")


def test_colour_count_and_match():
    p = loads(HEAD + 'cells = """\nab\nab\n"""\nmatch = true\n'
              '[[piece]]\nname = "d"\ncolour = "red"\ncount = 2\ncells = "ab"\n')
    assert p.board.match and p.pieces[0].count == 2 and p.pieces[0].colour == "red"
    assert p.pieces[0].labels == ("a", "b")


def test_crlf_line_endings_load():
    p = loads(DOMINO_2X2.replace("\n", "\r\n"))
    assert len(p.board.cells) == 4 and p.pieces[0].cells == ((0, 0), (0, 1))


def test_every_repository_toml_puzzle_loads(root):
    for path in sorted((root / "puzzles").glob("*.toml")):
        p = zipup.load(path)
        assert p.pieces and p.board.cells, path


@examples(60)
@given(models())
def test_random_puzzles_load_as_written(model):
    """The loader reads back exactly what the random model wrote (cells, labels, doors, rules)."""
    p = loads(model.toml())
    assert p.ndim == model.ndim
    assert dict(zip(p.board.cells, p.board.labels)) == model.board
    assert set(p.board.doors) == set(model.doors)
    assert (p.board.cover, p.board.match, p.separate) == (model.cover, model.match, model.separate)
    assert len(p.pieces) == len(model.pieces)
    for got, want in zip(p.pieces, model.pieces):
        lo = [min(c[i] for c in want.shape) for i in range(model.ndim)]
        norm = {tuple(x - m for x, m in zip(c, lo)): lab for c, lab in want.shape.items()}
        assert dict(zip(got.cells, got.labels)) == norm
        assert (got.name, got.count, got.colour) == (want.name, want.count, want.colour)
        assert (got.rotate, got.mirror) == model.piece_rules(want)


# ---------------------------------------------------------------- bad input


def test_bad_input_raises_one_line_puzzle_file_error(bad_puzzle):
    path, fragments, key, line = bad_puzzle
    with pytest.raises(PuzzleFileError) as info:
        zipup.load(path)
    e = info.value
    msg = str(e)
    assert isinstance(e, ZipupError) and isinstance(e, ValueError)
    assert "\n" not in msg
    assert msg.startswith(str(path))  # names the file
    assert e.path == str(path)
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)
    if key is not None:
        assert e.key == key and f"{key}: " in msg
    if line is not None:
        assert e.line == line and f"line {line}" in msg


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(PuzzleFileError, match="directory"):
        zipup.load(tmp_path)


def test_loads_names_a_string_source():
    with pytest.raises(PuzzleFileError, match=r"^<string>"):
        loads("name = ")
    with pytest.raises(PuzzleFileError, match=r"^inline\.toml"):
        loads("name = ", path="inline.toml")


def test_error_message_format():
    e = PuzzleFileError("a.toml", "expected x", key="board.cover", line=7)
    assert str(e) == "a.toml, line 7: board.cover: expected x"
    assert (e.path, e.key, e.line, e.reason) == ("a.toml", "board.cover", 7, "expected x")
    assert str(PuzzleFileError("a.toml", "no such file")) == "a.toml: no such file"


def test_mirror_only_piece_that_fits_is_accepted():
    """rotate = false: the piece keeps its extent, and fits as drawn (the too-large check must not
    refuse it)."""
    p = loads(HEAD + 'size = [3, 2]\ncover = "partial"\n[rules]\nrotate = false\n'
              '[[piece]]\nname = "I3"\ncells = """\n#\n#\n#\n"""\n')
    assert zipup.count(p) == 2


def test_complete_examples_in_the_format_guide(root):
    """Every whole puzzle in docs/puzzle-format.md loads and has the count the guide states
    (checked by the brute force too)."""
    import re

    from strategies import brute_force, model_from_puzzle

    text = (root / "docs" / "puzzle-format.md").read_text()
    stated = {"Two ells in a box": 2, "Dominoes on a chequerboard": 3}
    seen = {}
    for block in re.findall(r"```toml\n(.*?)```", text, re.S):
        if block.startswith("name"):
            p = loads(block)
            seen[p.name] = zipup.count(p)
            assert seen[p.name] == len(brute_force(model_from_puzzle(p)))
    assert seen == stated


def test_default_labels_are_never_blank_dot_or_hash():
    """A name starting with '.', '#' or a space must not give that character as the label: text
    drawings use '.' for an empty cell and ' ' for no cell."""
    p = loads(HEAD + 'size = [1, 3]\n[[piece]]\nname = ".dot"\ncells = "#"\n'
              '[[piece]]\nname = "#hash"\ncells = "#"\n[[piece]]\nname = " sp"\ncells = "#"\n')
    labels = [q.label for q in p.pieces]
    assert len(set(labels)) == 3
    assert not set(labels) & {".", "#", " "}
    assert all(len(x) == 1 and x.isprintable() for x in labels)


def test_many_pieces_still_get_distinct_labels():
    """More pieces than letters, digits and signs: every one still gets its own label."""
    n = 120
    p = loads(HEAD + f'cells = "{"#" * n}"\ncover = "partial"\n'
              + "".join(f'[[piece]]\nname = "p{k}"\ncells = "#"\n' for k in range(n)))
    labels = [q.label for q in p.pieces]
    assert len(set(labels)) == n
    assert all(len(x) == 1 and x.isprintable() and not x.isspace() and x not in ".#" for x in labels)
