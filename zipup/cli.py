"""Stage 10: the command line, a thin layer over :mod:`zipup.api`.

Errors a user can cause print one ``Error: ...`` line: exit 1 for bad input,
2 for bad usage.  Output is flushed as it is produced.
"""

from __future__ import annotations

import sys

import click

from . import __version__

__all__ = ["main"]

_EPILOG = """\b
Examples:
  zipup enumerate puzzles/room.toml
  zipup enumerate puzzles/room.toml --tree "((T,T),((S,V),Z))" --stats
  zipup enumerate puzzles/pentomino-6x10.toml --count --plan sweep
  zipup enumerate puzzles/room.toml --filter slidable=none --format jsonl
  zipup show puzzles/box-3x4x5.toml
"""


class _Main(click.Group):
    def invoke(self, ctx):
        from .errors import UsageError, ZipupError

        try:
            return super().invoke(ctx)
        except UsageError as e:
            _fail(e, 2)
        except ZipupError as e:
            _fail(e, 1)
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (| head): not an error
            sys.exit(0)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)


def _fail(e, status):
    click.echo(f"Error: {e}", err=True)
    sys.exit(status)


@click.group(cls=_Main, epilog=_EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="zipup")
def main():
    """Count and list the ways pieces fit into a board, by zipping up sparse matrices.

    Puzzle files are TOML (see docs/puzzle-format.md); DPF (.dpf, .dpfg),
    Knuth's DLX (.dlx) and BurrTools (.xmpuzzle) files are read too.
    """


_input_format = click.option("--input-format", type=click.Choice(["toml", "dpf", "dpfg", "dlx", "xmpuzzle"]),
                             help="Read FILE in this format (default: from its extension).")
_problem_opt = click.option("--problem", "problem_no", type=click.IntRange(min=1), default=None,
                            help="Which problem of a BurrTools file (1-based; default 1).")
_plan_opt = click.option("--plan", type=click.Choice(["auto", "balanced", "sweep"]), default="auto",
                         show_default=True, help="How to arrange the joins.")
_tree_opt = click.option("--tree", default=None, metavar="SHAPE",
                         help='Shape of the balanced tree, e.g. "((T,T),((S,V),Z))".')
_kernel_opt = click.option("--kernel", type=click.Choice(["auto", "bits", "compiled", "sparse"]),
                           default="auto", show_default=True,
                           help="Join kernel: sparse is the A·Bᵀ reference, bits packs rows into "
                                "uint64 words, compiled uses numba loops, auto picks by size.")


def _load(file, input_format, problem_no):
    from .api import as_problem, load

    return as_problem(load(file, format=input_format,
                           problem=None if problem_no is None else problem_no - 1))


class _Out:
    """Where results go: stdout or --output, flushed line by line."""

    def __init__(self, path):
        self.f = open(path, "w", encoding="utf-8") if path else sys.stdout

    def line(self, s=""):
        self.f.write(s + "\n")
        self.f.flush()

    def close(self):
        if self.f is not sys.stdout:
            self.f.close()


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--count", "count_only", is_flag=True, help="Print only the number of configurations.")
@click.option("--limit", type=click.IntRange(min=0), default=None, metavar="N",
              help="Stop after N configurations.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "jsonl"]), default="text",
              show_default=True, help="Output format (json schema: piece name -> cells per copy).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write configurations to this file instead of stdout.")
@click.option("--stats", is_flag=True, help="Print a table of every join: sizes, nonzeros, bytes, seconds.")
@click.option("--filter", "filter_", multiple=True, metavar="NAME=VALUE",
              help="Post-stage filter: slidable=none|quick|exact (overrides the file).")
@click.option("--svg", "svg_path", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Also draw the configurations as a sheet of pictures in this SVG file.")
@_plan_opt
@_tree_opt
@_kernel_opt
@_input_format
@_problem_opt
def enumerate(file, count_only, limit, fmt, output, stats, filter_, svg_path, plan, tree, kernel,
              input_format, problem_no):
    """Count and list the configurations of the puzzle in FILE."""
    from . import render
    from .api import solve
    from .filters import default_filters, parse_filter

    slidable = None
    for f in filter_:
        _, slidable = parse_filter(f)
    problem = _load(file, input_format, problem_no)
    filters = default_filters(problem, slidable)
    post = [f for f in filters if not f.in_plan]
    out = _Out(output)
    text = fmt == "text"
    info = out if (text and output is None) else _Err()
    for ln in render.header(problem):
        info.line(ln)
    listing = not (count_only and not post)
    result = solve(problem, plan, count_only=not listing, tree=tree, kernel=kernel)
    passed = 0
    drawn = []
    if listing:
        configs = result.configurations()
        for f in filters:
            configs = f.apply(problem, configs)
        if fmt == "json" and not count_only:
            out.f.write('{"puzzle": %s, "configurations": [' % render.json.dumps(problem.name))
        for conf in configs:
            if limit is not None and passed >= limit:
                break
            passed += 1
            if svg_path:
                drawn.append(conf)
            if count_only:
                continue
            if fmt == "text":
                out.line(f"\n#{passed}")
                out.line(render.text(problem, conf))
            elif fmt == "jsonl":
                out.line(render.dumps(render.as_record(problem, conf, passed)))
            else:
                out.f.write(("," if passed > 1 else "") + "\n  " + render.dumps(render.as_record(problem, conf, passed)))
                out.f.flush()
        if fmt == "json" and not count_only:
            out.line("\n], \"count\": %d, \"shown\": %d}" % (result.count, passed))
    if stats:
        info.line("")
        for ln in render.stats_table(result.stats):
            info.line(ln)
    summary = _summary(result.count, passed if listing else None, post, limit, result.plan)
    if count_only:
        out.line(summary)
    elif text:
        out.line("")
        out.line(summary)
    else:
        info.line(summary)
    if svg_path:
        with open(svg_path, "w", encoding="utf-8") as fh:
            fh.write(render.svg(problem, drawn))
    out.close()


class _Err:
    def line(self, s=""):
        click.echo(s, err=True)


def _summary(total, passed, post, limit, plan):
    s = f"{total} configuration{'s' if total != 1 else ''}"
    if post:
        names = ", ".join(f"{f.name}={f.mode}" for f in post)
        more = "" if limit is None or passed < limit else f" (stopped at --limit {limit})"
        s += f", {passed} pass {names}{more}"
    elif limit is not None and passed is not None and passed < total:
        s += f", {passed} shown (--limit {limit})"
    return s + f" [plan {plan}]"


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@_input_format
@_problem_opt
def show(file, input_format, problem_no):
    """Draw the board and every piece with its placement count, without solving."""
    from . import render

    problem = _load(file, input_format, problem_no)
    for ln in render.header(problem):
        click.echo(ln)
    pz = problem.puzzle
    if pz is None:
        return
    click.echo("")
    click.echo(_drawing({c: ch for c, ch in zip(pz.board.cells, pz.board.labels)}
                        | {d: pz.board.door for d in pz.board.doors}, pz.board.ndim))
    for piece, rows in zip(pz.pieces, problem.pieces):
        click.echo(f"\n{piece.name} ({rows.n_placements} placements"
                   + (f", {piece.count} copies" if piece.count > 1 else "")
                   + (f", {piece.colour}" if piece.colour else "") + ")")
        click.echo(_drawing({c: (piece.label if ch == "#" else ch) for c, ch in zip(piece.cells, piece.labels)},
                            pz.board.ndim))


def _drawing(cells, ndim):
    import numpy as np

    coords = np.array(list(cells), dtype=np.int64).reshape(len(cells), ndim)
    ext = coords.max(axis=0) + 1
    grid = np.full(tuple(ext), ".", dtype="<U1")
    for c, ch in cells.items():
        grid[c] = ch
    if ndim == 1:
        return " ".join(grid)
    if ndim == 2:
        return "\n".join(" ".join(r) for r in grid)
    return "\n".join("   ".join(" ".join(r) for r in rows) for rows in zip(*grid))


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@_plan_opt
@_tree_opt
@_kernel_opt
@_input_format
@_problem_opt
def stats(file, plan, tree, kernel, input_format, problem_no):
    """Show the intermediate matrix sizes of a plan, counting without listing."""
    from . import render
    from .api import solve

    problem = _load(file, input_format, problem_no)
    result = solve(problem, plan, count_only=True, tree=tree, kernel=kernel)
    for ln in render.stats_table(result.stats):
        click.echo(ln)
    click.echo(f"{result.count} configurations before post-stage filters [plan {result.plan}]")
