"""Stage 5: plans, i.e. trees of zip-up joins.

Every plan turns a :class:`~zipup.matrices.Problem` into *merged states*: rows
of a configuration matrix (bit-packed, see :mod:`zipup.join`) with a
multiplicity.  Two partial configurations that occupy the same cells with the
same pieces are interchangeable for every join above them, so they become one
row whose multiplicity is the sum of theirs.  Counting adds multiplicities and
never lists; listing walks the back-pointers each merged row keeps to the
rows that made it.

One module per plan, on the shared interface of :mod:`~zipup.plans.base`:

* :class:`Balanced` (:mod:`~zipup.plans.balanced`) zips the pieces up in a
  balanced binary tree (the seed method, the picture to teach with).
* :class:`Sweep` (:mod:`~zipup.plans.sweep`) orders the cells, groups the
  placements by their first cell, and zips the running matrix with one group
  at a time (a left-deep tree), requiring every swept cell to be decided once
  its step is done.
* :class:`Depth` (:mod:`~zipup.plans.depth`) searches depth-first, compiled
  with numba, one path at a time instead of a level of the tree: for full
  covers whose levels grow too large (the 3x4x5 box, the Morse alphabet,
  Calibron), under the branching rule of :mod:`~zipup.plans.branching`
  estimated fastest.
* :class:`Auto` (:mod:`~zipup.plans.auto`) estimates the sizes of both and
  picks one.

A new plan is one new module with a subclass of :class:`Plan`, registered in
``PLANS`` below so that ``--plan`` knows its name.
"""

from __future__ import annotations

from ..errors import UsageError
from .auto import Auto
from .balanced import Balanced, default_tree, parse_tree, tree_label
from .base import Plan, Result, Step, available_memory
from .depth import Depth, SearchStats
from .sweep import Sweep, sweep_order

__all__ = ["PLANS", "Auto", "Balanced", "Depth", "Plan", "Result", "SearchStats", "Step", "Sweep",
           "available_memory",
           "default_tree", "get_plan", "parse_tree", "sweep_order", "tree_label"]

#: The plans ``--plan`` takes, by name.
PLANS = {cls.name: cls for cls in (Auto, Balanced, Depth, Sweep)}

# the plans whose constructor takes the shape given by ``--tree``
_TAKES_TREE = (Auto, Balanced)


def get_plan(plan, tree=None):
    """A plan instance from a name (``auto``, ``balanced``, ``depth``, ``sweep``) or an instance.

    Examples
    --------
    >>> get_plan("sweep").name
    'sweep'
    >>> get_plan("depth-first")
    Traceback (most recent call last):
    ...
    zipup.errors.UsageError: unknown plan 'depth-first'; expected one of auto, balanced, depth, sweep
    """
    if isinstance(plan, Plan):
        return plan
    if plan not in PLANS:
        raise UsageError(f"unknown plan {plan!r}; expected one of {', '.join(sorted(PLANS))}")
    cls = PLANS[plan]
    if tree is None:
        return cls()
    if not issubclass(cls, _TAKES_TREE):
        raise UsageError(f"--tree gives the shape of the balanced plan; it cannot be used with --plan {plan}")
    return cls(tree=tree)
