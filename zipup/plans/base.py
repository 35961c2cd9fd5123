"""The interface every plan shares, what a plan returns, and its memory budget.

A plan turns a :class:`~zipup.matrices.Problem` into a :class:`Result`: the
exact count, one :class:`Step` per join (the intermediate matrix sizes), and a
lister that streams the configurations.  A new plan subclasses :class:`Plan`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import MemoryBudgetError, UsageError
from ..join import BLOCK_BYTES

__all__ = ["Plan", "Result", "Step", "available_memory"]


@dataclass(frozen=True)
class Step:
    """What one join of a plan did.

    Attributes
    ----------
    plan : str
    index : int
    label : str
        What was joined: a subtree like ``(T,(S,V))`` or a swept cell.
    rows_in : tuple of int
        Rows of the two operands.
    nnz : int or None
        Nonzeros of the overlap matrix ``A @ B.T`` (colliding pairs); ``None``
        where the join did not form it (hashed complement at an exact root).
    rows_out : int
        Rows the plain zip-up (no merging anywhere) would have here: the sum
        of the multiplicities produced.
    rows_formed : int
        Rows this join actually formed from its (merged) operands.
    rows_merged : int
        Rows left after merging equal states.
    pruned : int
        Rows dropped because they could never be completed.
    bytes : int
        Memory held by the step's result.
    seconds : float
    """

    plan: str
    index: int
    label: str
    rows_in: tuple
    nnz: int | None
    rows_out: int
    rows_formed: int
    rows_merged: int
    pruned: int
    bytes: int
    seconds: float

    def as_dict(self):
        return dict(self.__dict__)


@dataclass
class Result:
    """What a plan found: the count, the step statistics, and a lister.

    Attributes
    ----------
    count : int or None
        Exact number of configurations (a Python int, however large), or
        ``None`` while it is not known: a plan that counts as it lists (the
        depth plan) knows it once a listing has run to its end, and a reader
        that stops early never learns it.  ``count_only`` runs always have it.
    stats : list
        One :class:`Step` per join (one
        :class:`~zipup.plans.depth.SearchStats` per search for the depth plan).
    plan : str
    """

    count: int | None
    stats: list
    plan: str
    _lister: object = field(default=None, repr=False)

    def configurations(self):
        """Iterate over the configurations (streamed from back-pointers).

        Raises
        ------
        UsageError
            If the plan ran with ``count_only=True``.
        """
        if self._lister is None:
            raise UsageError("this result was computed with count_only=True; nothing to list")
        return self._lister()


class _Stats(list):
    """The list of steps, telling a listener about each as it is appended."""

    def __init__(self, on_step=None):
        super().__init__()
        self.on_step = on_step

    def append(self, step):
        super().append(step)
        if self.on_step is not None:
            self.on_step(step)



class Plan:
    """Interface of every plan.

    Subclasses implement :meth:`run`.  ``name`` is what ``--plan`` takes;
    ``splits`` says whether the parallel runner may cut the problem into
    subproblems for it (a plan that holds one search path gains nothing there).
    """

    name = "?"
    splits = True

    def run(self, problem, *, count_only=False, kernel="auto", memory=None, on_step=None):
        """Solve ``problem``; return a :class:`Result`.

        ``on_step``, if given, is called with each :class:`Step` as it finishes.
        """
        raise NotImplementedError

    def estimate(self, problem):
        """Rough size (largest number of rows) this plan would hold."""
        return math.inf


def available_memory():
    """Bytes of memory available now (``MemAvailable``), or the physical size.

    Examples
    --------
    >>> available_memory() > 0
    True
    """
    import os

    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


class _Budget:
    """The most a plan may hold between steps (default: 3/4 of the memory available)."""

    def __init__(self, memory):
        self.limit = int(memory) if memory is not None else max(256 << 20, available_memory() * 3 // 4)

    def check(self, held, where):
        if held > self.limit:
            raise MemoryBudgetError(
                f"{where}: the plan would hold {held / 2**20:,.1f} MiB, over the memory budget of "
                f"{self.limit / 2**20:,.1f} MiB; give a larger --memory, or --workers to cut the "
                "puzzle into subproblems")


def _block_budget(memory):
    """Bytes one join block may use: 1/64 of the memory budget (the rest holds the rows)."""
    return BLOCK_BYTES if memory is None else max(1 << 16, int(memory) // 64)
