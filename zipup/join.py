"""Stage 4: the zip-up operator and its kernels.

Two rows *collide* when they share a column.  For configuration matrices
``A`` (n_a x m) and ``B`` (n_b x m) the overlap matrix ``A @ B.T`` is zero
exactly at the pairs that do not collide; the zip-up of ``A`` and ``B`` has one
row ``A[i] + B[j]`` for each such pair.

Plans keep their rows *bit-packed*: a row of ``m`` columns is ``ceil(m / 64)``
``uint64`` words (column ``c`` is bit ``c % 64`` of word ``c // 64``), so "no
collision" is "every word of ``a & b`` is zero".  A kernel turns two packed
matrices into the list of non-colliding pairs:

* :class:`SparseKernel` is the reference: it unpacks to ``scipy.sparse`` and
  computes the overlap matrix ``A @ B.T`` literally.
* :class:`BitsKernel` ANDs the packed words of blocks of rows at once.

Both return the same pairs in the same (row-major) order.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["AutoKernel", "BitsKernel", "CompiledKernel", "Kernel", "SparseKernel", "get_kernel", "join", "pack", "unpack"]

#: Default bytes one block of a kernel may allocate for its temporaries.
BLOCK_BYTES = 64 << 20


def pack(matrix, width=None):
    """Bit-pack the rows of a 0/1 matrix.

    Parameters
    ----------
    matrix : sparse or dense array, shape (n, m)
    width : int, optional
        Number of columns to pack to (default ``m``).

    Returns
    -------
    ndarray of uint64, shape (n, ceil(width / 64))

    Examples
    --------
    >>> pack(np.array([[1, 0, 1], [0, 1, 0]]))[:, 0].tolist()
    [5, 2]
    """
    if sp.issparse(matrix):
        m = sp.csr_array(matrix)
        n, width0 = m.shape
        nz = m.data != 0
        rows = np.repeat(np.arange(n), np.diff(m.indptr))[nz]
        cols = m.indices[nz]
    else:
        a = np.asarray(matrix)
        n, width0 = a.shape
        rows, cols = np.nonzero(a)
    width = width0 if width is None else width
    words = max(1, -(-width // 64))
    out = np.zeros((n, words), dtype=np.uint64)
    np.bitwise_or.at(out, (rows, cols // 64), np.left_shift(np.uint64(1), (cols % 64).astype(np.uint64)))
    return out


def unpack(bits, width):
    """Inverse of :func:`pack`: a ``(n, width)`` ``uint8`` 0/1 array.

    Examples
    --------
    >>> unpack(pack(np.array([[1, 0, 1]])), 3).tolist()
    [[1, 0, 1]]
    """
    b = np.ascontiguousarray(bits, dtype=np.uint64)
    as_bytes = b.astype("<u8").view(np.uint8).reshape(b.shape[0], 8 * b.shape[1])
    return np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :width]


class Kernel:
    """A way to find the non-colliding pairs of two packed matrices.

    Subclasses implement :meth:`pairs`; a new kernel is one new class.
    """

    name = "?"

    def pairs(self, a, b, upper=False, block_bytes=BLOCK_BYTES):
        """Non-colliding pairs.

        Parameters
        ----------
        a : ndarray of uint64, shape (n_a, w)
        b : ndarray of uint64, shape (n_b, w)
        upper : bool
            Keep only ``i < j`` (``a`` and ``b`` are copies of one piece).
        block_bytes : int
            Memory budget for one block of temporaries.

        Returns
        -------
        i, j : ndarray of int64
            Row-major order; ``nnz`` (the number of colliding pairs, i.e.
            nonzeros of ``a @ b.T``) is stored on the kernel as ``last_nnz``.
        """
        raise NotImplementedError

    def expand(self, keys, shift, win, add, field, cap, block_bytes=BLOCK_BYTES):
        """One step of the compact frontier sweep: sorted states x one cell's placements.

        States are single ``uint64`` keys ``[window | counters]`` with the window
        above bit ``shift``; placement ``g`` fits state ``s`` when their windows
        do not collide (``A @ B.T == 0`` on the windows) and the piece's counter
        is below its count (``keys[s] & field[g] < cap[g]``).  The windows are
        tested once per distinct window (the keys are sorted, so equal windows
        are adjacent) and the result fanned out.

        Parameters
        ----------
        keys : ndarray of uint64, shape (n,), sorted
        shift : numpy.uint64
        win, add, field, cap : ndarray of uint64, shape (m,)
            Placement windows (bit 0: the swept cell), what a placement adds to
            a key, its counter field mask, and ``count << offset``.

        Returns
        -------
        s, g : ndarray of int64
            Fitting (state, placement) pairs.
        new : ndarray of uint64
            ``keys[s] + add[g]``.
        """
        tw = keys >> shift
        runs = np.empty(len(tw), dtype=bool)
        if len(tw):
            runs[0] = True
            np.not_equal(tw[1:], tw[:-1], out=runs[1:])
        run = np.cumsum(runs) - 1
        uw = tw[runs]
        u, g = self.pairs(uw[:, None], win[:, None], block_bytes=block_bytes)
        per_u = np.bincount(u, minlength=len(uw))
        ustart = np.cumsum(per_u) - per_u
        per = per_u[run]  # candidate placements of each state: those that fit its window
        s_rep = np.repeat(np.arange(len(keys)), per)
        idx = np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per - ustart[run], per)
        kr = keys[s_rep]
        gi = g[idx]
        ok = (kr & field[gi]) < cap[gi]
        gi = gi[ok]
        return s_rep[ok], gi, kr[ok] + add[gi]

    def _blocked(self, n_a, n_b, step, zero_block, upper):
        """Collect the zero entries of the overlap matrix, ``step`` rows of ``a`` at a time.

        ``zero_block(lo, hi)`` returns the boolean ``(hi - lo, n_b)`` block that is
        True where rows do not collide.
        """
        out_i, out_j, nnz = [], [], 0
        for lo in range(0, n_a, step):
            hi = min(n_a, lo + step)
            zero = zero_block(lo, hi)
            nnz += zero.size - int(np.count_nonzero(zero))
            if upper:
                zero &= np.arange(n_b)[None, :] > np.arange(lo, hi)[:, None]
            i, j = np.nonzero(zero)
            out_i.append(i + lo)
            out_j.append(j)
        self.last_nnz = nnz
        return _cat(out_i), _cat(out_j)

    @staticmethod
    def _block_rows(n_b, w, budget):
        return max(1, budget // max(1, n_b * w * 8))


class SparseKernel(Kernel):
    """Reference kernel: the overlap matrix ``A @ B.T`` with ``scipy.sparse``."""

    name = "sparse"

    def pairs(self, a, b, upper=False, block_bytes=BLOCK_BYTES):
        w = a.shape[1]
        sa = sp.csr_array(unpack(a, 64 * w), dtype=np.int32)
        sbt = sp.csr_array(unpack(b, 64 * w), dtype=np.int32).T.tocsc()
        n_a, n_b = a.shape[0], b.shape[0]

        def zero_block(lo, hi):
            overlap = (sa[lo:hi] @ sbt).tocoo()  # nonzero exactly where rows collide
            zero = np.ones((hi - lo, n_b), dtype=bool)
            zero[overlap.row, overlap.col] = False
            return zero

        return self._blocked(n_a, n_b, max(1, block_bytes // max(1, n_b)), zero_block, upper)


class BitsKernel(Kernel):
    """Fast kernel: blocked AND of bit-packed rows, only over words ``b`` uses."""

    name = "bits"

    def pairs(self, a, b, upper=False, block_bytes=BLOCK_BYTES):
        n_a, n_b = a.shape[0], b.shape[0]
        if n_a == 0 or n_b == 0:
            self.last_nnz = 0
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        used = np.flatnonzero(b.any(axis=0) & a.any(axis=0))
        a, b = a[:, used], b[:, used]
        w = len(used)

        def zero_block(lo, hi):
            if w == 0:
                return np.ones((hi - lo, n_b), dtype=bool)
            zero = (a[lo:hi, None, 0] & b[None, :, 0]) == 0
            for k in range(1, w):
                zero &= (a[lo:hi, None, k] & b[None, :, k]) == 0
            return zero

        return self._blocked(n_a, n_b, self._block_rows(n_b, max(w, 1), block_bytes), zero_block, upper)


class CompiledKernel(BitsKernel):
    """Compiled loops (numba) for the frontier sweep; pairs as :class:`BitsKernel`.

    The first use compiles (a few seconds) and caches the machine code next
    to the package, so later runs start at once.
    """

    name = "compiled"

    def expand(self, keys, shift, win, add, field, cap, block_bytes=BLOCK_BYTES):
        from ._compiled import sweep_expand

        s, g, new, nnz = sweep_expand(keys, np.uint64(shift), win, add, field, cap)
        self.last_nnz = int(nnz)
        return s, g, new

    def step_count(self, keys, mult, shift, primary, win, add, field, cap):
        """A whole counting step of the compact sweep in one compiled pass (see
        :func:`zipup._compiled.sweep_step_count`)."""
        from ._compiled import sweep_step_count

        return sweep_step_count(keys, mult.astype(np.int64), np.uint64(shift), primary, win, add,
                                field, cap)


class AutoKernel(BitsKernel):
    """:class:`BitsKernel`, switching to :class:`CompiledKernel` for big sweep steps.

    Small puzzles never pay numba's start-up; big ones get compiled loops.
    Every kernel gives the same results, so switching per step is safe.
    """

    name = "auto"
    threshold = 50_000

    def __init__(self):
        self._compiled = None

    def _fast(self, n):
        """The compiled kernel for a step of ``n`` states, or None (small step, or no numba)."""
        if n < self.threshold or self._compiled is False:
            return None
        if self._compiled is None:
            try:
                import numba  # noqa: F401

                self._compiled = CompiledKernel()
            except ImportError:
                self._compiled = False
                return None
        return self._compiled

    def expand(self, keys, shift, win, add, field, cap, block_bytes=BLOCK_BYTES):
        fast = self._fast(len(keys))
        if fast is None:
            return super().expand(keys, shift, win, add, field, cap, block_bytes)
        out = fast.expand(keys, shift, win, add, field, cap, block_bytes)
        self.last_nnz = fast.last_nnz
        return out

    def step_count(self, keys, mult, shift, primary, win, add, field, cap):
        fast = self._fast(len(keys))
        return None if fast is None else fast.step_count(keys, mult, shift, primary, win, add, field, cap)


def _cat(parts):
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)


_KERNELS = {"auto": AutoKernel, "bits": BitsKernel, "compiled": CompiledKernel, "sparse": SparseKernel}


def get_kernel(kernel):
    """A kernel instance from a name (``auto``, ``bits``, ``compiled``, ``sparse``) or an instance."""
    if isinstance(kernel, Kernel):
        return kernel
    try:
        return _KERNELS[kernel]()
    except KeyError:
        from .errors import UsageError

        raise UsageError(f"unknown kernel {kernel!r}; expected one of {', '.join(sorted(_KERNELS))}") from None


def join(a, b, *, upper=False, kernel="sparse"):
    """Zip up two configuration matrices.

    Parameters
    ----------
    a : sparse array, shape (n_a, m)
    b : sparse array, shape (n_b, m)
    upper : bool
        ``a`` and ``b`` are the same piece's copies: keep only pairs ``i < j`` so
        swapped copies are not produced twice.
    kernel : str or Kernel

    Returns
    -------
    c : scipy.sparse.csr_array, shape (n_pairs, m), dtype uint8
        Row ``k`` is ``a[i[k]] + b[j[k]]``.
    i, j : ndarray of int64, shape (n_pairs,)
        Which rows were zipped.

    Examples
    --------
    Two dominoes on a 1x3 strip: only the two end-to-end pairs do not collide.

    >>> d = sp.csr_array(np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], dtype=np.uint8))
    >>> c, i, j = join(d, d, upper=True)
    >>> c.toarray().tolist(), i.tolist(), j.tolist()
    ([[1, 1, 1, 1]], [0], [2])
    """
    a = sp.csr_array(a)
    b = sp.csr_array(b)
    m = a.shape[1]
    i, j = get_kernel(kernel).pairs(pack(a, m), pack(b, m), upper=upper)
    c = sp.csr_array(a[i] + b[j], dtype=np.uint8) if len(i) else sp.csr_array((0, m), dtype=np.uint8)
    return c, i, j
