"""Shared fixtures: the repository's puzzles, small puzzle texts, and a TOML writer.

Hypothesis profiles: ``default`` (quick, used by plain ``pytest``) and ``thorough``
(``HYPOTHESIS_PROFILE=thorough pytest``: ten times the examples).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/strategies.py

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.data_too_large])
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=1000)
# (tests with their own example count use strategies.examples(n), which the profile scales too)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True, scope="session")
def _run_from_root():
    """Doctests and tests name files like ``puzzles/room.toml``: run from the repository root."""
    before = os.getcwd()
    os.chdir(ROOT)
    yield
    os.chdir(before)


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def room_path():
    return ROOT / "puzzles" / "room.toml"


@pytest.fixture(scope="session")
def room(room_path):
    import zipup

    return zipup.load(room_path)


@pytest.fixture(scope="session")
def room_problem(room):
    import zipup

    return zipup.as_problem(room)


@pytest.fixture
def write_toml(tmp_path):
    """``write_toml(text, name="puzzle.toml")`` writes a file into tmp_path and returns its path."""

    def write(text, name="puzzle.toml"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


# Small puzzles shared by several test modules; every count is stated with how it is known.

#: Two dominoes on a 2x2 square: 2 configurations (both horizontal, both vertical).
DOMINO_2X2 = """\
name = "two dominoes"
[board]
size = [2, 2]
[[piece]]
name = "I"
count = 2
cells = "##"
"""

#: A bar of 4 cells and two dominoes (copies): 1 way (dominoes are interchangeable).
BAR_1D = """\
name = "bar"
[board]
cells = "####"
[[piece]]
name = "d"
count = 2
cells = "##"
"""

#: A 2x4 room with a doorway below, partial cover: an L-tromino and a domino (5 of 8 cells).
SMALL_ROOM = """\
name = "small room"
[board]
cells = \"\"\"
......
.####.
.####.
.DD...
\"\"\"
cover = "partial"
[[piece]]
name = "L"
cells = \"\"\"
##
#.
\"\"\"
[[piece]]
name = "I"
cells = "##"
"""


@pytest.fixture
def domino_2x2(write_toml):
    return write_toml(DOMINO_2X2, "dominoes.toml")


@pytest.fixture
def small_room(write_toml):
    return write_toml(SMALL_ROOM, "small-room.toml")


# ---------------------------------------------------------------- bad input

_OK_PIECE = '[[piece]]\nname = "I"\ncount = 2\ncells = "##"\n'
_HEAD = 'name = "x"\n[board]\nsize = [2, 2]\n'


def _bad(id, text, fragments, key=None, line=None):
    return pytest.param((text, fragments, key, line), id=id)


#: Broken puzzle files: (TOML text, or bytes, or None for "no such file"; fragments the one-line
#: message must contain; the key it must name; the line it must name).
BAD_INPUTS = [
    _bad("missing-file", None, ["no such file"]),
    _bad("not-toml", 'name = \n[board]\n', ["is not valid TOML"], line=1),
    _bad("not-toml-later", 'name = "x"\n[board]\nsize = [2, 2]\ncover = partial\n' + _OK_PIECE,
         ["is not valid TOML"], line=4),
    _bad("not-utf8", b'name = "\xff"\n', ["not UTF-8"]),
    _bad("unknown-key", _HEAD + '[rules]\nrotatte = true\n' + _OK_PIECE,
         ["rules.rotatte", "unknown key", "rotate"], "rules.rotatte", 5),
    _bad("unknown-top-key", 'name = "x"\nauthor = "me"\n[board]\nsize = [2, 2]\n' + _OK_PIECE,
         ["author", "unknown key"], "author", 2),
    _bad("unknown-piece-key", _HEAD + '[[piece]]\nname = "I"\ncolor = "red"\ncount = 2\ncells = "##"\n',
         ["piece[1].color", "unknown key", "colour"], "piece[1].color", 6),
    _bad("wrong-type-count", _HEAD + '[[piece]]\nname = "I"\ncount = "2"\ncells = "##"\n',
         ["piece[1].count", "expected an integer", "string"], "piece[1].count", 6),
    _bad("wrong-type-float", _HEAD + '[[piece]]\nname = "I"\ncount = 2.0\ncells = "##"\n',
         ["expected an integer"], "piece[1].count", 6),
    _bad("wrong-type-bool", 'name = "x"\n[board]\nsize = [2, 2]\nmatch = "yes"\n' + _OK_PIECE,
         ["board.match", "expected a boolean"], "board.match", 4),
    _bad("wrong-type-name", 'name = 3\n[board]\nsize = [2, 2]\n' + _OK_PIECE,
         ["name", "expected a string"], "name", 1),
    _bad("wrong-type-drawing", 'name = "x"\n[board]\ncells = 5\n' + _OK_PIECE,
         ["board.cells", "expected a drawing"], "board.cells", 3),
    _bad("space-in-row", 'name = "x"\n[board]\ncells = """\n## #\n####\n"""\ncover = "partial"\n' + _OK_PIECE,
         ["board.cells", "row 1", "' '", "column 3"], "board.cells", 3),
    _bad("tab-in-row", 'name = "x"\n[board]\ncells = """\n##\t#\n####\n"""\ncover = "partial"\n' + _OK_PIECE,
         ["board.cells", "row 1", "'\\t'"], "board.cells", 3),
    _bad("space-in-piece", _HEAD + '[[piece]]\nname = "I"\ncount = 2\ncells = " ##"\n',
         ["piece[1].cells"], "piece[1].cells"),
    _bad("empty-board", 'name = "x"\n[board]\ncells = ""\n' + _OK_PIECE,
         ["board.cells", "no cells"], "board.cells", 3),
    _bad("board-only-dots", 'name = "x"\n[board]\ncells = """\n...\n.D.\n"""\n' + _OK_PIECE,
         ["board.cells", "no cells"], "board.cells", 3),
    _bad("empty-piece", _HEAD + '[[piece]]\nname = "I"\ncells = """\n\n"""\n',
         ["piece[1].cells", "no cells"], "piece[1].cells", 6),
    _bad("empty-coords", _HEAD + '[[piece]]\nname = "I"\ncoords = []\n',
         ["piece[1].coords"], "piece[1].coords", 6),
    _bad("disconnected", 'name = "x"\n[board]\nsize = [3, 3]\ncover = "partial"\n'
         '[[piece]]\nname = "U"\ncells = """\n#.#\n"""\n',
         ["piece[1].cells", "not connected", "2"], "piece[1].cells", 7),
    _bad("corner-only", 'name = "x"\n[board]\nsize = [3, 3]\ncover = "partial"\n'
         '[[piece]]\nname = "U"\ncells = """\n#.\n.#\n"""\n', ["not connected"], "piece[1].cells", 7),
    _bad("disconnected-3d", 'name = "x"\n[board]\nsize = [2, 2, 2]\ncover = "partial"\n'
         '[[piece]]\nname = "U"\ncoords = [[0, 0, 0], [1, 1, 1]]\n', ["not connected"], "piece[1].coords", 7),
    _bad("too-large", 'name = "x"\n[board]\nsize = [2, 2]\ncover = "partial"\n[[piece]]\nname = "I3"\ncells = "###"\n',
         ["'I3'", "larger than the board"], "piece[1]", 5),
    _bad("too-many-cells", 'name = "x"\n[board]\nsize = [2, 2]\ncover = "partial"\n'
         '[[piece]]\nname = "P"\ncells = """\n##\n###\n"""\n', ["'P'", "larger than the board"], "piece[1]", 5),
    _bad("too-large-unrotated", 'name = "x"\n[board]\nsize = [2, 3]\ncover = "partial"\n[rules]\nrotate = false\n'
         '[[piece]]\nname = "I3"\ncells = """\n#\n#\n#\n"""\n', ["'I3'", "larger than the board"], "piece[1]", 7),
    _bad("area-mismatch", 'name = "x"\n[board]\nsize = [2, 3]\ncover = "exact"\n'
         '[[piece]]\nname = "I"\ncount = 2\ncells = "##"\n', ["4", "6", "exact"], "board.cover", 4),
    _bad("area-too-large-partial", 'name = "x"\n[board]\nsize = [2, 2]\ncover = "partial"\n'
         '[[piece]]\nname = "I"\ncount = 3\ncells = "##"\n', ["6", "4"], "board.cover", 4),
    _bad("duplicate-name", _HEAD + '[[piece]]\nname = "I"\ncells = "##"\n[[piece]]\nname = "I"\ncells = "##"\n',
         ["piece[2].name", "duplicate", "'I'"], "piece[2].name", 8),
    _bad("count-zero", _HEAD + '[[piece]]\nname = "I"\ncount = 0\ncells = "##"\n',
         ["piece[1].count", ">= 1", "0"], "piece[1].count", 6),
    _bad("count-negative", _HEAD + '[[piece]]\nname = "I"\ncount = -2\ncells = "##"\n',
         ["piece[1].count", ">= 1"], "piece[1].count", 6),
    _bad("door-in-piece", _HEAD + '[[piece]]\nname = "I"\ncells = "#D"\n[[piece]]\nname = "J"\ncells = "##"\n',
         ["piece[1].cells", "door character 'D'"], "piece[1].cells", 6),
    _bad("custom-door-in-piece", 'name = "x"\n[board]\nsize = [2, 2]\ndoor = "+"\n'
         '[[piece]]\nname = "I"\ncells = "#+"\n[[piece]]\nname = "J"\ncells = "##"\n',
         ["door character '+'"], "piece[1].cells", 7),
    _bad("label-not-on-board", 'name = "x"\n[board]\ncells = """\naa\nbb\n"""\nmatch = true\n'
         '[[piece]]\nname = "I"\ncells = "ac"\n[[piece]]\nname = "J"\ncells = "bb"\n',
         ["piece[1]", "'c'", "no board cell"], "piece[1].cells", 10),
    _bad("missing-name", '[board]\nsize = [2, 2]\n' + _OK_PIECE, ["name", "required"], "name"),
    _bad("missing-board", 'name = "x"\n' + _OK_PIECE, ["board", "required"], "board"),
    _bad("missing-pieces", _HEAD, ["piece", "required"], "piece"),
    _bad("piece-not-array", _HEAD + '[piece]\nname = "I"\ncells = "##"\n', ["piece", "[[piece]]"], "piece"),
    _bad("piece-without-name", _HEAD + '[[piece]]\ncells = "##"\n', ["piece[1].name", "required"],
         "piece[1].name", 4),
    _bad("piece-without-drawing", _HEAD + '[[piece]]\nname = "I"\n', ["piece[1]", "cells, layers, coords"],
         "piece[1]", 4),
    _bad("two-drawings", 'name = "x"\n[board]\nsize = [2, 2]\ncells = "##"\n' + _OK_PIECE,
         ["board", "exactly one"], "board", 2),
    _bad("bad-cover", 'name = "x"\n[board]\nsize = [2, 2]\ncover = "full"\n' + _OK_PIECE,
         ["board.cover", '"exact" or "partial"', "'full'"], "board.cover", 4),
    _bad("bad-separate", _HEAD + '[rules]\nseparate = "vertex"\n' + _OK_PIECE,
         ["rules.separate", "'vertex'"], "rules.separate", 5),
    _bad("bad-slidable", _HEAD + '[filters]\nslidable = "maybe"\n' + _OK_PIECE,
         ["filters.slidable", "'maybe'"], "filters.slidable", 5),
    _bad("bad-size", 'name = "x"\n[board]\nsize = [0, 2]\n' + _OK_PIECE, ["board.size", "positive"], "board.size", 3),
    _bad("bad-door", 'name = "x"\n[board]\nsize = [2, 2]\ndoor = "DD"\n' + _OK_PIECE,
         ["board.door", "one character"], "board.door", 4),
    _bad("bad-label", _HEAD + '[[piece]]\nname = "I"\nlabel = "II"\ncount = 2\ncells = "##"\n',
         ["piece[1].label", "one printable character"], "piece[1].label", 6),
    _bad("layers-in-2d", _HEAD + '[[piece]]\nname = "I"\ncount = 2\nlayers = ["##"]\n',
         ["piece[1].layers", "3-D"], "piece[1].layers", 7),
    _bad("coords-wrong-dimension", _HEAD + '[[piece]]\nname = "I"\ncount = 4\ncoords = [[0, 0, 0]]\n',
         ["piece[1].coords", "2 numbers"], "piece[1].coords", 7),
    _bad("coords-repeated", _HEAD + '[[piece]]\nname = "I"\ncount = 2\ncoords = [[0, 0], [0, 0]]\n',
         ["piece[1].coords", "twice"], "piece[1].coords", 7),
    _bad("two-rows-in-1d", 'name = "x"\n[board]\ncells = "####"\n[[piece]]\nname = "I"\ncount = 2\n'
         'cells = """\n#\n#\n"""\n', ["piece[1].cells", "1-D"], "piece[1].cells", 7),
]


@pytest.fixture(params=BAD_INPUTS)
def bad_puzzle(request, tmp_path):
    """``(path, fragments, key, line)`` for each broken puzzle file of BAD_INPUTS."""
    text, fragments, key, line = request.param
    path = tmp_path / "bad.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text, encoding="utf-8")
    return path, fragments, key, line
