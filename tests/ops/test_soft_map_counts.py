"""The staged, threaded soft-map counts and the compilation of their matching kernel in a second process.

The counts of thresholded soft maps (:mod:`segmetrics_torch.ops.soft_map_counts`, stages spread over threads, in
waves of images) must equal those of the binary-stack path (each level's map matched on its own by
``level_counts``, a different kernel and no union lists), whatever the threads and the waves. The matching kernel
is compiled ahead in a second process on a first run; that only helps if the calls have exactly the declared
signature, and the helper must really fill numba's cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba.core import sigutils

from segmetrics_torch.ops import soft_map_counts as smc
from segmetrics_torch.ops._kernels import _compile_aside, correspondence
from segmetrics_torch.ops.matching import correspondence_counts


def _soft_batch(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    # images of different sizes padded to one (H, W); soft maps with a few hundred distinct values around random
    # ridges; 1-4 annotators each, drawn near the ridges
    rng = np.random.default_rng(seed)
    sizes = [(31, 40), (40, 27), (22, 22), (40, 40)]
    hh, ww = 40, 40
    pb = np.zeros((len(sizes), hh, ww))
    gts = np.zeros((len(sizes), 4, hh, ww), np.uint8)
    n_gt = np.array([1, 3, 2, 4], np.int64)
    for b, (h, w) in enumerate(sizes):
        y, x = np.mgrid[:h, :w]
        ridge = np.abs(np.sin(x / (3 + b)) * h / 3 + h / 2 - y)
        pb[b, :h, :w] = np.clip(1 - ridge / 6 + rng.normal(0, 0.15, (h, w)), 0, 1)
        for a in range(n_gt[b]):
            gts[b, a, :h, :w] = (ridge + rng.normal(0, 1.0, (h, w))) < 0.8
    return pb, gts, n_gt, np.array(sizes, np.int64)


def _stack_counts(pb: np.ndarray, gts: np.ndarray, n_gt: np.ndarray, dims: np.ndarray, t: np.ndarray) -> np.ndarray:
    maps = (pb[:, None] >= t[None, :, None, None]).astype(np.uint8)
    return correspondence_counts(maps, gts, n_gt, dims, 0.0075 * 10)


@pytest.mark.parametrize("seed", [0, 1])
def test_soft_maps_count_as_the_binary_stack_whatever_the_threads_and_waves(seed, monkeypatch):
    import numba

    pb, gts, n_gt, dims = _soft_batch(seed)
    t = np.linspace(0.02, 0.98, 25)
    expected = _stack_counts(pb, gts, n_gt, dims, t)
    assert expected[0].sum() > 0 and expected[2].sum() > expected[1].sum() > 0  # matches, and misses
    seen = []
    for threads, wave in [(1, smc.WAVE_PIXELS), (2, smc.WAVE_PIXELS), (3, 64), (1, 1)]:
        monkeypatch.setattr(smc, "WAVE_PIXELS", wave)
        monkeypatch.setattr(numba, "get_num_threads", lambda threads=threads: threads)
        got = correspondence_counts(pb, gts, n_gt, dims, 0.0075 * 10, thresholds=t)
        np.testing.assert_array_equal(got, expected)
        seen.append((threads, wave))
    assert len(seen) == 4


def test_unsorted_thresholds_and_a_subset_of_tasks():
    pb, gts, n_gt, dims = _soft_batch(2)
    t = np.array([0.7, 0.1, 0.5, 0.3, 0.9, 0.5])  # unsorted, one repeated
    np.testing.assert_array_equal(
        correspondence_counts(pb, gts, n_gt, dims, 0.075, thresholds=t), _stack_counts(pb, gts, n_gt, dims, t)
    )


def test_the_waves_split_as_documented(monkeypatch):
    monkeypatch.setattr(smc, "WAVE_PIXELS", 10)
    task_image = np.array([0, 0, 1, 3, 3], np.int64)
    n_on = np.array([3, 2, 20, 1, 1], np.int64)
    # per image (+ 1 per task): 7, 21 (alone: above the bound), 0, 4
    assert smc._waves(task_image, n_on, 4) == [(0, 1), (1, 2), (2, 4)]


def test_the_matching_kernel_is_called_with_its_declared_signature():
    pb, gts, n_gt, dims = _soft_batch(3)
    correspondence_counts(pb, gts, n_gt, dims, 0.075, thresholds=np.linspace(0.1, 0.9, 5))
    declared = tuple(sigutils.normalize_signature(correspondence.INDEXED_TASK_COUNTS_SIGNATURE)[0])
    # one compiled (or cache-loaded) signature, the declared one: the helper's work is what the call loads
    assert correspondence.indexed_task_counts.signatures == [declared]


_KERNEL_MODULE = """
import numba

@numba.njit(cache=True)
def twice(x):
    return 2 * x
"""


def test_a_kernel_compiled_aside_is_loaded_from_the_cache_not_compiled(tmp_path, monkeypatch):
    # in a fresh process (its own numba cache): the helper compiles the kernel, the process loads it
    (tmp_path / "aside_probe_kernels.py").write_text(_KERNEL_MODULE)
    script = textwrap.dedent(
        """
        import sys
        from segmetrics_torch.ops._kernels import _compile_aside
        import aside_probe_kernels as m
        _compile_aside._busy = lambda: False  # whatever the machine's load
        helper = _compile_aside.compile_aside(m.twice, "int64(int64)")
        assert _compile_aside.compile_aside(m.twice, "int64(int64)") is helper  # one helper per kernel and signature
        print("started", helper.process is not None)
        print("compiled aside", helper.wait())
        assert m.twice(21) == 42
        print("hits", sum(m.twice.stats.cache_hits.values()), "misses", sum(m.twice.stats.cache_misses.values()))
        again = _compile_aside.compile_aside(m.twice, "int64(int64)")
        print("again", again.process is not None)
        """
    )
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path(__file__).resolve().parents[2])]),
    }
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False, cwd=tmp_path, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    if _compile_aside._cpus() < 2:
        assert "started False" in proc.stdout
        return
    assert "started True" in proc.stdout and "compiled aside True" in proc.stdout
    assert "hits 1 misses 0" in proc.stdout  # loaded from what the helper cached
    assert "again False" in proc.stdout  # compiled here now: no second helper


def test_no_helper_where_it_cannot_help(monkeypatch):
    kernel = correspondence.indexed_task_counts
    signature = correspondence.INDEXED_TASK_COUNTS_SIGNATURE
    monkeypatch.setattr(_compile_aside, "_cpus", lambda: 1)
    assert _compile_aside.compile_aside(kernel, signature).process is None
    monkeypatch.setattr(_compile_aside, "_cpus", lambda: 2)
    monkeypatch.setattr(_compile_aside.os, "getloadavg", lambda: (1.5, 1.0, 1.0))  # no idle CPU
    assert _compile_aside.compile_aside(kernel, signature).process is None
    monkeypatch.setattr(_compile_aside.os, "getloadavg", lambda: (0.2, 1.0, 1.0))
    assert _compile_aside.compile_aside(kernel.py_func, signature).process is None  # NUMBA_DISABLE_JIT's plain one
    pb, gts, n_gt, dims = _soft_batch(4)
    correspondence_counts(pb, gts, n_gt, dims, 0.075, thresholds=np.array([0.5]))  # compiled or loaded here
    helper = _compile_aside.compile_aside(kernel, signature)
    assert helper.process is None and not helper.wait()


def test_compile_aside_switched_off_starts_no_helper(monkeypatch):
    """``ops.set_compile_aside(False)`` (a function, not an environment variable): the op asks no helper of
    :func:`compile_aside`, from :func:`compile_ahead` as from :func:`soft_map_counts`; on again, it does."""
    from segmetrics_torch.ops import compile_aside_enabled, set_compile_aside

    asked: list[str] = []
    monkeypatch.setattr(
        _compile_aside, "compile_aside", lambda kernel, signature: asked.append(signature) or _compile_aside.Aside(None)
    )
    assert compile_aside_enabled()
    set_compile_aside(False)
    try:
        smc.compile_ahead()
        assert smc._matching_aside().process is None and asked == []
    finally:
        set_compile_aside(True)
    smc.compile_ahead()
    assert asked == [correspondence.INDEXED_TASK_COUNTS_SIGNATURE]
    with pytest.raises(TypeError, match="enabled"):
        set_compile_aside("no")  # type: ignore[arg-type]


def test_stop_ends_a_running_helper_and_forgets_it():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    key = ("m", "f", "sig")
    helper = _compile_aside.Aside(process, key)
    _compile_aside._RUNNING[key] = helper
    helper.stop()
    assert process.poll() is not None and key not in _compile_aside._RUNNING
