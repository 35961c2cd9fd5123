"""Stage 1: read and validate puzzle files into frozen dataclasses.

The TOML format is specified in ``docs/puzzle-format.md``.  Everything a
user wrote is checked here, once; later stages trust these objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import PuzzleFileError

__all__ = ["Board", "Piece", "Puzzle", "load", "loads"]

Coord = tuple  # tuple[int, ...] of length ndim


@dataclass(frozen=True)
class Board:
    """The board: which cells must (or may) be covered.

    Attributes
    ----------
    ndim : int
        1, 2 or 3.
    shape : tuple of int
        Extent of the drawing (bounding box from the origin).
    cells : tuple of tuple of int
        Coordinates of the room cells, in row-major order.
    labels : tuple of str
        The character drawn at each cell (``'#'`` for a plain cell).
    doors : tuple of tuple of int
        Doorway cells (open floor, not part of the room).
    cover : str
        ``"exact"`` or ``"partial"``.
    match : bool
        Piece cell labels must equal board cell labels.
    door : str
        The doorway character.
    optional : frozenset of tuple of int
        Cells that may stay empty even under exact cover (BurrTools ``+``).
    """

    ndim: int
    shape: tuple
    cells: tuple
    labels: tuple
    doors: tuple = ()
    cover: str = "exact"
    match: bool = False
    door: str = "D"
    optional: frozenset = field(default_factory=frozenset)


@dataclass(frozen=True)
class Piece:
    """One piece (with ``count`` interchangeable copies).

    ``cells`` are normalised so that every coordinate starts at 0.
    """

    name: str
    label: str
    cells: tuple
    labels: tuple
    count: int = 1
    colour: str | None = None
    rotate: bool = True
    mirror: bool = True


@dataclass(frozen=True)
class Puzzle:
    """A whole puzzle, as validated from a file.

    Examples
    --------
    >>> p = loads('name = "bar"\\n[board]\\nsize = [1, 3]\\n[[piece]]\\nname = "I"\\ncells = "###"\\n')
    >>> p.name, p.board.ndim, len(p.board.cells), p.pieces[0].cells
    ('bar', 2, 3, ((0, 0), (0, 1), (0, 2)))
    """

    name: str
    board: Board
    pieces: tuple
    source: str = ""
    notes: str = ""
    separate: str = "none"
    slidable: str = "none"
    path: str = "<string>"

    @property
    def ndim(self):
        return self.board.ndim


# ---------------------------------------------------------------- loading


def load(path):
    """Read and validate a TOML puzzle file.

    Parameters
    ----------
    path : str or pathlib.Path

    Returns
    -------
    Puzzle

    Raises
    ------
    PuzzleFileError
        With the file, key, line and what was expected.
    """
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PuzzleFileError(path, f"is not UTF-8 text (byte {e.start})") from None
    return loads(text, path=str(path))


def read_bytes(path, limit=None):
    """A file's bytes (at most ``limit + 1`` of them), or a PuzzleFileError saying why not."""
    try:
        with open(path, "rb") as f:
            return f.read() if limit is None else f.read(limit + 1)
    except FileNotFoundError:
        raise PuzzleFileError(path, "no such file") from None
    except IsADirectoryError:
        raise PuzzleFileError(path, "is a directory, expected a puzzle file") from None
    except OSError as e:
        raise PuzzleFileError(path, f"cannot be read ({e.strerror})") from None


def loads(text, path="<string>"):
    """Validate puzzle text (TOML) into a :class:`Puzzle`; see :func:`load`."""
    import tomllib

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = re.search(r"\(at line (\d+), column \d+\)", msg)
        line = int(m.group(1)) if m else None
        msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", msg)
        raise PuzzleFileError(path, f"is not valid TOML: {msg}", line=line) from None
    return _Validator(path, text).puzzle(doc)


_TOP = {"name", "source", "notes", "board", "rules", "filters", "piece"}
_BOARD = {"cells", "layers", "size", "cover", "match", "door"}
_RULES = {"rotate", "mirror", "separate"}
_FILTERS = {"slidable"}
_PIECE = {"name", "label", "colour", "cells", "layers", "coords", "count", "rotate", "mirror"}


def _typename(v):
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "a table"}.get(type(v), type(v).__name__)


class _Validator:
    def __init__(self, path, text):
        self.path = path
        self.lines = text.splitlines()

    # -- error helpers
    def line_of(self, key, section=None, nth=0):
        """Best-effort line of ``key = ...`` inside the nth ``[section]``/``[[section]]``."""
        start = 0
        if section is not None:
            pat = re.compile(r"^\s*\[\[?\s*" + re.escape(section) + r"\s*\]\]?\s*(#.*)?$")
            hits = [i for i, ln in enumerate(self.lines) if pat.match(ln)]
            if nth < len(hits):
                start = hits[nth]
        keypat = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
        for i in range(start, len(self.lines)):
            if i > start and section is not None and re.match(r"^\s*\[", self.lines[i]):
                break
            if keypat.match(self.lines[i]):
                return i + 1
        if section is not None and start < len(self.lines) and start:
            return start + 1
        return None

    def fail(self, key, message, section=None, nth=0, bare=None):
        line = self.line_of(bare or key.split(".")[-1].split("]")[-1], section, nth)
        raise PuzzleFileError(self.path, message, key=key, line=line)

    def check_keys(self, table, allowed, where, section=None, nth=0):
        for k in table:
            if k not in allowed:
                self.fail(f"{where}{k}" if where else k,
                          f"unknown key; expected one of {', '.join(sorted(allowed))}",
                          section, nth, bare=k)

    def typed(self, table, key, kind, where, default=None, section=None, nth=0, required=False):
        if key not in table:
            if required:
                line = None if section is None else self.line_of(section, None)
                raise PuzzleFileError(self.path, "is required but missing", key=f"{where}{key}",
                                      line=self.line_of_section(section, nth))
            return default
        v = table[key]
        ok = isinstance(v, kind) and not (kind is int and isinstance(v, bool))
        if not ok:
            names = {str: "a string", bool: "a boolean (true or false)", int: "an integer",
                     dict: "a table", list: "an array"}
            self.fail(f"{where}{key}", f"expected {names[kind]}, found {_typename(v)} {v!r}",
                      section, nth, bare=key)
        return v

    def line_of_section(self, section, nth=0):
        if section is None:
            return None
        pat = re.compile(r"^\s*\[\[?\s*" + re.escape(section) + r"\s*\]\]?")
        hits = [i for i, ln in enumerate(self.lines) if pat.match(ln)]
        return hits[nth] + 1 if nth < len(hits) else None

    # -- drawings
    def drawing(self, text, key, section, nth, door=None, in_piece=False):
        """Parse a 2-D drawing into {(r, c): char}."""
        rows = text.split("\n")
        while rows and not rows[0].strip():
            rows.pop(0)
        while rows and not rows[-1].strip():
            rows.pop()
        out = {}
        for r, row in enumerate(rows):
            row = row.rstrip()
            for c, ch in enumerate(row):
                if ch == ".":
                    continue
                if ch.isspace() or not ch.isprintable():
                    self.fail(key, f"row {r + 1} has {ch!r} at column {c + 1}; expected '.', '#' "
                              "or a printable label character (no spaces inside a row)",
                              section, nth)
                if in_piece and door is not None and ch == door:
                    self.fail(key, f"row {r + 1} has the door character {ch!r}; doorways belong "
                              "to the board, not to pieces", section, nth)
                out[(r, c)] = ch
        self.extent = (len(rows), max((len(r.rstrip()) for r in rows), default=0))
        return out, rows

    def shape_of(self, table, where, section, nth, ndim, door, in_piece):
        """Return {coord: char} from exactly one of cells/layers/size/coords."""
        keys = ("cells", "layers", "coords") if in_piece else ("cells", "layers", "size")
        given = [k for k in keys if k in table]
        if len(given) != 1:
            found = ", ".join(given) if given else "none"
            raise PuzzleFileError(self.path, f"expected exactly one of {', '.join(keys)}, found {found}",
                                  key=where.rstrip("."), line=self.line_of_section(section, nth))
        k = given[0]
        v = table[k]
        key = f"{where}{k}"
        if k == "cells":
            if not isinstance(v, str):
                self.fail(key, f"expected a drawing (string), found {_typename(v)}", section, nth)
            cells, rows = self.drawing(v, key, section, nth, door, in_piece)
            if ndim is None:  # the board decides
                ndim = 1 if len(rows) == 1 else 2
            ext = self.extent
            if ndim == 1:
                self.extent = (ext[1],)
                if len(rows) > 1:
                    self.fail(key, f"the board is 1-D, so a piece drawing has one row; found {len(rows)}",
                              section, nth)
                return {(c,): ch for (r, c), ch in cells.items()}, 1
            if ndim == 2:
                return cells, 2
            self.extent = (1,) + ext
            return {(0,) + rc: ch for rc, ch in cells.items()}, 3
        if k == "layers":
            if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
                self.fail(key, "expected a non-empty array of drawings (strings)", section, nth)
            if ndim is not None and ndim != 3:
                self.fail(key, f"'layers' is for 3-D, but the board is {ndim}-D", section, nth)
            out = {}
            ext = [len(v), 0, 0]
            for li, layer in enumerate(v):
                cells, _ = self.drawing(layer, f"{key}[{li}]", section, nth, door, in_piece)
                ext[1:] = [max(a, b) for a, b in zip(ext[1:], self.extent)]
                out.update({(li,) + rc: ch for rc, ch in cells.items()})
            self.extent = tuple(ext)
            return out, 3
        if k == "size":
            if (not isinstance(v, list) or len(v) not in (1, 2, 3)
                    or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v)):
                self.fail(key, f"expected [rows, cols] or [layers, rows, cols] of positive integers, found {v!r}",
                          section, nth)
            import itertools
            self.extent = tuple(v)
            return {c: "#" for c in itertools.product(*(range(n) for n in v))}, len(v)
        # coords
        if (not isinstance(v, list) or not v
                or not all(isinstance(p, list) and p and all(isinstance(x, int) and not isinstance(x, bool)
                                                             for x in p) for p in v)):
            self.fail(key, "expected a non-empty array of integer coordinate arrays like [[0, 0], [0, 1]]",
                      section, nth)
        lens = {len(p) for p in v}
        if lens != {ndim}:
            self.fail(key, f"expected coordinates with {ndim} numbers (the board is {ndim}-D), "
                      f"found {sorted(lens)}", section, nth)
        out = {tuple(p): "#" for p in v}
        if len(out) != len(v):
            self.fail(key, "a coordinate is listed twice", section, nth)
        return out, ndim

    # -- the whole file
    def puzzle(self, doc):
        self.check_keys(doc, _TOP, "")
        name = self.typed(doc, "name", str, "", required=True)
        source = self.typed(doc, "source", str, "", "")
        notes = self.typed(doc, "notes", str, "", "")
        bt = self.typed(doc, "board", dict, "", required=True)
        rules = self.typed(doc, "rules", dict, "", {})
        filters = self.typed(doc, "filters", dict, "", {})

        # board
        self.check_keys(bt, _BOARD, "board.", "board")
        door = self.typed(bt, "door", str, "board.", "D", "board")
        if len(door) != 1 or door in ".#" or door.isspace():
            self.fail("board.door", f"expected one character other than '.' and '#', found {door!r}", "board")
        cover = self.typed(bt, "cover", str, "board.", "exact", "board")
        if cover not in ("exact", "partial"):
            self.fail("board.cover", f'expected "exact" or "partial", found {cover!r}', "board")
        match = self.typed(bt, "match", bool, "board.", False, "board")
        drawn, ndim = self.shape_of(bt, "board.", "board", 0, None, door, False)
        room = sorted(c for c, ch in drawn.items() if ch != door)
        doors = tuple(sorted(c for c, ch in drawn.items() if ch == door))
        if not room:
            self.fail("board." + next(k for k in ("cells", "layers", "size") if k in bt),
                      "the board has no cells; expected at least one '#' or label", "board")
        # the drawing's extent, '.' included: what lies beyond it is open floor
        shape = tuple(max([e] + [c[i] + 1 for c in drawn]) for i, e in enumerate(self.extent))
        board = Board(ndim=ndim, shape=shape, cells=tuple(room),
                      labels=tuple(drawn[c] for c in room), doors=doors, cover=cover,
                      match=match, door=door)

        # rules
        self.check_keys(rules, _RULES, "rules.", "rules")
        rotate = self.typed(rules, "rotate", bool, "rules.", True, "rules")
        mirror = self.typed(rules, "mirror", bool, "rules.", ndim < 3, "rules")
        separate = self.typed(rules, "separate", str, "rules.", "none", "rules")
        if separate not in ("none", "edge", "corner"):
            self.fail("rules.separate", f'expected "none", "edge" or "corner", found {separate!r}', "rules")

        self.check_keys(filters, _FILTERS, "filters.", "filters")
        slidable = self.typed(filters, "slidable", str, "filters.", "none", "filters")
        if slidable not in ("none", "quick", "exact"):
            self.fail("filters.slidable", f'expected "none", "quick" or "exact", found {slidable!r}',
                      "filters")

        # pieces
        if "piece" not in doc:
            raise PuzzleFileError(self.path, "is required but missing; expected at least one [[piece]]",
                                  key="piece")
        plist = doc["piece"]
        if not isinstance(plist, list) or not plist or not all(isinstance(t, dict) for t in plist):
            self.fail("piece", "expected an array of tables written [[piece]], at least one", bare="piece")
        pieces = []
        names = set()
        for n, pt in enumerate(plist):
            pieces.append(self.piece(pt, n, ndim, door, rotate, mirror, names, board))
        pieces = _unique_labels(pieces)

        # whole-puzzle checks
        nroom = len(board.cells)
        for p in pieces:
            if len(p.cells) > nroom or not _fits_box(p, board):
                raise PuzzleFileError(self.path,
                                      f"piece {p.name!r} ({len(p.cells)} cells) is larger than the board "
                                      f"({nroom} cells, extent {'x'.join(map(str, board.shape))}) "
                                      "in every orientation", key=f"piece[{pieces.index(p) + 1}]",
                                      line=self.line_of_section("piece", pieces.index(p)))
        area = sum(len(p.cells) * p.count for p in pieces)
        if cover == "exact" and area != nroom:
            raise PuzzleFileError(self.path, f'cover = "exact" needs the pieces to fill the board: '
                                  f"pieces have {area} cells, the board has {nroom}",
                                  key="board.cover", line=self.line_of("cover", "board"))
        if cover == "partial" and area > nroom:
            raise PuzzleFileError(self.path, f"the pieces have {area} cells but the board only {nroom}",
                                  key="board.cover", line=self.line_of("cover", "board"))
        if match:
            have = set(board.labels)
            for i, p in enumerate(pieces):
                for lab in sorted(set(p.labels)):
                    if lab not in have:
                        raise PuzzleFileError(
                            self.path, f"piece {p.name!r} has label {lab!r}, which no board cell carries "
                            f"(board labels: {''.join(sorted(have))}); under match = true it could never be placed",
                            key=f"piece[{i + 1}].cells", line=self.line_of("cells", "piece", i))
        return Puzzle(name=name, board=board, pieces=tuple(pieces), source=source, notes=notes,
                      separate=separate, slidable=slidable, path=self.path)

    def piece(self, pt, n, ndim, door, rotate, mirror, names, board):
        where = f"piece[{n + 1}]."
        self.check_keys(pt, _PIECE, where, "piece", n)
        name = self.typed(pt, "name", str, where, section="piece", nth=n, required=True)
        if not name:
            self.fail(where + "name", "expected a non-empty name", "piece", n)
        if name in names:
            self.fail(where + "name", f"duplicate piece name {name!r}; names must be unique "
                      "(use count = N for identical copies)", "piece", n)
        names.add(name)
        label = self.typed(pt, "label", str, where, None, "piece", n)
        if label is not None and (len(label) != 1 or label in ". " or not label.isprintable()):
            self.fail(where + "label", f"expected one printable character other than '.', found {label!r}",
                      "piece", n)
        colour = self.typed(pt, "colour", str, where, None, "piece", n)
        count = self.typed(pt, "count", int, where, 1, "piece", n)
        if count < 1:
            self.fail(where + "count", f"expected an integer >= 1, found {count}", "piece", n)
        prot = self.typed(pt, "rotate", bool, where, rotate, "piece", n)
        pmir = self.typed(pt, "mirror", bool, where, mirror, "piece", n)
        drawn, _ = self.shape_of(pt, where, "piece", n, ndim, door, True)
        if not drawn:
            k = next(k for k in ("cells", "layers", "coords") if k in pt)
            self.fail(where + k, f"piece {name!r} has no cells; expected at least one '#'", "piece", n)
        coords = sorted(drawn)
        lo = [min(c[i] for c in coords) for i in range(ndim)]
        cells = tuple(tuple(c[i] - lo[i] for i in range(ndim)) for c in coords)
        labels = tuple(drawn[c] for c in coords)
        groups = _components(cells)
        if groups > 1:
            k = next(k for k in ("cells", "layers", "coords") if k in pt)
            self.fail(where + k, f"piece {name!r} is not connected: its cells fall into {groups} "
                      "separate parts; expected one shape whose cells touch by faces", "piece", n)
        return Piece(name=name, label=label or "", cells=cells, labels=labels, count=count,
                     colour=colour, rotate=prot, mirror=pmir)


def _components(cells):
    """Number of face-connected components of a cell set."""
    todo = set(cells)
    parts = 0
    while todo:
        parts += 1
        stack = [todo.pop()]
        while stack:
            c = stack.pop()
            for i in range(len(c)):
                for d in (-1, 1):
                    nb = c[:i] + (c[i] + d,) + c[i + 1:]
                    if nb in todo:
                        todo.remove(nb)
                        stack.append(nb)
    return parts


def _fits_box(piece, board):
    """Whether some axis permutation of the piece's extent fits the board's extent."""
    import itertools

    ext = [max(c[i] for c in piece.cells) + 1 for i in range(board.ndim)]
    if not piece.rotate:  # as drawn, or flipped along one axis: the extent never turns
        perms = [tuple(ext)]
    else:
        perms = set(itertools.permutations(ext))
    return any(all(e <= s for e, s in zip(p, board.shape)) for p in perms)


def _unique_labels(pieces):
    """Give every piece a distinct one-character label, keeping the ones asked for."""
    import dataclasses
    import itertools
    import string

    used = {p.label for p in pieces if p.label}
    out = []
    pool = string.ascii_uppercase + string.ascii_lowercase + string.digits + "@$%&*+=?!~^"
    for p in pieces:
        if p.label:
            out.append(p)
            continue
        cand = [p.name[0]] if p.name[0] not in ". #" else []
        cand += [p.name[0].upper(), p.name[0].lower()] + [ch for ch in p.name[1:] if ch not in ". #"]
        cand += list(pool)
        more = (chr(c) for c in itertools.count(0xC0))  # past the pool: any printable character
        lab = next(ch for ch in itertools.chain(cand, more) if ch not in used and ch not in ". #"
                   and ch.isprintable() and not ch.isspace())
        used.add(lab)
        out.append(dataclasses.replace(p, label=lab))
    return out
