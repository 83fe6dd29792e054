"""clDice: the hard measure against the authors' formula on scikit-image skeletons, its edge cases and bad inputs;
the soft skeleton and soft clDice loss against MONAI 1.6.1 (values and gradients)."""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import pytest
import torch
from scipy import ndimage

from segmetrics_torch.functional.surface import EmptyMaskWarning
from segmetrics_torch.functional.surface.cldice import ClDiceWarning, cl_dice, soft_cl_dice_loss, soft_skeleton

skimage_morphology = pytest.importorskip("skimage.morphology")
monai_cldice = pytest.importorskip("monai.losses.cldice")


# --- the reference: the authors' cldice_metric formula, in plain numpy on scikit-image skeletons ------------------


def authors_cldice(v_p: np.ndarray, v_l: np.ndarray) -> float:
    """``clDice(v_p, v_l)`` of the authors' ``cldice_metric/cldice.py``: ``skeletonize`` in 2-D, Lee's method (their
    ``skeletonize_3d``) in 3-D, ``np.sum(v * s) / np.sum(s)``; numpy's NaN where it divides 0 by 0."""
    skel = skimage_morphology.skeletonize
    with np.errstate(invalid="ignore", divide="ignore"):
        if v_p.ndim == 2:
            s_l, s_p = skel(v_l), skel(v_p)
        else:
            s_l, s_p = skel(v_l, method="lee"), skel(v_p, method="lee")
        tprec = np.sum(v_p * s_l) / np.sum(s_l)
        tsens = np.sum(v_l * s_p) / np.sum(s_p)
        return float(2 * tprec * tsens / (tprec + tsens))


def tubes(rng: np.random.Generator, shape: tuple[int, ...], n: int = 3) -> np.ndarray:
    """A few random straight tubes (segments between random points, dilated once or not at all)."""
    m = np.zeros(shape, bool)
    for _ in range(n):
        a, b = rng.integers(0, shape), rng.integers(0, shape)
        for t in np.linspace(0, 1, 2 * max(shape)):
            m[tuple(np.round(a + t * (b - a)).astype(int))] = True
    return ndimage.binary_dilation(m) if rng.random() < 0.6 else m


def blobs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return ndimage.gaussian_filter(rng.standard_normal(shape), 1.2) > rng.uniform(0.0, 0.3)


def random_pairs(seed: int, shape: tuple[int, ...], n: int) -> tuple[np.ndarray, np.ndarray]:
    """n (pred, gt) pairs: tubes and blobs, overlapping or perturbed copies, sometimes empty."""
    rng = np.random.default_rng(seed)
    preds, gts = [], []
    for i in range(n):
        g = tubes(rng, shape) if i % 2 else blobs(rng, shape)
        kind = i % 5
        if kind == 0:
            p = g ^ (rng.random(shape) < 0.05)
        elif kind == 1:
            p = np.roll(g, int(rng.integers(-2, 3)), axis=0)
        elif kind == 2:
            p = tubes(rng, shape)
        elif kind == 3:
            p = blobs(rng, shape)
        else:
            p = ndimage.binary_erosion(g) if rng.random() < 0.5 else ndimage.binary_dilation(g)
        preds.append(p)
        gts.append(g)
    return np.stack(preds), np.stack(gts)


def reference(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    return np.array([authors_cldice(a, b) for a, b in zip(p, g, strict=True)])


# --- parity with the authors' formula ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "seed"),
    [((32, 32), 0), ((17, 23), 1), ((9, 40), 2), ((41, 19), 3), ((8, 13, 11), 4), ((12, 12, 12), 5), ((5, 16, 9), 6)],
)
def test_parity_with_the_authors_formula(shape, seed):
    p, g = random_pairs(seed, shape, 10)
    want = reference(p, g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (EmptyMaskWarning, ClDiceWarning))
        got_nan = cl_dice(torch.from_numpy(p), torch.from_numpy(g), zero_division="nan")
        got = cl_dice(torch.from_numpy(p).to(torch.uint8), torch.from_numpy(g).float())
    assert got.dtype == torch.float64 and got.shape == (10,)
    # "nan" is the authors' code, NaNs included; "defined" agrees wherever the authors' value is finite
    np.testing.assert_allclose(got_nan.numpy(), want, rtol=0, atol=1e-12, equal_nan=True)
    finite = np.isfinite(want)
    assert finite.sum() >= 6
    np.testing.assert_allclose(got.numpy()[finite], want[finite], rtol=0, atol=1e-12)
    assert torch.isfinite(got).all()
    assert ((got >= 0) & (got <= 1)).all()


def test_parity_is_bitwise_and_symmetric():
    p, g = random_pairs(7, (24, 30), 12)
    want = reference(p, g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (EmptyMaskWarning, ClDiceWarning))
        got = cl_dice(torch.from_numpy(p), torch.from_numpy(g), zero_division="nan").numpy()
        swapped = cl_dice(torch.from_numpy(g), torch.from_numpy(p), zero_division="nan").numpy()
    finite = np.isfinite(want)
    assert np.array_equal(got[finite], want[finite])  # the same ratios in the same order: the same bits
    np.testing.assert_array_equal(got, swapped)


def test_list_of_differently_sized_images_equals_one_at_a_time():
    pa, ga = random_pairs(8, (15, 22), 2)
    pb, gb = random_pairs(9, (30, 11), 2)
    preds = [torch.from_numpy(x) for x in (pa[0], pb[0], pa[1], pb[1])]
    target = [torch.from_numpy(x) for x in (ga[0], gb[0], ga[1], gb[1])]
    got = cl_dice(preds, target)
    want = [float(cl_dice(p[None], t[None])[0]) for p, t in zip(preds, target, strict=True)]
    assert got.tolist() == want


def test_label_maps_score_each_class():
    rng = np.random.default_rng(10)
    a, b = tubes(rng, (20, 24)), blobs(rng, (20, 24))
    c, d = tubes(rng, (20, 24)), blobs(rng, (20, 24))
    target = torch.from_numpy(np.where(b, 2, np.where(a, 1, 0)))[None]
    preds = torch.from_numpy(np.where(d, 2, np.where(c, 1, 0)))[None]
    got = cl_dice(preds, target, num_classes=3)
    assert got.shape == (1, 2)
    for column, k in enumerate((1, 2)):
        assert float(got[0, column]) == float(cl_dice(preds == k, target == k)[0])


# --- known values --------------------------------------------------------------------------------------------------


def test_a_straight_line_against_itself_is_one():
    line = torch.zeros(2, 12, 30, dtype=torch.bool)
    line[:, 6, 3:27] = True
    assert cl_dice(line, line).tolist() == [1.0, 1.0]
    tube = torch.zeros(1, 9, 9, 20, dtype=torch.bool)
    tube[0, 3:6, 3:6, 2:18] = True
    assert cl_dice(tube, tube).tolist() == [1.0]


def test_disjoint_tubes_are_zero():
    p = torch.zeros(1, 20, 20, dtype=torch.bool)
    g = torch.zeros(1, 20, 20, dtype=torch.bool)
    p[0, 3:6, 2:18] = True
    g[0, 13:16, 2:18] = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0.0 is the defined limit: no warning
        assert cl_dice(p, g).tolist() == [0.0]
    # the authors' numpy code gives 0/0 there
    assert math.isnan(authors_cldice(p[0].numpy(), g[0].numpy()))
    with pytest.warns(ClDiceWarning, match=r"image 0: Tprec = Tsens = 0.*nan"):
        assert math.isnan(float(cl_dice(p, g, zero_division="nan")[0]))


def test_hand_computed_bars():
    # Zhang's skeleton of the 3 x 14 bar: row 4, columns 1..12, and (3, 13): 13 pixels; the short bar (columns 1..7)
    # covers 7 of them (Tsens = 7/13); the short bar's skeleton lies inside the long bar (Tprec = 1):
    # clDice = 2 (7/13) / (1 + 7/13) = 14/20
    long = torch.zeros(1, 9, 16, dtype=torch.bool)
    long[0, 3:6, 1:15] = True
    short = torch.zeros(1, 9, 16, dtype=torch.bool)
    short[0, 3:6, 1:8] = True
    skel = skimage_morphology.skeletonize(long[0].numpy())
    assert skel.sum() == 13 and skel[4, 1:13].all() and skel[3, 13]
    assert float(cl_dice(short, long)[0]) == pytest.approx(0.7, abs=1e-15)
    assert float(cl_dice(long, short)[0]) == pytest.approx(0.7, abs=1e-15)


# --- edge cases ----------------------------------------------------------------------------------------------------


def test_empty_masks():
    empty = torch.zeros(1, 10, 10, dtype=torch.bool)
    full = torch.zeros(1, 10, 10, dtype=torch.bool)
    full[0, 2:8, 4:6] = True
    with pytest.warns(EmptyMaskWarning, match=r"cl_dice: image 0: the prediction and ground truth are empty.*1\.0"):
        assert cl_dice(empty, empty).tolist() == [1.0]
    with pytest.warns(EmptyMaskWarning, match=r"the prediction is empty.*0\.0"):
        assert cl_dice(empty, full).tolist() == [0.0]
    with pytest.warns(EmptyMaskWarning, match=r"the ground truth is empty.*0\.0"):
        assert cl_dice(full, empty).tolist() == [0.0]
    for p, g in ((empty, empty), (empty, full), (full, empty)):
        assert math.isnan(authors_cldice(p[0].numpy(), g[0].numpy()))
        with pytest.warns(EmptyMaskWarning, match="nan"):
            assert math.isnan(float(cl_dice(p, g, zero_division="nan")[0]))


def test_empty_mask_warning_names_image_and_class():
    target = torch.zeros(3, 8, 8, dtype=torch.long)
    target[:, 2:6, 3] = 1
    preds = target.clone()
    preds[1] = 0
    with pytest.warns(EmptyMaskWarning) as caught:
        got = cl_dice(preds, target, num_classes=3)
    # class 2 is absent everywhere (1.0), class 1 is missed in image 1 (0.0)
    assert got.tolist() == [[1.0, 1.0], [0.0, 1.0], [1.0, 1.0]]
    named = {(w.message.image, w.message.class_id, w.message.value) for w in caught}
    assert (1, 1, "0.0") in named and (0, 2, "1.0") in named


def test_a_skeleton_that_thinning_erases():
    # Lee's thinning in scikit-image removes an isolated 2x2x2 cube (and 2x2 or 4x4 tubes: scikit-image issue 3757)
    # entirely: the authors' code divides 0 by 0
    tube = np.zeros((8, 8, 16), bool)
    tube[2:6, 2:6, :] = True
    assert not skimage_morphology.skeletonize(tube, method="lee").any()
    cube = torch.zeros(1, 8, 8, 8, dtype=torch.bool)
    cube[0, 2:4, 2:4, 2:4] = True
    assert not skimage_morphology.skeletonize(cube[0].numpy(), method="lee").any()
    assert math.isnan(authors_cldice(cube[0].numpy(), cube[0].numpy()))
    with pytest.warns(ClDiceWarning, match=r"prediction's and ground truth's skeleton is empty.*1\.0"):
        assert cl_dice(cube, cube).tolist() == [1.0]
    with pytest.warns(ClDiceWarning, match="nan"):
        assert math.isnan(float(cl_dice(cube, cube, zero_division="nan")[0]))
    # the mask stands for its skeleton: disjoint cubes 0, half-overlapping cubes |P n G| / |P| = 1/2 both ways
    other = torch.roll(cube, 4, dims=1)
    with pytest.warns(ClDiceWarning):
        assert cl_dice(cube, other).tolist() == [0.0]
    half = torch.roll(cube, 1, dims=3)
    with pytest.warns(ClDiceWarning):
        assert cl_dice(cube, half).tolist() == [0.5]
    # one side erased, the other a tube through it: Tprec = |P n G| / |P| = 1, Tsens = |S(G) n P| / |S(G)|
    tube = torch.zeros(1, 8, 8, 8, dtype=torch.bool)
    tube[0, 1:4, 1:4, :] = True
    s_g = torch.from_numpy(skimage_morphology.skeletonize(tube[0].numpy(), method="lee"))
    assert 0 < int((s_g & cube[0]).sum()) < int(s_g.sum())
    tsens = float((s_g & cube[0]).sum()) / float(s_g.sum())
    with pytest.warns(ClDiceWarning, match="prediction's skeleton is empty") as caught:
        got = float(cl_dice(cube, tube)[0])
    assert caught[0].message.image == 0 and caught[0].message.class_id is None
    assert got == pytest.approx(2 * tsens / (1 + tsens), abs=1e-15)


def test_no_silent_nan_on_random_degenerate_masks():
    rng = np.random.default_rng(11)
    p = rng.random((40, 4, 4, 4)) < rng.uniform(0.0, 0.3, (40, 1, 1, 1))
    g = rng.random((40, 4, 4, 4)) < rng.uniform(0.0, 0.3, (40, 1, 1, 1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = cl_dice(torch.from_numpy(p), torch.from_numpy(g))
        got_nan = cl_dice(torch.from_numpy(p), torch.from_numpy(g), zero_division="nan")
    assert torch.isfinite(got).all()
    flagged = {w.message.image for w in caught if isinstance(w.message, (EmptyMaskWarning, ClDiceWarning))}
    assert set(torch.nonzero(got_nan.isnan()).flatten().tolist()) <= flagged
    want = reference(p, g)
    np.testing.assert_allclose(got_nan.numpy(), want, rtol=0, atol=1e-12, equal_nan=True)


# --- bad inputs ----------------------------------------------------------------------------------------------------


def _mask(*shape: int) -> torch.Tensor:
    return torch.zeros(*shape, dtype=torch.bool)


@pytest.mark.parametrize(
    ("preds", "target", "error", "match"),
    [
        (_mask(2, 8, 8), _mask(2, 8, 9), ValueError, "`preds` and `target` of the same shape"),
        (torch.full((1, 8, 8), 2), _mask(1, 8, 8), ValueError, "`preds` to be boolean"),
        (_mask(1, 8, 8), torch.full((1, 8, 8), math.nan), ValueError, "`target` to be boolean.*NaN"),
        (_mask(8, 8), _mask(8, 8), ValueError, "`preds` of shape"),
        (_mask(1, 2, 3, 8, 8), _mask(1, 2, 3, 8, 8), ValueError, "`preds` of shape"),
        (_mask(2, 1, 8, 8), _mask(2, 1, 8, 8), ValueError, "channel dimension of size 1"),
        ([np.zeros((8, 8), object)], [_mask(8, 8)], TypeError, "dtype object"),
        (_mask(1, 8, 8), torch.zeros(1, 8, 8, dtype=torch.complex64), TypeError, "`target`"),
    ],
)
def test_bad_inputs(preds, target, error, match):
    with pytest.raises(error, match=match):
        cl_dice(preds, target)


def test_bad_arguments():
    m = _mask(1, 8, 8)
    with pytest.raises(ValueError, match="`zero_division`"):
        cl_dice(m, m, zero_division="zero")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="did you mean 'validate_args'"):
        cl_dice(m, m, validate_arg=False)  # type: ignore[call-arg]
    # validate_args=False skips the value checks (any nonzero is foreground)
    assert cl_dice(torch.full((1, 4, 4), 2), torch.ones(1, 4, 4), validate_args=False).tolist() == [1.0]


# --- the soft skeleton and loss against MONAI ----------------------------------------------------------------------


def _soft_inputs(shape: tuple[int, ...], dtype: torch.dtype, seed: int, soft_target: bool = False):
    g = torch.Generator().manual_seed(seed)
    preds = torch.rand(shape, generator=g, dtype=torch.float64)
    blur = torch.nn.functional.avg_pool2d if len(shape) == 4 else torch.nn.functional.avg_pool3d
    target = (blur(torch.rand(shape, generator=g, dtype=torch.float64), 3, 1, 1) > 0.5).double()
    if soft_target:
        target = target * 0.8 + 0.1 * torch.rand(shape, generator=g, dtype=torch.float64)
    return preds.to(dtype), target.to(dtype)


SHAPES = [(2, 3, 17, 23), (3, 1, 32, 20), (2, 2, 7, 9, 11), (1, 1, 10, 12, 8)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_soft_skeleton_equals_monai(shape, dtype):
    x, _ = _soft_inputs(shape, dtype, 0)
    for it in (0, 3, 10):
        assert torch.equal(soft_skeleton(x, it), monai_cldice.soft_skel(x, it))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_soft_cl_dice_loss_equals_monai(shape, dtype):
    cases = [
        ({}, {}),
        ({"smooth": 1.0}, {"smooth": 1.0}),
        ({"iter_": 5, "smooth_nr": 0.5, "smooth_dr": 2.0}, {"iterations": 5, "smooth_nr": 0.5, "smooth_dr": 2.0}),
        ({"include_background": False, "reduction": "none"}, {"include_background": False, "reduction": "none"}),
        ({"iter_": 0, "reduction": "sum"}, {"iterations": 0, "reduction": "sum"}),
    ]
    worst = 0.0
    for seed, soft_target in ((1, False), (2, True)):
        preds, target = _soft_inputs(shape, dtype, seed, soft_target)
        for monai_kw, our_kw in cases:
            if shape[1] == 1 and not monai_kw.get("include_background", True):
                with pytest.warns(UserWarning, match="include_background=False"):
                    want = monai_cldice.SoftclDiceLoss(**monai_kw)(preds, target)
                with pytest.warns(UserWarning, match="include_background=False"):
                    got = soft_cl_dice_loss(preds, target, **our_kw)
            else:
                want = monai_cldice.SoftclDiceLoss(**monai_kw)(preds, target)
                got = soft_cl_dice_loss(preds, target, **our_kw)
            assert got.dtype == dtype and got.shape == want.shape
            worst = max(worst, float((got - want).abs().max()))
    assert worst <= 1e-6


def test_pooled_reduction_is_the_authors_loss():
    # the authors' soft_cldice: sums over the whole batch, no epsilon in the harmonic mean, 10 skeleton iterations
    preds, target = _soft_inputs((3, 2, 16, 18), torch.float64, 3)
    sp, sg = monai_cldice.soft_skel(preds, 10), monai_cldice.soft_skel(target, 10)
    tprec = (torch.sum(sp * target) + 1.0) / (torch.sum(sp) + 1.0)
    tsens = (torch.sum(sg * preds) + 1.0) / (torch.sum(sg) + 1.0)
    want = 1.0 - 2.0 * (tprec * tsens) / (tprec + tsens)
    got = soft_cl_dice_loss(preds, target, iterations=10, smooth=0.0, reduction="pooled")
    assert got.shape == () and float((got - want).abs()) <= 1e-12


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(2, 2, 13, 15), (2, 1, 6, 7, 9)])
def test_gradients_equal_monai(shape, dtype):
    preds, target = _soft_inputs(shape, dtype, 4)
    ours = preds.clone().requires_grad_()
    theirs = preds.clone().requires_grad_()
    soft_cl_dice_loss(ours, target, reduction="sum").backward()
    monai_cldice.SoftclDiceLoss(reduction="sum")(theirs, target).backward()
    assert ours.grad is not None and theirs.grad is not None
    assert float(ours.grad.abs().max()) > 0
    assert float((ours.grad - theirs.grad).abs().max()) <= 1e-6


def test_gradcheck_on_a_tiny_input():
    preds, target = _soft_inputs((1, 1, 5, 6), torch.float64, 5)
    preds = preds.requires_grad_()
    assert torch.autograd.gradcheck(lambda x: soft_cl_dice_loss(x, target, iterations=2), (preds,), eps=1e-7)


def test_half_precision_is_computed_in_float32():
    preds, target = _soft_inputs((2, 1, 12, 12), torch.float32, 6)
    got = soft_cl_dice_loss(preds.half(), target.bool())
    assert got.dtype == torch.float16
    assert float(got) == pytest.approx(float(soft_cl_dice_loss(preds.half().float(), target)), abs=1e-3)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"preds": torch.rand(2, 8, 8)}, ValueError, r"`preds` of shape \(B, C, H, W\).*unsqueeze\(1\)"),
        ({"preds": torch.ones(2, 1, 8, 8, dtype=torch.long)}, TypeError, "`preds` to be a floating"),
        ({"preds": torch.full((2, 1, 8, 8), 1.5)}, ValueError, r"`preds` to be probabilities in \[0, 1\]"),
        ({"preds": torch.full((2, 1, 8, 8), math.nan)}, ValueError, "`preds` to contain only finite"),
        ({"target": torch.ones(2, 1, 8, 9)}, ValueError, "`preds` and `target` of the same shape"),
        ({"target": torch.full((2, 1, 8, 8), math.nan)}, ValueError, "`target` to contain only finite"),
        ({"target": torch.full((2, 1, 8, 8), 2)}, ValueError, r"`target` to hold values in \[0, 1\]"),
        ({"iterations": -1}, ValueError, "`iterations`"),
        ({"iterations": 1.5}, TypeError, "`iterations`"),
        ({"smooth_dr": 0.0}, ValueError, "`smooth_dr`"),
        ({"smooth": -1e-4}, ValueError, "`smooth`"),
        ({"smooth_nr": math.inf}, ValueError, "`smooth_nr`"),
        ({"smooth_nr": 0.0, "smooth": 0.0}, ValueError, "`smooth_nr` > 0 or `smooth` > 0"),
        ({"reduction": "max"}, ValueError, "`reduction`"),
        ({"include_background": 0}, TypeError, "`include_background`"),
    ],
)
def test_soft_bad_inputs(kwargs, error, match):
    args = {"preds": torch.rand(2, 1, 8, 8), "target": torch.ones(2, 1, 8, 8), **kwargs}
    with pytest.raises(error, match=match):
        soft_cl_dice_loss(**args)


def test_soft_skeleton_bad_inputs():
    with pytest.raises(ValueError, match="`x` of shape"):
        soft_skeleton(torch.rand(8, 8))
    with pytest.raises(TypeError, match="`x` to be a floating"):
        soft_skeleton(torch.ones(1, 1, 8, 8, dtype=torch.long))
    with pytest.raises(TypeError, match="`iterations`"):
        soft_skeleton(torch.rand(1, 1, 8, 8), True)  # type: ignore[arg-type]


# --- devices -------------------------------------------------------------------------------------------------------


def test_device(device):
    p, g = random_pairs(12, (20, 26), 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (EmptyMaskWarning, ClDiceWarning))
        want = cl_dice(torch.from_numpy(p), torch.from_numpy(g))
        got = cl_dice(torch.from_numpy(p).to(device), torch.from_numpy(g).to(device))
    assert got.device.type == device and torch.equal(got.cpu(), want)
    preds, target = _soft_inputs((2, 2, 12, 14), torch.float32, 7)
    on = soft_cl_dice_loss(preds.to(device), target.to(device), reduction="none")
    assert on.device.type == device
    torch.testing.assert_close(on.cpu(), soft_cl_dice_loss(preds, target, reduction="none"), atol=1e-6, rtol=0)


# ------------------------------------------------------------- the Metric, the loss module, the command's column


def test_the_metric_is_the_mean_of_the_function_per_class() -> None:
    from segmetrics_torch import ClDice

    gen = torch.Generator().manual_seed(3)
    preds = torch.randint(0, 3, (4, 24, 28), generator=gen)
    target = torch.randint(0, 3, (4, 24, 28), generator=gen)
    metric = ClDice(num_classes=3)
    metric.update(preds[:2], target[:2])
    metric.update(preds[2:], target[2:])
    expected = cl_dice(preds, target, num_classes=3)
    assert torch.allclose(metric.compute(), expected.mean(0), atol=1e-12, rtol=0)
    assert metric.higher_is_better is True


def test_the_loss_module_is_the_function_and_monai_s() -> None:
    monai_losses = pytest.importorskip("monai.losses")
    from segmetrics_torch import SoftClDiceLoss

    gen = torch.Generator().manual_seed(4)
    preds = torch.rand(2, 2, 20, 20, generator=gen, dtype=torch.float64, requires_grad=True)
    target = (torch.rand(2, 2, 20, 20, generator=gen, dtype=torch.float64) > 0.6).double()
    ours = SoftClDiceLoss(iterations=5)(preds, target)
    theirs = monai_losses.SoftclDiceLoss(iter_=5)(preds, target)
    assert abs(ours.item() - theirs.item()) < 1e-12
    assert ours.requires_grad
    with pytest.raises((TypeError, ValueError), match="iterations"):
        SoftClDiceLoss(iterations=-1)


def test_evaluate_surface_has_a_cldice_column(tmp_path, capsys) -> None:
    import json

    from PIL import Image

    from segmetrics_torch.app.cli import main

    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    masks = []
    for i in range(2):
        g = np.zeros((30, 34), np.uint8)
        g[14:16, 3:30] = 1  # a vessel
        g[5:28, 20:22] = 1
        p = np.roll(g, i, 1)
        Image.fromarray(g * 255).save(tmp_path / "gt" / f"v{i}.png")
        Image.fromarray(p * 255).save(tmp_path / "pred" / f"v{i}.png")
        masks.append((p, g))
    argv = [
        "evaluate",
        "surface",
        "--pred",
        str(tmp_path / "pred"),
        "--gt",
        str(tmp_path / "gt"),
        "--no-progress",
        "--measures",
        "hd,cldice",
        "--json",
        str(tmp_path / "r.json"),
    ]
    assert main(argv) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.splitlines()[0].split() == ["method", "HD", "clDice"]
    results = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["results"]
    values = [float(cl_dice(torch.from_numpy(p != 0)[None], torch.from_numpy(g != 0)[None])[0]) for p, g in masks]
    assert results["cl_dice"] == pytest.approx(sum(values) / 2, abs=1e-12)
    assert results["per_image"]["v1"]["cl_dice"] == pytest.approx(values[1], abs=1e-12)


def test_the_loss_module_built_without_the_background_does_not_warn() -> None:
    from segmetrics_torch import SoftClDiceLoss

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SoftClDiceLoss(include_background=False)


def test_evaluate_surface_cldice_without_scikit_image_is_an_input_error(tmp_path, capsys, monkeypatch) -> None:
    """The measure's optional dependency missing: exit 2 with the install line, not an unexpected ImportError."""
    from PIL import Image

    from segmetrics_torch.app.cli import main

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        Image.fromarray(np.eye(12, dtype=np.uint8) * 255).save(tmp_path / side / "v.png")
    monkeypatch.setitem(sys.modules, "skimage", None)
    monkeypatch.setitem(sys.modules, "skimage.morphology", None)
    argv = ["evaluate", "surface", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress",
            "--measures", "cldice"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "pip install 'segmetrics-torch[opencv]'" in err and "Traceback" not in err
