"""zipup: count and list the ways pieces fit into a board, by matrix algebra.

Each piece becomes a sparse configuration matrix (one row per placement, one
column per board cell); the zip-up operator joins two of them by keeping the
pairs whose overlap ``A @ B.T`` is zero; plans arrange the joins in trees;
filters check the final configurations.

>>> import zipup
>>> room = zipup.load("puzzles/room.toml")
>>> zipup.count(room, slidable="none")
52
"""

from .api import as_problem, count, enumerate, load, solve
from .errors import PuzzleFileError, UsageError, ZipupError
from .filters import Cover, Filter, Separation, Slidable
from .join import join
from .matrices import Configuration, PieceRows, Problem, configuration_matrices
from .plans import Auto, Balanced, Plan, Result, Step, Sweep
from .puzzle import Board, Piece, Puzzle
from .symmetry import (Orbit, Symmetry, SymmetryBreaking, SymmetryGroup, UniqueResult, count_unique,
                       enumerate_unique, labelled_count, solve_unique, symmetry_breaking,
                       symmetry_group)

__version__ = "0.1.0"

__all__ = [
    "Auto",
    "Balanced",
    "Board",
    "Configuration",
    "Cover",
    "Filter",
    "Orbit",
    "Piece",
    "PieceRows",
    "Plan",
    "Problem",
    "Puzzle",
    "PuzzleFileError",
    "Result",
    "Separation",
    "Slidable",
    "Step",
    "Sweep",
    "Symmetry",
    "SymmetryBreaking",
    "SymmetryGroup",
    "UniqueResult",
    "UsageError",
    "ZipupError",
    "as_problem",
    "configuration_matrices",
    "count",
    "count_unique",
    "enumerate",
    "enumerate_unique",
    "join",
    "labelled_count",
    "load",
    "solve",
    "solve_unique",
    "symmetry_breaking",
    "symmetry_group",
]
