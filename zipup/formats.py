"""Other people's puzzle formats: readers and writers.

Readers (:func:`read`, :func:`reads`), chosen by the file's extension:

* ``.toml``: zipup's own format (:func:`zipup.puzzle.load`).
* ``.dpf``: Frans Faase's *discrete piece fitting* format: the number of
  locations, the number of pieces, and per piece its orientations as lists
  of locations.  No geometry: a :class:`~zipup.matrices.Problem`.
* ``.dpfg``: Faase's geometric format (locations and piece cells as
  coordinates, optional colours, a freedom value per piece).  A
  :class:`~zipup.puzzle.Puzzle`.
* ``.dlx``: Knuth's exact-cover format (items line, one option per line,
  ``item:c`` colours on secondary items).  A Problem with one piece of
  ``count=None`` ("any number of these rows").
* ``.xmpuzzle``: BurrTools files (gzip-compressed or plain XML), cube grid.
  A Puzzle.

Writers (:func:`export`): ``"dpf"`` and ``"dlx"`` from a Problem or a Puzzle,
``"toml"`` from a Puzzle.

How a zipup Problem becomes plain exact cover (DLX, DPF)
---------------------------------------------------------
* Every piece copy must be placed exactly once: one primary item per piece
  (``count = 1``) or per copy.  The copies of a piece are interchangeable,
  so duplicating their options would count every configuration ``k!``
  times; instead consecutive copies are ordered by secondary items: copy
  ``j`` on row ``r`` occupies ``O[j, t]`` for ``t >= r`` and copy ``j+1`` on
  row ``r'`` occupies ``O[j, t]`` for ``t <= r'``, which is possible only
  when ``r' < r``.  Each set of rows is thus found once, at the price of
  ``O(m)`` extra items per option for a piece with ``m`` rows.  In DPF the
  ``O`` items are locations and a filler piece per pair of copies covers
  the gap ``r' < t < r`` (``O(m^2)`` orientations).  A solver must then also
  find the copies' order: DLX and DPF solvers get slow on pieces with many
  copies (18 dominoes in a 6x6 square are already hard for them).
* Rows of ``count=None`` pieces are optional.  An option without a primary
  item is ignored by Knuth's programs, so such a row (and, in DPF, every
  such row) gets its own primary item ``R`` and a second option that is
  just ``R`` ("not chosen").
* Columns that are not primary become secondary items.  DPF has none: each
  becomes a location ``s`` plus a private location ``s'`` and a filler piece
  with the two orientations ``{s, s'}`` (``s`` stays empty) and ``{s'}``.
* ``marks`` / ``forbids`` (colour separation, DLX colours) become one
  secondary item per mark column, coloured ``m`` where a row marks it,
  ``f`` where it forbids it and uncoloured where it does both: two rows
  then clash exactly when one marks what the other forbids.  DPF cannot
  say this and refuses.

Exported counts therefore equal zipup's counts, configuration for
configuration.  Item names are kept to Knuth's 8 characters where the
problem is small enough; a very large problem may get longer names.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import re
import string
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .errors import PuzzleFileError, UsageError, ZipupError
from .geometry import normalise
from .matrices import PieceRows, Problem, configuration_matrices
from .puzzle import Board, Piece, Puzzle

__all__ = ["FORMATS", "MAX_XML_BYTES", "export", "read", "reads"]

FORMATS = ("dlx", "dpf", "dpfg", "toml", "xmpuzzle")
"""The format names :func:`read` and :func:`export` know."""

MAX_XML_BYTES = 64 * 2**20
"""Largest BurrTools document read, before or after gzip decompression."""

_WRITABLE = ("dlx", "dpf", "toml")

# Piece labels for formats that have no names: digits first, like the
# pieces' numbers; '#', '.' and the door character 'D' never.
_PIECE_LABELS = (string.digits[1:] + string.ascii_uppercase.replace("D", "")
                 + string.ascii_lowercase + "0@$%&*+=?!~^")
# Cell colours: digits first so that colours 0..9 keep their own digit.
_COLOUR_LABELS = (string.digits + string.ascii_lowercase
                  + string.ascii_uppercase.replace("D", "") + "@$%&*+=?!~^")


# ------------------------------------------------------------------ reading


def read(path, format=None, problem=None):
    """Read a puzzle file in any known format.

    Parameters
    ----------
    path : str or pathlib.Path
    format : {"toml", "dpf", "dpfg", "dlx", "xmpuzzle"}, optional
        Overrides the file's extension.
    problem : int or str, optional
        BurrTools files only: which problem, by 0-based index or by name
        (default: the first).

    Returns
    -------
    Puzzle or Problem
        A :class:`~zipup.puzzle.Puzzle` for formats with geometry (toml,
        dpfg, xmpuzzle), a :class:`~zipup.matrices.Problem` for dpf and dlx.

    Raises
    ------
    PuzzleFileError
        The file is missing or malformed; the message names the file, the
        line and what was expected.
    UsageError
        An unknown format, or ``problem`` for a file that has no problems.

    Examples
    --------
    >>> p = read("puzzles/dpf-cutting-stick.dpf")
    >>> p.n_columns, [r.n_placements for r in p.pieces]
    (5, [2, 3, 3])
    """
    fmt = _format_of(path, format)
    if problem is not None and fmt != "xmpuzzle":
        raise UsageError(f"problem={problem!r} only applies to BurrTools (.xmpuzzle) files, "
                         f"not to {fmt} files")
    if fmt == "toml":
        from .puzzle import load

        return load(path)
    data = _read_bytes(path, MAX_XML_BYTES if fmt == "xmpuzzle" else None)
    return reads(data, fmt, path=str(path), problem=problem)


def reads(text, format, *, path="<string>", problem=None):
    """Parse the text (or bytes) of a puzzle file; see :func:`read`.

    Parameters
    ----------
    text : str or bytes
    format : {"toml", "dpf", "dpfg", "dlx", "xmpuzzle"}
    path : str, optional
        The name used in error messages and as the problem's name.
    problem : int or str, optional
        BurrTools only, as in :func:`read`.

    Examples
    --------
    >>> p = reads("a b | c\\na c:x\\nb c:x\\na b\\n", "dlx")
    >>> p.columns, p.primary.tolist(), p.pieces[0].count, p.n_marks
    (('a', 'b', 'c'), [True, True, False], None, 1)
    """
    fmt = format.lower() if isinstance(format, str) else format
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    if fmt == "xmpuzzle":
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        return _read_xmpuzzle(data, path, problem)
    if problem is not None:
        raise UsageError(f"problem={problem!r} only applies to BurrTools (.xmpuzzle) files")
    if isinstance(text, (bytes, bytearray)):
        text = _decode(bytes(text), path)
    if fmt == "toml":
        from .puzzle import loads

        return loads(text, path=path)
    if fmt == "dpf":
        return _read_dpf(text, path)
    if fmt == "dpfg":
        return _read_dpfg(text, path)
    return _read_dlx(text, path)


def _format_of(path, format):
    if format is not None:
        fmt = str(format).lower().lstrip(".")
        if fmt not in FORMATS:
            raise UsageError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
        return fmt
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        shown = f"extension '.{ext}'" if ext else "no extension"
        raise UsageError(f"{path}: cannot tell the format from {shown}; expected "
                         f"{', '.join('.' + f for f in FORMATS)}, or name the format")
    return ext


def _read_bytes(path, limit):
    from .puzzle import read_bytes

    data = read_bytes(path, limit)
    if limit is not None and len(data) > limit:
        raise PuzzleFileError(path, f"is larger than {limit // 2**20} MiB; refusing to read it")
    return data


def _decode(data, path):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise PuzzleFileError(path, f"is not UTF-8 text: byte 0x{data[e.start]:02x} cannot be decoded",
                              line=line) from None


def _csr(rows, n_columns):
    """A uint8 CSR matrix with a 1 at each listed column of each row."""
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    indices = np.fromiter((c for r in rows for c in r), dtype=np.int64, count=int(indptr[-1]))
    m = sp.csr_array((np.ones(len(indices), dtype=np.uint8), indices, indptr),
                     shape=(len(rows), n_columns))
    m.sort_indices()
    return m


# ------------------------------------------------------------ numbers (DPF)


class _Numbers:
    """The integers of a DPF file, each with its line; ``//`` starts a comment."""

    _INT = re.compile(r"[+-]?[0-9]+")

    def __init__(self, text, path):
        self.path = path
        self.tokens = []
        lines = text.split("\n")
        for n, line in enumerate(lines, 1):
            for tok in line.split("//", 1)[0].split():
                self.tokens.append((tok, n))
        while len(lines) > 1 and not lines[-1].strip():
            lines.pop()
        self.last_line = len(lines)
        self.pos = 0

    def take(self, what, lo=None, hi=None):
        """The next integer, checked against ``lo <= value <= hi``; and its line."""
        if self.pos >= len(self.tokens):
            raise PuzzleFileError(self.path, f"expected {what}{_range(lo, hi)}, found the end of the file "
                                  "(is the file truncated, or a count too large?)", line=self.last_line)
        tok, line = self.tokens[self.pos]
        self.pos += 1
        if not self._INT.fullmatch(tok):
            raise PuzzleFileError(self.path, f"expected {what}{_range(lo, hi)}, found {tok!r}", line=line)
        v = int(tok)
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise PuzzleFileError(self.path, f"expected {what}{_range(lo, hi)}, found {v}", line=line)
        return v, line

    def end(self, after):
        if self.pos < len(self.tokens):
            tok, line = self.tokens[self.pos]
            raise PuzzleFileError(self.path, f"expected the end of the file after {after}, found {tok!r} "
                                  "(is a count too small?)", line=line)


def _range(lo, hi):
    if lo is not None and hi is not None:
        return f" (an integer from {lo} to {hi})" if lo != hi else f" (the integer {lo})"
    if lo is not None:
        return f" (an integer >= {lo})"
    return " (an integer)"


def _read_dpf(text, path):
    nums = _Numbers(text, path)
    n_loc, _ = nums.take("the number of locations", 1)
    n_pieces, _ = nums.take("the number of pieces", 1)
    pieces = []
    for i in range(n_pieces):
        n_orient, _ = nums.take(f"the number of orientations of piece {i + 1}", 0)
        rows = []
        for j in range(n_orient):
            where = f"piece {i + 1}, orientation {j + 1}"
            m, _ = nums.take(f"the number of locations of {where}", 1, n_loc)
            row = []
            for k in range(m):
                v, line = nums.take(f"location {k + 1} of {where}", 0, n_loc - 1)
                if v in row:
                    raise PuzzleFileError(path, f"{where} lists location {v} twice; expected "
                                          f"{m} different locations", line=line)
                row.append(v)
            rows.append(sorted(row))
        pieces.append(rows)
    nums.end(f"the {n_pieces} pieces the file announces")
    rows = [PieceRows(name=str(i + 1), label=_PIECE_LABELS[i % len(_PIECE_LABELS)], count=1,
                      colour=None, matrix=_csr(r, n_loc)) for i, r in enumerate(pieces)]
    return Problem(name=Path(path).stem, columns=tuple(range(n_loc)),
                   primary=np.ones(n_loc, dtype=bool), pieces=tuple(rows))


def _read_dpfg(text, path):
    nums = _Numbers(text, path)
    ndim, _ = nums.take("the number of dimensions", 1, 3)
    coloured, _ = nums.take("use-colours", 0, 1)
    axes = "xyz"[:ndim]

    def point(what):
        xyz = [nums.take(f"the {a} coordinate of {what}")[0] for a in axes]
        c, line = nums.take(f"the colour of {what}") if coloured else (None, None)
        return tuple(xyz), c, line

    n_loc, _ = nums.take("the number of locations", 1)
    board = {}
    for k in range(n_loc):
        xyz, c, _ = point(f"location {k}")
        if xyz in board:
            raise PuzzleFileError(path, f"location {k} is at {xyz}, where location {board[xyz][1]} already "
                                  "is; expected distinct positions", line=nums.tokens[nums.pos - 1][1])
        board[xyz] = (c, k)
    n_pieces, pieces_line = nums.take("the number of pieces", 1)
    raw = []
    for i in range(n_pieces):
        n_cells, _ = nums.take(f"the number of cells of piece {i + 1}", 1)
        v, vline = nums.take(f"the freedom (v-value) of piece {i + 1}", 1, 3)
        if ndim == 3 and v == 2:
            raise PuzzleFileError(path, f"piece {i + 1} has v = 2 (turns in the x-y plane only), which zipup "
                                  "cannot express in 3-D; expected 1 (translations) or 3 (all 24 rotations)",
                                  line=vline)
        cells = {}
        for k in range(n_cells):
            xyz, c, _ = point(f"cell {k + 1} of piece {i + 1}")
            if xyz in cells:
                raise PuzzleFileError(path, f"piece {i + 1} lists the position {xyz} twice",
                                      line=nums.tokens[nums.pos - 1][1])
            cells[xyz] = c
        raw.append((cells, v, vline))
    nums.end(f"the {n_pieces} pieces the file announces")

    used = {c for c, _ in board.values()} | {c for cells, _, _ in raw for c in cells.values()}
    chars = _colour_chars(sorted(used), path) if coloured else {}

    def coord(xyz):
        return tuple(reversed(xyz))  # (x, y, z) -> (col,), (row, col) or (layer, row, col)

    lo = [min(coord(p)[i] for p in board) for i in range(ndim)]
    cells = sorted(tuple(a - b for a, b in zip(coord(p), lo)) for p in board)
    by_cell = {tuple(a - b for a, b in zip(coord(p), lo)): c for p, (c, _) in board.items()}
    labels = tuple(chars[by_cell[c]] if coloured else "#" for c in cells)
    shape = tuple(max(c[i] for c in cells) + 1 for i in range(ndim))
    have = set(labels)
    pieces = []
    area = 0
    for i, (pc, v, vline) in enumerate(raw):
        pts = [coord(p) for p in pc]
        labs = [chars[pc[p]] if coloured else "#" for p in pc]
        norm, nlabs = normalise(pts, labs)
        missing = sorted(set(nlabs) - have)
        if coloured and missing:
            colour = next(c for c, ch in chars.items() if ch == missing[0])
            raise PuzzleFileError(path, f"piece {i + 1} has colour {colour}, which no location has; "
                                  "it could never be placed", line=vline)
        rotate = v >= 2
        mirror = v == 3 and ndim < 3
        pieces.append(Piece(name=str(i + 1), label=_PIECE_LABELS[i % len(_PIECE_LABELS)], cells=norm,
                            labels=nlabs, count=1, colour=None, rotate=rotate, mirror=mirror))
        area += len(norm)
    if area != len(cells):
        raise PuzzleFileError(path, f"every location must be covered: the pieces have {area} cells, "
                              f"the board has {len(cells)} locations", line=pieces_line)
    board = Board(ndim=ndim, shape=shape, cells=tuple(cells), labels=labels, cover="exact",
                  match=bool(coloured))
    return Puzzle(name=Path(path).stem, board=board, pieces=tuple(pieces),
                  source=f"Frans Faase's geometric DPF format ({Path(path).name})", path=path)


def _colour_chars(values, path):
    """One label character per colour number: the digit itself for 0..9."""
    if all(0 <= v <= 9 for v in values):
        return {v: str(v) for v in values}
    if len(values) > len(_COLOUR_LABELS):
        raise PuzzleFileError(path, f"uses {len(values)} different colours; zipup labels cells with one "
                              f"character and has {len(_COLOUR_LABELS)} to give")
    return {v: _COLOUR_LABELS[i] for i, v in enumerate(values)}


# -------------------------------------------------------------------- DLX


def _read_dlx(text, path):
    lines = text.split("\n")
    n_lines = max(1, len(lines) - (1 if text.endswith("\n") else 0))
    head = None
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if s and not s.startswith("|"):
            head = n
            break
    if head is None:
        raise PuzzleFileError(path, "expected a line of item names (primary, then '|' and the secondary "
                              "ones), found only comments and blank lines", line=n_lines)
    parts = lines[head - 1].split("|")
    if len(parts) > 2:
        raise PuzzleFileError(path, "expected at most one '|' between primary and secondary items, "
                              f"found {len(parts) - 1}", line=head)
    names = [p.split() for p in parts] + [[]]
    index = {}
    for k, name in enumerate(names[0] + names[1]):
        if ":" in name:
            raise PuzzleFileError(path, f"item name {name!r} contains ':'; expected names without ':' "
                                  "(colours belong in the options)", line=head)
        if name in index:
            raise PuzzleFileError(path, f"item {name!r} is named twice; expected distinct names", line=head)
        index[name] = k
    n_primary = len(names[0])
    columns = tuple(names[0] + names[1])
    options = []  # (line, [(item, colour)])
    for n in range(head + 1, len(lines) + 1):
        s = lines[n - 1].strip()
        if not s or s.startswith("|"):
            continue
        opt, seen = [], set()
        for tok in s.split():
            name, _, colour = tok.partition(":")
            if name not in index:
                raise PuzzleFileError(path, f"unknown item {name!r}; expected one of the items named on "
                                      f"line {head}", line=n)
            k = index[name]
            if k in seen:
                raise PuzzleFileError(path, f"item {name!r} appears twice in this option; expected it "
                                      "at most once", line=n)
            seen.add(k)
            if ":" in tok:
                if k < n_primary:
                    raise PuzzleFileError(path, f"primary item {name!r} has a colour ({tok!r}); expected "
                                          "colours only on secondary items", line=n)
                if not colour or ":" in colour:
                    raise PuzzleFileError(path, "expected item:colour with a non-empty colour, "
                                          f"found {tok!r}", line=n)
            opt.append((k, colour if ":" in tok else None))
        # Knuth's programs ignore an option without a primary item: it can never be chosen.
        if any(k < n_primary for k, _ in opt):
            options.append(opt)
    colours = {}
    for opt in options:
        for k, c in opt:
            if c is not None:
                colours.setdefault(k, set()).add(c)
    mark_of, n_marks = {}, 0
    for k in sorted(colours):
        for c in sorted(colours[k]):
            mark_of[k, c] = n_marks
            n_marks += 1
    cells, marks, forbids = [], [], []
    for opt in options:
        row, mk, fb = [], [], []
        for k, c in opt:
            if c is None:
                row.append(k)
                # An uncoloured use clashes with every coloured use of the item too.
                fb.extend(mark_of[k, x] for x in colours.get(k, ()))
            else:
                mk.append(mark_of[k, c])
                fb.extend(mark_of[k, x] for x in colours[k] if x != c)
        cells.append(sorted(row))
        marks.append(sorted(mk))
        forbids.append(sorted(fb))
    rows = PieceRows(name="options", label="o", count=None, colour=None, matrix=_csr(cells, len(columns)),
                     marks=_csr(marks, n_marks) if n_marks else None,
                     forbids=_csr(forbids, n_marks) if n_marks else None)
    primary = np.arange(len(columns)) < n_primary
    return Problem(name=Path(path).stem, columns=columns, primary=primary, pieces=(rows,), n_marks=n_marks)


# -------------------------------------------------------------- BurrTools

_GRIDS = {"0": "cubes", "1": "triangular prisms", "2": "spheres", "3": "rhombic dodecahedra",
          "4": "tetrahedra and octahedra"}


class _Node:
    """An XML element with the line it starts on (xml.etree keeps no lines)."""

    __slots__ = ("tag", "attrib", "children", "text", "line")

    def __init__(self, tag, attrib, line):
        self.tag, self.attrib, self.line = tag, attrib, line
        self.children, self.text = [], []

    def find(self, tag):
        return next((c for c in self.children if c.tag == tag), None)

    def findall(self, tag):
        return [c for c in self.children if c.tag == tag]


def _gunzip(data, path):
    """Decompress at most MAX_XML_BYTES; refuse anything bigger (a gzip bomb)."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            out = f.read(MAX_XML_BYTES + 1)
    except (OSError, EOFError, ValueError) as e:
        reason = str(e) or type(e).__name__
        raise PuzzleFileError(path, f"is not a valid gzip file ({reason}); expected gzip-compressed or "
                              "plain BurrTools XML") from None
    if len(out) > MAX_XML_BYTES:
        raise PuzzleFileError(path, f"decompresses to more than {MAX_XML_BYTES // 2**20} MiB; refusing to "
                              "read further (a BurrTools file is far smaller)")
    return out


def _parse_xml(data, path):
    """Parse with expat, refusing DTDs and entity declarations outright."""
    from xml.parsers import expat

    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack, roots = [], []

    def start(tag, attrib):
        node = _Node(tag, attrib, parser.CurrentLineNumber)
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)

    def end(tag):
        stack.pop()

    def text(s):
        if stack:
            stack[-1].text.append(s)

    def refuse(*_):
        raise PuzzleFileError(path, "has a DOCTYPE or ENTITY declaration; expected none (BurrTools writes "
                              "none, and zipup refuses them for safety)", line=parser.CurrentLineNumber)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise PuzzleFileError(path, f"is not well-formed XML: {expat.errors.messages[e.code]} "
                              f"(column {e.offset + 1})", line=e.lineno) from None
    return roots[0]


def _int_attr(node, name, path, lo=0, default=None):
    v = node.attrib.get(name)
    if v is None:
        if default is not None:
            return default
        raise PuzzleFileError(path, f"<{node.tag}> has no '{name}' attribute; expected {name}=\"N\"",
                              line=node.line)
    if not re.fullmatch(r"\s*[0-9]+\s*", v) or int(v) < lo:
        raise PuzzleFileError(path, f"<{node.tag}> attribute {name}={v!r}; expected an integer >= {lo}",
                              line=node.line)
    return int(v)


_VOXEL = re.compile(r"([_#+])([0-9]*)")


def _voxels(node, path, k):
    """{(layer, row, col): (state, colour)} of a BurrTools voxel space (shape ``k``)."""
    sx, sy, sz = (_int_attr(node, a, path, lo=1) for a in "xyz")
    text = re.sub(r"\s+", "", "".join(node.text))
    out = {}
    pos = i = 0
    while pos < len(text):
        m = _VOXEL.match(text, pos)
        if not m:
            raise PuzzleFileError(path, f"voxel {i + 1} of shape {k} is "
                                  f"{text[pos]!r}; expected '_', '#' or '+' (then an optional colour number)",
                                  line=node.line)
        if m.group(1) != "_":
            out[(i // (sx * sy), (i // sx) % sy, i % sx)] = (m.group(1), int(m.group(2) or 0))
        pos = m.end()
        i += 1
    if i != sx * sy * sz:
        raise PuzzleFileError(path, f"shape {k}: a voxel space of x={sx}, y={sy}, z={sz} needs "
                              f"{sx * sy * sz} voxels, found {i}", line=node.line)
    return out


def _read_xmpuzzle(data, path, which):
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, path)
    elif len(data) > MAX_XML_BYTES:
        raise PuzzleFileError(path, f"is larger than {MAX_XML_BYTES // 2**20} MiB; refusing to read it")
    root = _parse_xml(data, path)
    if root.tag != "puzzle":
        raise PuzzleFileError(path, f"expected a BurrTools <puzzle> document, found <{root.tag}>",
                              line=root.line)
    grid = root.find("gridType")
    gtype = grid.attrib.get("type", "0").strip() if grid is not None else "0"
    if gtype != "0":
        name = _GRIDS.get(gtype, "an unknown grid")
        raise PuzzleFileError(path, f"uses grid type {gtype} ({name}); zipup reads only the cube grid "
                              "(type 0)", line=grid.line)
    colours = root.find("colors")
    n_colours = len(colours.findall("color")) if colours is not None else 0
    shapes_node = root.find("shapes")
    shapes = shapes_node.findall("voxel") if shapes_node is not None else []
    problems_node = root.find("problems")
    problems = problems_node.findall("problem") if problems_node is not None else []
    if not problems:
        raise PuzzleFileError(path, "has no <problem>; expected at least one inside <problems>",
                              line=(problems_node or root).line)
    prob = _pick_problem(problems, which, path)
    pnum = problems.index(prob)

    def shape(node, attr):
        k = _int_attr(node, attr, path)
        if k >= len(shapes):
            raise PuzzleFileError(path, f"<{node.tag}> {attr}={k}; expected a shape number from 0 to "
                                  f"{len(shapes) - 1}", line=node.line)
        return k

    result = prob.find("result")
    if result is None:
        raise PuzzleFileError(path, f"problem {pnum} has no <result>; expected <result id=\"N\"/>",
                              line=prob.line)
    rid = shape(result, "id")
    parts = []
    pshapes = prob.find("shapes")
    for node in (pshapes.findall("shape") if pshapes is not None else []):
        k = shape(node, "id")
        if "count" in node.attrib:
            lo = hi = _int_attr(node, "count", path)
        elif "min" in node.attrib or "max" in node.attrib:
            lo, hi = _int_attr(node, "min", path), _int_attr(node, "max", path)
        else:
            lo = hi = 1
        if lo != hi:
            raise PuzzleFileError(path, f"shape {k} may be used {lo} to {hi} times; zipup needs a fixed "
                                  "count (min = max)", line=node.line)
        if hi:
            parts.append((k, hi, node))
    if not parts:
        raise PuzzleFileError(path, f"problem {pnum} has no pieces; expected <shape id=\"N\"/> inside its "
                              "<shapes>", line=prob.line)

    target = _voxels(shapes[rid], path, rid)
    pieces_vox = []
    for k, count, node in parts:
        vox = _voxels(shapes[k], path, k)
        if not vox:
            raise PuzzleFileError(path, f"shape {k} is empty; expected at least one '#' voxel",
                                  line=shapes[k].line)
        if any(s == "+" for s, _ in vox.values()):
            raise PuzzleFileError(path, f"shape {k} has variable voxels ('+'); zipup allows them only in "
                                  "the result shape", line=shapes[k].line)
        pieces_vox.append((k, count, vox))
    if not target:
        raise PuzzleFileError(path, f"the result shape {rid} is empty", line=shapes[rid].line)

    labelling = _burr_colours(prob, n_colours, target, pieces_vox, path)
    lo = [min(c[i] for c in target) for i in range(3)]
    cells = sorted(tuple(a - b for a, b in zip(c, lo)) for c in target)
    at = {tuple(a - b for a, b in zip(c, lo)): v for c, v in target.items()}
    fixed = sum(1 for c in cells if at[c][0] == "#")
    optional = frozenset(c for c in cells if at[c][0] == "+")
    board = Board(ndim=3, shape=tuple(max(c[i] for c in cells) + 1 for i in range(3)), cells=tuple(cells),
                  labels=tuple(labelling(at[c][1], True) for c in cells), cover="exact",
                  match=labelling.match, optional=optional)

    names = {}
    pieces = []
    area = 0
    for i, (k, count, vox) in enumerate(pieces_vox):
        base = shapes[k].attrib.get("name", "").strip() or f"S{k + 1}"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base} ({n})"
        names[name] = k
        pts = list(vox)
        norm, labs = normalise(pts, [labelling(vox[p][1], False) for p in pts])
        pieces.append(Piece(name=name, label=_PIECE_LABELS[i % len(_PIECE_LABELS)], cells=norm, labels=labs,
                            count=count, rotate=True, mirror=False))
        area += len(norm) * count
    holes = len(cells) - area
    if not fixed <= area <= len(cells):
        want = f"{fixed} to {len(cells)}" if optional else str(fixed)
        raise PuzzleFileError(path, f"the pieces of problem {pnum} have {area} voxels, the result shape "
                              f"{rid} has {fixed} fixed and {len(optional)} variable ones; expected "
                              f"{want}: no assembly is possible", line=prob.line)
    max_holes = prob.attrib.get("maxHoles")
    if max_holes is not None and holes > _int_attr(prob, "maxHoles", path):
        raise PuzzleFileError(path, f"problem {pnum} allows at most {max_holes} holes, but its pieces "
                              f"always leave {holes} of the variable voxels empty: no assembly is possible",
                              line=prob.line)
    title = prob.attrib.get("name", "").strip()
    return Puzzle(name=f"{Path(path).stem}: {title}" if title else Path(path).stem, board=board,
                  pieces=tuple(pieces), source=f"BurrTools file {Path(path).name}, problem {pnum}", path=path)


def _pick_problem(problems, which, path):
    names = [p.attrib.get("name", "") for p in problems]
    if which is None:
        return problems[0]
    if isinstance(which, str) and not which.strip().lstrip("-").isdigit():
        if which in names:
            return problems[names.index(which)]
        raise UsageError(f"{path}: no problem named {which!r}; it has {_listing(names)}")
    k = int(which)
    if not 0 <= k < len(problems):
        raise UsageError(f"{path}: problem {k} asked for, but it has {_listing(names)} (numbered from 0)")
    return problems[k]


def _listing(names):
    shown = ", ".join(f"{i}: {n!r}" if n else str(i) for i, n in enumerate(names))
    return f"{len(names)} problem{'s' if len(names) != 1 else ''} ({shown})"


class _Labelling:
    """Map BurrTools colours (0 = neutral) to cell labels, where equality can say it."""

    def __init__(self, piece_map=None, result_map=None):
        self.piece_map, self.result_map = piece_map, result_map
        self.match = piece_map is not None

    def __call__(self, colour, in_result):
        if not self.match:
            return "#"
        return (self.result_map if in_result else self.piece_map)[colour]


def _burr_colours(prob, n_colours, target, pieces_vox, path):
    """Express the problem's colour constraints as label equality, or refuse.

    BurrTools allows a piece voxel of colour ``p`` on a result voxel of colour
    ``r`` when either is neutral (0) or the pair ``(p, r)`` is listed.  Label
    equality says the same when no voxel is neutral and the allowed pairs
    form complete blocks (each block gets one label).
    """
    rcol = {c for _, c in target.values()}
    pcol = {c for _, _, vox in pieces_vox for _, c in vox.values()}
    if n_colours == 0 or rcol == {0} or pcol == {0}:
        return _Labelling()
    if 0 in rcol or 0 in pcol:
        raise PuzzleFileError(path, "mixes neutral and coloured voxels under colour constraints; zipup can "
                              "express only 'this colour goes on that colour'", line=prob.line)
    allowed = set()
    bitmap = prob.find("bitmap")
    for pair in (bitmap.findall("pair") if bitmap is not None else []):
        allowed.add((_int_attr(pair, "piece", path) + 1, _int_attr(pair, "result", path) + 1))
    # Union-find over piece colours ('p', c) and result colours ('r', c).
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for p, r in allowed:
        if p in pcol and r in rcol:
            parent[find(("p", p))] = find(("r", r))
    blocks = {}
    for x in [("p", c) for c in sorted(pcol)] + [("r", c) for c in sorted(rcol)]:
        blocks.setdefault(find(x), []).append(x)
    for members in blocks.values():
        ps = [c for s, c in members if s == "p"]
        rs = [c for s, c in members if s == "r"]
        if any((p, r) not in allowed for p in ps for r in rs):
            raise PuzzleFileError(path, "has colour constraints that are not a plain 'same group' relation "
                                  f"(piece colours {ps} and result colours {rs} are only partly allowed "
                                  "together); zipup cannot express them", line=prob.line)
    if len(blocks) > len(_COLOUR_LABELS):
        raise PuzzleFileError(path, f"needs {len(blocks)} colour labels; zipup has {len(_COLOUR_LABELS)}",
                              line=prob.line)
    label = {root: _COLOUR_LABELS[i] for i, root in enumerate(blocks)}
    return _Labelling({c: label[find(("p", c))] for c in pcol}, {c: label[find(("r", c))] for c in rcol})


# ------------------------------------------------------------------ writing


def export(obj, to):
    """Write a puzzle or a problem in another format.

    Parameters
    ----------
    obj : Puzzle or Problem
        A Puzzle is first turned into a Problem for ``dpf`` and ``dlx``.
    to : {"dlx", "dpf", "toml"}

    Returns
    -------
    str
        The file's text.  ``dpf`` and ``dlx`` have the same number of
        solutions as ``obj`` has configurations (see the module notes for
        the encoding); ``toml`` loads back to an equal puzzle.

    Raises
    ------
    ZipupError
        When the target format cannot express the puzzle: ``toml`` from a
        Problem without geometry or with BurrTools' optional cells, ``dpf``
        with colour separation or DLX colours.

    Examples
    --------
    >>> from zipup.puzzle import loads
    >>> bar = loads('name = "bar"\\n[board]\\nsize = [1, 3]\\n[[piece]]\\nname = "I"\\n'
    ...             'cells = "##"\\n[[piece]]\\nname = "o"\\ncells = "#"\\n')
    >>> print(export(bar, "dpf"))
    3
    2
      2
        2 0 1
        2 1 2
      3
        1 0
        1 1
        1 2
    <BLANKLINE>
    """
    fmt = str(to).lower().lstrip(".")
    if fmt not in _WRITABLE:
        raise UsageError(f"cannot write {to!r}; expected one of {', '.join(_WRITABLE)}")
    if fmt == "toml":
        puzzle = obj.puzzle if isinstance(obj, Problem) else obj
        if puzzle is None:
            raise ZipupError(f"{obj.name!r} has no geometry (it was read from a DPF or DLX file), so it "
                             "cannot be written as TOML; write it as dpf or dlx instead")
        return _to_toml(puzzle)
    problem = obj if isinstance(obj, Problem) else configuration_matrices(obj)
    return _to_dpf(problem) if fmt == "dpf" else _to_dlx(problem)


# -- plain exact cover


@dataclasses.dataclass
class _Cover:
    """Exact cover with secondary items and colours, in groups of options.

    ``groups`` holds (kind, options); an option is a list of (item, colour).
    Kinds: ``"piece"`` (one copy of a piece: exactly one option is used),
    ``"free"`` (a count=None row: its option or the bare selector),
    ``"rows"`` (options of count=None pieces that need no selector),
    ``"gap"`` (DPF only: fills the order items between two copies) and
    ``"dummy"`` (a problem with nothing to place).  In DPF every group is a
    piece, placed exactly once.
    """

    items: list  # (name, primary)
    groups: list


def _encode(problem, dpf):
    n = problem.n_columns
    pri = [bool(x) for x in problem.primary]
    items = [[None, pri[i], "c", i] for i in range(n)]

    def new(primary, *key):
        items.append([None, primary] + list(key))
        return len(items) - 1

    mark_base = len(items)
    if problem.n_marks:
        if dpf:
            raise ZipupError(f"{problem.name!r} has colour constraints (separation or DLX colours), which "
                             "DPF cannot express; write it as dlx instead")
        for j in range(problem.n_marks):
            new(False, "m", j)
    groups = []
    for pi, pr in enumerate(problem.pieces):
        m = pr.matrix
        rows = [m.indices[m.indptr[r]:m.indptr[r + 1]].tolist() for r in range(pr.n_placements)]
        extra = [_mark_items(pr, r, mark_base) for r in range(pr.n_placements)]
        if pr.count is None:
            plain = []
            for r, cols in enumerate(rows):
                if not dpf and any(pri[c] for c in cols):
                    plain.append([(c, None) for c in cols] + extra[r])
                else:
                    sel = new(True, "r", pi, r)
                    chosen = [(sel, None)] + [(c, None) for c in cols] + extra[r]
                    groups.append(("free", [chosen, [(sel, None)]]))
            if plain:
                groups.append(("rows", plain))
            continue
        k = pr.count
        # DPF places every piece exactly once by itself: no selector items there.
        sels = [None if dpf else new(True, "p", pi, j if k > 1 else None) for j in range(k)]
        # DPF has no secondary items, so there the order items are primary and a
        # filler covers the gap between consecutive copies (see the module notes).
        order = [[new(dpf, "o", pi, j, t) for t in range(len(rows))] for j in range(k - 1)]
        if dpf:
            for j in range(k - 1):
                gap = new(True, "g", pi, j)
                spans = [()] + [(s, e) for s in range(1, len(rows) - 1) for e in range(s, len(rows) - 1)]
                groups.append(("gap", [[(gap, None)] + [(o, None) for o in (order[j][sp[0]:sp[1] + 1]
                                                                             if sp else ())]
                                       for sp in spans]))
        for j in range(k):
            opts = []
            for r, cols in enumerate(rows):
                opt = [] if dpf else [(sels[j], None)]
                opt += [(c, None) for c in cols] + extra[r]
                if j < k - 1:
                    opt += [(o, None) for o in order[j][r:]]
                if j > 0:
                    opt += [(o, None) for o in order[j - 1][:r + 1]]
                opts.append(opt)
            groups.append(("piece", opts))
    if not groups:
        # Nothing to place: one dummy option keeps the one (empty) configuration,
        # since DLX needs a primary item and DPF a piece.
        groups.append(("dummy", [[(new(True, "z"), None)]]))
    _name_items(items, problem)
    return _Cover(items=[(it[0], it[1]) for it in items], groups=groups)


def _mark_items(pr, r, base):
    """Mark columns of one row as coloured secondary items (see the module notes)."""
    if pr.marks is None and pr.forbids is None:
        return []
    mk = set(_row(pr.marks, r))
    fb = set(_row(pr.forbids, r))
    return [(base + j, None if (j in mk and j in fb) else ("m" if j in mk else "f"))
            for j in sorted(mk | fb)]


def _row(m, r):
    if m is None:
        return []
    return m.indices[m.indptr[r]:m.indptr[r + 1]][m.data[m.indptr[r]:m.indptr[r + 1]] != 0].tolist()


def _ok_name(s):
    return bool(s) and len(s) <= 8 and not any(ch.isspace() or ch in ":|" for ch in s)


def _name_items(items, problem):
    """Readable names where they are valid and distinct, else systematic ones."""

    def nice(key):
        kind = key[0]
        if kind == "c":
            col = problem.columns[key[1]]
            if isinstance(col, tuple):
                return "".join(f"{a}{v}" for a, v in zip("lrc"[3 - len(col):], col))
            return str(col)
        if kind == "p":
            name = problem.pieces[key[1]].name.replace(" ", "_")
            return name if key[2] is None else f"{name}.{key[2] + 1}"
        if kind == "r":
            return f"R{key[1]}.{key[2]}"
        if kind == "o":
            return f"O{key[1]}.{key[2]}.{key[3]}"
        if kind == "g":
            return f"G{key[1]}.{key[2]}"
        if kind == "m":
            return f"M{key[1]}"
        return "empty"

    def plain(key):
        kind = key[0]
        if kind == "p":
            return f"p{key[1]}" if key[2] is None else f"p{key[1]}.{key[2] + 1}"
        return kind + ".".join(str(k) for k in key[1:])

    names = [nice(it[2:]) for it in items]
    if len(set(names)) != len(names) or not all(_ok_name(s) for s in names):
        names = [plain(it[2:]) for it in items]
    for it, name in zip(items, names):
        it[0] = name


def _to_dlx(problem):
    cover = _encode(problem, dpf=False)
    names = [n for n, _ in cover.items]
    primary = [n for n, p in cover.items if p]
    secondary = [n for n, p in cover.items if not p]
    title = " ".join(str(problem.name).split())
    out = [f"| {title}: exported by zipup (exact cover with colours, Knuth's DLX format)",
           f"| {problem.n_columns} cells, {len(problem.pieces)} pieces; one primary item per piece copy;",
           "| copies of one piece are ordered by secondary items so each set of placements counts once"]
    if problem.n_marks:
        out.append("| mark items (M<j>): colour m marks, f forbids, uncoloured both (separation, colours)")
    out.append(" ".join(primary) + (" | " + " ".join(secondary) if secondary else ""))
    for _, opts in cover.groups:
        for opt in opts:
            out.append(" ".join(names[k] + (f":{c}" if c is not None else "") for k, c in opt))
    return "\n".join(out) + "\n"


def _to_dpf(problem):
    cover = _encode(problem, dpf=True)
    pieces = []
    for _, opts in cover.groups:
        rows = [sorted(k for k, _ in opt) for opt in opts]  # item k is location k
        if any(not r for r in rows):
            raise ZipupError(f"{problem.name!r} has a placement that covers no cell; DPF orientations "
                             "list at least one location")
        pieces.append(rows)
    # DPF covers every location exactly once: a secondary item s gets a private
    # location s' and a filler piece {s, s'} (s stays empty) or {s'}.
    n_loc = len(cover.items)
    for k, (_, primary) in enumerate(cover.items):
        if not primary:
            pieces.append([[k, n_loc], [n_loc]])
            n_loc += 1
    out = [str(n_loc), str(len(pieces))]
    for rows in pieces:
        out.append(f"  {len(rows)}")
        out.extend("    " + " ".join([str(len(r))] + [str(x) for x in r]) for r in rows)
    return "\n".join(out) + "\n"


# -- TOML


def _toml_str(s):
    s = str(s)
    if "\n" in s and all(ch == "\n" or ch.isprintable() for ch in s):
        # Multi-line text stays readable; the newline after the opening quotes is not part of it.
        return '"""\n' + s.replace("\\", "\\\\").replace('"', '\\"') + '"""'
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _drawing(rows):
    body = "\n".join(rows).replace("\\", "\\\\").replace('"', '\\"')
    return '"""\n' + body + '\n"""'


def _grid_rows(shape, chars):
    """Rows of a 1-D or 2-D drawing of the given extent."""
    if len(shape) == 1:
        return ["".join(chars.get((c,), ".") for c in range(shape[0]))]
    return ["".join(chars.get((r, c), ".") for c in range(shape[1])) for r in range(shape[0])]


def _draw(key, shape, chars):
    """``cells = ...`` (1-D, 2-D) or ``layers = [...]`` (3-D) for a drawing of that extent."""
    if len(shape) < 3:
        return f"{key} = {_drawing(_grid_rows(shape, chars))}"
    layers = []
    for layer in range(shape[0]):
        sub = {c[1:]: ch for c, ch in chars.items() if c[0] == layer}
        layers.append(_drawing(_grid_rows(shape[1:], sub)))
    return "layers = [\n" + ",\n".join(layers) + ",\n]"


def _to_toml(puzzle):
    from .puzzle import loads

    b = puzzle.board
    if b.optional:
        raise ZipupError(f"{puzzle.name!r} has cells that may stay empty under exact cover (BurrTools' "
                         "variable voxels), which the TOML format cannot express")
    for ch in set(b.labels):
        if ch == b.door:
            raise ZipupError(f"{puzzle.name!r}: a cell label is the door character {ch!r}; it would be "
                             "read back as a doorway")
    if b.ndim == 2 and b.shape[0] == 1 and not _full_box(b):
        raise ZipupError(f"{puzzle.name!r}: a 2-D board one row high with holes, labels or doors cannot be "
                         "drawn in TOML (a one-row drawing is a 1-D board)")
    out = [f"name = {_toml_str(puzzle.name)}"]
    if puzzle.source:
        out.append(f"source = {_toml_str(puzzle.source)}")
    if puzzle.notes:
        out.append(f"notes = {_toml_str(puzzle.notes)}")
    out += ["", "[board]"]
    if _full_box(b):
        out.append(f"size = {list(b.shape)}")
    else:
        chars = dict(zip(b.cells, b.labels))
        chars.update((c, b.door) for c in b.doors)
        out.append(_draw("cells", b.shape, chars))
    out.append(f"cover = {_toml_str(b.cover)}")
    if b.match:
        out.append("match = true")
    if b.door != "D":
        out.append(f"door = {_toml_str(b.door)}")
    rotate = puzzle.pieces[0].rotate
    mirror = puzzle.pieces[0].mirror
    out += ["", "[rules]", f"rotate = {_bool(rotate)}", f"mirror = {_bool(mirror)}"]
    if puzzle.separate != "none":
        out.append(f"separate = {_toml_str(puzzle.separate)}")
    if puzzle.slidable != "none":
        out += ["", "[filters]", f"slidable = {_toml_str(puzzle.slidable)}"]
    for p in puzzle.pieces:
        out += ["", "[[piece]]", f"name = {_toml_str(p.name)}", f"label = {_toml_str(p.label)}"]
        if p.colour is not None:
            out.append(f"colour = {_toml_str(p.colour)}")
        if p.count != 1:
            out.append(f"count = {p.count}")
        if p.rotate != rotate:
            out.append(f"rotate = {_bool(p.rotate)}")
        if p.mirror != mirror:
            out.append(f"mirror = {_bool(p.mirror)}")
        shape = tuple(max(c[i] for c in p.cells) + 1 for i in range(b.ndim))
        out.append(_draw("cells", shape, dict(zip(p.cells, p.labels))))
    text = "\n".join(out) + "\n"
    # The loader is the judge of what the text means: check it reads back unchanged.
    try:
        back = loads(text, path=puzzle.path)
    except PuzzleFileError as e:
        raise ZipupError(f"{puzzle.name!r} cannot be written as TOML: {e.reason}") from None
    if back != puzzle:
        diff = [f.name for f in dataclasses.fields(Puzzle)
                if getattr(back, f.name) != getattr(puzzle, f.name)]
        raise ZipupError(f"{puzzle.name!r} cannot be written as TOML without changing its "
                         f"{', '.join(diff)}")
    return text


def _full_box(b):
    return (not b.doors and all(ch == "#" for ch in b.labels)
            and len(b.cells) == int(np.prod(b.shape)))


def _bool(v):
    return "true" if v else "false"
