"""Compiled kernels index only inside their arrays, whatever values arrive.

``validate_args=False`` skips the value checks, never memory safety: a value outside what a kernel expects (a
prediction outside [0, 1] with ``normalize=False``, a mask holding 255 instead of 1, a region number outside its
table) must not write outside an array. Every case runs in a subprocess, so that a regression (heap corruption,
SIGSEGV, SIGABRT) fails the test with the child's exit status instead of killing the test run.
"""

import subprocess
import sys
import textwrap

import pytest

FOREGROUND = """
import torch
import segmetrics_torch as st
from segmetrics_torch import functional as F
from segmetrics_torch.ops import use_backend
g = torch.zeros(3, 24, 31, dtype=torch.bool); g[:, 5:15, 8:20] = True
for bad in (1e6, -3.0, 2.0, float("nan"), float("inf"), -float("inf")):
    p = torch.rand(3, 24, 31, dtype=torch.float64)
    p[:, ::3, ::2] = bad
    p[1] = bad
    kw = dict(normalize=False, validate_args=False)
    for fn in (F.mae, F.s_measure, F.weighted_f_measure, F.e_measure, F.f_measure, F.iou, F.dice,
               F.precision_recall, F.foreground_measures):
        fn(p, g, **kw)
        fn(p.float(), g, **kw)
        fn([p[0], p[1, :20]], [g[0], g[1, :20]], **kw)
    for cls in (st.MAE, st.SMeasure, st.WeightedFMeasure, st.FMeasure, st.EMeasure, st.IoU, st.Dice,
                st.ForegroundMeasures):
        m = cls(**kw)
        m.update(p, g)
        m.compute()
    # both paths clamp the bins to [0, 255], so their histograms (and so the F curves) agree
    with use_backend("tensor"):
        tensor = F.f_measure(p, g, **kw)["curve"]
    kernel = F.f_measure(p, g, **kw)["curve"]
    assert torch.equal(tensor, kernel), bad
print("ok")
"""

THINNING = """
import numpy as np
from segmetrics_torch.ops._kernels import thinning as k
from segmetrics_torch.ops.morphology import thinning_luts
lut1, lut2 = thinning_luts()
rng = np.random.default_rng(0)
stack = rng.integers(0, 256, (4, 40, 37)).astype(np.uint8)  # 255 and every other byte, not just {0, 1}
binary = (stack != 0).astype(np.uint8)
k.thin_batch(stack, lut1, lut2)
k.thin_batch(binary, lut1, lut2)
assert ((stack != 0) == (binary != 0)).all()
print("ok")
"""

STACK_COUNTS = """
import numpy as np
from segmetrics_torch.ops.matching import correspondence_counts as boundary_counts
rng = np.random.default_rng(1)
h, w = 30, 41
maps = (rng.random((2, 3, h, w)) > 0.8).astype(np.uint8)
gts = (rng.random((2, 2, h, w)) > 0.9).astype(np.uint8)
n_gt = np.array([2, 2], np.int64)
dims = np.array([[h, w], [h, w]], np.int64)
ones = boundary_counts(maps, gts, n_gt, dims, 0.0075)
big = boundary_counts(maps * 255, gts, n_gt, dims, 0.0075)   # 255 where 1 was: same maps
assert (ones == big).all(), (ones, big)
print("ok")
"""

TABLES = """
import numpy as np
from segmetrics_torch.ops._kernels import tables as k
from segmetrics_torch.ops._kernels.labels import relabel_maps
n = 50
parts = np.full((1, n), 10**9, np.int64); parts[0, :5] = -7      # region numbers far outside the table
anns = np.full((1, n), -(10**9), np.int64); anns[0, 5:9] = 3
out = np.zeros(6, np.int64)
k.dense_table_counts(parts, anns, np.zeros(1, np.int64), np.zeros(1, np.int64), np.array([2], np.int64),
                     np.zeros(1, np.int64), out)
assert out.sum() == 0
masks = np.ones((2, 6, 7), np.uint8)
sig = np.full((6, 7), 10**6, np.int64); sig[0, 0] = -5; sig[1, 1] = 1
per = np.zeros((2, 3), np.int64)
k.signature_counts(masks, sig, 3, per)
assert per[:, 1].tolist() == [1, 1] and per.sum() == 2
labels = np.array([[np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1, 2**62, 2**62]], np.int64)
out = np.empty_like(labels); counts = np.empty(1, np.int64)
relabel_maps(labels, out, counts)
assert out.tolist() == [[0, 1, 2, 3, 4, 4]] and counts.tolist() == [5]
m = np.zeros((1, 8, 8), np.uint8); m[0, 2:6, 2:6] = 1
valid = np.ones((8, 8), np.bool_); near = np.ones((8, 8), np.bool_)
dsig = np.full((8, 8), 99, np.int64)
fg_per_sig = np.zeros((1, 2), np.int64); gt_match = np.zeros((1, 2), np.int64); fg_count = np.zeros(1, np.int64)
k.mask_boundary_counts(m, valid, near, dsig, 2, np.array([10**7, 3, -4], np.int64), np.array([0, 77, 1], np.int64),
                       np.array([0], np.int64), np.array([0], np.int64), fg_per_sig, gt_match, fg_count)
assert fg_per_sig.sum() == 0 and gt_match.sum() == 0 and fg_count[0] > 0
print("ok")
"""

CASES = {"foreground": FOREGROUND, "thinning": THINNING, "stack_counts": STACK_COUNTS, "tables": TABLES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_is_memory_safe_on_out_of_range_values(name):
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CASES[name])],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"child exited {proc.returncode}\n{proc.stdout}\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip().endswith("ok")
