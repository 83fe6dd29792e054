"""Exactness of ``distance_transform_edt`` against scipy, ties included, for both backends."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy import ndimage

from segmetrics_torch.ops import distance
from segmetrics_torch.ops.distance import _edt_numba, distance_transform_edt

# "numba-images" / "numba-blocks" force one of the numba kernel's two parallel strategies (the public backend picks
# one from the batch size and the thread count, so a given machine would otherwise test only one for most inputs).
BACKENDS = ["torch", "numba", "numba-images", "numba-blocks"]


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """Every kernel. Combined with ``device``: torch runs on every device, numba on CPU copies of the input."""
    return request.param


def scipy_edt(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reference, with flat indices; the documented inf / -1 for an image without features."""
    if not mask.any():
        return np.full(mask.shape, np.inf), np.full(mask.shape, -1, dtype=np.int64)
    dist, ind = ndimage.distance_transform_edt(~mask, return_indices=True)
    return dist, ind[0] * mask.shape[1] + ind[1]


def brute_force_edt(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The documented rule written out directly: least squared distance, then least column, then least row."""
    h, w = mask.shape
    fr, fc = np.nonzero(mask)
    yy, xx = np.mgrid[:h, :w]
    d2 = (yy[..., None] - fr) ** 2 + (xx[..., None] - fc) ** 2  # (H, W, F)
    key = (d2 * w + fc) * h + fr  # lexicographic (d2, column, row) as one integer
    best = key.argmin(-1)
    return np.sqrt(d2.min(-1).astype(np.float64)), fr[best] * w + fc[best]


def edt(mask: torch.Tensor, backend: str, **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
    if not backend.startswith("numba-"):
        return distance_transform_edt(mask, backend=backend, **kwargs)
    if mask.numel() == 0:  # the public function answers these before any kernel runs
        return distance_transform_edt(mask, backend="numba")
    dist, index = _edt_numba(mask.reshape(-1, *mask.shape[-2:]), strategy=backend.removeprefix("numba-"))
    return dist.view(mask.shape), index.view(mask.shape)


def run(mask: np.ndarray, backend: str, device: str, **kwargs) -> tuple[np.ndarray, np.ndarray]:
    dist, index = edt(torch.from_numpy(mask).to(device), backend, **kwargs)
    assert dist.dtype == torch.float64 and index.dtype == torch.int64
    assert dist.device.type == index.device.type == torch.device(device).type
    assert dist.shape == index.shape == mask.shape
    return dist.cpu().numpy(), index.cpu().numpy()


def assert_matches_scipy(mask: np.ndarray, backend: str, device: str = "cpu") -> None:
    """Check every image of a (H, W) or (B, H, W) mask, computed as one batch, against scipy image by image."""
    dist, index = run(mask, backend, device)
    batch = mask[None] if mask.ndim == 2 else mask
    dist, index = dist.reshape(batch.shape), index.reshape(batch.shape)
    for i, image in enumerate(batch):
        ref_dist, ref_index = scipy_edt(image)
        np.testing.assert_array_equal(index[i], ref_index, err_msg=f"indices of image {i}")
        np.testing.assert_allclose(dist[i], ref_dist, rtol=0, atol=1e-12, err_msg=f"distances of image {i}")


def random_blobs(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A few random ellipses: a realistic ground-truth-like mask."""
    yy, xx = np.mgrid[:h, :w]
    mask = np.zeros((h, w), dtype=bool)
    for _ in range(rng.integers(1, 5)):
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        ry, rx = rng.uniform(0.03, 0.25) * h, rng.uniform(0.03, 0.25) * w
        mask |= ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1
    mask[rng.integers(0, h), rng.integers(0, w)] = True  # never empty, and an isolated pixel
    return mask


@st.composite
def small_masks(draw) -> np.ndarray:
    """1..40 x 1..40 masks: either random at a density from very sparse to dense, or a few scattered points."""
    h, w = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    if draw(st.booleans()):
        density = draw(st.sampled_from([0.002, 0.01, 0.05, 0.2, 0.5, 0.8, 0.98]))
        return np.random.default_rng(draw(st.integers(0, 2**32 - 1))).random((h, w)) < density
    mask = np.zeros((h, w), dtype=bool)
    points = draw(st.lists(st.tuples(st.integers(0, h - 1), st.integers(0, w - 1)), min_size=1, max_size=6))
    for r, c in points:
        mask[r, c] = True
    return mask


# ------------------------------------------------------------------------------------------------ exactness


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mask=small_masks())
def test_random_small_masks_match_scipy(mask, backend, device):
    assert_matches_scipy(mask, backend, device)


@settings(max_examples=60)
@given(mask=small_masks())
def test_scipy_follows_the_documented_tie_rule(mask):
    """The convention in the docstring is scipy's: an independent brute force with that rule agrees with it."""
    if not mask.any():
        return
    ref_dist, ref_index = scipy_edt(mask)
    dist, index = brute_force_edt(mask)
    np.testing.assert_array_equal(index, ref_index)
    np.testing.assert_allclose(dist, ref_dist, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(321, 481), (481, 321)])
def test_bsds_shaped_batch_matches_scipy(shape, backend, device):
    rng = np.random.default_rng(shape[0])
    mask = np.stack([random_blobs(rng, *shape) for _ in range(2)])
    assert_matches_scipy(mask, backend, device)


def _lattice(h, w, sy, sx, oy, ox):
    mask = np.zeros((h, w), dtype=bool)
    mask[oy::sy, ox::sx] = True
    return mask


def _points(h, w, *points):
    mask = np.zeros((h, w), dtype=bool)
    for r, c in points:
        mask[r, c] = True
    return mask


def _circle(h, w, cy, cx, radius2):
    """Every pixel at squared distance radius2 from (cy, cx): the centre has many equidistant features."""
    yy, xx = np.mgrid[:h, :w]
    return (yy - cy) ** 2 + (xx - cx) ** 2 == radius2


TIE_PATTERNS = {
    "lattice-2x2": _lattice(23, 31, 2, 2, 0, 0),
    "lattice-3x3": _lattice(23, 31, 3, 3, 1, 2),
    "lattice-4x4": _lattice(31, 23, 4, 4, 0, 0),
    "lattice-2x4": _lattice(24, 30, 2, 4, 1, 0),
    "lattice-4x2": _lattice(30, 24, 4, 2, 0, 1),
    "lattice-6x6": _lattice(37, 37, 6, 6, 3, 3),
    "lattice-5x3": _lattice(29, 33, 5, 3, 2, 1),
    "checkerboard": (np.add.outer(np.arange(27), np.arange(26)) % 2).astype(bool),
    "checkerboard-2x2-blocks": (np.add.outer(np.arange(28) // 2, np.arange(30) // 2) % 2).astype(bool),
    "pair-horizontal": _points(11, 11, (5, 2), (5, 8)),
    "pair-vertical": _points(11, 11, (2, 5), (8, 5)),
    "pair-diagonal": _points(11, 11, (2, 2), (8, 8)),
    "pair-antidiagonal": _points(11, 11, (2, 8), (8, 2)),
    "four-around-centre": _points(11, 11, (2, 5), (8, 5), (5, 2), (5, 8)),
    "four-corners": _points(9, 9, (0, 0), (0, 8), (8, 0), (8, 8)),
    "pair-knight": _points(12, 12, (3, 4), (7, 6)),
    "circle-r2-25": _circle(21, 21, 10, 10, 25),
    "circle-r2-65": _circle(25, 25, 12, 12, 65),
    "corners-of-wide": _points(7, 40, (0, 0), (6, 39), (0, 39), (6, 0)),
}


@pytest.mark.parametrize("name", list(TIE_PATTERNS))
def test_tie_heavy_patterns_match_scipy(name, backend, device):
    assert_matches_scipy(TIE_PATTERNS[name], backend, device)


def test_tie_patterns_really_have_ties():
    """Guard for the test above: the patterns must put pixels at equal distance from several features."""
    for name in ("lattice-2x2", "checkerboard", "four-around-centre", "circle-r2-25"):
        mask = TIE_PATTERNS[name]
        h, w = mask.shape
        fr, fc = np.nonzero(mask)
        yy, xx = np.mgrid[:h, :w]
        d2 = (yy[..., None] - fr) ** 2 + (xx[..., None] - fc) ** 2
        assert ((d2 == d2.min(-1, keepdims=True)).sum(-1) > 1).any(), name


@pytest.mark.parametrize(
    "mask",
    [
        pytest.param(_points(1, 1, (0, 0)), id="1x1"),
        pytest.param(_points(9, 13, (4, 6)), id="single-centre"),
        pytest.param(_points(9, 13, (0, 0)), id="single-top-left"),
        pytest.param(_points(9, 13, (8, 12)), id="single-bottom-right"),
        pytest.param(np.ones((7, 5), dtype=bool), id="full"),
        pytest.param(np.random.default_rng(1).random((1, 57)) < 0.1, id="single-row"),
        pytest.param(np.random.default_rng(2).random((57, 1)) < 0.1, id="single-column"),
        pytest.param(_points(1, 30, (0, 10), (0, 20)), id="single-row-tie"),
        pytest.param(_points(30, 1, (10, 0), (20, 0)), id="single-column-tie"),
    ],
)
def test_edge_shapes_match_scipy(mask, backend, device):
    assert_matches_scipy(mask, backend, device)


def test_batch_equals_per_image(backend, device):
    rng = np.random.default_rng(7)
    shape = (37, 45)
    images = [random_blobs(rng, *shape) for _ in range(3)]
    images += [rng.random(shape) < 0.01, rng.random(shape) < 0.6, np.zeros(shape, dtype=bool), np.ones(shape, bool)]
    batch = np.stack(images)
    dist, index = run(batch, backend, device)
    for i, image in enumerate(images):
        d, ix = run(image, backend, device)
        np.testing.assert_array_equal(index[i], ix)
        np.testing.assert_array_equal(dist[i], d)
    assert_matches_scipy(batch, backend, device)


def test_backends_agree_bitwise(device):
    mask = np.stack([random_blobs(np.random.default_rng(s), 64, 80) for s in range(3)])
    d_torch, i_torch = run(mask, "torch", device)
    d_numba, i_numba = run(mask, "numba", "cpu")
    d_auto, i_auto = run(mask, "auto", device)
    np.testing.assert_array_equal(i_torch, i_numba)
    np.testing.assert_array_equal(d_torch, d_numba)
    np.testing.assert_array_equal(i_auto, i_numba)
    np.testing.assert_array_equal(d_auto, d_numba)


# ------------------------------------------------------------------------------------------------ conventions


def test_empty_image_gives_inf_and_minus_one(backend, device):
    dist, index = run(np.zeros((5, 8), dtype=bool), backend, device)
    assert np.isposinf(dist).all()
    assert (index == -1).all()


def test_empty_image_in_batch_leaves_the_others_alone(backend, device):
    rng = np.random.default_rng(3)
    batch = np.stack([random_blobs(rng, 20, 30), np.zeros((20, 30), bool), rng.random((20, 30)) < 0.05])
    dist, index = run(batch, backend, device)
    assert np.isposinf(dist[1]).all() and (index[1] == -1).all()
    assert_matches_scipy(batch, backend, device)


def test_two_dimensional_input_gives_two_dimensional_output(backend, device):
    mask = _points(6, 9, (1, 2), (4, 7))
    dist, index = run(mask, backend, device)
    assert dist.shape == index.shape == (6, 9)
    ref_dist, ref_index = scipy_edt(mask)
    np.testing.assert_array_equal(index, ref_index)
    np.testing.assert_allclose(dist, ref_dist, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 5, 7), (3, 0, 4), (2, 4, 0), (0, 0)])
def test_empty_tensors_give_empty_outputs(shape, backend, device):
    dist, index = run(np.zeros(shape, dtype=bool), backend, device)
    assert dist.shape == index.shape == shape


def test_non_contiguous_input(backend, device):
    mask = np.random.default_rng(4).random((3, 26, 19)) < 0.1
    tensor = torch.from_numpy(mask).to(device).transpose(1, 2)  # a (3, 19, 26) strided view
    dist, index = edt(tensor, backend)
    ref_dist, ref_index = run(np.ascontiguousarray(mask.transpose(0, 2, 1)), backend, device)
    np.testing.assert_array_equal(index.cpu().numpy(), ref_index)
    np.testing.assert_array_equal(dist.cpu().numpy(), ref_dist)


def test_chunking_does_not_change_the_result(device):
    rng = np.random.default_rng(5)
    mask = np.stack([random_blobs(rng, 33, 47), rng.random((33, 47)) < 0.02, np.zeros((33, 47), bool)])
    d_one, i_one = run(mask, "torch", device, chunk_size=1)
    d_auto, i_auto = run(mask, "torch", device, chunk_size=None)
    d_odd, i_odd = run(mask, "torch", device, chunk_size=7)  # chunks straddling image boundaries
    np.testing.assert_array_equal(i_one, i_auto)
    np.testing.assert_array_equal(d_one, d_auto)
    np.testing.assert_array_equal(i_odd, i_auto)
    np.testing.assert_array_equal(d_odd, d_auto)


# ------------------------------------------------------------------------------------------------ bad input


def test_rejects_non_tensor():
    with pytest.raises(TypeError, match="`mask`"):
        distance_transform_edt(np.zeros((3, 3), dtype=bool))


@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8, torch.int64])
def test_rejects_non_bool_dtype(dtype):
    with pytest.raises(TypeError, match=r"`mask`.*" + str(dtype).replace(".", r"\.")):
        distance_transform_edt(torch.zeros(2, 3, 3, dtype=dtype))


@pytest.mark.parametrize("shape", [(5,), (1, 1, 3, 3), ()])
def test_rejects_wrong_ndim(shape):
    with pytest.raises(ValueError, match=r"`mask`.*\(B, H, W\).*" + str(shape).replace("(", r"\(").replace(")", r"\)")):
        distance_transform_edt(torch.zeros(shape, dtype=torch.bool))


def test_rejects_unknown_backend():
    with pytest.raises(ValueError, match=r"`backend`.*'cuda'"):
        distance_transform_edt(torch.zeros(3, 3, dtype=torch.bool), backend="cuda")


@pytest.mark.parametrize("chunk_size", [0, -1, 1.5, True])
def test_rejects_bad_chunk_size(chunk_size):
    with pytest.raises(ValueError, match="`chunk_size`"):
        distance_transform_edt(torch.zeros(3, 3, dtype=torch.bool), backend="torch", chunk_size=chunk_size)


# ------------------------------------------------------------------ the monotone row pass of the tensor path


def _row_pass_reference(g: torch.Tensor, bits: int) -> torch.Tensor:
    """Every column tried: ``min_c ((x - c)^2 + g[c]) << bits | c`` (the definition the row pass must meet)."""
    w = g.shape[1]
    cols = torch.arange(w, dtype=torch.int64)
    return torch.amin((((cols[:, None] - cols[None]) ** 2 + g[:, None, :]) << bits) + cols[None], dim=-1)


@st.composite
def row_costs(draw) -> torch.Tensor:
    """Rows of squared column distances: small values (many ties), sparse features among `big`, or all `big`."""
    w = draw(st.one_of(st.integers(1, 70), st.sampled_from([31, 32, 33, 63, 64, 65, 127, 128, 129])))
    n = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["small", "sparse", "empty", "equal"]))
    gen = torch.Generator().manual_seed(seed)
    big = 2 * w * w + 7
    if kind == "small":
        return torch.randint(0, 4, (n, w), generator=gen) ** 2
    if kind == "equal":
        return torch.full((n, w), draw(st.integers(0, 9)))
    g = torch.full((n, w), big)
    if kind == "sparse":
        g[torch.rand(n, w, generator=gen) < 0.1] = 0
    return g


@settings(max_examples=300, deadline=None)
@given(g=row_costs())
def test_monotone_row_pass_equals_trying_every_column(g):
    w = g.shape[1]
    bits = max(1, (w - 1).bit_length())
    out = torch.empty_like(g)
    distance._row_pass_monotone(g, bits, out)
    torch.testing.assert_close(out, _row_pass_reference(g, bits), rtol=0, atol=0)


@pytest.mark.slow
def test_large_masks_match_scipy_on_both_paths():
    """2048 x 2048 (blobs; sparse pixels) and a 1 x 5000 line with far-apart features, bit for bit."""
    rng = np.random.default_rng(11)
    masks = [random_blobs(rng, 2048, 2048), rng.random((2048, 2048)) < 1e-4, _points(1, 5000, (0, 17), (0, 4321))]
    for mask in masks:
        for backend in ("torch", "numba"):
            assert_matches_scipy(mask, backend)
