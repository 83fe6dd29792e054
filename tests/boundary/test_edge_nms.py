"""Edge NMS (``ops.edge_nms``): bit-for-bit parity with pyEdgeEval's ``fast_nms`` on the BSDS sample maps and with
the numpy oracle on random maps; the ``nms`` option of the boundary benchmark against pyEdgeEval's ``apply_nms=True``;
bad inputs.

Tolerance: none. The smoothing sums run in scipy's order and the multiplier is rounded to float32 as pyEdgeEval's
Cython wrapper does, so the outputs are compared with ``assert_array_equal`` (max |diff| = 0). The one freedom left is
the last bit of ``atan`` (numpy's vectorised ``arctan`` vs the C library's, used by our kernel and the oracle): it
could flip a suppression decision only where ``m * E`` and the interpolated neighbour agree to ~1e-15, which none of
the sample maps has (if a future numpy changes that, the failure names the pixel count).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from scipy import ndimage

from segmetrics_torch import BoundaryPR
from segmetrics_torch.functional.boundary import boundary_pr, boundary_pr_counts
from segmetrics_torch.io import read_bsds_ground_truth, read_gray, read_mat_array
from segmetrics_torch.ops.edge_nms import edge_nms, triangle_filter
from segmetrics_torch.reference import edge_nms as ref
from tests.conftest import against_a_randomised_peer, shared_path

pyedgeeval_nms = pytest.importorskip("pyEdgeEval.preprocess").fast_nms


def _ours(x: np.ndarray) -> np.ndarray:
    return edge_nms(torch.from_numpy(x)[None])[0].numpy()


def _sample_ids() -> list[str]:
    ids = sorted(p.stem for p in shared_path("bsds_sample", "BSDS500", "ucm2", "test").glob("*.mat"))
    assert len(ids) == 20
    return ids


def _soft_maps(image_id: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The sample's gPb-owt-ucm pixel grid and detector-like versions whose levels (nearly) all differ."""
    ucm = read_mat_array(shared_path("bsds_sample", "BSDS500", "ucm2", "test", f"{image_id}.mat"), "ucm2")
    grid = np.ascontiguousarray(ucm[2::2, 2::2], dtype=np.float64)
    blur = ndimage.gaussian_filter(grid, 1.5)
    blur = blur / blur.max()
    noisy = np.clip(blur + rng.normal(0, 0.02, blur.shape), 0, 1)
    return {
        "ucm2 grid": grid,
        "blurred": blur,
        "blurred + noise": noisy,
        "uint8": np.round(255 * noisy).astype(np.uint8),
    }


def test_parity_with_pyedgeeval_on_the_bsds_sample():
    """80 maps (20 images x 4 versions) and the 5 BSR bench PNG soft maps: identical to pyEdgeEval, max |diff| 0."""
    rng = np.random.default_rng(0)
    cases = []
    for image_id in _sample_ids():
        cases += [(f"{image_id} {k}", v) for k, v in _soft_maps(image_id, rng).items()]
    for image_id in ("2018", "3063", "5096", "6046", "8068"):
        cases.append(
            (f"bench png {image_id}", read_gray(shared_path("bsds_sample", "bench", "data", "png", f"{image_id}.png")))
        )
    assert len(np.unique(cases[2][1])) > 0.5 * cases[2][1].size  # the blurred maps: (nearly) every level distinct
    for name, x in cases:
        expected = pyedgeeval_nms(x)
        got = _ours(x)
        np.testing.assert_array_equal(edge_nms(torch.from_numpy(x)[None], backend="torch")[0].numpy(), got)
        assert got.dtype == np.float64 and got.shape == x.shape
        differ = int((got != expected).sum())
        assert differ == 0, f"{name}: {differ} pixels differ, max |diff| {np.abs(got - expected).max():g}"
    # batched (the parallel kernel) equals one map at a time; uint8 equals its float64 / 255 twin
    batch = torch.from_numpy(np.stack([x for name, x in cases[:8] if x.dtype == np.float64]))
    one_by_one = np.stack([_ours(x) for x in batch.numpy()])
    for backend in ("numba", "torch"):
        np.testing.assert_array_equal(edge_nms(batch, backend=backend).numpy(), one_by_one)
    u8 = cases[3][1]
    np.testing.assert_array_equal(_ours(u8), _ours(u8 / 255.0))


@st.composite
def soft_maps(draw, max_side=14):
    h = draw(st.integers(1, max_side))
    w = draw(st.integers(1, max_side))
    kind = draw(st.sampled_from(["random", "levels", "constant", "one pixel", "sparse"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    if kind == "random":
        x = rng.random((h, w))
    elif kind == "levels":  # few levels: ties everywhere
        x = rng.integers(0, 4, (h, w)) / 3
    elif kind == "constant":
        x = np.full((h, w), draw(st.sampled_from([0.0, 0.5, 1.0])))
    elif kind == "one pixel":
        x = np.zeros((h, w))
        x[rng.integers(h), rng.integers(w)] = draw(st.floats(0.01, 1.0))
    else:
        x = rng.random((h, w)) * (rng.random((h, w)) < 0.2)
    if draw(st.booleans()):  # border pixels set: the ramp and the clamped interpolation
        x[0, :] = x[-1, :] = draw(st.floats(0.0, 1.0))
    return x


@given(soft_maps(), st.integers(0, 2), st.integers(0, 6))
def test_equals_numpy_oracle_on_random_maps(x, radius, border):
    """Tiny maps (down to 1x1, smaller than the 4-pixel smoothing radius), constant, one-pixel, tied levels."""
    got = edge_nms(torch.from_numpy(x)[None], radius=radius, border=border)[0].numpy()
    np.testing.assert_array_equal(got, ref.edge_nms(x, r=radius, s=border))
    by_tensor_ops = edge_nms(torch.from_numpy(x)[None], radius=radius, border=border, backend="torch")[0].numpy()
    np.testing.assert_array_equal(by_tensor_ops, got)
    assert ((got >= 0) & (got <= 1)).all()
    if min(x.shape) >= 2 and radius == 1 and border == 5:  # pyEdgeEval needs 2 samples per axis (numpy.gradient)
        np.testing.assert_array_equal(got, pyedgeeval_nms(x))


@given(soft_maps(max_side=9), st.sampled_from([1, 4]))
def test_triangle_filter_equals_oracle(x, r):
    np.testing.assert_array_equal(triangle_filter(torch.from_numpy(x)[None], r)[0].numpy(), ref.conv_tri(x, r))


def test_documented_edge_cases():
    # a constant map keeps its smoothed value inside and is ramped down over `border` pixels at the border
    out = _ours(np.full((20, 30), 0.5))
    assert out[10, 15] == 0.5 and out[0].max() == 0 and out[:, 0].max() == 0
    assert out[10, 1] == pytest.approx(0.5 * 1 / 5) and out[2, 15] == pytest.approx(0.5 * 2 / 5)
    np.testing.assert_array_equal(_ours(np.full((20, 30), 0.5)), _ours(np.full((20, 30), 0.5)))
    assert _ours(np.zeros((8, 9))).max() == 0
    # one row / one column / one pixel: defined (pyEdgeEval raises), equal to the oracle, border ramp switched off
    for shape in ((1, 7), (7, 1), (1, 1)):
        x = np.linspace(0.1, 0.9, int(np.prod(shape))).reshape(shape)
        np.testing.assert_array_equal(_ours(x), ref.edge_nms(x))
    # a three-pixel-wide ridge keeps its crest only
    ridge = np.zeros((12, 12))
    ridge[:, 5], ridge[:, 6], ridge[:, 7] = 0.5, 1.0, 0.5
    assert (_ours(ridge)[6] > 0).nonzero()[0].tolist() == [6]
    # (B, 1, H, W) is read as (B, H, W)
    x = torch.rand(2, 1, 9, 10, dtype=torch.float64)
    torch.testing.assert_close(edge_nms(x), edge_nms(x[:, 0]), rtol=0, atol=0)


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (torch.full((1, 8, 8), float("nan")), ValueError, "`edges`.*finite"),
        (torch.full((1, 8, 8), 1.5), ValueError, r"`edges`.*\[0, 1\]"),
        (torch.full((1, 8, 8), -0.1), ValueError, r"`edges`.*\[0, 1\]"),
        (torch.ones(1, 8, 8, dtype=torch.int32), TypeError, "`edges`.*dtype"),
        (torch.ones(1, 8, 8, dtype=torch.bool), TypeError, "`edges`.*dtype"),
        (torch.rand(8, 8), ValueError, r"`edges`.*\(B, H, W\)"),
        (torch.rand(2, 3, 8, 8), ValueError, r"`edges`.*\(B, H, W\)"),
        (torch.rand(0, 8, 8), ValueError, "`edges`.*empty batch"),
        (torch.rand(1, 0, 8), ValueError, "`edges`.*non-empty"),
        (np.zeros((1, 8, 8)), TypeError, "`edges`.*torch.Tensor"),
    ],
)
def test_bad_inputs(value, error, match):
    with pytest.raises(error, match=match):
        edge_nms(value)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"radius": -1}, ValueError, "`radius`"),
        ({"radius": 1.5}, ValueError, "`radius`"),
        ({"border": True}, ValueError, "`border`"),
        ({"multiplier": 0.0}, ValueError, "`multiplier`"),
        ({"multiplier": float("nan")}, ValueError, "`multiplier`"),
        ({"validate_args": "yes"}, TypeError, "`validate_args`"),
        ({"backend": "cuda"}, ValueError, "`backend`"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        edge_nms(torch.rand(1, 8, 8), **kwargs)


KERNEL_SAFETY = """
import numpy as np
from segmetrics_torch.ops._kernels import edge_nms as k
rng = np.random.default_rng(0)
for shape in ((3, 1, 1), (2, 1, 9), (2, 9, 1), (2, 2, 2), (2, 17, 13)):
    for bad in (np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0, 7.0, -2.0):
        maps = rng.random(shape); maps[..., ::3, ::2] = bad  # the fused kernel on values outside [0, 1]
        k.nms_batch(maps, 2, 5, 1.01)
        one = np.empty_like(maps[0]); k.nms_one(maps[0], one, 4, 9, 1.01)
        edge = rng.random(shape); edge[..., ::2, ::3] = bad if np.isfinite(bad) or bad == 0.0 else 0.5
        slope = rng.normal(0, 1e3, shape); slope[..., ::2, :] = bad
        out = k.suppress_batch(edge, slope, 3, 7, 1.01)
        out1 = np.empty_like(edge[0]); k.suppress_one(edge[0], slope[0], out1, 5, 0, 1.01)
        edge[..., 1::2, :] = np.nan  # NaN strengths: compared, never used as an index
        k.suppress_batch(edge, slope, 2, 3, 1.01)
print("ok")
"""


def test_kernel_reads_stay_inside_the_image_whatever_the_values():
    """Non-finite / huge slopes and strengths, 1-pixel-wide maps, a radius beyond the image: no read outside."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KERNEL_SAFETY)], capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-2000:]


# ------------------------------------------------------------------------------------ the boundary benchmark


def _sample_image(image_id: str = "100007"):
    rng = np.random.default_rng(1)
    soft = _soft_maps(image_id, rng)["blurred + noise"]
    gt = read_bsds_ground_truth(shared_path("bsds_sample", "BSDS500", "data", "groundTruth", "test", f"{image_id}.mat"))
    return soft, gt.boundaries


def test_boundary_pr_nms_equals_nms_then_boundary_pr():
    soft, gts = _sample_image()
    preds, target = torch.from_numpy(soft)[None], torch.from_numpy(gts)[None]
    with_option = boundary_pr_counts(preds, target, thresholds=9, nms=True)
    by_hand = boundary_pr_counts(edge_nms(preds), target, thresholds=9)
    for a, b in zip(with_option, by_hand, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    res = boundary_pr([preds[0]], [target[0]], thresholds=9, nms=True)
    np.testing.assert_array_equal(res["f"].numpy(), boundary_pr(edge_nms(preds), target, thresholds=9)["f"].numpy())
    metric = BoundaryPR(thresholds=9, nms=True)
    metric.update(preds, target)
    np.testing.assert_array_equal(metric.compute()["f"].numpy(), res["f"].numpy())
    # NMS changes the result on such a blurred map (it is what the option is for)
    assert not torch.equal(boundary_pr_counts(preds, target, thresholds=9).sum_p, with_option.sum_p)


def test_boundary_pr_nms_matches_pyedgeeval_apply_nms():
    """pyEdgeEval ``apply_nms=True`` on a sample image, 9 thresholds: sumR and sumP identical (NMS, thresholds and
    thinning agree exactly); R, P, F per threshold within 2e-3 and the best F within 1e-3 (its CSA matcher is
    randomised and not always maximum, see test_bsds_reference_outputs.py: over repeated runs its recall moves by
    ~1e-3; measured here: |dR| 1.1e-3, |dP| 1.0e-3, |dF| 8e-4 at worst over the 9 thresholds)."""
    from pyEdgeEval.common.binary_label import evaluate_boundaries as ped

    soft, gts = _sample_image()
    thr = np.linspace(1 / 10, 9 / 10, 9)
    ours = boundary_pr_counts(torch.from_numpy(soft)[None], torch.from_numpy(gts)[None], thresholds=thr, nms=True)
    against_a_randomised_peer(lambda: _compare_with_pyedgeeval_run(ped, ours, soft, gts, thr))


def _compare_with_pyedgeeval_run(ped, ours, soft, gts, thr) -> None:
    t_cnt_r, t_sum_r, t_cnt_p, t_sum_p = ped.evaluate_boundaries_threshold_multiple_gts(
        thresholds=thr, pred=soft, gts=list(gts), max_dist=0.0075, apply_thinning=True, apply_nms=True
    )
    np.testing.assert_array_equal(ours.sum_r[0].numpy(), t_sum_r)
    np.testing.assert_array_equal(ours.sum_p[0].numpy(), t_sum_p)
    assert (ours.cnt_r[0].numpy() >= t_cnt_r).all()  # a maximum matching matches at least as many
    r_o, p_o = ours.cnt_r[0].numpy() / t_sum_r, ours.cnt_p[0].numpy() / np.maximum(t_sum_p, 1)
    r_t, p_t = t_cnt_r / t_sum_r, t_cnt_p / np.maximum(t_sum_p, 1)
    np.testing.assert_allclose(r_o, r_t, atol=2e-3, rtol=0)
    np.testing.assert_allclose(p_o, p_t, atol=2e-3, rtol=0)
    f_o, f_t = 2 * p_o * r_o / np.maximum(p_o + r_o, 1e-12), 2 * p_t * r_t / np.maximum(p_t + r_t, 1e-12)
    np.testing.assert_allclose(f_o, f_t, atol=2e-3, rtol=0)
    assert abs(f_o.max() - f_t.max()) <= 1e-3  # the best F over the thresholds (measured: 8e-4 per threshold)


@pytest.mark.parametrize("input_format", ["ucm2", "stack"])
def test_nms_with_contour_formats_is_an_error(input_format):
    with pytest.raises(ValueError, match="`nms=False` with input_format"):
        BoundaryPR(input_format=input_format, nms=True)
    pred = torch.zeros(1, 9, 11) if input_format == "ucm2" else torch.zeros(1, 2, 4, 5, dtype=torch.bool)
    with pytest.raises(ValueError, match="`nms=False` with input_format"):
        boundary_pr_counts(
            pred, torch.zeros(1, 1, 4, 5, dtype=torch.bool), thresholds=2, input_format=input_format, nms=True
        )
    with pytest.raises(TypeError, match="`nms`"):
        BoundaryPR(nms=1)


def test_docstring_examples_run():
    import doctest

    import segmetrics_torch.ops.edge_nms as module

    result = doctest.testmod(module, extraglobs={"torch": torch}, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


# ----------------------------------------------------------------------------------------------------- the CLI


def _write_cli_data(root):
    """Two 40x50 images: a rectangle's boundary as GT (PNG, 255 = boundary) and a blurred, shifted uint8 soft map."""
    from PIL import Image

    rng = np.random.default_rng(3)
    preds, gts = root / "pred", root / "gt"
    preds.mkdir()
    gts.mkdir()
    soft_maps, gt_maps = [], []
    for k, stem in enumerate(("a", "b")):
        gt = np.zeros((40, 50), bool)
        gt[8 + k, 6:44] = gt[31, 6:44] = gt[8 + k : 32, 6] = gt[8 + k : 32, 43] = True
        soft = ndimage.gaussian_filter(np.roll(gt, 1, axis=1).astype(float), 1.2) + rng.uniform(0, 0.05, gt.shape)
        soft = np.round(255 * soft / soft.max()).astype(np.uint8)
        Image.fromarray(gt.astype(np.uint8) * 255).save(gts / f"{stem}.png")
        Image.fromarray(soft).save(preds / f"{stem}.png")
        soft_maps.append(torch.from_numpy(soft))
        gt_maps.append(torch.from_numpy(gt)[None])
    return preds, gts, soft_maps, gt_maps


def test_cli_nms_flag_subprocess(tmp_path):
    """``segmetrics evaluate boundary --nms`` in a subprocess equals ``boundary_pr(..., nms=True)`` (JSON report)."""
    import json

    preds, gts, soft_maps, gt_maps = _write_cli_data(tmp_path)
    report = tmp_path / "report.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "segmetrics_torch.app.cli",
            "evaluate",
            "boundary",
            "--pred",
            str(preds),
            "--gt",
            str(gts),
            "--thresholds",
            "9",
            "--max-dist",
            "2",
            "--nms",
            "--no-progress",
            "--json",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "edge NMS" in result.stdout
    res = json.loads(report.read_text())
    assert res["settings"]["nms"] is True
    expected = boundary_pr(soft_maps, gt_maps, thresholds=9, max_dist=2, nms=True)
    without = boundary_pr(soft_maps, gt_maps, thresholds=9, max_dist=2)
    got = res["results"]
    assert got["ods"]["f"] == pytest.approx(float(expected["ods"]["f"]), abs=1e-12)
    np.testing.assert_allclose(got["f"], expected["f"].numpy(), rtol=0, atol=1e-12)
    assert not np.allclose(expected["f"].numpy(), without["f"].numpy())  # the flag changes the result


def test_cli_nms_errors(tmp_path, capsys):
    """--nms with ucm2 predictions, and options.boundary.nms that is not a bool: one error line, exit status 2."""
    import scipy.io

    from segmetrics_torch.app.cli import main

    _, gts, soft_maps, _ = _write_cli_data(tmp_path)
    ucm_dir = tmp_path / "ucm2"
    ucm_dir.mkdir()
    for stem, soft in zip(("a", "b"), soft_maps, strict=True):
        ucm2 = np.zeros((81, 101))
        ucm2[2::2, 2::2] = soft.numpy() / 255
        scipy.io.savemat(ucm_dir / f"{stem}.mat", {"ucm2": ucm2})
    status = main(["evaluate", "boundary", "--no-progress", "--pred", str(ucm_dir), "--gt", str(gts), "--nms"])
    assert status == 2 and "--nms applies to soft boundary maps" in capsys.readouterr().err
    config = tmp_path / "eval.yaml"
    config.write_text(
        f"families: [boundary]\ndatasets: {{D: {gts}}}\nmethods: {{m: {ucm_dir}}}\n"
        f"options: {{boundary: {{nms: yes please}}}}\noutput: {tmp_path / 'out'}\n"
    )
    assert main(["evaluate", "--config", str(config), "--no-progress"]) == 2
    assert "options.boundary.nms: expected true or false" in capsys.readouterr().err
    config.write_text(config.read_text().replace("yes please", "true"))
    assert main(["evaluate", "--config", str(config), "--no-progress"]) == 2
    assert "options.boundary.nms" in capsys.readouterr().err
