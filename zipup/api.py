"""The Python API: load a puzzle, count or list its configurations.

These functions tie the stages together; the command line is a thin layer
over them.
"""

from __future__ import annotations

import builtins
import itertools
from pathlib import Path

from .errors import UsageError
from .filters import default_filters
from .matrices import Problem, configuration_matrices
from .plans import Auto, Depth, get_plan

__all__ = ["as_problem", "count", "enumerate", "listing_plan", "load", "solve"]


def load(path, format=None, problem=None):
    """Read a puzzle file.

    Parameters
    ----------
    path : str or pathlib.Path
    format : str, optional
        ``toml``, ``dpf``, ``dpfg``, ``dlx`` or ``xmpuzzle``; by default
        from the file's extension.
    problem : int, optional
        Which problem of a BurrTools file (default: the first).

    Returns
    -------
    Puzzle or Problem
        A :class:`~zipup.puzzle.Puzzle` where the file has geometry, else a
        :class:`~zipup.matrices.Problem`.

    Examples
    --------
    >>> import zipup
    >>> zipup.load("puzzles/room.toml").name
    'Wooden room'
    """
    ext = (format or Path(path).suffix.lstrip(".")).lower()
    if ext in ("toml", ""):
        from .puzzle import load as load_toml

        return load_toml(path)
    from .formats import read

    return read(path, format=format, problem=problem)


def as_problem(puzzle):
    """A :class:`~zipup.matrices.Problem` from a Puzzle (built) or a Problem (as is)."""
    return puzzle if isinstance(puzzle, Problem) else configuration_matrices(puzzle)


def solve(puzzle, plan="auto", *, count_only=False, tree=None, kernel="auto", memory=None,
          on_step=None):
    """Run a plan; the :class:`~zipup.plans.Result` holds the count, the stats and a lister.

    Only the in-plan constraints (cover, separation) are applied; see
    :func:`enumerate` for the post-stage filters.  ``on_step`` is called with
    each :class:`~zipup.plans.Step` as it finishes.

    Examples
    --------
    >>> import zipup
    >>> r = zipup.solve(zipup.load("puzzles/room.toml"), plan="balanced",
    ...                 tree="((T,T),((S,V),Z))", count_only=True)
    >>> r.count, [s.rows_out for s in r.stats]
    (52, [464, 544, 1212, 52])
    """
    problem = as_problem(puzzle)
    return get_plan(plan, tree).run(problem, count_only=count_only, kernel=kernel, memory=memory,
                                    on_step=on_step)


def listing_plan(problem, plan="auto", *, tree=None, limit=None, scheduler=None, checkpoint=None):
    """The plan a listing of ``problem`` runs: ``plan`` as given, or the depth plan.

    Under ``auto``, a listing that stops after ``limit`` configurations
    searches depth-first wherever the depth plan accepts the puzzle (see
    :meth:`~zipup.plans.Auto.choose`), unless a Dask ``scheduler`` or a
    ``checkpoint`` asks for subproblems; the depth plan, chosen or given,
    is told that the listing stops early (it then keeps a branching rule
    that finds the first configuration quickly).

    Examples
    --------
    >>> import zipup
    >>> soma = zipup.as_problem(zipup.load("puzzles/soma.toml"))
    >>> listing_plan(soma), listing_plan(soma, limit=1).name
    ('auto', 'depth')
    """
    chosen = get_plan(plan, tree)
    if limit is not None and isinstance(chosen, Depth):
        return Depth(rule=chosen.rule, limited=True)
    if limit is None or scheduler is not None or checkpoint is not None or not isinstance(chosen, Auto):
        return plan
    chosen = chosen.choose(problem, limit=limit)
    return chosen if not chosen.splits else plan


def _split(plan, tree, workers, scheduler, checkpoint=None):
    """Whether to cut into subproblems: asked for, and the plan can be run on them."""
    if workers is None and scheduler is None and checkpoint is None:
        return False
    if get_plan(plan, tree).splits:
        return True
    if scheduler is not None or checkpoint is not None:
        raise UsageError(f"the {get_plan(plan).name} plan runs in one process; a scheduler or a "
                         "checkpoint cuts the puzzle into subproblems for the other plans")
    return False


def enumerate(puzzle, plan="auto", *, filters=None, slidable=None, limit=None, tree=None,
              kernel="auto", memory=None, workers=None, scheduler=None, progress=False):
    """Iterate over the configurations that pass every filter.

    Parameters
    ----------
    puzzle : Puzzle or Problem
    plan : str or Plan
    filters : list of Filter, optional
        Default: what the puzzle file asks for (:func:`~zipup.filters.default_filters`).
    slidable : {"none", "quick", "exact"}, optional
        Overrides the file's ``[filters] slidable``.
    limit : int, optional
        Stop after this many: the search stops there (under ``auto`` the
        depth plan runs wherever it accepts the puzzle, see
        :func:`listing_plan`).
    workers, scheduler, progress : optional
        Given a number of worker processes or a Dask scheduler address, cut
        the problem into independent subproblems and solve them in parallel
        (see :func:`zipup.parallel.run`); configurations then come in the
        order the subproblems finish, and ``memory`` is the budget of the run.
        A plan that does not split (``depth``) runs in this process whatever
        they say.

    Yields
    ------
    Configuration

    Examples
    --------
    >>> import zipup
    >>> room = zipup.load("puzzles/room.toml")
    >>> sum(1 for _ in zipup.enumerate(room, slidable="none"))
    52
    """
    problem = as_problem(puzzle)
    if filters is None:
        filters = default_filters(problem, slidable)
    plan = listing_plan(problem, plan, tree=tree, limit=limit, scheduler=scheduler)
    if _split(plan, tree, workers, scheduler):
        from .parallel import configurations

        return configurations(problem, plan, filters=filters, limit=limit, tree=tree, kernel=kernel,
                              memory=memory, workers=workers, scheduler=scheduler, progress=progress)
    result = solve(problem, plan, tree=tree, kernel=kernel, memory=memory)
    configs = result.configurations()
    for f in filters:
        configs = f.apply(problem, configs)
    return itertools.islice(configs, limit) if limit is not None else configs


def count(puzzle, plan="auto", *, filters=None, slidable=None, tree=None, kernel="auto", memory=None,
          workers=None, scheduler=None, checkpoint=None, progress=False):
    """The exact number of configurations that pass every filter.

    Counts without listing when every filter is enforced inside the plan.
    Given ``workers``, a Dask ``scheduler`` or a ``checkpoint`` file, the
    problem is cut into independent subproblems solved in parallel (see
    :func:`zipup.parallel.run`; ``memory`` is then the budget of the run),
    unless the plan does not split (``depth``).

    Examples
    --------
    >>> import zipup
    >>> room = zipup.load("puzzles/room.toml")
    >>> zipup.count(room, slidable="none"), zipup.count(room)
    (52, 3)
    """
    problem = as_problem(puzzle)
    if filters is None:
        filters = default_filters(problem, slidable)
    if _split(plan, tree, workers, scheduler, checkpoint):
        from .parallel import run

        return run(problem, plan, count_only=True, filters=filters, tree=tree, kernel=kernel, memory=memory,
                   workers=workers, scheduler=scheduler, checkpoint=checkpoint, progress=progress).passed
    if all(f.in_plan for f in filters):
        return solve(problem, plan, count_only=True, tree=tree, kernel=kernel, memory=memory).count
    return builtins.sum(1 for _ in enumerate(problem, plan, filters=filters, tree=tree, kernel=kernel,
                                             memory=memory))
