"""Plot the rows each join step holds, for every plan, on several puzzles.

For each puzzle and each plan, ``zipup.solve(problem, plan=..., count_only=True)``
returns a list of :class:`zipup.Step` records; this script draws, step by
step:

* solid line: ``rows_merged``, the rows the plan actually keeps after merging
  equal states (what costs memory and time);
* dashed line, same colour: ``rows_out``, the rows the plain zip-up (no
  merging, as seed 004 does it) would have at that step.

One panel per puzzle, log scale, written as a PNG (matplotlib, Agg backend).

Usage::

    python analysis/plot_steps.py                                # default puzzles
    python analysis/plot_steps.py --puzzles room,soma --plans balanced,sweep \\
        --output analysis/steps.png --timeout 120
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_PUZZLES = ["room", "north-colours", "pentomino-3x20", "soma", "domino-6x6",
                   "pentomino-6x10"]
DEFAULT_PLANS = ["balanced", "sweep"]
STYLE = {"balanced": "tab:blue", "sweep": "tab:orange", "auto": "tab:green"}


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout


def puzzle_path(name):
    p = Path(name)
    if p.suffix:
        return p if p.is_absolute() else (Path.cwd() / p)
    return ROOT / "puzzles" / f"{name}.toml"


def collect(puzzles, plans, timeout):
    """``{puzzle: {plan: (steps or None, count, seconds, plan run or note)}}``.

    A key ``"_note"`` in a puzzle's dict qualifies its count (filters not applied).
    """
    import zipup

    out = {}
    for name in puzzles:
        puzzle = zipup.load(str(puzzle_path(name)))
        problem = zipup.as_problem(puzzle)
        out[name] = {}
        if getattr(puzzle, "slidable", "none") != "none":
            out[name]["_note"] = f"before the slidable = {puzzle.slidable} filter"
        for plan in plans:
            old = signal.signal(signal.SIGALRM, _alarm)
            signal.alarm(int(timeout) if timeout else 0)
            t = time.perf_counter()
            try:
                res = zipup.solve(problem, plan=plan, count_only=True)
                out[name][plan] = (list(res.stats), res.count, time.perf_counter() - t,
                                   getattr(res, "plan", plan) or plan)
            except Timeout:
                out[name][plan] = (None, None, timeout, f"timeout after {timeout:g} s")
            except MemoryError:
                out[name][plan] = (None, None, time.perf_counter() - t, "out of memory")
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, old)
            steps, n, dt, note = out[name][plan]
            shown = f"{n:,}" if n is not None else note
            print(f"{name:18} {plan:9} {shown:>14}  {dt:8.2f} s"
                  + (f"  {len(steps)} steps, peak {max((s.rows_merged for s in steps), default=0):,} rows"
                     if steps else ""), file=sys.stderr, flush=True)
    return out


def plot(data, output, title=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    names = list(data)
    ncols = min(3, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.8 * nrows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        notes = []
        runs = {k: v for k, v in data[name].items() if not k.startswith("_")}
        for plan, (steps, n, dt, note) in runs.items():
            colour = STYLE.get(plan)
            if not steps:
                notes.append(f"{plan}: {note}")
                continue
            x = [i + 1 for i in range(len(steps))]
            ran = plan if note == plan else f"{plan} ({note})"
            ax.plot(x, [max(s.rows_merged, 1) for s in steps], "-o", ms=3, color=colour,
                    label=f"{ran} kept ({dt:.2f} s)")
            ax.plot(x, [max(s.rows_out, 1) for s in steps], "--", color=colour, alpha=0.6)
        counts = {n for steps, n, dt, note in runs.values() if n is not None}
        extra = data[name].get("_note")
        ax.set_yscale("log")
        ax.set_title(name + "".join(f" ({c:,} configurations{', ' + extra if extra else ''})"
                                    for c in sorted(counts)), fontsize=10)
        ax.set_xlabel("join step")
        ax.set_ylabel("rows")
        ax.grid(True, which="major", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Line2D([], [], color="grey", ls="--"))
        labels.append("plain zip-up rows (no merging)")
        ax.legend(handles, labels, fontsize=7, loc="best")
        if notes:
            ax.text(0.02, 0.02, "\n".join(notes), transform=ax.transAxes, fontsize=7, va="bottom",
                    color="firebrick")
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.suptitle(title or "zipup: rows per join step, per plan", fontsize=12)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", default=",".join(DEFAULT_PUZZLES),
                    help="comma-separated puzzle names (files in puzzles/) or paths")
    ap.add_argument("--plans", default=",".join(DEFAULT_PLANS), help="comma-separated plans")
    ap.add_argument("--output", default=str(HERE / "steps.png"), help="PNG file to write")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds per (puzzle, plan) run; a run past it is shown as a timeout (default 60)")
    a = ap.parse_args(argv)
    data = collect(a.puzzles.split(","), a.plans.split(","), a.timeout)
    plot(data, a.output)
    print(a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
