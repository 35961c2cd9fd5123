"""Benchmark zipup against its peers on the same puzzles, in one run.

Every (puzzle, tool) pair runs in its own child process, started with
:mod:`subprocess` through a tiny launcher; its peak memory is the
``ru_maxrss`` of that child, read with :func:`os.wait4` in the launcher (so one
tool's memory never hides another's, and the benchmark's own memory, which a
child forked straight from it would inherit, is not counted).  The launcher is
a child subreaper: processes the tool leaves behind (a forkserver and its
workers) are reaped by it too; the peak is then the largest process, and the
note gives their number and the sum of their peaks.  Each run has a
time limit (``--timeout``, reported as ``timeout``) and an address-space cap
(``--memory-limit``).  A child
prints one JSON line: the count it found and the seconds its solve took,
timed inside the child (interpreter start-up, imports, file loading and
building the peer's input are excluded; numba compilation too, see below).
The parent also records the child's whole wall time.

Tools (one small class each; a new peer is one new class in ``TOOLS``):

``zipup``
    ``zipup.count(zipup.load(path), plan=PLAN)`` (the timed part builds the
    configuration matrices and counts).  Measured warm, like xcover: the
    child first counts a 2x2 board of dominoes with the same plan, so that
    loading numba and the plan's compiled code is not timed.
``zipup-fewest``, ``zipup-first-cell``
    As ``zipup``, with the depth plan under one branching rule (``--branch``);
    ``zipup`` itself then notes the rule it picked and why.  With both, the
    report ends with the rules side by side and whether the pick was the
    faster (``--puzzles depth``: every puzzle the depth plan takes).
``zipup-cli``
    ``python -m zipup enumerate FILE --count --plan PLAN`` (in ``first`` mode
    ``--limit 1`` instead of ``--count``: the first configuration, drawn);
    its time is the wall time of the whole process.
``xcover``
    PyPI ``xcover`` (numba dancing cells, Knuth's algorithm C, with colours).
    Measured warm: the child first solves a small problem so that numba's
    compilation is not timed, then times the real solve.
``exact-cover``
    PyPI ``exact-cover`` (C dancing links, plain exact cover, dense input).
``seed``
    ``analysis/seed_method.py``: seed 004's method as written (dense products,
    a Python loop over zero entries, a balanced tree of joins, no merging or
    pruning).  Run only on tiny puzzles.

Exact-cover encoding for the DLX peers, built from zipup's own
:class:`~zipup.matrices.Problem` (so all tools see the same placements):

* one item per board cell: primary for cells to be covered exactly once;
  secondary (at most once) for the rest where the peer has secondary items
  (xcover), else a one-cell slack option per such cell (exact-cover), which
  fills an empty cell in exactly one way and so keeps the count;
* one primary item per piece *copy*; the options of a piece with ``count = k``
  are repeated for each of its k copies, so every configuration is found k!
  times (once per assignment of the placements to the copies: never more,
  since two copies never take the same placement), and the count is divided
  by the product of the k! (an exact integer division, checked);
* except when the puzzle is an exact cover and only one piece has ``count >
  1``: that piece then gets no item at all, since covering every cell forces
  exactly k of its placements, each set of them found once (32 dominoes on
  8x8 would otherwise be found 32! times);
* ``separate`` (same colours may not touch): xcover only, with colours.  For
  every pair of touching cells (u, v) and every separated colour there is a
  secondary item; an option of that colour touches the item when it covers u
  or v, with its own option number as the item's colour, so two options can
  both touch it only when one covers u and the other v, i.e. when they touch.
  exact-cover cannot express it and is skipped;
* ``slidable`` filters: neither DLX peer can express them; skipped.

Puzzles run in one of two modes: ``count`` (the whole count; every tool that
finishes must find the same count, equal to the known one, or the benchmark
exits with status 1 naming the puzzle and the tools; so does a tool that
fails with an error) or ``first`` (the first
configuration only; used where a full count is out of reach for a peer).

Usage::

    python analysis/benchmark.py                          # everything
    python analysis/benchmark.py --puzzles room,soma --tools zipup,seed
    python analysis/benchmark.py --timeout 600 --markdown --output analysis/benchmark.md
    python analysis/benchmark.py --puzzles depth --tools zipup-fewest,zipup-first-cell,zipup,zipup-cli
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


# ----------------------------------------------------------------- puzzles


@dataclass(frozen=True)
class Case:
    """One benchmark puzzle.

    Attributes
    ----------
    name : str
        Short name used on the command line and in the table.
    file : str
        Path relative to the repository root.
    known : int or None
        The published count of configurations (copies interchangeable).
    mode : str
        ``"count"`` or ``"first"``.
    seed : bool
        Whether the seed method can finish on it in reasonable time.
    slidable : str or None
        Overrides the file's ``[filters] slidable`` (``"none"``: count every
        configuration, so that the DLX peers can take part).
    plan : str or None
        zipup's plan for this puzzle whatever ``--plan`` says (the box's
        breadth-first frontier outgrows any machine: it runs depth-first).
    once : bool
        Run once whatever ``--repeat`` says (a count that takes minutes).
    """

    name: str
    file: str
    known: int | None
    mode: str = "count"
    seed: bool = False
    slidable: str | None = None
    plan: str | None = None
    once: bool = False

    @property
    def path(self):
        return ROOT / self.file


CASES = [
    Case("room", "puzzles/room.toml", 3, seed=True),
    Case("room-unfiltered", "puzzles/room.toml", 52, seed=True, slidable="none"),
    Case("north-colours", "puzzles/north-colours.toml", 32, seed=True),
    Case("pentomino-3x20", "puzzles/pentomino-3x20.toml", 8),
    Case("pentomino-5x12", "puzzles/pentomino-5x12.toml", 4040),
    Case("pentomino-6x10", "puzzles/pentomino-6x10.toml", 9356),
    Case("scott-8x8", "puzzles/scott-8x8.toml", 520),
    Case("soma", "puzzles/soma.toml", 11520),
    Case("domino-8x8", "puzzles/domino-8x8.toml", 12988816),
    Case("morse", "puzzles/morse.toml", 8574),
    Case("morse-shifted", "puzzles/morse-shifted.dpf", 48),
    Case("box-3x4x5", "puzzles/box-3x4x5.toml", 476184, plan="depth", once=True),
    # the first configuration (what --limit 1 prints), searched depth-first
    Case("pentomino-6x10-first", "puzzles/pentomino-6x10.toml", None, mode="first", plan="depth"),
    Case("morse-first", "puzzles/morse.toml", None, mode="first", plan="depth"),
    Case("morse-shifted-first", "puzzles/morse-shifted.dpf", None, mode="first", plan="depth"),
    Case("box-3x4x5-first", "puzzles/box-3x4x5.toml", None, mode="first", plan="depth"),
]
EXTRA_CASES = [  # not run by default; name them with --puzzles
    Case("domino-6x6", "puzzles/domino-6x6.toml", 6728),
    Case("pentomino-4x15", "puzzles/pentomino-4x15.toml", 1472),
    Case("pentomino-2x3x10", "puzzles/pentomino-2x3x10.toml", 96),
    Case("calibron-first", "puzzles/calibron.toml", None, mode="first"),
]
# every puzzle in puzzles/ the depth plan accepts, counted depth-first (``--puzzles depth``):
# with the tools zipup-fewest and zipup-first-cell, the branching rules side by side
DEPTH_CASES = [
    Case("d:calibron", "puzzles/calibron.toml", 8, plan="depth"),
    Case("d:domino-6x6", "puzzles/domino-6x6.toml", 6728, plan="depth"),
    Case("d:domino-7x8", "puzzles/domino-7x8.toml", 20160, plan="depth"),
    Case("d:domino-7x8-dpf", "puzzles/domino-7x8.dpf", 20160, plan="depth"),
    Case("d:domino-8x8", "puzzles/domino-8x8.toml", 12988816, plan="depth"),
    Case("d:cutting-stick", "puzzles/dpf-cutting-stick.dpf", 3, plan="depth"),
    Case("d:dominoes-2x3", "puzzles/dpf-dominoes-2x3.dpf", 1, plan="depth"),
    Case("d:morse", "puzzles/morse.toml", 8574, plan="depth"),
    Case("d:morse-shifted", "puzzles/morse-shifted.dpf", 48, plan="depth"),
    Case("d:pentomino-2x3x10", "puzzles/pentomino-2x3x10.toml", 96, plan="depth"),
    Case("d:pentomino-3x20", "puzzles/pentomino-3x20.toml", 8, plan="depth"),
    Case("d:pentomino-4x15", "puzzles/pentomino-4x15.toml", 1472, plan="depth"),
    Case("d:pentomino-5x12", "puzzles/pentomino-5x12.toml", 4040, plan="depth"),
    Case("d:pentomino-6x10", "puzzles/pentomino-6x10.toml", 9356, plan="depth"),
    Case("d:scott-8x8", "puzzles/scott-8x8.toml", 520, plan="depth"),
    Case("d:soma", "puzzles/soma.toml", 11520, plan="depth"),
    Case("d:box-3x4x5", "puzzles/box-3x4x5.toml", 476184, plan="depth", once=True),
]
ALL_CASES = {c.name: c for c in CASES + EXTRA_CASES + DEPTH_CASES}
GROUPS = {"depth": [c.name for c in DEPTH_CASES]}


def load_problem(path, slidable=None):
    """``(puzzle, problem)`` from a file; ``slidable`` overrides the file's filter.

    ``puzzle`` is None for a file that holds matrices rather than a board and
    pieces (DPF, DLX).
    """
    import dataclasses

    import zipup
    from zipup.matrices import Problem

    puzzle = zipup.load(path)
    if isinstance(puzzle, Problem):
        return puzzle.puzzle, puzzle
    if slidable is not None:
        puzzle = dataclasses.replace(puzzle, slidable=slidable)
    return puzzle, zipup.as_problem(puzzle)


# ------------------------------------------------------- exact-cover encoding


@dataclass
class Encoding:
    """An exact-cover (with colours) form of a Problem.

    Attributes
    ----------
    options : list of list of int
        Item numbers of each option; primary items are ``0 .. n_primary-1``.
    colours : list of list of int
        Colour of each item of each option (0: none).
    n_primary, n_secondary : int
    divisor : int
        Divide the number of exact covers by this to count configurations.
    slack : int
        Number of one-cell slack options appended (exact-cover's stand-in for
        secondary cells); 0 when secondary items are used.
    """

    options: list
    colours: list
    n_primary: int
    n_secondary: int
    divisor: int
    slack: int = 0

    @property
    def n_items(self):
        return self.n_primary + self.n_secondary


def _touching_pairs(board, separate):
    """Unordered pairs of board cell indices that touch under the separate rule."""
    import itertools

    ndim = board.ndim
    if separate == "edge":
        offs = [tuple(d if k == a else 0 for k in range(ndim)) for a in range(ndim) for d in (1, -1)]
    else:
        offs = [o for o in itertools.product((-1, 0, 1), repeat=ndim) if any(o)]
    index = {c: i for i, c in enumerate(board.cells)}
    pairs = set()
    for c, i in index.items():
        for o in offs:
            j = index.get(tuple(a + b for a, b in zip(c, o)))
            if j is not None and j != i:
                pairs.add((min(i, j), max(i, j)))
    return sorted(pairs)


def encode(puzzle, problem, secondary=True, colours=True):
    """Build the exact-cover encoding described in the module docstring.

    Parameters
    ----------
    puzzle : zipup.puzzle.Puzzle or None
    problem : zipup.matrices.Problem
    secondary : bool
        The peer has secondary items; else partial cells get slack options.
    colours : bool
        The peer has coloured secondary items (needed for ``separate``).

    Raises
    ------
    Unsupported
        When the peer cannot express the puzzle.
    """
    import numpy as np

    if puzzle is not None and puzzle.slidable != "none":
        raise Unsupported(f"slidable = {puzzle.slidable!r} filter")
    if any(p.count is None for p in problem.pieces):
        raise Unsupported("pieces usable any number of times")
    separated = ()
    if problem.n_marks:
        if not colours:
            raise Unsupported(f"separate = {puzzle.separate!r} colour rule")
        from zipup.matrices import separating_colours

        separated = separating_colours(puzzle)
    primary = np.asarray(problem.primary, dtype=bool)
    n_cells = len(primary)
    multi = [p for p in problem.pieces if p.count > 1]
    free_multi = primary.all() and len(multi) == 1
    # primary items: cells to cover, then one per piece copy
    cell_item = {}
    n_primary = 0
    for c in range(n_cells):
        if primary[c] or not secondary:
            cell_item[c] = n_primary
            n_primary += 1
    copy_items = []
    for p in problem.pieces:
        if free_multi and p.count > 1:
            copy_items.append([None])
        else:
            copy_items.append(list(range(n_primary, n_primary + p.count)))
            n_primary += p.count
    n_secondary = 0
    for c in range(n_cells):
        if c not in cell_item:
            cell_item[c] = n_primary + n_secondary
            n_secondary += 1
    edge_items = {}
    if separated:
        pairs = _touching_pairs(puzzle.board, puzzle.separate)
        for k in range(len(separated)):
            for u, v in pairs:
                edge_items[(k, u, v)] = n_primary + n_secondary
                n_secondary += 1
        incident = {}
        for u, v in pairs:
            incident.setdefault(u, []).append((u, v))
            incident.setdefault(v, []).append((u, v))
    options, cols = [], []
    divisor = 1
    for p, piece in enumerate(problem.pieces):
        if copy_items[p][0] is not None:
            divisor *= math.factorial(piece.count)
        m = piece.matrix
        k = separated.index(piece.colour) if piece.colour in separated else None
        for r in range(m.shape[0]):
            cells = m.indices[m.indptr[r]:m.indptr[r + 1]].tolist()
            base = [cell_item[c] for c in cells]
            edges = []
            if k is not None:
                edges = sorted({edge_items[(k,) + e] for c in cells for e in incident.get(c, ())})
            for item in copy_items[p]:
                items = ([item] if item is not None else []) + base
                colour = [0] * len(items)
                if edges:
                    tag = len(options) + 1  # the option's own number, as its colour
                    items = items + edges
                    colour = colour + [tag] * len(edges)
                options.append(items)
                cols.append(colour)
    slack = 0
    if not secondary:
        for c in range(n_cells):
            if not primary[c]:
                options.append([cell_item[c]])
                cols.append([0])
                slack += 1
    return Encoding(options, cols, n_primary, n_secondary, divisor, slack)


class Unsupported(Exception):
    """The peer cannot express this puzzle."""


def exact_division(n, divisor, what):
    if n % divisor:
        raise RuntimeError(f"{what}: {n} exact covers is not a multiple of {divisor}")
    return n // divisor


def plan_of(case, opts):
    """zipup's plan for a puzzle: its own when it has one, else ``--plan``."""
    return case.plan or opts.plan


# ----------------------------------------------------------------- tools


class Tool:
    """A tool under test.  Subclasses set ``name`` and implement :meth:`solve`.

    The parent calls :meth:`unsupported` (a reason string, or None) and
    :meth:`argv` (the child's command line); the child, started as
    ``benchmark.py --child TOOL PUZZLE``, calls :meth:`solve`.
    """

    name = "?"
    cli = False  # True: the child is the tool's own command, timed from outside

    def unsupported(self, case, puzzle, problem):
        return None

    def argv(self, case, opts):
        return [sys.executable, str(Path(__file__).resolve()), "--child", self.name, case.name,
                "--plan", plan_of(case, opts)]

    def solve(self, case, opts):
        """Run in the child: return ``(count or found, seconds)``."""
        raise NotImplementedError

    def parse(self, stdout):
        """The child's result from its standard output."""
        lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
        return json.loads(lines[-1])


class Zipup(Tool):
    name = "zipup"
    rule = None  # the depth plan's branching rule, when the tool fixes it

    def plan(self, case, opts):
        from zipup.plans import Depth

        return Depth(rule=self.rule) if self.rule else plan_of(case, opts)

    def solve(self, case, opts):
        import zipup

        puzzle = zipup.load(str(case.path))
        extra = {} if case.slidable is None else {"slidable": case.slidable}
        warm = zipup.puzzle.loads('name = "warm"\n[board]\nsize = [2, 2]\n[[piece]]\nname = "d"\n'
                                  'cells = "##"\ncount = 2\n')
        plan = self.plan(case, opts)
        zipup.count(warm, plan=plan)
        t = time.perf_counter()
        if case.mode == "count" and not extra:
            result = zipup.solve(puzzle, plan, count_only=True)
            dt = time.perf_counter() - t
            for rec in result.stats:  # which rule the depth plan ran, and why: a note in the table
                if getattr(rec, "rule", ""):
                    print(f"[benchmark] rule {rec.rule} ({rec.why})", file=sys.stderr, flush=True)
            return int(result.count), dt
        if case.mode == "count":
            n = zipup.count(puzzle, plan=plan, **extra)
            return int(n), time.perf_counter() - t
        found = list(zipup.enumerate(puzzle, plan=plan, limit=1, **extra))
        dt = time.perf_counter() - t
        problem = zipup.as_problem(puzzle)  # untimed: the configuration found is checked, not only counted
        for conf in found:
            cells = sorted(int(c) for cs in conf.cells(problem) for c in cs)
            if problem.exact and cells != list(range(len(problem.columns))):
                raise AssertionError("the first configuration does not cover the board exactly once")
        return len(found), dt


class ZipupRule(Zipup):
    """zipup's depth plan under one branching rule (``--puzzles depth`` runs both side by side)."""

    def __init__(self, rule):
        self.rule = rule
        self.name = f"zipup-{rule}"

    def unsupported(self, case, puzzle, problem):
        from zipup.plans.depth import refusal

        why = refusal(problem)
        return None if why is None else f"the depth plan does not take {why}"


class ZipupCli(Tool):
    name = "zipup-cli"
    cli = True

    def argv(self, case, opts):
        extra = [] if case.slidable is None else ["--filter", f"slidable={case.slidable}"]
        extra += ["--count"] if case.mode == "count" else ["--limit", "1"]
        return [sys.executable, "-m", "zipup", "enumerate", str(case.path),
                "--plan", plan_of(case, opts)] + extra

    def parse(self, stdout):
        import re

        lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
        # e.g. "52 configurations, 3 pass slidable=quick [plan sweep]", or in first mode
        # "1 configuration shown; limit reached (--limit 1), the total was not counted [plan depth]"
        for ln in reversed(lines):
            if re.fullmatch(r"[\d,_]+", ln):
                return {"count": int(re.sub(r"[,_]", "", ln))}
            m = (re.search(r"(\d[\d,_]*)\s+pass", ln) or re.search(r"(\d[\d,_]*)\s+configuration", ln)
                 or re.search(r"count\D*(\d[\d,_]*)", ln))
            if m:
                return {"count": int(re.sub(r"[,_]", "", m.group(1)))}
        raise ValueError(f"no count in the output {stdout[-200:]!r}")


class XCover(Tool):
    name = "xcover"

    def unsupported(self, case, puzzle, problem):
        try:
            encode(puzzle, problem, secondary=True, colours=True)
        except Unsupported as e:
            return f"cannot express the {e}"
        return None

    @staticmethod
    def arrays(enc):
        import numpy as np

        flat = np.array([i for o in enc.options for i in o], dtype=np.uint32)
        ptr = np.zeros(len(enc.options) + 1, dtype=np.uint32)
        ptr[1:] = np.cumsum([len(o) for o in enc.options])
        colours = np.array([c for o in enc.colours for c in o], dtype=np.uint32)
        return flat, ptr, colours, np.uint32(enc.n_items), np.uint32(enc.n_secondary)

    def solve(self, case, opts):
        import numpy as np
        from xcover import algorithm_c

        # Warm up: a 2x3 domino exact cover (3 solutions), so numba is compiled.
        opts_w = np.array([0, 1, 2, 3, 4, 5, 0, 2, 2, 4, 1, 3, 3, 5], dtype=np.uint32)
        ptr_w = np.array([0, 2, 4, 6, 8, 10, 12, 14], dtype=np.uint32)
        assert sum(1 for _ in algorithm_c(opts_w, ptr_w, np.zeros(14, np.uint32),
                                          np.uint32(6), np.uint32(0))) == 3
        puzzle, problem = load_problem(case.path, case.slidable)
        enc = encode(puzzle, problem, secondary=True, colours=True)
        arrs = self.arrays(enc)
        t = time.perf_counter()
        gen = algorithm_c(*arrs)
        if case.mode == "first":
            n = 1 if next(gen, None) is not None else 0
            return n, time.perf_counter() - t
        n = 0
        for _ in gen:
            n += 1
        dt = time.perf_counter() - t
        return exact_division(n, enc.divisor, "xcover"), dt


class ExactCover(Tool):
    name = "exact-cover"

    def unsupported(self, case, puzzle, problem):
        try:
            enc = encode(puzzle, problem, secondary=False, colours=False)
        except Unsupported as e:
            return f"cannot express the {e}"
        if len(enc.options) * enc.n_items > 2 * 10**8:
            return f"dense input of {len(enc.options)} x {enc.n_items} is too large"
        return None

    def solve(self, case, opts):
        import numpy as np
        import exact_cover

        puzzle, problem = load_problem(case.path, case.slidable)
        enc = encode(puzzle, problem, secondary=False, colours=False)
        mat = np.zeros((len(enc.options), enc.n_items), dtype=bool)
        for r, o in enumerate(enc.options):
            mat[r, o] = True
        t = time.perf_counter()
        if case.mode == "first":
            try:
                exact_cover.get_exact_cover(mat)
                n = 1
            except exact_cover.error.NoSolution:
                n = 0
            return n, time.perf_counter() - t
        n = int(exact_cover.get_solution_count(mat))
        dt = time.perf_counter() - t
        return exact_division(n, enc.divisor, "exact-cover"), dt


class Seed(Tool):
    name = "seed"

    def unsupported(self, case, puzzle, problem):
        if not case.seed:
            return "too large for the seed method (dense joins with no pruning)"
        if case.mode != "count":
            return "the seed method only enumerates everything"
        return None

    def solve(self, case, opts):
        import seed_method

        puzzle, problem = load_problem(case.path, case.slidable)
        t = time.perf_counter()
        n, _ = seed_method.seed_count(problem)
        return n, time.perf_counter() - t


TOOLS = {t.name: t for t in (Zipup(), ZipupRule("fewest"), ZipupRule("first-cell"), ZipupCli(), XCover(),
                              ExactCover(), Seed())}
DEFAULT_TOOLS = ["zipup", "xcover", "exact-cover", "seed"]  # zipup-cli on request


# ------------------------------------------------------------- the runs


@dataclass
class Result:
    case: str
    tool: str
    status: str  # ok, timeout, skipped, error
    count: int | None = None
    seconds: float | None = None  # the solve, timed by the child (or the whole CLI run)
    wall: float | None = None  # the whole child process
    rss_mb: float | None = None  # peak resident memory of the child
    note: str = ""


# A child forked straight from this (large) process would inherit its peak RSS:
# Linux carries the high-water mark across fork and exec.  So every child is
# started by this small launcher, which reports its own child's rusage.
LAUNCHER = r"""
import ctypes, json, os, resource, sys, time
out, limit, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
if limit > 0:  # address-space cap, inherited by the child: a runaway run fails, not the machine
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:  # PR_SET_CHILD_SUBREAPER: orphaned descendants (a forkserver's workers) come back to us
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
except Exception:
    pass
t = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ)
rc, wall, peaks = None, None, []
while True:
    try:
        p, status, usage = os.wait4(-1, 0)
    except ChildProcessError:
        break
    peaks.append(usage.ru_maxrss)
    if p == pid:
        rc, wall = os.waitstatus_to_exitcode(status), time.perf_counter() - t
with open(out, "w") as f:
    json.dump({"rc": rc, "maxrss": max(peaks), "sumrss": sum(peaks), "nproc": len(peaks),
               "wall": wall}, f)
"""


def run_child(argv, timeout, memory_limit=0):
    """Run a child process; return (stdout, stderr, returncode, wall, peak RSS in MB, timed_out).

    The peak RSS is the child's own ``ru_maxrss`` (from :func:`os.wait4` in a
    small launcher, see ``LAUNCHER``); a timed-out child is killed with its
    whole process group.  ``memory_limit`` (bytes, 0: none) caps the child's
    address space.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".json") as info:
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-S", "-c", LAUNCHER, info.name,
                                 str(int(memory_limit))] + list(argv),
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                cwd=str(ROOT), start_new_session=True)
        try:
            proc.wait(timeout=timeout or None)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        wall = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        try:
            data = json.loads(Path(info.name).read_text() or "{}")
        except (OSError, ValueError):
            data = {}
        rc = data.get("rc", proc.returncode)
        # ru_maxrss is in kilobytes on Linux (bytes on macOS)
        scale = 1 / 1024 if sys.platform != "darwin" else 1 / 2**20
        rss = data["maxrss"] * scale if "maxrss" in data else None
        if data.get("nproc", 1) > 1:  # processes the tool left behind, reaped by the launcher
            stderr += (f"\n[benchmark] {data['nproc']} processes; peak RSS is the largest, "
                       f"the sum of their peaks is {data['sumrss'] * scale:.0f} MB")
        return stdout, stderr, rc, data.get("wall") or wall, rss, timed_out


def run_one(tool, case, puzzle, problem, opts):
    """Run a tool on a puzzle ``--repeat`` times; keep the fastest run (by wall time) and the highest peak."""
    runs = [_run_once(tool, case, puzzle, problem, opts) for _ in range(1 if case.once else max(1, opts.repeat))]
    ok = [r for r in runs if r.status == "ok"]
    if len(ok) < len(runs):
        return next(r for r in runs if r.status != "ok")
    best = min(runs, key=lambda r: r.wall)
    best.rss_mb = max((r.rss_mb for r in runs if r.rss_mb is not None), default=None)
    if len(runs) > 1:
        walls = ", ".join(f"{r.wall:.2f}" for r in runs)
        best.note = (best.note + "; " if best.note else "") + f"best of {len(runs)} (wall s: {walls})"
    return best


def _run_once(tool, case, puzzle, problem, opts):
    reason = tool.unsupported(case, puzzle, problem)
    if reason:
        return Result(case.name, tool.name, "skipped", note=reason)
    argv = tool.argv(case, opts)
    if opts.verbose:
        print("$ " + shlex.join(argv), file=sys.stderr, flush=True)
    out, err, rc, wall, rss, timed_out = run_child(argv, opts.timeout,
                                                   int(opts.memory_limit * 2**30))
    r = Result(case.name, tool.name, "ok", wall=wall, rss_mb=rss)
    if timed_out:
        r.status, r.note = "timeout", f"killed after {opts.timeout:g} s"
        return r
    last = (err.strip().splitlines() or [""])[-1]
    if rc != 0:
        r.status = "error"
        if rc < 0:
            sig = signal.Signals(-rc).name if -rc in signal.valid_signals() else str(-rc)
            r.note = f"killed by {sig}" + (" (out of memory?)" if -rc == signal.SIGKILL else "")
        else:
            r.note = f"exit {rc}: {last}"
        try:  # the child's own account of the error, when it gave one
            r.note = tool.parse(out).get("note") or r.note
        except Exception:  # noqa: BLE001
            pass
        return r
    try:
        data = tool.parse(out)
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        data = {"status": "error", "note": f"{type(e).__name__}: {e}"}
    if data.get("status", "ok") != "ok":
        r.status = data.get("status", "error")
        r.note = data.get("note") or last
        return r
    r.count = data.get("count")
    r.seconds = data.get("seconds", wall)
    if "[benchmark]" in err:
        r.note = err.rsplit("[benchmark] ", 1)[1].strip()
    return r


def child_main(tool_name, case_name, opts):
    """Entry point of a child process: solve and print one JSON line."""
    tool, case = TOOLS[tool_name], ALL_CASES[case_name]
    try:
        n, dt = tool.solve(case, opts)
        print(json.dumps({"status": "ok", "count": int(n), "seconds": dt}), flush=True)
    except Unsupported as e:
        print(json.dumps({"status": "skipped", "note": str(e)}), flush=True)
    except Exception as e:  # noqa: BLE001 - reported by the parent
        import traceback

        traceback.print_exc()
        print(json.dumps({"status": "error", "note": f"{type(e).__name__}: {e}"}), flush=True)
        return 1
    return 0


# ------------------------------------------------------------- reporting


def _fmt_time(s):
    if s is None:
        return ""
    return f"{s:.3f}" if s < 10 else f"{s:.1f}"


def _fmt_ratio(a, b):
    if a is None or b is None or b <= 0:
        return ""
    return f"{a / b:.2f}"


def table(results, cases, markdown=False):
    zip_row = {}
    for r in results:
        if r.tool == "zipup" and r.status == "ok":
            zip_row[r.case] = r
    for r in results:  # fall back to the CLI run when the API run is absent
        if r.tool == "zipup-cli" and r.status == "ok":
            zip_row.setdefault(r.case, r)
    mode = {c.name: c.mode for c in cases}
    head = ["puzzle", "tool", "time s", "wall s", "peak RSS MB", "count", "zipup/peer time",
            "zipup/peer RSS", "note"]
    rows = []
    for r in results:
        z = zip_row.get(r.case)
        peer = r.status == "ok" and z is not None and not r.tool.startswith("zipup")
        if r.status == "ok":
            cnt = f"{r.count:,}" if mode[r.case] == "count" else ("found" if r.count else "none")
        else:
            cnt = r.status
        rows.append([r.case, r.tool, _fmt_time(r.seconds), _fmt_time(r.wall),
                     f"{r.rss_mb:.0f}" if r.rss_mb is not None else "", cnt,
                     _fmt_ratio(z.seconds, r.seconds) if peer else "",
                     _fmt_ratio(z.rss_mb, r.rss_mb) if peer else "",
                     r.note if len(r.note) <= 100 else r.note[:97] + "..."])
    if markdown:
        lines = ["| " + " | ".join(head) + " |",
                 "|" + "|".join("---" if i in (0, 1, 8) else "---:" for i in range(len(head))) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    right = {2, 3, 4, 5, 6, 7}

    def fmt(row):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(row) for row in rows])


def rules_table(results, markdown=False):
    """Per puzzle, each branching rule's time beside the rule ``auto`` picked, and whether it was the faster.

    Times are the in-process times (warm, as the ``zipup`` tool's); a pick
    counts as right when its rule took no longer than the other, and as a
    tie when the two differ by less than 10 ms (single runs of a few
    milliseconds differ by more than that from run to run).
    """
    by = {(r.case, r.tool): r for r in results}
    cases = sorted({r.case for r in results if r.tool.startswith("zipup-") and r.tool != "zipup-cli"},
                   key=[r.case for r in results].index)
    head = ["puzzle", "fewest s", "first-cell s", "auto picks", "auto s", "picked the faster", "why"]
    rows = []
    for case in cases:
        times = {}
        for rule in ("fewest", "first-cell"):
            r = by.get((case, f"zipup-{rule}"))
            times[rule] = r.seconds if r is not None and r.status == "ok" else None
        auto = by.get((case, "zipup"))
        picked, why = "", ""
        if auto is not None and auto.note.startswith("rule "):
            picked, _, why = auto.note[len("rule "):].partition(" ")
            why = why.rsplit("); best of", 1)[0].strip("()")  # the child's note, without --repeat's
        mine, other = times.get(picked), times.get("fewest" if picked == "first-cell" else "first-cell")
        if mine is None:
            verdict = ""
        elif other is None:
            verdict = "yes (the other did not finish)"
        elif mine <= other:
            verdict = "yes"
        elif mine - other < 0.01:
            verdict = f"tie ({(mine - other) * 1e3:.1f} ms slower)"
        else:
            verdict = f"no ({mine / other:.2f}x)"
        cells = [case] + [_fmt_time(times[k]) if times[k] is not None else
                          (by[(case, f"zipup-{k}")].status if (case, f"zipup-{k}") in by else "")
                          for k in ("fewest", "first-cell")]
        rows.append(cells + [picked, _fmt_time(auto.seconds) if auto and auto.status == "ok" else "", verdict, why])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|---|---:|---:|---|---:|---|---|"]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                     for row in [head, ["-" * w for w in widths]] + rows)


def check_counts(results, cases):
    """Messages for every disagreement (between tools, or with the known count) and every error."""
    problems = [f"{r.case}: {r.tool} failed: {r.note}" for r in results if r.status == "error"]
    for case in cases:
        got = [r for r in results if r.case == case.name and r.status == "ok"]
        if case.mode == "first":
            for r in got:
                if not r.count:
                    problems.append(f"{case.name}: {r.tool} found no configuration")
            continue
        counts = {}
        for r in got:
            counts.setdefault(r.count, []).append(r.tool)
        if len(counts) > 1:
            problems.append(f"{case.name}: counts disagree: " + "; ".join(
                f"{', '.join(tools)} found {n:,}" for n, tools in sorted(counts.items())))
        if case.known is not None:
            for n, tools in counts.items():
                if n != case.known:
                    problems.append(f"{case.name}: {', '.join(tools)} found {n:,}, "
                                    f"the known count is {case.known:,}")
    return problems


def environment():
    """One line on versions, for the report."""
    import platform

    parts = [f"Python {platform.python_version()}"]
    for mod in ("numpy", "scipy", "numba", "xcover"):
        try:
            parts.append(f"{mod} {__import__(mod).__version__}")
        except Exception:  # noqa: BLE001
            pass
    try:
        from importlib.metadata import version

        parts.append(f"exact-cover {version('exact-cover')}")
    except Exception:  # noqa: BLE001
        pass
    parts.append(f"{os.cpu_count()} CPUs")
    return ", ".join(parts)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Benchmark zipup against xcover, exact-cover and the seed method.",
        epilog="Puzzles: " + ", ".join(ALL_CASES) + ".  Tools: " + ", ".join(TOOLS) + ".")
    ap.add_argument("--puzzles", help="comma-separated subset (default: "
                    + ",".join(c.name for c in CASES) + "); 'depth': every puzzle the depth plan takes")
    ap.add_argument("--tools", help="comma-separated subset (default: " + ",".join(DEFAULT_TOOLS) + ")")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds per run before it is killed and reported as 'timeout' (default 600; 0: none)")
    ap.add_argument("--memory-limit", type=float, default=16.0, metavar="GB",
                    help="address-space cap per run, in GiB (default 16; 0: none); a run past it "
                         "fails with MemoryError and is reported as an error")
    ap.add_argument("--plan", default="auto", help="zipup's plan (default auto; the box always runs depth)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run each tool N times on each puzzle and keep the fastest run (default 1): "
                         "on a shared machine, times near a target need the best of a few")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--output", help="also write the table to this file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each child's command")
    ap.add_argument("--child", nargs=2, metavar=("TOOL", "PUZZLE"), help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv=None):
    opts = parse_args(argv)
    if opts.child:
        return child_main(*opts.child, opts)
    names = opts.puzzles.split(",") if opts.puzzles else [c.name for c in CASES]
    names = [m for n in names for m in GROUPS.get(n, [n])]
    tools = opts.tools.split(",") if opts.tools else DEFAULT_TOOLS
    for n in names:
        if n not in ALL_CASES:
            sys.exit(f"benchmark: unknown puzzle {n!r}; expected one of {', '.join(ALL_CASES)}")
    for t in tools:
        if t not in TOOLS:
            sys.exit(f"benchmark: unknown tool {t!r}; expected one of {', '.join(TOOLS)}")
    cases = [ALL_CASES[n] for n in names]
    results = []
    for case in cases:
        puzzle, problem = load_problem(case.path, case.slidable)
        for t in tools:
            r = run_one(TOOLS[t], case, puzzle, problem, opts)
            results.append(r)
            shown = f"{r.count:,}" if r.count is not None else r.status
            print(f"{case.name:18} {t:12} {shown:>14}  {_fmt_time(r.seconds) or '-':>8} s"
                  f"  {r.rss_mb or 0:7.0f} MB  {r.note}", file=sys.stderr, flush=True)
    text = table(results, cases, markdown=opts.markdown)
    if {"zipup-fewest", "zipup-first-cell"} <= set(tools):
        text += "\n\nThe depth plan's branching rules side by side:\n\n" + rules_table(results, opts.markdown)
    env = environment()
    text += "\n\n" + env
    print(text)
    if opts.output:
        Path(opts.output).write_text(text + "\n")
    problems = check_counts(results, cases)
    if problems:
        print("\nBENCHMARK FAILED: counts disagree or a tool failed", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
