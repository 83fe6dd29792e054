"""Ground truth: the SBD readers (scipy sparse matrices and arrays), SEAL's regeneration bit for bit against
pyEdgeEval 0.2.8's conversion on the SBD benchmark sample, Pillow's nearest resize, the backends agree."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from PIL import Image

from segmetrics_torch.functional.semantic_boundary import (
    read_sbd_cls,
    read_sbd_inst,
    resize_nearest,
    sbd_ground_truth,
    semantic_boundary_counts,
)
from segmetrics_torch.functional.semantic_boundary.ground_truth import cityscapes_edges
from tests.conftest import REQUIRED, SHARED

BENCH = SHARED / "sbd_bench"
needs_bench = pytest.mark.skipif(
    not (BENCH / "datadir").is_dir() and not REQUIRED, reason="../shared/sbd_bench is not available"
)
IDS = ["2008_000051", "2008_000195"]


@needs_bench
def test_sbd_readers_on_the_benchmark_sample() -> None:
    cls = read_sbd_cls(BENCH / "datadir/cls/2008_000051.mat")
    assert cls.boundaries.shape == (20, 371, 500) and cls.segmentation.shape == (371, 500)
    assert cls.categories == (5, 9, 15)
    assert sorted(np.unique(cls.segmentation).tolist()) == [0, 5, 9, 15]
    assert [k + 1 for k in range(20) if cls.boundaries[k].any()] == [5, 9, 15]
    inst = read_sbd_inst(BENCH / "datadir/inst/2008_000051.mat")
    assert inst.categories.tolist() == [5, 5, 9, 15, 15] and inst.boundaries.shape == (5, 371, 500)
    assert inst.segmentation.max() == 5


@needs_bench
@pytest.mark.parametrize("thin", [True, False])
@pytest.mark.parametrize("instance_sensitive", [True, False])
def test_sbd_regeneration_equals_pyedgeeval_conversion(thin: bool, instance_sensitive: bool) -> None:
    peer = pytest.importorskip("tests.semantic_boundary.peer")  # noqa: F841  (patches pyEdgeEval for scipy >= 1.13)
    from pyEdgeEval.helpers.convert_sbd import convert_mat2np

    for image_id in IDS:
        cls, inst = BENCH / "datadir/cls" / f"{image_id}.mat", BENCH / "datadir/inst" / f"{image_id}.mat"
        radius = 1 if thin else 2
        with _quiet():
            ref = convert_mat2np(str(cls), str(inst) if instance_sensitive else None, radius=radius, thin=thin)
        ours = sbd_ground_truth(
            cls, inst, regenerate=True, instance_sensitive=instance_sensitive, thin=thin, radius=radius, ignore_border=5
        )
        np.testing.assert_array_equal(ours.edges.numpy(), ref[0].astype(bool))
        train = ref[1].astype(np.int64) - 1
        train[(train < 0) | (train > 19)] = 255
        np.testing.assert_array_equal(ours.segmentation.numpy(), train)


def _quiet():
    import contextlib
    import io

    return contextlib.redirect_stdout(io.StringIO())


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 40), w=st.integers(1, 40), oh=st.integers(1, 40), ow=st.integers(1, 40))
def test_resize_nearest_is_pillows(h: int, w: int, oh: int, ow: int) -> None:
    a = np.arange(h * w, dtype=np.int32).reshape(h, w)
    expected = np.asarray(Image.fromarray(a).resize((ow, oh), Image.Resampling.NEAREST))
    np.testing.assert_array_equal(resize_nearest(torch.from_numpy(a), (oh, ow)).numpy(), expected)


def test_backends_agree() -> None:
    """The tensor path (the CUDA code, here on the CPU) gives the compiled kernels' edges and counts."""
    rng = np.random.default_rng(1)
    labels = torch.from_numpy(rng.choice([7, 8, 11, 24, 26, 3], size=(4, 6))).repeat_interleave(7, 0)
    labels = labels.repeat_interleave(9, 1)
    inst = torch.where(labels == 26, 26000 + torch.arange(labels.shape[1]) // 20, labels)
    e_numba = cityscapes_edges(labels, inst, radius=2, thin=True, backend="numba")
    e_torch = cityscapes_edges(labels, inst, radius=2, thin=True, backend="torch")
    assert torch.equal(e_numba, e_torch) and e_numba.any()
    pb = (e_numba.double() * 0.7 + 0.3 * torch.rand(e_numba.shape, dtype=torch.float64) ** 3)[None]
    seg = torch.zeros_like(labels)[None]
    kw = {"thresholds": 7, "max_dist": 1.5, "kill_internal": True, "skip_if_nonexistent": True, "ignore_border": 2}
    a = semantic_boundary_counts(pb, e_numba[None], seg, backend="numba", **kw)
    b = semantic_boundary_counts(pb, e_numba[None], seg, backend="torch", **kw)
    for x, y in zip(a[:4], b[:4], strict=True):
        assert torch.equal(x, y)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_inputs_give_the_cpu_counts() -> None:
    rng = np.random.default_rng(2)
    labels = torch.from_numpy(rng.choice([7, 11, 26], size=(5, 5))).repeat_interleave(8, 0).repeat_interleave(8, 1)
    edges = cityscapes_edges(labels, None, radius=1, thin=True)
    pb = (edges.double() * 0.9)[None]
    cpu = semantic_boundary_counts(pb, edges[None], thresholds=5, max_dist=2.0)
    gpu = semantic_boundary_counts(pb.cuda(), edges[None].cuda(), thresholds=5, max_dist=2.0)
    for x, y in zip(cpu[:4], gpu[:4], strict=True):
        assert torch.equal(x, y.cpu())
