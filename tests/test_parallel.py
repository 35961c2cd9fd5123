"""Independent subproblems: the cut, local workers, Dask, the memory budget, checkpoints.

Fast tests run the subproblems in this process or on two local workers; the kill-and-resume
test and the 3x4x5 box are marked slow (the full box also needs ``ZIPUP_BOX=1``: it takes
tens of minutes with the plans of today).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import brute_force, engine_configurations, models

import zipup
from zipup import parallel
from zipup.errors import UsageError
from zipup.formats import reads
from zipup.matrices import Configuration
from zipup.plans import Plan, Sweep
from zipup.puzzle import loads

ROOT = Path(__file__).resolve().parent.parent
PUZZLES = ROOT / "puzzles"

#: Exact cover without geometry: options of unlimited count, secondary items with colours.
DLX = """\
a b c d | x y
a b x:1
c d x:2
a c y
b d y:3
a x:1
b
c y:3
d y:3
"""


def _problem(name):
    return zipup.as_problem(zipup.load(str(PUZZLES / name)))


def _unsplit(problem):
    return sorted(zipup.solve(problem, count_only=False).configurations())


def _through(problem, leaves):
    """Every configuration of the leaves, mapped back to the root problem (a sorted list)."""
    out = []
    for node in leaves:
        if not node.problem.pieces:
            out.append(node.configuration(Configuration(())))
            continue
        out += [node.configuration(c) for c in zipup.solve(node.problem, count_only=False).configurations()]
    return sorted(out)


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "zipup", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=kw.pop("timeout", 600), **kw)


# ---------------------------------------------------------------- the cut


@pytest.mark.parametrize("name,parts", [("room.toml", 2), ("room.toml", 7), ("room.toml", 40),
                                        ("north-colours.toml", 3), ("north-colours.toml", 40),
                                        ("domino-6x6.toml", 5), ("domino-6x6.toml", 30),
                                        ("dpf-dominoes-2x3.dpf", 4), ("domino-7x8.dpf", 5)])
def test_the_cut_gives_the_same_configurations(name, parts):
    """Copies (room, north-colours, domino-6x6: 18 copies), colours kept apart (north-colours),
    partial cover (room), inputs without geometry (DPF); 1-D boards come with the random puzzles."""
    problem = _problem(name)
    want = _unsplit(problem)
    leaves = parallel.plan_split(problem, parts=parts)
    assert len({n.path for n in leaves}) == len(leaves)
    assert _through(problem, leaves) == want  # same configurations, none twice


def test_the_cut_of_exact_cover_options_with_colours():
    problem = reads(DLX, "dlx")
    want = _unsplit(problem)
    assert want  # the puzzle has configurations
    for parts in (2, 5, 50):
        assert _through(problem, parallel.plan_split(problem, parts=parts)) == want


@settings(max_examples=40)
@given(models(), st.integers(1, 30))
def test_the_cut_of_random_puzzles(model, parts):
    problem = zipup.as_problem(loads(model.toml()))
    want = brute_force(model)
    got = engine_configurations(problem, _through(problem, parallel.plan_split(problem, parts=parts)))
    assert len(got) == len(want) and set(got) == want


def test_children_partition_the_parent(room_problem):
    top = parallel.Subproblem.root(room_problem)
    total = zipup.solve(room_problem, count_only=True).count
    kids = top.children()
    assert len(kids) == top.branches
    assert sum(0 if k.dead else zipup.solve(k.problem, count_only=True).count for k in kids) == total


def test_a_path_names_the_same_subproblem(room_problem):
    for node in parallel.plan_split(room_problem, parts=60):
        again = parallel.subproblem(room_problem, node.path)
        assert again.fixed == node.fixed
        assert [p.name for p in again.problem.pieces] == [p.name for p in node.problem.pieces]
        for a, b in zip(again.problem.pieces, node.problem.pieces):
            assert a.count == b.count and (a.matrix != b.matrix).nnz == 0
        assert again.problem.columns == node.problem.columns


def test_copies_are_not_counted_twice():
    """Two interchangeable dominoes on a 2x2 square: 2 configurations, however it is cut."""
    problem = zipup.as_problem(loads('name = "d"\n[board]\nsize = [2, 2]\n[[piece]]\nname = "I"\n'
                                     'count = 2\ncells = "##"\n'))
    for parts in (1, 2, 3, 10):
        assert _through(problem, parallel.plan_split(problem, parts=parts)) == _unsplit(problem)
        assert parallel.run(problem, workers=0, parts=parts, progress=False).count == 2


# ---------------------------------------------------------------- running


def test_the_same_count_in_this_process_and_on_1_and_2_workers():
    problem = _problem("pentomino-3x20.toml")
    counts = [parallel.run(problem, workers=w, parts=16, progress=False).count for w in (0, 1, 2)]
    assert counts == [8, 8, 8]


def test_listing_on_two_workers_equals_the_unsplit_listing():
    problem = _problem("north-colours.toml")
    got = sorted(parallel.configurations(problem, workers=2, parts=12, progress=False))
    assert got == _unsplit(problem) and len(got) == 32


def test_filters_and_limit(room_problem):
    assert parallel.count(room_problem, workers=0, parts=10, progress=False) == 3  # slidable=quick
    seen = []
    res = parallel.run(room_problem, count_only=False, slidable="none", workers=0, parts=10, limit=7,
                       progress=False, on_result=lambda fin: seen.extend(fin.configurations))
    assert len(seen) == 7 and res.passed == 7 and res.limit_reached
    assert res.count is None and res.stats.stopped > 0  # the rest was not run, so not counted
    res = parallel.run(room_problem, count_only=False, slidable="none", workers=0, parts=10, limit=60,
                       progress=False)
    assert res.passed == res.count == 52 and not res.limit_reached and not res.stats.stopped


def test_api_keywords(room):
    assert zipup.count(room, workers=2) == 3
    assert zipup.count(room, slidable="none", workers=0) == 52
    assert len(set(zipup.enumerate(room, slidable="none", workers=2))) == 52
    assert len(list(zipup.enumerate(room, slidable="none", workers=0, limit=5))) == 5


def test_dask_local_cluster():
    """The same counts through a Dask LocalCluster on 127.0.0.1 (two worker processes)."""
    distributed = pytest.importorskip("distributed")
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None, processes=True) as cluster:
        address = cluster.scheduler_address
        res = parallel.run(_problem("domino-6x6.toml"), scheduler=address, parts=16, progress=False)
        assert res.count == 6728 and "Dask" in res.stats.where and res.stats.subproblems >= 16
        room = _problem("room.toml")
        got = sorted(parallel.configurations(room, slidable="none", scheduler=address, progress=False))
        assert got == _unsplit(room)
        assert zipup.count(room, scheduler=address) == 3
    assert time.perf_counter() - t0 < 300


# ---------------------------------------------------------------- memory


@pytest.mark.parametrize("size,bytes_", [("500M", 500 << 20), ("4G", 4 << 30), ("1.5k", 1536),
                                         ("2GiB", 2 << 30), ("100", 100), (4096, 4096)])
def test_parse_size(size, bytes_):
    assert parallel.parse_size(size) == bytes_


@pytest.mark.parametrize("bad", ["", "lots", "-3M", "0", "4X", "150%"])
def test_parse_size_refuses(bad):
    with pytest.raises(UsageError):
        parallel.parse_size(bad)


def test_a_tiny_budget_cuts_rather_than_fails(room_problem):
    res = parallel.run(room_problem, slidable="none", workers=2, memory="64K", progress=False)
    assert res.count == 52
    assert res.stats.over_budget > 0 and res.stats.subproblems > 1
    assert any("cuts for estimates over it" in ln for ln in res.stats.lines())


def test_a_tiny_budget_on_the_command_line():
    r = _cli("enumerate", "puzzles/room.toml", "--count", "--memory", "200K", "--workers", "2", "--stats")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith("52 configurations, 3 pass slidable=quick")
    line = next(ln for ln in r.stdout.splitlines() if "cuts for estimates over it" in ln)
    assert line.startswith("memory budget: 100.0 KiB per worker")
    assert not line.split(";")[1].strip().startswith("0 cuts")


class HungryPlan(Plan):
    """The sweep, but asking for 1 GiB first while more than ``pieces`` pieces are left."""

    name = "hungry"

    def __init__(self, pieces):
        self.pieces = pieces

    def run(self, problem, **kw):
        if len(problem.pieces) > self.pieces:
            np.ones(1 << 30, dtype=np.uint8)  # more than a worker's budget
        return Sweep().run(problem, **kw)


def test_out_of_memory_in_a_worker_cuts_the_subproblem_again():
    """A worker process runs under an address-space limit; a subproblem that exceeds it is cut
    into its children and those are run instead (no MemoryError reaches the caller)."""
    problem = _problem("pentomino-3x20.toml")
    res = parallel.run(problem, HungryPlan(len(problem.pieces) - 2), workers=2, memory="64M", parts=2,
                       progress=False)
    assert res.count == 8
    assert res.stats.memory_splits > 0


def test_out_of_memory_in_this_process_cuts_too():
    class Fussy(Plan):  # raises MemoryError itself, so that this process stays well
        name = "fussy"

        def run(self, problem, **kw):
            if len(problem.pieces) > 10:
                raise MemoryError
            return Sweep().run(problem, **kw)

    res = parallel.run(_problem("pentomino-3x20.toml"), Fussy(), workers=0, parts=1, progress=False)
    assert res.count == 8 and res.stats.memory_splits > 0 and res.stats.depth >= 2


# ---------------------------------------------------------------- checkpoints and progress


def _blocks(text):
    """Text output as a sorted list of drawings (the ``#k`` numbers differ between runs)."""
    out, cur = [], None
    for ln in text.splitlines():
        if ln.startswith("#"):
            cur = []
            out.append(cur)
        elif cur is not None and ln.strip() and "configuration" not in ln:
            cur.append(ln)
    return sorted("\n".join(b) for b in out)


def test_resume_after_a_torn_run(tmp_path):
    """Simulate a kill at the worst moments: configurations written but not yet recorded, and a
    half-written journal line.  Resuming writes each configuration exactly once."""
    out, ck = tmp_path / "out.txt", tmp_path / "ck.jsonl"
    args = ["enumerate", "puzzles/room.toml", "--filter", "slidable=none", "--workers", "0", "--memory",
            "64K", "-o", out, "--checkpoint", ck]
    assert _cli(*args).returncode == 0
    full = out.read_text()
    lines = ck.read_text().splitlines(keepends=True)
    done = [ln for ln in lines if '"done"' in ln]
    assert len(done) > 6
    keep = lines[:1 + len(done) // 2]
    end = json.loads(keep[-1])["end"]
    ck.write_text("".join(keep) + '{"done": [9, 9], "cou')  # torn last line
    with open(out, "r+") as fh:  # more than recorded was written, the last of it half
        fh.truncate(end + 37)
    r = _cli(*args, "--stats")
    assert r.returncode == 0, r.stderr
    assert "resumed:" in r.stderr
    again = out.read_text()
    assert _blocks(again) == _blocks(full)
    assert sorted(again.splitlines()) == sorted(full.splitlines())
    assert again.splitlines()[-1] == full.splitlines()[-1] == "52 configurations [plan balanced]"


def test_a_checkpoint_of_other_options_is_refused(tmp_path):
    ck = tmp_path / "ck.jsonl"
    assert _cli("enumerate", "puzzles/room.toml", "--count", "--workers", "0", "--checkpoint", ck).returncode == 0
    r = _cli("enumerate", "puzzles/morse.toml", "--count", "--workers", "0", "--checkpoint", ck)
    assert r.returncode == 2 and "another puzzle or other options" in r.stderr


def test_count_resumes_from_the_checkpoint(room_problem, tmp_path):
    ck = tmp_path / "ck.jsonl"
    assert parallel.count(room_problem, slidable="none", workers=0, parts=12, checkpoint=ck, progress=False) == 52
    res = parallel.run(room_problem, slidable="none", workers=0, parts=12, checkpoint=ck, progress=False)
    assert res.count == 52 and res.stats.resumed >= 12 and res.stats.subproblems == 0


def test_progress_bar_goes_to_stderr_only(tmp_path):
    out = tmp_path / "out.jsonl"
    r = _cli("enumerate", "puzzles/north-colours.toml", "--format", "jsonl", "-o", out, "--workers", "2",
             "--memory", "1G", "--progress")
    assert r.returncode == 0, r.stderr
    assert "subproblems" in r.stderr and "configurations" in r.stderr
    text = out.read_text()
    assert "subproblems" not in text and "\r" not in text
    assert len(text.splitlines()) == 32 and all(json.loads(ln)["pieces"] for ln in text.splitlines())
    q = _cli("enumerate", "puzzles/north-colours.toml", "--count", "--workers", "2", "--memory", "1G", "-q")
    assert q.returncode == 0 and "subproblems" not in q.stderr
    assert q.stdout.splitlines()[-1].startswith("32 configurations")


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_kill_and_resume(tmp_path, workers):
    """SIGKILL a listing run midway (workers included), run the same command again, and compare
    with an uninterrupted run line for line after sorting."""
    out, ck, ref = tmp_path / "out.txt", tmp_path / "ck.jsonl", tmp_path / "ref.txt"
    args = [sys.executable, "-m", "zipup", "enumerate", "puzzles/pentomino-5x12.toml", "--plan", "sweep",
            "--workers", str(workers), "--memory", "4G", "--quiet", "-o", str(out), "--checkpoint", str(ck)]
    proc = subprocess.Popen(args, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    killed = False
    while time.monotonic() < deadline and proc.poll() is None:
        if ck.exists() and ck.read_text().count('"done"') >= 3:
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.02)
    proc.wait(timeout=60)
    assert killed, "the run finished before it could be killed"
    first = ck.read_text().count('"done"')
    r = subprocess.run(args[:-4] + ["--stats", "-o", str(out), "--checkpoint", str(ck)], cwd=ROOT,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    assert f"resumed: {first} subproblems were already done" in r.stderr
    u = _cli("enumerate", "puzzles/pentomino-5x12.toml", "--plan", "sweep", "--workers", "2", "--memory", "4G",
             "-o", ref, timeout=900)
    assert u.returncode == 0, u.stderr
    got, want = out.read_text(), ref.read_text()
    assert sorted(got.splitlines()) == sorted(want.splitlines())
    assert _blocks(got) == _blocks(want) and len(_blocks(want)) == 4040


# ---------------------------------------------------------------- the 3x4x5 box


@pytest.mark.slow
def test_box_subtree_on_one_two_workers_and_dask():
    """One part of the box (two placements fixed: about a 300th of it), counted with 1 and 2
    workers and on a Dask LocalCluster: the same count."""
    distributed = pytest.importorskip("distributed")
    box = _problem("box-3x4x5.toml")
    part = parallel.subproblem(box, (0, 0))
    counts = [parallel.run(part.problem, "sweep", workers=w, parts=8, progress=False).count for w in (1, 2)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        counts.append(parallel.run(part.problem, "sweep", scheduler=cluster.scheduler_address, parts=8,
                                   progress=False).count)
    assert counts[0] > 0 and counts == [counts[0]] * 3


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ZIPUP_BOX"), reason="the whole box takes tens of minutes: ZIPUP_BOX=1")
def test_box_476184_configurations():
    assert parallel.count(_problem("box-3x4x5.toml"), "sweep", workers=2, progress=False) == 476184
