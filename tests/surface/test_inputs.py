"""Label maps (num_classes, include_background, ignore_index) against MONAI's one-hot calls, and bad inputs: each
raises a clear error naming the argument."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from segmetrics_torch.functional.surface import (
    average_surface_distance,
    boundary_iou,
    hausdorff_distance,
    hd95,
    normalized_surface_distance,
    surface_distance_measures,
)


def _labels(seed: int, shape: tuple[int, ...], k: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, k, size=tuple(max(1, s // 4) for s in shape))
    fine = coarse.repeat(4, 0).repeat(4, 1) if len(shape) == 2 else coarse.repeat(4, 0).repeat(4, 1).repeat(4, 2)
    return torch.from_numpy(fine[tuple(slice(0, s) for s in shape)].copy())


def _one_hot(x: torch.Tensor, k: int) -> torch.Tensor:
    return torch.nn.functional.one_hot(x, k).movedim(-1, 1).float()


@pytest.mark.parametrize("include_background", [False, True])
@pytest.mark.parametrize("shape", [(16, 20), (8, 8, 12)])
def test_label_maps_match_monai_one_hot(include_background: bool, shape: tuple[int, ...]) -> None:
    metrics = pytest.importorskip("monai.metrics")
    k = 4
    p = torch.stack([_labels(s, shape, k) for s in (1, 2)])
    g = torch.stack([_labels(s, shape, k) for s in (3, 4)])
    sp = (2.0, 0.5) if len(shape) == 2 else (1.5, 1.0, 0.5)
    kw = {"num_classes": k, "include_background": include_background, "spacing": sp}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_hd = metrics.compute_hausdorff_distance(
            _one_hot(p, k), _one_hot(g, k), include_background=include_background, percentile=95, spacing=list(sp)
        )
        ref_nsd = metrics.compute_surface_dice(
            _one_hot(p, k),
            _one_hot(g, k),
            [0.5, 1.0, 2.0, 3.0][-ref_hd.shape[1] :],
            include_background=include_background,
            spacing=list(sp),
        )
        ours_hd = hausdorff_distance(p, g, percentile=95, **kw)  # type: ignore[arg-type]
        ours_nsd = normalized_surface_distance(p, g, tolerance=[0.5, 1.0, 2.0, 3.0][-ref_hd.shape[1] :], **kw)  # type: ignore[arg-type]
    assert ours_hd.shape == ref_hd.shape == (2, k - (0 if include_background else 1))
    torch.testing.assert_close(ours_hd, ref_hd.double(), rtol=1e-6, atol=1e-6, equal_nan=True)
    torch.testing.assert_close(ours_nsd, ref_nsd.double(), rtol=1e-6, atol=1e-6, equal_nan=True)


def test_ignore_index_matches_monai() -> None:
    metrics = pytest.importorskip("monai.metrics")
    k = 3
    p = torch.stack([_labels(s, (16, 16), k) for s in (5, 6)])
    g = torch.stack([_labels(s, (16, 16), k) for s in (7, 8)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # MONAI's Metric class applies the spatial ignore mask (its functional form only skips the warning)
        metric = metrics.HausdorffDistanceMetric(include_background=True, ignore_index=2, reduction="none")
        ref = metric(_one_hot(p, k), _one_hot(g, k))
        ours = hausdorff_distance(p, g, num_classes=k, include_background=True, ignore_index=2)
    torch.testing.assert_close(ours, ref.double(), rtol=1e-6, atol=1e-6, equal_nan=True)
    assert torch.isnan(ours[:, 2]).all()
    # an out-of-range sentinel (255) removes its pixels from both masks and adds no NaN column
    g255 = g.clone()
    g255[:, :3] = 255
    p_cut = p.clone()
    p_cut[:, :3] = 0
    g_cut = g.clone()
    g_cut[:, :3] = 0
    ours255 = hausdorff_distance(p, g255, num_classes=k, ignore_index=255)
    assert ours255.shape == (2, 2) and not torch.isnan(ours255).any()
    p_mask = (p.unsqueeze(1) == torch.tensor([1, 2]).view(1, 2, 1, 1)) & (g255 != 255).unsqueeze(1)
    g_mask = (g.unsqueeze(1) == torch.tensor([1, 2]).view(1, 2, 1, 1)) & (g255 != 255).unsqueeze(1)
    per_class = torch.stack([hausdorff_distance(p_mask[:, c], g_mask[:, c]) for c in range(2)], dim=1)
    torch.testing.assert_close(ours255, per_class)


def test_output_device_dtype_and_list_input() -> None:
    p = torch.zeros(2, 6, 7, dtype=torch.uint8)
    p[:, 1:4, 2:5] = 1
    out = surface_distance_measures(p, p.roll(1, 1))
    assert all(v.dtype == torch.float64 and v.shape == (2,) for v in out.values())
    assert out["hausdorff"].tolist() == [1.0, 1.0]


A = torch.zeros(1, 8, 8, dtype=torch.bool)
A[0, 2:5, 2:5] = True


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"preds": A[0]}, ValueError, r"`preds` of shape \(B, H, W\)"),
        ({"preds": A.unsqueeze(0).unsqueeze(0)}, ValueError, r"`preds` of shape"),
        ({"preds": "masks"}, TypeError, r"`preds` to be a torch.Tensor"),
        ({"target": A[:, :7]}, ValueError, r"same shape"),
        ({"preds": A.float() * 0.5}, ValueError, r"`preds` to be boolean"),
        ({"target": torch.full((1, 8, 8), math.nan)}, ValueError, r"`target` .* NaN"),
        ({"spacing": (1.0, 1.0, 1.0)}, ValueError, r"`spacing` to have one entry per spatial axis \(2\)"),
        ({"spacing": (1.0, 0.0)}, ValueError, r"`spacing` to be a finite positive"),
        ({"spacing": (1.0, -2.0)}, ValueError, r"`spacing` to be a finite positive"),
        ({"spacing": math.nan}, ValueError, r"`spacing` to be a finite positive"),
        ({"spacing": "1"}, TypeError, r"`spacing`"),
        ({"convention": "scipy"}, ValueError, r"`convention` to be one of 'monai', 'medpy'"),
        ({"percentile": 101}, ValueError, r"`percentile`"),
        ({"percentile": math.nan}, ValueError, r"`percentile`"),
        ({"percentile": 95, "convention": "torchmetrics"}, ValueError, r"`percentile`=None"),
        ({"distance_metric": "cosine"}, ValueError, r"`distance_metric`"),
        ({"distance_metric": "taxicab", "convention": "deepmind"}, ValueError, r"`distance_metric`='euclidean'"),
        ({"connectivity": 2}, ValueError, r"`connectivity`=1 with convention='monai'"),
        ({"connectivity": 3, "convention": "medpy"}, ValueError, r"`connectivity` to be an int in \[1, 2\]"),
        ({"num_classes": 1}, ValueError, r"`num_classes`"),
        ({"ignore_index": 0}, ValueError, r"`ignore_index` only with label maps"),
        ({"directed": 1}, TypeError, r"`directed`"),
        ({"include_background": "yes"}, TypeError, r"`include_background`"),
        (
            {"preds": torch.zeros(2, 6, 0, dtype=torch.bool), "target": torch.zeros(2, 6, 0, dtype=torch.bool)},
            ValueError,
            r"`preds` and `target` of non-empty images",
        ),
        (
            {"preds": [torch.zeros(6, 0, dtype=torch.bool)], "target": [torch.zeros(6, 0, dtype=torch.bool)]},
            ValueError,
            r"`preds` and `target` of non-empty images, but image 0",
        ),
    ],
)
def test_bad_inputs_hausdorff(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    args = {"preds": A, "target": A, **kwargs}
    with pytest.raises(error, match=match):
        hausdorff_distance(args.pop("preds"), args.pop("target"), **args)  # type: ignore[arg-type]


def test_bad_label_maps() -> None:
    g = torch.zeros(1, 6, 6, dtype=torch.long)
    with pytest.raises(TypeError, match="`preds` to be an integer label map"):
        hausdorff_distance(g.float(), g, num_classes=3)
    with pytest.raises(ValueError, match=r"`target` to hold labels in \[0, 2\]"):
        hausdorff_distance(g, g + 3, num_classes=3)
    with pytest.raises(ValueError, match=r"`preds` to hold labels in \[0, 2\], but got 255"):
        hausdorff_distance(g + 255, g, num_classes=3, ignore_index=255)


def test_bad_inputs_other_measures() -> None:
    with pytest.raises(ValueError, match="`convention` to be one of 'monai', 'medpy', 'deepmind' for the average"):
        average_surface_distance(A, A, convention="torchmetrics")
    with pytest.raises(ValueError, match="`convention` to be one of 'monai', 'deepmind' for the normalized"):
        normalized_surface_distance(A, A, tolerance=1.0, convention="medpy")
    with pytest.raises(ValueError, match="`tolerance` to be a finite number >= 0"):
        normalized_surface_distance(A, A, tolerance=-1.0)
    with pytest.raises(ValueError, match="`tolerance` to be a finite number >= 0"):
        normalized_surface_distance(A, A, tolerance=math.inf)
    g = torch.zeros(1, 6, 6, dtype=torch.long)
    with pytest.raises(ValueError, match=r"`tolerance` to have one entry per class \(2\)"):
        normalized_surface_distance(g, g, tolerance=[1.0, 2.0, 3.0], num_classes=3)
    with pytest.raises(TypeError, match="`use_subvoxels`"):
        normalized_surface_distance(A, A, tolerance=1.0, use_subvoxels=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`dilation_ratio`"):
        boundary_iou(A, A, dilation_ratio=0)
    with pytest.raises(ValueError, match=r"2-D images .*Boundary IoU is defined on 2-D masks"):
        boundary_iou(A.expand(1, 2, 8, 8), A.expand(1, 2, 8, 8))
    with pytest.raises(TypeError, match="fixes `percentile` at 95"):
        hd95(A, A, percentile=50)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="at least one image"):
        hausdorff_distance([], [])
    with pytest.raises(TypeError, match="both tensors or both lists"):
        hausdorff_distance(A, [A[0]])


def test_unknown_keyword_names_the_nearest() -> None:
    """The shared keywords are one TypedDict (``**options``): a misspelt one is Python's TypeError, with a hint, in
    the functions and the Metrics; one the function does not take (spacing for Boundary IoU) too."""
    from segmetrics_torch.metrics.surface import BoundaryIoU, HausdorffDistance

    with pytest.raises(
        TypeError,
        match=r"hausdorff_distance\(\) got an unexpected keyword argument 'spacng' "
        r"\(did you mean 'spacing'\?\)",
    ):
        hausdorff_distance(A, A, spacng=2.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"boundary_iou\(\) got an unexpected keyword argument 'spacing'"):
        boundary_iou(A, A, spacing=2.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"surface_distance_measures\(\) .* 'num_class' .* 'num_classes'"):
        surface_distance_measures(A, A, num_class=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"HausdorffDistance\(\) .* 'conventon' \(did you mean 'convention'\?\)"):
        HausdorffDistance(conventon="medpy")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"BoundaryIoU\(\) got an unexpected keyword argument 'convention'"):
        BoundaryIoU(convention="monai")  # type: ignore[call-arg]
    # torchmetrics' own keywords still reach torchmetrics
    assert HausdorffDistance(compute_on_cpu=True, convention="medpy").compute_on_cpu is True


def test_hints_know_each_function_own_keywords_and_bools_are_not_numbers() -> None:
    from segmetrics_torch.metrics.surface import BoundaryIoU, HausdorffDistance

    with pytest.raises(TypeError, match=r"'symetric' \(did you mean 'symmetric'\?\)"):
        average_surface_distance(A, A, symetric=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"'percentil' \(did you mean 'percentile'\?\)"):
        HausdorffDistance(percentil=95)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"'tolerence' \(did you mean 'tolerance'\?\)"):
        normalized_surface_distance(A, A, tolerance=1.0, tolerence=2.0)  # type: ignore[call-arg]
    # Boundary IoU counts pixels: a spacing given to its update is refused, not ignored
    with pytest.raises(TypeError, match=r"BoundaryIoU.update\(\) takes no `spacing`"):
        BoundaryIoU().update(A, A, spacing=(2.0, 1.0))
    # a bool is not a number of spacing units (TypeError, as for every argument that must be a number)
    with pytest.raises(TypeError, match="`spacing` to be a number or a sequence"):
        hausdorff_distance(A, A, spacing=True)
    with pytest.raises(TypeError, match="`tolerance` to be a number or a sequence"):
        normalized_surface_distance(A, A, tolerance=True)


def test_a_channel_dimension_is_not_a_volume_and_numpy_spacing_is_a_spacing() -> None:
    """From a new-user trial: MONAI's (B, 1, H, W) masks were read as volumes of one slice (NSD / ASD silently other
    than the 2-D values); nibabel's zooms (numpy float32) were refused as spacing; a fraction as a percentile warns."""
    g = torch.zeros(2, 12, 12, dtype=torch.bool)
    g[:, 3:8, 3:8] = True
    p = g.roll(1, dims=2)
    with pytest.raises(ValueError, match=r"MONAI's \(B, 1, H, W\).*Pass the 2-D masks \(x\[:, 0\]\)"):
        normalized_surface_distance(p[:, None], g[:, None], tolerance=0.5)
    with pytest.raises(ValueError, match=r"`preds\[0\]` of 2-D images .* \(x\[0\]\)"):
        average_surface_distance([p[0, None]], [g[0, None]])
    zooms = (np.float32(0.8), np.float32(1.5))
    expected = hausdorff_distance(p, g, spacing=(0.800000011920929, 1.5))
    assert torch.equal(hausdorff_distance(p, g, spacing=zooms), expected)
    assert torch.equal(hausdorff_distance(p, g, spacing=np.array(zooms)), expected)
    assert torch.equal(hausdorff_distance(p, g, spacing=np.stack([np.array(zooms)] * 2)), expected)  # per image
    with pytest.warns(UserWarning, match=r"`percentile`=0.95 is the 0.95th percentile"):
        hausdorff_distance(p, g, percentile=0.95)
    with pytest.raises(TypeError, match="`validate_args`"):
        hausdorff_distance(p, g, validate_args="no")  # type: ignore[arg-type]
    from segmetrics_torch.metrics.surface import HausdorffDistance

    with pytest.raises(ValueError, match=r"`num_classes` to be an integer >= 2"):
        HausdorffDistance(num_classes=1)
