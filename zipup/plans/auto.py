"""The auto plan: pick a plan from estimated sizes."""

from __future__ import annotations

from .balanced import Balanced
from .base import Plan
from .sweep import Sweep

__all__ = ["Auto"]


class Auto(Plan):
    """Pick a plan from estimated sizes.

    The balanced tree when its largest node is estimated small (it is the
    clearest picture and fast there), else the sweep.
    """

    name = "auto"
    small = 2e5

    def __init__(self, tree=None):
        self.tree = tree

    def choose(self, problem):
        if self.tree is not None:
            return Balanced(tree=self.tree)
        bal = Balanced().estimate(problem)
        # the sweep's estimate is a loose upper bound: past "small", trust the sweep
        return Balanced() if bal <= self.small else Sweep()

    def run(self, problem, *, count_only=False, kernel="auto", memory=None, on_step=None):
        return self.choose(problem).run(problem, count_only=count_only, kernel=kernel, memory=memory,
                                        on_step=on_step)
