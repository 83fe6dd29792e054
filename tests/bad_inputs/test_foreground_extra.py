"""Bad input of every foreground measure beyond the suite (threshold set, size-invariant, multi-scale IoU, HCE,
context measures), functional form and Metric alike: the family's errors.

One matrix (the cases of ``test_threshold_measures.test_bad_inputs`` and a few more) over the threshold,
size-invariant, multi-scale IoU, HCE, context and camouflage context measures; the camouflage measure gets valid RGB
images sized like ``preds`` so that the error comes from ``preds`` / ``target``. Its own ``images`` checks are in
``test_context_measure.test_camouflage_image_required_and_checked``.
"""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch.functional.foreground.context_measure import camouflage_context_measure, context_measure
from segmetrics_torch.functional.foreground.hce import human_correction_effort
from segmetrics_torch.functional.foreground.multiscale_iou import multiscale_iou
from segmetrics_torch.functional.foreground.size_invariance import (
    size_invariant_mae,
    size_invariant_threshold_measures,
)
from segmetrics_torch.functional.foreground.threshold_measures import threshold_measures
from segmetrics_torch.metrics.foreground_extra import (
    CamouflageContextMeasure,
    ContextMeasure,
    HumanCorrectionEffort,
    MultiScaleIoU,
    SizeInvariantMAE,
    SizeInvariantThresholdMeasures,
    ThresholdMeasures,
)

pytest.importorskip("cv2")
pytest.importorskip("sklearn")


def _images_like(preds):
    """Valid RGB images for ``preds`` (a tensor or a list), or a placeholder when ``preds`` is not usable."""
    if isinstance(preds, torch.Tensor) and preds.ndim >= 2:
        h, w = preds.shape[-2:]
        return torch.zeros(preds.shape[0] if preds.ndim == 3 else 1, h, w, 3, dtype=torch.uint8)
    if isinstance(preds, list):
        return [torch.zeros(*p.shape[-2:], 3, dtype=torch.uint8) for p in preds]
    return torch.zeros(1, 4, 4, 3, dtype=torch.uint8)


CALLS = {
    "threshold_measures": threshold_measures,
    "ThresholdMeasures": lambda p, t: ThresholdMeasures().update(p, t),
    "size_invariant_threshold_measures": size_invariant_threshold_measures,
    "SizeInvariantThresholdMeasures": lambda p, t: SizeInvariantThresholdMeasures().update(p, t),
    "size_invariant_mae": size_invariant_mae,
    "SizeInvariantMAE": lambda p, t: SizeInvariantMAE().update(p, t),
    "multiscale_iou": multiscale_iou,
    "MultiScaleIoU": lambda p, t: MultiScaleIoU(with_binary=True).update(p, t),
    "human_correction_effort": human_correction_effort,
    "HumanCorrectionEffort": lambda p, t: HumanCorrectionEffort().update(p, t),
    "context_measure": context_measure,
    "ContextMeasure": lambda p, t: ContextMeasure().update(p, t),
    "camouflage_context_measure": lambda p, t: camouflage_context_measure(p, t, _images_like(p)),
    "CamouflageContextMeasure": lambda p, t: CamouflageContextMeasure().update(p, t, _images_like(p)),
}

CASES = {
    "2-d stack": (torch.zeros(4, 4), torch.zeros(4, 4), ValueError, "`preds` of shape"),
    "shape mismatch": (torch.zeros(1, 4, 4), torch.zeros(1, 4, 5), ValueError, "same shape"),
    "preds above 1": (torch.full((1, 4, 4), 2.0), torch.zeros(1, 4, 4), ValueError, r"\[0, 1\]"),
    "preds NaN": (torch.full((1, 4, 4), float("nan")), torch.zeros(1, 4, 4), ValueError, "finite"),
    "non-binary target": (torch.zeros(1, 4, 4), torch.full((1, 4, 4), 0.5), ValueError, "binary"),
    "complex preds": (torch.zeros(1, 4, 4, dtype=torch.complex64), torch.zeros(1, 4, 4), TypeError, "`preds`"),
    "int64 preds": (torch.zeros(1, 4, 4, dtype=torch.int64), torch.zeros(1, 4, 4), TypeError, "`preds`"),
    "string preds": ("x", torch.zeros(1, 4, 4), TypeError, "`preds`"),
    "list vs tensor": ([torch.zeros(4, 4)], torch.zeros(1, 4, 4), TypeError, "both tensors or both lists"),
    "list lengths": ([torch.zeros(4, 4)], [torch.zeros(4, 4), torch.zeros(4, 4)], ValueError, "as many"),
    "list shape mismatch": ([torch.zeros(4, 4)], [torch.zeros(4, 5)], ValueError, "same shape"),
    "empty batch": (torch.zeros(0, 4, 4), torch.zeros(0, 4, 4), ValueError, "`preds`"),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("call", list(CALLS))
def test_every_new_measure_rejects_bad_input(call, case):
    preds, target, error, match = CASES[case]
    with pytest.raises(error, match=match):
        CALLS[call](preds, target)


@pytest.mark.parametrize("empty_gt", [False, True])
def test_camouflage_context_below_its_patch_size_names_the_arguments(empty_gt: bool) -> None:
    """PySODMetrics fails inside numpy on an image with a side under 5 (its 7x7 patches do not fit the padded
    image); ours says so, naming the arguments, whether the ground truth is empty or not (it returned 0 for an empty
    one)."""
    gt = torch.zeros(1, 4, 8, dtype=torch.uint8)
    if not empty_gt:
        gt[0, 1, 2:5] = 255
    images = torch.full((1, 4, 8, 3), 100, dtype=torch.uint8)
    with pytest.raises(ValueError, match=r"`preds\[0\]` and `images\[0\]` of at least 5x5 pixels .* \(4, 8\)"):
        camouflage_context_measure(gt.clone(), gt, images)


def test_hce_relax_beyond_the_image_changes_nothing() -> None:
    """The relaxation's dilations stop once they add nothing and its erosion after max(H, W) steps: relax=10^7 ran
    for hours on a 16 x 16 image (uninterruptible inside OpenCV), for the value of relax=40."""
    pytest.importorskip("cv2")
    pytest.importorskip("skimage")
    preds = torch.rand(2, 16, 16, generator=torch.Generator().manual_seed(0))
    target = torch.zeros(2, 16, 16, dtype=torch.bool)
    target[:, 4:12, 4:11] = True
    assert torch.equal(
        human_correction_effort(preds, target, relax=10**7), human_correction_effort(preds, target, relax=40)
    )
    # and at every relax below that, PySODMetrics' value: the erosion by the 3x3 cross settles after H + W - 2
    # steps, not max(H, W) + 1 (a cap there gave 2.0 for 0.0 at relax 18 and 30 on this 10 x 10 image; a review)
    py_sod_metrics = pytest.importorskip("py_sod_metrics")
    pred = torch.ones(1, 10, 10)
    pred[0, 0, 0] = 0
    gt = torch.zeros(1, 10, 10, dtype=torch.bool)
    gt[0, 0, 1] = True
    for relax in (5, 11, 12, 18, 30):
        ref = py_sod_metrics.HumanCorrectionEffortMeasure(relax=relax, epsilon=2.0)
        ref.step((pred[0].numpy() * 255).astype("uint8"), (gt[0].numpy() * 255).astype("uint8"))
        ours = human_correction_effort(pred, gt, relax=relax, epsilon=2.0)
        assert float(ours[0]) == float(ref.get_results()["hce"]), relax
