"""The auto plan: pick a plan from estimated sizes, or from what the reader wants."""

from __future__ import annotations

from .balanced import Balanced
from .base import Plan
from .depth import Depth, refusal
from .sweep import Sweep

__all__ = ["Auto"]


class Auto(Plan):
    """Pick a plan from estimated sizes.

    The balanced tree when its largest node is estimated small (it is the
    clearest picture and fast there), else the sweep.  A listing that stops
    after a few configurations (``limit``) goes to the depth plan wherever it
    accepts the puzzle: it finds the first ones without building a level.

    Examples
    --------
    >>> import zipup
    >>> strip = zipup.as_problem(zipup.load("puzzles/pentomino-3x20.toml"))
    >>> Auto().choose(strip).name, Auto().choose(strip, limit=1).name
    ('sweep', 'depth')
    """

    name = "auto"
    small = 2e5

    def __init__(self, tree=None):
        self.tree = tree

    def choose(self, problem, limit=None):
        """The plan to run on ``problem``; ``limit``: the reader stops after that many configurations."""
        if self.tree is not None:
            return Balanced(tree=self.tree)
        if limit is not None and refusal(problem) is None:
            return Depth(limited=True)
        bal = Balanced().estimate(problem)
        # the sweep's estimate is a loose upper bound: past "small", trust the sweep
        return Balanced() if bal <= self.small else Sweep()

    def run(self, problem, *, count_only=False, kernel="auto", memory=None, on_step=None):
        return self.choose(problem).run(problem, count_only=count_only, kernel=kernel, memory=memory,
                                        on_step=on_step)
