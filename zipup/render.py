"""Stage 9: rendering: text drawings, JSON records, SVG sheets, stats tables.

JSON schema of one configuration (``--format json`` / ``jsonl``)::

    {"index": 1,                       # 1-based, in listing order
     "pieces": {"T": [[[1, 1], [1, 2], [1, 3], [2, 2]],   # one list per copy,
                      [[1, 4], [1, 5], [1, 6], [2, 5]]],  # each a list of cells
                "S": [[[2, 3], [2, 4], [3, 2], [3, 3]]]}}

Cells are board coordinates as in the puzzle file (``[row, col]``,
``[layer, row, col]`` or ``[col]``); for inputs without geometry (DPF, DLX)
they are the location numbers or item names.
"""

from __future__ import annotations

import json

import numpy as np

__all__ = ["as_record", "header", "stats_table", "svg", "text"]

_PALETTE = ["#e6194b", "#3cb44b", "#ffe119", "#4363d8", "#f58231", "#911eb4", "#46f0f0",
            "#f032e6", "#bcf60c", "#fabebe", "#008080", "#e6beff", "#9a6324", "#fffac8",
            "#800000", "#aaffc3", "#808000", "#ffd8b1", "#000075", "#808080"]

_NAMED = {"red": "#d62728", "yellow": "#f5d327", "blue": "#4a6fe3", "green": "#2ca02c",
          "magenta": "#d63fc0", "orange": "#ff7f0e", "purple": "#9467bd", "cyan": "#17becf",
          "brown": "#8c564b", "grey": "#7f7f7f", "gray": "#7f7f7f", "black": "#222222",
          "white": "#f4f4f4", "pink": "#f7a1c4"}


def _geometric(problem):
    return problem.puzzle is not None


def _grid(problem, configuration):
    """Board bounding box of the room cells as a char grid: label, '.' empty, ' ' no cell."""
    coords = np.array(problem.columns, dtype=np.int64).reshape(problem.n_columns, -1)
    lo, hi = coords.min(axis=0), coords.max(axis=0)
    grid = np.full(tuple(hi - lo + 1), " ", dtype="<U1")
    grid[tuple((coords - lo).T)] = "."
    for (p, _), cells in zip(configuration.placements, configuration.cells(problem)):
        grid[tuple((coords[cells] - lo).T)] = problem.pieces[p].label
    return grid


def text(problem, configuration):
    """A configuration as a text drawing of piece labels.

    2-D boards are drawn row by row, cells separated by spaces (``.`` is an
    empty room cell); 3-D boards draw their layers side by side; inputs
    without geometry list each piece's locations.

    Examples
    --------
    >>> import zipup
    >>> room = zipup.load("puzzles/room.toml")
    >>> c = next(iter(zipup.enumerate(room)))
    >>> print(text(zipup.as_problem(room), c))
    T T T T Z Z
    T T T . Z V
    T S S Z Z V
    S S . V V V
    """
    if not _geometric(problem):
        lines = []
        for (p, _), cells in zip(configuration.placements, configuration.cells(problem)):
            lines.append(f"{problem.pieces[p].name}: " + " ".join(str(problem.columns[c]) for c in cells))
        return "\n".join(lines)
    grid = _grid(problem, configuration)
    if grid.ndim == 1:
        return " ".join(grid).rstrip()
    if grid.ndim == 2:
        return "\n".join(" ".join(row).rstrip() for row in grid)
    layers = [[" ".join(row) for row in layer] for layer in grid]
    return "\n".join("   ".join(parts).rstrip() for parts in zip(*layers))


def as_record(problem, configuration, index):
    """A configuration as a JSON-ready dict (schema in the module docstring)."""
    pieces = {}
    for (p, _), cells in zip(configuration.placements, configuration.cells(problem)):
        cols = [problem.columns[c] for c in cells]
        cols = [list(c) if isinstance(c, tuple) else c for c in cols]
        pieces.setdefault(problem.pieces[p].name, []).append(cols)
    return {"index": index, "pieces": pieces}


def header(problem):
    """Lines describing the puzzle: board, and every piece with its placement count."""
    lines = [f"puzzle: {problem.name}"]
    pz = problem.puzzle
    if pz is not None:
        b = pz.board
        extra = [f"cover = {b.cover}"]
        if b.doors:
            extra.append(f"{len(b.doors)} doorway cells")
        if b.match:
            extra.append("labels must match")
        if pz.separate != "none":
            extra.append(f"separate = {pz.separate}")
        lines.append(f"board: {b.ndim}-D, drawing {'x'.join(map(str, b.shape))}, "
                     f"{len(b.cells)} cells, " + ", ".join(extra))
    else:
        prim = int(problem.primary.sum())
        lines.append(f"board: {problem.n_columns} columns ({prim} covered exactly once, "
                     f"{problem.n_columns - prim} at most once)")
    width = max([5] + [len(p.name) for p in problem.pieces])
    lines.append(f"{'piece':<{width}}  label  copies  cells  placements")
    for p in problem.pieces:
        cells = p.matrix.nnz // p.n_placements if p.n_placements else 0
        copies = "any" if p.count is None else str(p.count)
        lines.append(f"{p.name:<{width}}  {p.label:<5}  {copies:>6}  {cells:>5}  {p.n_placements:>10}")
    return lines


def stats_table(steps):
    """The per-step statistics as aligned text lines.

    A join table for the :class:`~zipup.plans.Step` records; a line for each
    search record of the depth plan (:func:`search_line`).
    """
    searches = [s for s in steps if hasattr(s, "nodes")]
    steps = [s for s in steps if not hasattr(s, "nodes")]
    if not steps:
        return [search_line(s) for s in searches]
    head = ("step", "joins", "rows A", "rows B", "nnz(A·Bᵀ)", "rows", "formed", "merged", "pruned",
            "bytes", "seconds")
    rows = [head]
    for s in steps:
        rows.append((str(s.index), s.label, str(s.rows_in[0]), str(s.rows_in[1]),
                     "-" if s.nnz is None else str(s.nnz), str(s.rows_out), str(s.rows_formed),
                     str(s.rows_merged), str(s.pruned), str(s.bytes), f"{s.seconds:.4f}"))
    widths = [max(len(r[k]) for r in rows) for k in range(len(head))]
    return ["  ".join(c.ljust(w) if k == 1 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths)))
            for r in rows] + [search_line(s) for s in searches]


def search_line(rec):
    """One depth-first search in a line: its rule and why, nodes, nodes per second, first configuration, time.

    Examples
    --------
    >>> from zipup.plans import SearchStats
    >>> search_line(SearchStats(nodes=289759, configurations=8574, first=0.0009, seconds=0.3364,
    ...                         load=0.21, finished=True, rule="fewest", why="asked for"))
    'depth-first count, rule fewest (asked for): 289,759 nodes, 2,292,397 nodes/s, first configuration after 0.9 ms, 8,574 configurations in 0.336 s (0.210 s loading the compiled search)'
    """
    first = "no configuration" if rec.first is None else f"first configuration after {_ms(rec.first)}"
    done = "" if rec.finished else " (stopped before the end)"
    rule = f", rule {rec.rule} ({rec.why})" if rec.rule else ""
    return (f"depth-first {rec.mode}{rule}: {rec.nodes:,} nodes, {rec.rate:,.0f} nodes/s, {first}, "
            f"{rec.configurations:,} configurations in {rec.seconds:.3f} s{done} "
            f"({rec.load:.3f} s loading the compiled search)")


def _ms(seconds):
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _colour(problem, piece):
    c = problem.pieces[piece].colour
    if c is None:
        return _PALETTE[piece % len(_PALETTE)]
    if c.startswith("#") or c not in _NAMED:
        return c if c.startswith("#") else _PALETTE[hash(c) % len(_PALETTE)]
    return _NAMED[c]


def svg(problem, configurations, cell=14, columns=6):
    """A sheet of small coloured drawings of configurations (3-D: layers side by side).

    Parameters
    ----------
    problem : Problem
        Needs geometry.
    configurations : iterable of Configuration
    cell : int
        Side of one cell in pixels.
    columns : int
        Drawings per row of the sheet.

    Returns
    -------
    str
        An SVG document.

    Examples
    --------
    >>> import zipup
    >>> room = zipup.load("puzzles/room.toml")
    >>> doc = svg(zipup.as_problem(room), zipup.enumerate(room))
    >>> doc.startswith("<svg") and doc.count("<g ") == 3
    True
    """
    from xml.sax.saxutils import escape

    from .errors import UsageError

    if not _geometric(problem):
        raise UsageError("--svg needs a puzzle with geometry")
    coords = np.array(problem.columns, dtype=np.int64).reshape(problem.n_columns, -1)
    lo = coords.min(axis=0)
    ext = coords.max(axis=0) - lo + 1
    if coords.shape[1] == 1:
        layers, rows, cols = 1, 1, ext[0]
    elif coords.shape[1] == 2:
        layers, rows, cols = 1, ext[0], ext[1]
    else:
        layers, rows, cols = ext
    draw_w = (layers * cols + (layers - 1)) * cell
    draw_h = rows * cell
    pad = cell
    parts, k = [], 0
    for k, conf in enumerate(configurations):
        ox = pad + (k % columns) * (draw_w + pad)
        oy = pad + (k // columns) * (draw_h + 2 * pad)
        g = [f'<g transform="translate({ox},{oy})"><title>configuration {k + 1}</title>']
        for c in coords - lo:
            x, y = _xy(c, cols, cell)
            g.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="#eeeeee" '
                     'stroke="#bbbbbb" stroke-width="0.5"/>')
        for (p, _), cells in zip(conf.placements, conf.cells(problem)):
            fill = escape(_colour(problem, p))
            for c in coords[cells] - lo:
                x, y = _xy(c, cols, cell)
                g.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" '
                         'stroke="#333333" stroke-width="0.5"/>')
        g.append("</g>")
        parts.append("".join(g))
    n = k + 1 if parts else 0
    width = pad + min(max(n, 1), columns) * (draw_w + pad)
    height = pad + max(1, -(-n // columns)) * (draw_h + 2 * pad)
    title = escape(problem.name)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}"><title>{title}</title>' + "".join(parts) + "</svg>\n")


def _xy(c, cols, cell):
    if len(c) == 1:
        return c[0] * cell, 0
    if len(c) == 2:
        return c[1] * cell, c[0] * cell
    return (c[0] * (cols + 1) + c[2]) * cell, c[1] * cell


def dumps(record):
    return json.dumps(record, separators=(",", ":"))
