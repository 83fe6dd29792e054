"""Each protocol switch on a small drawn case where it changes the result (the cases of docs/semantic-boundaries.md),
and the presets' values as pyEdgeEval 0.2.8 sets them."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch.functional.semantic_boundary import (
    regenerate_boundaries,
    semantic_boundary_counts,
    semantic_boundary_protocol,
)

T = [0.5]


def _square() -> tuple[torch.Tensor, torch.Tensor]:
    seg = torch.full((12, 12), 255, dtype=torch.int64)
    seg[2:10, 2:10] = 0  # class 0: a square
    gt = regenerate_boundaries(seg, [0], radius=1, thin=True)  # (1, 12, 12)
    return seg, gt


def test_kill_internal_drops_predictions_inside_the_region_far_from_edges() -> None:
    seg, gt = _square()
    pb = gt.double() * 0.9
    pb[0, 6, 5:8] = 0.9  # inside the square, 2+ px from its edges
    pb[0, 0, 3:6] = 0.9  # outside the region: never killed
    kw = {"thresholds": T, "max_dist": 1.0, "thin": False}
    off = semantic_boundary_counts(pb[None], gt[None], seg[None], kill_internal=False, **kw)
    on = semantic_boundary_counts(pb[None], gt[None], seg[None], kill_internal=True, **kw)
    assert int(off.sum_p) - int(on.sum_p) == 3
    assert int(on.cnt_p) == int(off.cnt_p) and int(on.cnt_r) == int(off.cnt_r)
    # thinned maps: killed after thinning, the same three pixels
    on_thin = semantic_boundary_counts(pb[None], gt[None], seg[None], kill_internal=True, **{**kw, "thin": True})
    off_thin = semantic_boundary_counts(pb[None], gt[None], seg[None], kill_internal=False, **{**kw, "thin": True})
    assert int(off_thin.sum_p) - int(on_thin.sum_p) == 3


def test_kill_internal_follows_the_evaluated_class() -> None:
    """The region is ``segmentation == k`` for channel k (MATLAB), not class k - 1's (pyEdgeEval on labelIds)."""
    seg, gt = _square()
    pb = gt.double() * 0.9
    pb[0, 6, 5:8] = 0.9
    kw = {"thresholds": T, "max_dist": 1.0, "thin": False, "kill_internal": True}
    killed = semantic_boundary_counts(pb[None], gt[None], seg[None], **kw)
    other = semantic_boundary_counts(pb[None], gt[None], torch.where(seg == 0, 1, seg)[None], **kw)
    assert int(other.sum_p) - int(killed.sum_p) == 3


def test_skip_if_nonexistent_drops_false_positives_of_absent_classes() -> None:
    _seg, gt = _square()
    preds = torch.stack([gt.double() * 0.9, torch.zeros(1, 12, 12, dtype=torch.float64)])
    preds[1, 0, 5, 2:9] = 0.9  # a class absent from image 2 is predicted there
    gts = torch.stack([gt, torch.zeros_like(gt)])
    kw = {"thresholds": T, "max_dist": 1.0}
    off = semantic_boundary_counts(preds, gts, skip_if_nonexistent=False, **kw)
    on = semantic_boundary_counts(preds, gts, skip_if_nonexistent=True, **kw)
    assert off.sum_p[1].item() == 7 and on.sum_p[1].item() == 0
    assert off.sum_p[0].item() == on.sum_p[0].item()


def test_instance_sensitivity_adds_the_border_between_two_instances() -> None:
    seg = torch.full((10, 14), 255, dtype=torch.int64)
    seg[2:8, 2:12] = 0
    inst = torch.zeros_like(seg)
    inst[2:8, 2:7] = 1
    inst[2:8, 7:12] = 2  # two touching instances of class 0
    plain = regenerate_boundaries(seg, [0], radius=1, thin=True)
    sensitive = regenerate_boundaries(seg, [0], radius=1, thin=True, instances=inst, instance_classes={1: 0, 2: 0})
    assert not plain[0, 3:7, 6:8].any() and sensitive[0, 3:7, 6:8].any()
    pb = sensitive.double() * 0.9  # a detector that draws the border between the instances
    kw = {"thresholds": T, "max_dist": 1.0}
    c_plain = semantic_boundary_counts(pb[None], plain[None], **kw)
    c_sens = semantic_boundary_counts(pb[None], sensitive[None], **kw)
    p_plain = c_plain.cnt_p.item() / c_plain.sum_p.item()
    assert c_sens.cnt_p.item() == c_sens.sum_p.item() and p_plain < 1


def test_ignore_border_zeroes_predictions_in_the_frame() -> None:
    _seg, gt = _square()
    pb = gt.double() * 0.9
    pb[0, 0, :] = 0.9
    kw = {"thresholds": T, "max_dist": 1.0, "thin": False}
    assert (
        semantic_boundary_counts(pb[None], gt[None], **kw).sum_p.item()
        - semantic_boundary_counts(pb[None], gt[None], ignore_border=1, **kw).sum_p.item()
        == 12
    )


@pytest.mark.parametrize(
    ("preset", "dataset", "thin", "inst", "expected"),
    [
        ("pre-seal", "sbd", True, None, (0.02, True, True, False, 5, 1.0, 1.0)),
        ("post-seal", "sbd", False, None, (0.02, False, False, True, 5, 1.0, 2.0)),
        ("post-seal", "sbd", True, False, (0.02, True, True, False, 5, 1.0, 1.0)),
        ("post-seal", "cityscapes", True, None, (0.0035, False, False, True, 0, 0.5, 1.0)),
        ("pre-seal", "cityscapes", False, None, (0.02, True, True, False, 0, 0.5, 2.0)),
        ("matlab", "sbd", True, None, (0.02, True, True, False, 0, 1.0, 1.0)),
    ],
)
def test_presets(preset, dataset, thin, inst, expected) -> None:
    p = semantic_boundary_protocol(preset, dataset, thin=thin, instance_sensitive=inst)
    got = (p.max_dist, p.kill_internal, p.skip_if_nonexistent, p.instance_sensitive, p.ignore_border, p.scale, p.radius)
    assert got == expected


def test_preset_errors_and_overrides() -> None:
    with pytest.raises(ValueError, match="pre-seal"):
        semantic_boundary_protocol("pre-seal", instance_sensitive=True)
    with pytest.raises(ValueError, match="dataset='sbd'"):
        semantic_boundary_protocol("matlab", "cityscapes")
    with pytest.raises(ValueError, match="preset"):
        semantic_boundary_protocol("seal")  # type: ignore[arg-type]
    p = semantic_boundary_protocol("post-seal", max_dist=0.01, thresholds=9)
    assert p.max_dist == 0.01 and p.thresholds == 9
    with pytest.raises(ValueError, match="max_dist"):
        p.replace(max_dist=-1)
    with pytest.raises(TypeError, match="thin"):
        p.replace(thin="yes")
