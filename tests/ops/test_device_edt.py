"""The device distance transform (:mod:`segmetrics_torch.ops.device_edt`, what CUDA runs; here on CPU tensors, and
on CUDA when present) against scipy's ``distance_transform_edt(~mask, sampling=spacing)`` and the compiled host
transform: random smooth 2-D and 3-D shapes with anisotropic spacing (hypothesis), non-square shapes, empty, full,
single-voxel, 1 x n and n x 1 inputs, batches; every index names a feature at exactly the returned distance; the
chunking changes no bit; long lines run under a memory cap."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from segmetrics_torch.ops.device_edt import feature_transform, squared_feature_transform
from segmetrics_torch.ops.distance import distance_to_features, distance_to_features_device, distance_transform_edt

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
#: the issue's bound on the distances' relative difference from scipy and the host transform (measured: 3e-16)
RTOL = 1e-15


def _named_squared(mask: np.ndarray, index: np.ndarray, spacing: tuple[float, ...]) -> np.ndarray:
    """The squared distance from every element to the feature its index names, summed as scipy (and the transform)
    sums it: axis 0 first, each term ``(s d)^2`` with ``s`` the spacing."""
    own = np.indices(mask.shape).reshape(mask.ndim, -1)
    named = np.stack(np.unravel_index(index.ravel(), mask.shape))
    total = np.zeros(mask.size)
    for axis in range(mask.ndim):
        t = (named[axis] - own[axis]).astype(np.float64) * spacing[axis]
        total = total + t * t
    return total.reshape(mask.shape)


def _check_image(mask: np.ndarray, spacing: tuple[float, ...], dist: np.ndarray, index: np.ndarray) -> None:
    """``dist`` and ``index`` of one image against scipy, the host transform and the index rule."""
    assert dist.dtype == np.float64 and index.dtype == np.int64 and dist.shape == index.shape == mask.shape
    if not mask.any():
        assert np.isinf(dist).all() and (index == -1).all()
        return
    expected = np.asarray(ndimage.distance_transform_edt(~mask, sampling=spacing), dtype=np.float64)
    # scipy's float operations: bitwise wherever one feature is the nearest (a tolerance test at whole voxels, the
    # NSD's, falls as the references'); features equally near in real arithmetic can round an ulp apart, and which
    # one scipy names depends on its feature transform (about 1 element in 10^5 of random smooth shapes)
    for other in (expected, distance_to_features(mask, spacing)):
        differ = dist != other
        assert np.all(np.abs(dist[differ] - other[differ]) <= 2 * np.spacing(other[differ]))
        assert np.count_nonzero(differ) <= max(2, dist.size // 1000)
    if all(s == 1.0 for s in spacing):  # every squared distance an exact integer: bitwise
        assert np.array_equal(dist, expected)
    # every index names a feature, at exactly the returned distance (ties may name another feature than scipy's)
    assert mask.ravel()[index.ravel()].all()
    assert np.array_equal(np.sqrt(_named_squared(mask, index, spacing)), dist)
    assert (dist[mask] == 0).all() and np.array_equal(index[mask], np.flatnonzero(mask))


def _run(mask: np.ndarray, spacing: tuple[float, ...], device: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    dist, index = feature_transform(torch.from_numpy(mask).to(device), spacing)
    assert index is not None and dist.device.type == device == index.device.type
    return dist.cpu().numpy(), index.cpu().numpy()


@st.composite
def smooth_shapes(draw: st.DrawFn, ndim: int) -> tuple[np.ndarray, tuple[float, ...]]:
    """A batch of random smooth shapes (Gaussian-filtered noise above a random level) and an anisotropic spacing."""
    shape = tuple(draw(st.integers(1, 19 if ndim == 3 else 40)) for _ in range(ndim))
    batch = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    sigma = draw(st.floats(0.0, 3.0))
    level = draw(st.floats(-0.6, 0.6))
    spacing = tuple(draw(st.sampled_from([1.0, 0.5, 0.7, 0.8, 1.3, 2.0, 2.5, 3.1])) for _ in range(ndim))
    noise = np.random.default_rng(seed).standard_normal((batch, *shape))
    smooth = ndimage.gaussian_filter(noise, (0, *([sigma] * ndim)))
    smooth /= max(float(np.abs(smooth).max()), 1e-12)
    return smooth > level, spacing


@pytest.mark.parametrize("ndim", [2, 3])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_smooth_shapes_match_scipy(ndim: int, data: st.DataObject) -> None:
    masks, spacing = data.draw(smooth_shapes(ndim))
    dist, index = _run(masks, spacing)
    for b in range(masks.shape[0]):
        _check_image(masks[b], spacing, dist[b], index[b])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("shape", "spacing"),
    [
        ((37, 53), (0.7, 1.3)),
        ((53, 37), (2.0, 1.0)),
        ((1, 61), (1.0, 0.3)),
        ((61, 1), (0.3, 1.0)),
        ((9, 23, 31), (2.0, 0.8, 0.8)),
        ((31, 9, 23), (1.0, 1.0, 1.0)),
        ((23, 1, 31), (2.5, 0.7, 0.9)),
        ((1, 1, 40), (1.0, 1.0, 0.6)),
        ((40, 1, 1), (0.6, 1.0, 1.0)),
    ],
)
@pytest.mark.parametrize("density", [0.5, 0.05, 0.002])
def test_random_non_square_inputs(
    device: str, shape: tuple[int, ...], spacing: tuple[float, ...], density: float
) -> None:
    rng = np.random.default_rng(len(shape) * 1000 + int(density * 1000) + shape[0])
    masks = rng.random((2, *shape)) < density
    masks[1].flat[rng.integers(masks[1].size)] = True
    dist, index = _run(masks, spacing, device)
    for b in range(2):
        _check_image(masks[b], spacing, dist[b], index[b])


@pytest.mark.parametrize("shape", [(1, 1), (1, 1, 1), (5, 7), (4, 5, 6)])
def test_empty_full_and_single_voxel_images(shape: tuple[int, ...]) -> None:
    spacing = (0.7, 1.9, 1.3)[-len(shape) :]
    single = np.zeros(shape, bool)
    single.flat[single.size // 2] = True
    corner = np.zeros(shape, bool)
    corner.flat[-1] = True
    masks = np.stack([np.zeros(shape, bool), np.ones(shape, bool), single, corner])
    dist, index = _run(masks, spacing)
    assert np.isinf(dist[0]).all() and (index[0] == -1).all()  # empty: no nearest feature
    assert (dist[1] == 0).all() and np.array_equal(index[1].ravel(), np.arange(masks[1].size))  # full: themselves
    assert (index[2] == single.size // 2).all() and (index[3] == single.size - 1).all()
    for b in range(4):
        _check_image(masks[b], spacing, dist[b], index[b])


def test_an_image_does_not_depend_on_its_batch() -> None:
    rng = np.random.default_rng(3)
    masks = rng.random((4, 11, 13, 17)) < 0.02
    masks[2] = False
    spacing = (2.0, 0.8, 0.8)
    dist, index = _run(masks, spacing)
    for b in range(4):
        alone, alone_index = _run(masks[b], spacing)
        assert np.array_equal(alone, dist[b]) and np.array_equal(alone_index, index[b])


@pytest.mark.parametrize("shape", [(2, 3, 40, 60), (2, 300), (300, 3), (3, 5, 129, 2)])
def test_the_chunking_changes_no_bit(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(sum(shape))
    mask = torch.from_numpy(rng.random(shape) < 0.03)
    spacing = (0.7, 1.3, 2.5)[-(len(shape) - 1) :] if len(shape) > 2 else (0.7, 1.3)
    whole = squared_feature_transform(mask, spacing, chunk_elements=2**30)
    for chunk in (1, 37, 1000):
        part = squared_feature_transform(mask, spacing, chunk_elements=chunk)
        assert torch.equal(part[0], whole[0])
        assert whole[1] is not None and part[1] is not None and torch.equal(part[1], whole[1])


def test_without_indices_the_same_distances() -> None:
    rng = np.random.default_rng(5)
    mask = torch.from_numpy(rng.random((2, 13, 17, 19)) < 0.05)
    dist, index = feature_transform(mask, (1.5, 0.5, 0.75))
    alone, none = feature_transform(mask, (1.5, 0.5, 0.75), return_indices=False)
    assert none is None and index is not None and torch.equal(alone, dist)


@pytest.mark.parametrize("length", [12_000, 500_000])
def test_long_rows_match_the_host_transform(length: int) -> None:
    rng = np.random.default_rng(length)
    for shape in ((1, length), (length, 1), (2, length // 100, 100)):
        f = rng.random(shape) < 0.0005
        f.flat[[5, -7]] = True
        spacing = (0.7, 1.3) if len(shape) == 2 else (0.7, 1.3, 0.4)
        dist, index = _run(f, spacing)
        host = distance_to_features(f, spacing)
        np.testing.assert_allclose(dist, host, rtol=RTOL, atol=0)
        assert f.ravel()[index.ravel()].all()
        assert np.array_equal(np.sqrt(_named_squared(f, index, spacing)), dist)


_BOUNDED = """
import resource, numpy as np, torch
from segmetrics_torch.ops.device_edt import feature_transform
from segmetrics_torch.ops.distance import distance_to_features, distance_to_features_device, distance_transform_edt
torch.set_num_threads(1)
cases = []
for shape in [(1, 12_000), (1, 500_000), (12_000, 2), (500_000, 2)]:  # the host's values first, outside the cap
    f = np.zeros(shape, bool); f.flat[[3, -5]] = True
    cases.append((f, distance_to_features(f, (0.7, 1.3))))
small = torch.zeros(4, 9, dtype=torch.bool); small[1, 2] = True
feature_transform(small, (1.0, 1.0))  # warm up: allocator arenas, thread pools
vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + 384 * 2**20, resource.RLIM_INFINITY))
for f, host in cases:
    t = torch.from_numpy(f)
    dist, index = feature_transform(t, (0.7, 1.3))
    assert np.allclose(dist.numpy(), host, rtol=1e-15, atol=0), f.shape
    assert f.ravel()[index.numpy().ravel()].all(), f.shape
    assert np.allclose(distance_to_features_device(t, (0.7, 1.3), t.logical_not()).numpy(), host[~f], rtol=1e-15,
                       atol=0), f.shape
print("bounded")
"""


def test_long_rows_run_under_a_memory_cap() -> None:
    """1 x 12,000, 1 x 500,000, 12,000 x 2 and 500,000 x 2 (two lines of 500,000 in the later pass: one line per
    chunk, 100 bytes of scratch per element) under an address-space cap of 384 MiB above the interpreter's: the
    old brute-force table of a 12,000-long line alone was 1.15 GB."""
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_AS and /proc/self/status are Linux's")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_BOUNDED)], capture_output=True, text=True, env=env, timeout=600
    )
    assert run.returncode == 0 and "bounded" in run.stdout, run.stderr[-2000:]


def test_matches_the_brute_force_minimum() -> None:
    """Every distance against the minimum over all features of the transform's own float expression (the old device
    transform's brute force): equal within an ulp of the squared distance."""
    rng = np.random.default_rng(11)
    for shape, spacing in (((7, 9, 11), (2.0, 0.8, 0.8)), ((13, 29), (0.7, 1.3)), ((6, 5, 8), (0.3, 3.1, 1.7))):
        mask = rng.random(shape) < 0.08
        mask.flat[0] = True
        squared, _ = squared_feature_transform(torch.from_numpy(mask), spacing)
        features = np.flatnonzero(mask)
        best = np.full(mask.size, np.inf)
        for q in features:
            best = np.minimum(best, _named_squared(mask, np.full(mask.shape, q), spacing).ravel())
        np.testing.assert_allclose(squared.numpy().ravel(), best, rtol=2.3e-16, atol=0)


def test_bad_inputs_are_refused() -> None:
    mask = torch.zeros(2, 3, 4, dtype=torch.bool)
    with pytest.raises(TypeError, match="`features` to be a bool tensor"):
        feature_transform(mask.float(), (1.0, 1.0))
    with pytest.raises(TypeError, match="`features` to be a bool tensor"):
        feature_transform(np.zeros((3, 4), bool), (1.0, 1.0))  # type: ignore[arg-type]
    for spacing in ((1.0,), (1.0, 1.0, 1.0, 1.0), (0.0, 1.0), (-1.0, 1.0), (math.inf, 1.0), (math.nan, 1.0)):
        with pytest.raises(ValueError, match="`spacing`"):
            feature_transform(mask, spacing)
    with pytest.raises(ValueError, match="2 spatial axes"):
        feature_transform(torch.zeros(2, 2, 3, 4, dtype=torch.bool), (1.0, 1.0))
    with pytest.raises(ValueError, match="3 spatial axes"):
        feature_transform(torch.zeros(3, 4, dtype=torch.bool), (1.0, 1.0, 1.0))
    for chunk in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="`chunk_elements`"):
            feature_transform(mask, (1.0, 1.0), chunk_elements=chunk)  # type: ignore[arg-type]


def test_an_empty_batch() -> None:
    dist, index = feature_transform(torch.zeros(0, 3, 4, dtype=torch.bool), (1.0, 2.0))
    assert dist.shape == (0, 3, 4) and dist.dtype == torch.float64
    assert index is not None and index.shape == (0, 3, 4) and index.dtype == torch.int64


def test_distance_to_features_device_is_the_transform_read_at() -> None:
    rng = np.random.default_rng(2)
    mask = rng.random((9, 14, 12)) < 0.03
    at = rng.random(mask.shape) < 0.3
    spacing = (2.0, 0.8, 0.8)
    dist, _ = _run(mask, spacing)
    got = distance_to_features_device(torch.from_numpy(mask), spacing, torch.from_numpy(at)).numpy()
    assert np.array_equal(got, dist[at])


@pytest.mark.parametrize("shape", [(2, 11_000, 3), (1, 3, 11_000), (3, 40, 1)])
def test_the_2d_transform_of_tall_and_wide_images_on_either_route(shape: tuple[int, ...]) -> None:
    """The foreground family's 2-D transform: its tensor route's column pass scans in int16 up to 10,922 rows and in
    int32 above; both equal the compiled kernel (scipy's tie rule) bit for bit."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(sum(shape))
    mask = torch.from_numpy(rng.random(shape) < 0.002)
    mask[-1] = False  # an empty image
    tensor = distance_transform_edt(mask, backend="torch")
    compiled = distance_transform_edt(mask, backend="numba")
    assert torch.equal(tensor[0], compiled[0]) and torch.equal(tensor[1], compiled[1])
