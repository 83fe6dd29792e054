"""Arguments whose size, not the images', set the memory or the time (found by a fuzzing pass of the public API).

Each was accepted and then asked for gigabytes or hours: a label map's ``num_classes`` (per-class states and work),
the boundary benchmark's number of ``thresholds``, the soft skeleton's ``iterations`` (an autograd graph per step),
Boundary IoU's band width (padded past torch's sizes). Now a ``ValueError`` names the argument, or, where a larger
value cannot change the result, the work stops where it would (the band covers the mask, HCE's relaxation: see
``test_foreground_extra``).
"""

from __future__ import annotations

import pytest
import torch

import segmetrics_torch.functional as F
from segmetrics_torch import HausdorffDistance, SemanticBoundaryPR
from segmetrics_torch.losses import soft_cl_dice_loss


def _masks() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.zeros(2, 16, 16, dtype=torch.bool)
    g[:, 4:10, 4:10] = True
    return g.roll(1, 2), g


def test_num_classes_is_bounded() -> None:
    p, g = _masks()
    with pytest.raises(ValueError, match=r"`num_classes` to be an integer in \[2, 65536\]"):
        F.hausdorff_distance(p.long(), g.long(), num_classes=10**6)
    with pytest.raises(ValueError, match=r"`num_classes`.*65536"):
        HausdorffDistance(num_classes=10**9)
    with pytest.raises(ValueError, match=r"`num_classes`.*65536"):
        SemanticBoundaryPR(10**9)
    assert F.hausdorff_distance(p.long(), g.long(), num_classes=3).shape == (2, 2)  # a real label map still works


def test_soft_skeleton_iterations_are_bounded() -> None:
    logits, target = torch.randn(2, 2, 16, 16), torch.rand(2, 2, 16, 16) > 0.5
    with pytest.raises(ValueError, match=r"`iterations` to be an int in \[0, 1000\]"):
        soft_cl_dice_loss(logits, target, iterations=10_000)


def test_a_band_wider_than_the_image_is_the_mask() -> None:
    p, g = _masks()
    # any width from max(H, W) on gives the same band (every pixel erodes); 1e12 padded past torch's sizes
    assert torch.equal(F.boundary_iou(p, g, dilation_ratio=1e12), F.boundary_iou(p, g, dilation_ratio=2.0))
