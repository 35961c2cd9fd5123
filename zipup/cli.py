"""Stage 10: the command line, a thin layer over :mod:`zipup.api`.

Errors a user can cause print one ``Error: ...`` line: exit 1 for bad input,
2 for bad usage.  Output is flushed as it is produced.
"""

from __future__ import annotations

import sys

import click

from . import __version__

__all__ = ["main", "run"]

_EPILOG = """\b
Examples:
  zipup enumerate puzzles/room.toml
  zipup enumerate puzzles/room.toml --tree "((T,T),((S,V),Z))" --stats
  zipup enumerate puzzles/pentomino-6x10.toml --count --plan sweep
  zipup enumerate puzzles/north-colours.toml --unique
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


def run():
    """The ``zipup`` program: :func:`main`, then a quick exit.

    At exit the interpreter would walk, in its last collection, the hundred
    thousand objects numba's compiler leaves behind (0.2 s, a fifth of a
    short run); frozen, they are left to the operating system.
    """
    import gc

    try:
        main()
    finally:
        gc.freeze()


_input_format = click.option("--input-format", type=click.Choice(["toml", "dpf", "dpfg", "dlx", "xmpuzzle"]),
                             help="Read FILE in this format (default: from its extension).")
_problem_opt = click.option("--problem", "problem_no", type=click.IntRange(min=1), default=None,
                            help="Which problem of a BurrTools file (1-based; default 1).")
_plan_opt = click.option("--plan", type=click.Choice(["auto", "balanced", "depth", "sweep"]), default="auto",
                         show_default=True,
                         help="How to arrange the joins; depth searches depth-first instead, in one "
                              "process (full covers only).")
_branch_opt = click.option("--branch", type=click.Choice(["auto", "fewest", "first-cell"]), default="auto",
                           show_default=True,
                           help="The depth plan's branching rule: the cell or piece with the fewest "
                                "choices, or the first empty cell; auto picks by estimate (--stats says "
                                "which and why).  Other than auto, it implies --plan depth.")
_tree_opt = click.option("--tree", default=None, metavar="SHAPE",
                         help='Shape of the balanced tree, e.g. "((T,T),((S,V),Z))".')
_kernel_opt = click.option("--kernel", type=click.Choice(["auto", "bits", "compiled", "sparse"]),
                           default="auto", show_default=True,
                           help="Join kernel: sparse is the A·Bᵀ reference, bits packs rows into "
                                "uint64 words, compiled uses numba loops, auto picks by size.")


def _branching(plan, branch):
    """``plan``, or the depth plan under the rule ``--branch`` asks for."""
    if branch == "auto":
        return plan
    if plan not in ("auto", "depth"):
        from .errors import UsageError

        raise UsageError(f"--branch {branch} chooses how the depth plan branches; it cannot be used with "
                         f"--plan {plan}")
    from .plans import Depth

    return Depth(rule=branch)


def _load(file, input_format, problem_no):
    from .api import as_problem, load

    return as_problem(load(file, format=input_format,
                           problem=None if problem_no is None else problem_no - 1))


class _Out:
    """Where results go: stdout or --output, flushed line by line."""

    def __init__(self, path, append=False):
        from .errors import ZipupError

        try:
            self.f = open(path, "a" if append else "w", encoding="utf-8") if path else sys.stdout
        except OSError as e:
            raise ZipupError(f"--output {path}: cannot write there ({e.strerror})") from None

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
@click.option("--unique", is_flag=True,
              help="Count and list one configuration per class of symmetric ones (its canonical "
                   "image); the summary also gives the counts up to symmetry and with copies told apart.")
@click.option("--workers", type=click.IntRange(min=0), default=None, metavar="N",
              help="Processes that run independent subproblems (default: the number of CPUs; "
                   "0 or 1: this process, and the puzzle is cut only for --memory or --checkpoint). "
                   "Small puzzles are not cut.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run the subproblems on this Dask scheduler (e.g. tcp://10.0.0.5:8786) instead; "
                   "see docs/scale.md.")
@click.option("--memory", default=None, metavar="SIZE",
              help="Memory budget, e.g. 500M or 4G (default: half the memory available); "
                   "subproblems over it are cut into smaller ones.")
@click.option("--checkpoint", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Record finished subproblems in FILE; the same command with the same FILE "
                   "resumes an interrupted run.")
@click.option("--progress/--quiet", " /-q", "progress", default=None,
              help="Show (or hide) the progress bar on stderr (default: shown when stderr is a terminal).")
@_plan_opt
@_branch_opt
@_tree_opt
@_kernel_opt
@_input_format
@_problem_opt
def enumerate(file, count_only, limit, fmt, output, stats, filter_, svg_path, unique, plan, branch, tree, kernel,
              input_format, problem_no, workers=None, scheduler=None, memory=None, checkpoint=None,
              progress=None):
    """Count and list the configurations of the puzzle in FILE."""
    from . import render
    from .api import listing_plan, solve
    from .filters import default_filters, parse_filter

    slidable = None
    for f in filter_:
        _, slidable = parse_filter(f)
    plan = _branching(plan, branch)
    problem = _load(file, input_format, problem_no)
    filters = default_filters(problem, slidable)
    post = [f for f in filters if not f.in_plan]
    if not unique:
        plan = listing_plan(problem, plan, tree=tree, limit=limit, scheduler=scheduler, checkpoint=checkpoint)
    if not unique and _parallel_wanted(problem, plan, tree, workers, scheduler, memory, checkpoint):
        return _enumerate_parallel(problem, filters, post, output, fmt, count_only, limit, stats, svg_path,
                                   plan, kernel, workers, scheduler, memory, checkpoint, progress)
    out = _Out(output)
    text = fmt == "text"
    info = out if (text and output is None) else _Err()
    for ln in render.header(problem):
        info.line(ln)
    if unique:
        return _enumerate_unique(problem, filters, post, out, info, fmt, count_only, limit, stats,
                                 svg_path, plan, tree, kernel)
    # a limit is kept by listing and stopping there, even when only the number is printed
    listing = not count_only or bool(post) or limit is not None
    result = solve(problem, plan, count_only=not listing, tree=tree, kernel=kernel)
    shown = 0
    stopped = limit == 0
    drawn = []
    if listing:
        configs = result.configurations()
        for f in filters:
            configs = f.apply(problem, configs)
        if fmt == "json" and not count_only:
            out.f.write(_json_head(problem))
        for conf in (() if stopped else configs):
            shown += 1
            if svg_path:
                drawn.append(conf)
            if not count_only:
                out.f.write(_listed(fmt, problem, conf, shown))
                out.f.flush()
            if shown == limit:  # stop here: asking for one more would search on
                stopped = True
                break
        del configs  # a search stopped by --limit lets go of its state now
        if fmt == "json" and not count_only:
            out.line(_json_tail(result.count, shown, stopped))
    if stats:
        info.line("")
        for ln in render.stats_table(result.stats):
            info.line(ln)
    summary = _summary(result.count, shown if listing else None, post, limit, result.plan, stopped, count_only)
    _finish(out, info, summary, count_only, text, svg_path, problem, drawn)


def _listed(fmt, problem, conf, index):
    """The text one configuration adds to the output, numbered ``index`` (from 1)."""
    from . import render

    if fmt == "text":
        return f"\n#{index}\n{render.text(problem, conf)}\n"
    record = render.dumps(render.as_record(problem, conf, index))
    if fmt == "jsonl":
        return record + "\n"
    return ("," if index > 1 else "") + "\n  " + record  # an item of the json document's list


def _json_head(problem):
    """The start of a ``--format json`` document, up to its list of configurations."""
    from . import render

    return '{"puzzle": %s, "configurations": [' % render.json.dumps(problem.name)


def _json_tail(count, shown, stopped):
    """The end of a ``--format json`` document: ``count`` is null where the run did not learn it."""
    from . import render

    return "\n], " + render.json.dumps({"count": count, "shown": shown, "limit_reached": stopped})[1:]


def _print_summary(out, info, summary, count_only, text):
    """The summary line goes with the results in text, else beside them (stderr)."""
    if count_only:
        out.line(summary)
    elif text:
        out.line("")
        out.line(summary)
    else:
        info.line(summary)


def _finish(out, info, summary, count_only, text, svg_path, problem, drawn):
    """Print the summary line where it belongs, write the SVG sheet, close the output."""
    from . import render

    _print_summary(out, info, summary, count_only, text)
    if svg_path:
        _write_svg(svg_path, render.svg(problem, drawn))
    out.close()


def _write_svg(path, text):
    from .errors import ZipupError

    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise ZipupError(f"--svg {path}: cannot write there ({e.strerror})") from None


class _Err:
    def line(self, s=""):
        click.echo(s, err=True)


def _summary(total, shown, post, limit, plan, stopped=False, count_only=False):
    """The last line: the total where it is known, what passed, and whether --limit stopped the run.

    ``total`` is ``None`` where the run stopped before it could know it.

    Examples
    --------
    >>> _summary(52, 52, [], None, "balanced")
    '52 configurations [plan balanced]'
    >>> _summary(None, 1, [], 1, "depth", stopped=True)
    '1 configuration shown; limit reached (--limit 1), the total was not counted [plan depth]'
    """
    def configurations(n):
        return f"{n} configuration{'s' if n != 1 else ''}"

    parts = [] if total is None else [configurations(total)]
    counted = shown if total is not None else configurations(shown)
    if post:
        parts.append(f"{counted} pass {', '.join(f'{f.name}={f.mode}' for f in post)}")
    elif stopped:
        parts.append(f"{counted} {'found' if count_only else 'shown'}")
    s = ", ".join(parts)
    if stopped:
        s += f"; limit reached (--limit {limit})" + ("" if total is not None else ", the total was not counted")
    return s + f" [plan {plan}]"


def _parallel_wanted(problem, plan, tree, workers, scheduler, memory, checkpoint):
    """Cut into subproblems, unless a --tree shapes the whole problem or it is small and nothing asks."""
    from .errors import UsageError
    from .plans import get_plan

    if not get_plan(plan).splits:
        if scheduler or checkpoint:
            raise UsageError(f"--plan {get_plan(plan).name} runs in one process; --scheduler and --checkpoint "
                             "cut the puzzle into subproblems for the other plans")
        return False
    if tree is not None:
        if scheduler or checkpoint:
            raise UsageError("--tree shapes the plan of the whole problem; it cannot be used with "
                             "--scheduler or --checkpoint, which cut the problem into subproblems")
        return False
    if scheduler or checkpoint or memory is not None:
        return True
    if workers is not None and workers <= 1:  # one process, nothing else asked: the whole problem
        return False
    from .parallel import worth_splitting  # a plan that runs in one process need not load the runner

    return worth_splitting(problem, plan)


def _enumerate_parallel(problem, filters, post, output, fmt, count_only, limit, stats, svg_path, plan,
                        kernel, workers, scheduler, memory, checkpoint, progress):
    """``enumerate`` over independent subproblems (local processes or Dask), with a checkpoint."""
    from . import parallel, render

    listing = not count_only
    mode = "list" if listing else ("filter" if post else "count")
    ck = None
    resumed = False
    if checkpoint:
        ck = parallel.Checkpoint(checkpoint, parallel.fingerprint(
            problem, mode=mode, format=fmt, limit=limit, filters=[repr(f) for f in filters],
            to_file=bool(output and listing)))
        resumed = ck.resume(output if listing else None)
    out = _Out(output, append=resumed and listing)
    text = fmt == "text"
    info = out if (text and output is None) else _Err()
    for ln in render.header(problem):
        info.line(ln)
    passed = ck.passed if resumed else 0
    drawn = []
    if listing and fmt == "json" and not resumed:
        out.f.write(_json_head(problem))

    def write(fin):
        nonlocal passed
        f = out.f
        for conf in fin.configurations:
            passed += 1
            if svg_path:
                drawn.append(conf)
            f.write(_listed(fmt, problem, conf, passed))
        f.flush()

    if progress is None:  # a bar on a terminal, but not over configurations printed to that terminal
        progress = sys.stderr.isatty() and not (listing and output is None and sys.stdout.isatty())
    result = parallel.run(problem, plan, count_only=not listing, filters=filters, kernel=kernel,
                          workers=workers, scheduler=scheduler, memory=memory, checkpoint=ck,
                          output=out.f if (listing and output) else None,
                          on_result=write if listing else None, limit=limit, progress=progress)
    if listing and fmt == "json":
        out.line(_json_tail(result.count, passed, result.limit_reached))
    if stats:
        info.line("")
        for ln in result.stats.lines():
            info.line(ln)
    shown = passed if listing else (result.passed if post or limit is not None else None)
    summary = _summary(result.count, shown, post, limit, result.plan, result.limit_reached, count_only)
    _print_summary(out, info, summary, count_only, text)
    if ck is not None:
        ck.finish(result.count, shown if shown is not None else result.passed,
                  out.f if (listing and output) else None)
        ck.close()
    if svg_path:
        _write_svg(svg_path, render.svg(problem, drawn))
    out.close()


def _enumerate_unique(problem, filters, post, out, info, fmt, count_only, limit, stats, svg_path,
                      plan, tree, kernel):
    """``enumerate --unique``: one canonical configuration per orbit, and all three counts.

    Listing goes on past ``--limit`` (without printing) so that the counts are complete.
    """
    from . import render
    from .symmetry import solve_unique

    res = solve_unique(problem, plan, filters=filters, count_only=count_only, tree=tree, kernel=kernel)
    shown = 0
    drawn = []
    if not count_only:
        if fmt == "json":
            out.f.write(_json_head(problem))
        for orbit in res.orbits():
            if limit is not None and shown >= limit:
                continue
            shown += 1
            conf = orbit.representative
            if svg_path:
                drawn.append(conf)
            if fmt == "text":
                out.line(f"\n#{shown} (orbit of {orbit.size})")
                out.line(render.text(problem, conf))
            else:
                rec = render.as_record(problem, conf, shown)
                rec["orbit"] = orbit.size
                if fmt == "jsonl":
                    out.line(render.dumps(rec))
                else:
                    out.f.write(("," if shown > 1 else "") + "\n  " + render.dumps(rec))
                    out.f.flush()
        if fmt == "json":
            out.line('\n], "count": %d, "shown": %d, "unique": %d, "group_order": %d, "labelled": %d}'
                     % (res.count, shown, res.unique, res.order, res.labelled))
    if stats:
        info.line("")
        for ln in render.stats_table(res.stats):
            info.line(ln)
        if res.breaking is not None:
            info.line(res.breaking.describe(problem))
    summary = _unique_summary(res, post, None if count_only else shown, limit)
    _finish(out, info, summary, count_only, fmt == "text", svg_path, problem, drawn)


def _unique_summary(res, post, shown, limit):
    """E.g. ``32 configurations, 2 up to symmetry (group of order 16), 128 with copies told apart``."""
    if post:
        n = res.before_filters
        names = ", ".join(f"{f.name}={f.mode}" for f in post)
        s = f"{n} configuration{'s' if n != 1 else ''}, {res.count} pass {names}"
    else:
        s = f"{res.count} configuration{'s' if res.count != 1 else ''}"
    s += (f", {res.unique} up to symmetry (group of order {res.order}), "
          f"{res.labelled} with copies told apart")
    if limit is not None and shown is not None and shown < res.unique:
        s += f", {shown} shown; limit reached (--limit {limit})"
    return s + f" [plan {res.plan}]"


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
@_branch_opt
@_tree_opt
@_kernel_opt
@_input_format
@_problem_opt
def stats(file, plan, branch, tree, kernel, input_format, problem_no):
    """Show the intermediate matrix sizes of a plan, counting without listing."""
    from . import render
    from .api import solve

    plan = _branching(plan, branch)
    problem = _load(file, input_format, problem_no)
    result = solve(problem, plan, count_only=True, tree=tree, kernel=kernel)
    for ln in render.stats_table(result.stats):
        click.echo(ln)
    click.echo(f"{result.count} configurations before post-stage filters [plan {result.plan}]")


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--to", "to", type=click.Choice(["dpf", "dlx", "toml"]), required=True,
              help="Format to write: Faase's DPF, Knuth's DLX, or zipup's TOML (needs geometry).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write there instead of stdout.")
@_input_format
@_problem_opt
def export(file, to, output, input_format, problem_no):
    """Write the puzzle in FILE in another format, e.g. for Knuth's programs or xcover.

    \b
    Examples:
      zipup export puzzles/room.toml --to dlx -o room.dlx
      zipup export puzzles/dpf-cutting-stick.dpf --to dlx
    """
    from .api import load
    from .formats import export as export_text

    obj = load(file, format=input_format, problem=None if problem_no is None else problem_no - 1)
    text = export_text(obj, to)
    out = _Out(output)
    out.f.write(text if text.endswith("\n") else text + "\n")
    out.f.flush()
    out.close()
