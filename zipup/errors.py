"""The one exception hierarchy of zipup.

Every error a user can cause (a bad puzzle file, a bad option) is a
:class:`ZipupError`; the command line prints it as a single ``Error: ...``
line and exits with status 1.  Anything else escaping is a bug.
"""

from __future__ import annotations

__all__ = ["MemoryBudgetError", "PuzzleFileError", "UsageError", "ZipupError"]


class ZipupError(Exception):
    """Base class of every error zipup raises on purpose."""


class PuzzleFileError(ZipupError, ValueError):
    """A puzzle file that cannot be read or breaks the format.

    Parameters
    ----------
    path : str
        The file, as the user named it.
    message : str
        What was expected and what was found.
    key : str, optional
        The key (``board.cover``, ``piece[2].count``) at fault.
    line : int, optional
        1-based line number, where it is known.

    Examples
    --------
    >>> str(PuzzleFileError("room.toml", "expected a string, found 3", key="name", line=1))
    'room.toml, line 1: name: expected a string, found 3'
    """

    def __init__(self, path, message, *, key=None, line=None):
        self.path = str(path)
        self.key = key
        self.line = line
        self.reason = message
        where = self.path
        if line is not None:
            where += f", line {line}"
        text = f"{where}: {key}: {message}" if key else f"{where}: {message}"
        super().__init__(text)


class UsageError(ZipupError, ValueError):
    """An option or argument that does not make sense (exit status 2 on the command line)."""


class MemoryBudgetError(ZipupError, MemoryError):
    """A plan would hold more than its memory budget.

    Raised between steps, before the machine runs out; the parallel runner
    catches it (as a ``MemoryError``) and cuts the subproblem further.
    """
