"""The boundary-distance family's device path (``pair_distances(on_device=True)``, what CUDA inputs take: the EDT
on the masks' device, :func:`~segmetrics_torch.ops.distance.distance_to_features_device`) against the host path, run
here on CPU tensors: the same distance lists (bitwise on unit grids, an ulp or two with spacing) for every boundary
set, 2-D and 3-D, sparse and dense masks, empty sides."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from segmetrics_torch.functional.surface._inputs import prepare_pairs
from segmetrics_torch.functional.surface.distances import pair_distances
from segmetrics_torch.functional.surface.options import DISTANCE_DEFAULTS


def _lists(preds: torch.Tensor, target: torch.Tensor, spacing: object, corners: bool, on_device: bool) -> list:
    pairs = prepare_pairs(
        preds,
        target,
        num_classes=None,
        include_background=False,
        ignore_index=None,
        input_format="index",
        spacing=spacing,
        validate_args=True,
    )
    return pair_distances(pairs, DISTANCE_DEFAULTS, corners=corners, on_device=on_device)


def _masks(shape: tuple[int, ...], density: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    p = torch.rand(2, *shape, generator=gen) < density
    g = torch.rand(2, *shape, generator=gen) < density
    p[1] = False  # an empty prediction beside a non-empty ground truth
    return p, g


@pytest.mark.parametrize("corners", [False, True])
@pytest.mark.parametrize("shape", [(13, 17), (7, 9, 11)])
@pytest.mark.parametrize("spacing", [None, "aniso"])
@pytest.mark.parametrize("density", [0.02, 0.4])
def test_device_path_gives_the_host_lists(
    corners: bool, shape: tuple[int, ...], spacing: object, density: float
) -> None:
    p, g = _masks(shape, density, seed=len(shape) * 10 + int(density * 100))
    sp = (0.7, 1.9, 1.3)[-len(shape) :] if spacing == "aniso" else None
    host = _lists(p, g, sp, corners, on_device=False)
    device = _lists(p, g, sp, corners, on_device=True)
    assert [(i, c) for i, c, _ in host] == [(i, c) for i, c, _ in device]
    for (_, _, h), (_, _, d) in zip(host, device, strict=True):
        for a, b in ((h.pred_to_gt, d.pred_to_gt), (h.gt_to_pred, d.gt_to_pred)):
            if sp is None:
                assert np.array_equal(a, b)
            else:
                np.testing.assert_allclose(b, a, rtol=4e-16, atol=0)
        assert (h.pred_empty, h.gt_empty) == (d.pred_empty, d.gt_empty)
        for a, b in ((h.pred_sizes, d.pred_sizes), (h.gt_sizes, d.gt_sizes)):
            assert (a is None and b is None) or np.array_equal(a, b)


@pytest.mark.parametrize("slice_elements", [None, 1])
def test_device_path_batches_images_of_each_spacing(
    monkeypatch: pytest.MonkeyPatch, slice_elements: int | None
) -> None:
    """Two batched transforms per spacing, one per direction (in slices of whole images: ``slice_elements=1``
    forces one image per call): per-image spacings (MONAI's per-item form) mixing a repeated anisotropic spacing, a
    unit grid and a power-of-two one (the integer-keyed transform, distances scaled back), with an empty prediction
    and an empty ground truth among them, give each pair its own host lists."""
    from segmetrics_torch.ops import distance

    if slice_elements is not None:
        monkeypatch.setattr(distance, "_DEVICE_BATCH_ELEMENTS", slice_elements)
    gen = torch.Generator().manual_seed(7)
    p = torch.rand(6, 15, 12, generator=gen) < 0.3
    g = torch.rand(6, 15, 12, generator=gen) < 0.3
    p[2] = False
    g[4] = False
    spacings = [(0.7, 1.3), (1.0, 1.0), (0.7, 1.3), (2.0, 2.0), (1.0, 1.0), (0.25, 0.25)]
    for corners in (False, True):
        host = _lists(p, g, spacings, corners, on_device=False)
        device = _lists(p, g, spacings, corners, on_device=True)
        assert [i for i, _, _ in device] == list(range(6))
        for (_, _, h), (_, _, d) in zip(host, device, strict=True):
            for a, b in ((h.pred_to_gt, d.pred_to_gt), (h.gt_to_pred, d.gt_to_pred)):
                assert a.shape == b.shape
                np.testing.assert_allclose(b, a, rtol=4e-16, atol=0)
