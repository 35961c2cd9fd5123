"""Stage 4: the zip-up operator and its kernels, against a dense numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from strategies import binary_matrices, matrix_pairs
from zipup.errors import UsageError
from zipup.join import BitsKernel, SparseKernel, get_kernel, join, pack, unpack

KERNELS = ["sparse", "bits"]


def dense_join(a, b, upper):
    """Reference: rows A_i + B_j for every zero of the plain product A @ B.T, row-major."""
    overlap = a.astype(np.int64) @ b.astype(np.int64).T
    pairs = [(i, j) for i in range(a.shape[0]) for j in range(b.shape[0])
             if overlap[i, j] == 0 and (not upper or i < j)]
    rows = np.array([a[i] + b[j] for i, j in pairs], dtype=np.uint8).reshape(len(pairs), a.shape[1])
    return rows, [i for i, _ in pairs], [j for _, j in pairs], int(np.count_nonzero(overlap))


@pytest.mark.parametrize("kernel", KERNELS)
@given(pair=matrix_pairs(), upper=st.booleans(), sparse_input=st.booleans())
def test_join_equals_the_dense_reference(kernel, pair, upper, sparse_input):
    a, b = pair
    if upper:  # copies of one piece: the same matrix twice
        b = a
    want, wi, wj, _ = dense_join(a, b, upper)
    args = (sp.csr_array(a), sp.csr_array(b)) if sparse_input else (a, b)
    c, i, j = join(*args, upper=upper, kernel=kernel)
    assert sp.issparse(c) and c.dtype == np.uint8 and c.shape == want.shape
    assert np.array_equal(c.toarray(), want)
    assert i.tolist() == wi and j.tolist() == wj
    assert i.dtype == np.int64 and j.dtype == np.int64


@pytest.mark.parametrize("kernel_class", [SparseKernel, BitsKernel])
@given(pair=matrix_pairs(), upper=st.booleans(), block=st.sampled_from([1, 64, 1000, 1 << 26]))
def test_kernel_pairs_and_nnz_with_any_block_size(kernel_class, pair, upper, block):
    """Both kernels return the same row-major pairs whatever the block budget, and count the
    colliding pairs (nonzeros of A @ B.T) in ``last_nnz``."""
    a, b = pair
    _, wi, wj, nnz = dense_join(a, b, upper)
    kern = kernel_class()
    i, j = kern.pairs(pack(a), pack(b), upper=upper, block_bytes=block)
    assert i.tolist() == wi and j.tolist() == wj
    assert kern.last_nnz == nnz


def test_docstring_dominoes():
    d = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], dtype=np.uint8)
    for kernel in KERNELS:
        c, i, j = join(d, d, upper=True, kernel=kernel)
        assert c.toarray().tolist() == [[1, 1, 1, 1]] and (i.tolist(), j.tolist()) == ([0], [2])
        c, i, j = join(d, d, kernel=kernel)  # without upper: both orders
        assert (i.tolist(), j.tolist()) == ([0, 2], [2, 0])


@pytest.mark.parametrize("kernel", KERNELS)
def test_join_with_empty_operands(kernel):
    a = np.zeros((0, 5), dtype=np.uint8)
    b = np.eye(5, dtype=np.uint8)
    for x, y in ((a, b), (b, a), (a, a)):
        c, i, j = join(x, y, kernel=kernel)
        assert c.shape == (0, 5) and len(i) == len(j) == 0


@pytest.mark.parametrize("kernel", KERNELS)
def test_rows_without_cells_never_collide(kernel):
    a = np.zeros((2, 70), dtype=np.uint8)
    b = np.zeros((3, 70), dtype=np.uint8)
    b[1, 65] = 1
    c, i, j = join(a, b, kernel=kernel)
    assert len(i) == 6 and c.shape == (6, 70) and c.sum() == 2


@given(binary_matrices(max_rows=6))
def test_pack_unpack_round_trip(a):
    bits = pack(a)
    assert bits.dtype == np.uint64 and bits.shape == (a.shape[0], max(1, -(-a.shape[1] // 64)))
    assert np.array_equal(unpack(bits, a.shape[1]), a)
    assert np.array_equal(pack(sp.csr_array(a)), bits)
    # column c is bit c % 64 of word c // 64
    for r, c in zip(*np.nonzero(a)):
        c = int(c)
        assert int(bits[r, c // 64]) >> (c % 64) & 1


def test_pack_to_a_wider_width():
    bits = pack(np.ones((1, 3), dtype=np.uint8), width=130)
    assert bits.shape == (1, 3) and bits[0].tolist() == [7, 0, 0]


def test_get_kernel():
    assert isinstance(get_kernel("bits"), BitsKernel)
    assert isinstance(get_kernel("sparse"), SparseKernel)
    k = BitsKernel()
    assert get_kernel(k) is k
    with pytest.raises(UsageError, match="unknown kernel 'fast'; expected one of ") as info:
        get_kernel("fast")
    assert "bits" in str(info.value) and "sparse" in str(info.value)


@pytest.mark.parametrize("kernel", ["bits", "sparse", "compiled", "auto"])
@given(data=st.data())
def test_sweep_expand_equals_the_definition(kernel, data):
    """Kernel.expand (one step of the compact sweep): state s and placement g fit when the
    state's window (bits above ``shift``) misses the placement's window and the piece's counter
    field is below its cap; the new key is keys[s] + add[g].  Compared as sets of triples."""
    shift = data.draw(st.integers(1, 6))
    n, m = data.draw(st.integers(0, 12)), data.draw(st.integers(0, 6))
    keys = np.array(sorted(data.draw(st.lists(st.integers(0, 2**14 - 1), min_size=n, max_size=n))),
                    dtype=np.uint64)
    win = np.array(data.draw(st.lists(st.integers(1, 2**7 - 1), min_size=m, max_size=m)), dtype=np.uint64)
    field = np.array(data.draw(st.lists(st.sampled_from([0, 3, 12, 2**shift - 1]), min_size=m, max_size=m)),
                     dtype=np.uint64)
    cap = np.array([data.draw(st.integers(1, int(f) + 1)) for f in field], dtype=np.uint64)
    add = np.array(data.draw(st.lists(st.integers(0, 2**20), min_size=m, max_size=m)), dtype=np.uint64)
    want = {(s, g, int(keys[s]) + int(add[g])) for s in range(n) for g in range(m)
            if (int(keys[s]) >> shift) & int(win[g]) == 0 and int(keys[s]) & int(field[g]) < int(cap[g])}
    from zipup.join import AutoKernel

    old, AutoKernel.threshold = AutoKernel.threshold, 0  # let auto switch to the compiled loops
    try:
        s, g, new = get_kernel(kernel).expand(keys, np.uint64(shift), win, add, field, cap)
    finally:
        AutoKernel.threshold = old
    got = {(int(a), int(b), int(c)) for a, b, c in zip(s, g, new)}
    assert len(got) == len(s) and got == want
