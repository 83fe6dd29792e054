"""Memory that grew where it need not (issue 26, item 3): the tolerance disk clipped to the image, and soft maps with
very many thresholds matched in bounded chunks; both give the counts of the unbounded computation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from segmetrics_torch import BoundaryPR
from segmetrics_torch.functional.boundary import boundary_pr, boundary_pr_counts
from segmetrics_torch.ops import matching
from segmetrics_torch.reference import boundary as ref


def test_offsets_outside_the_image_are_left_out() -> None:
    dy, _, _, pad, max_cost = matching.image_offsets(0.0075, 1, 60000)  # 450 px tolerance on a 1-pixel line
    assert len(dy) == 901 and (dy == 0).all() and pad == 450
    full = matching.offsets_within(matching.max_dist_pixels(0.0075, 1, 60000))
    assert len(full[0]) > 600_000 and max_cost == int(full[2].max())
    dy2, dx2, cost2, pad2, _ = matching.image_offsets(0.0075, 481, 321)  # BSDS-sized: nothing to leave out
    assert np.array_equal(dy2, full_bsds := matching.offsets_within(matching.max_dist_pixels(0.0075, 481, 321))[0])
    assert len(full_bsds) == len(dx2) == len(cost2) and pad2 == 4


@pytest.mark.parametrize("shape", [(1, 400), (3, 150), (150, 2)])
def test_thin_images_count_as_the_reference(shape: tuple[int, int]) -> None:
    """Images thinner than their tolerance disk: the clipped table gives BSR's counts (the scipy oracle)."""
    rng = np.random.default_rng(sum(shape))
    pb = rng.random(shape)
    gt = np.zeros(shape, bool)
    gt.flat[::7] = True
    thresholds = np.array([0.2, 0.5, 0.8])
    counts = boundary_pr_counts(
        torch.from_numpy(pb)[None], torch.from_numpy(gt)[None, None], thresholds=thresholds, max_dist=0.05, thin=False
    )
    expected = ref.evaluation_bdry_image(pb, [gt], thresholds, max_dist=0.05, thin_pb=False)
    got = np.stack([getattr(counts, k)[0].numpy() for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")], axis=1)
    np.testing.assert_array_equal(got, expected)


def test_a_long_line_with_a_large_tolerance_runs() -> None:
    """Was a MemoryError at once (candidate buffers of machine pixels x 636,000 offsets)."""
    gt = torch.zeros(1, 1, 1, 60000, dtype=torch.bool)
    gt[..., ::100] = True
    result = boundary_pr(torch.rand(1, 1, 60000, generator=torch.Generator().manual_seed(0)), gt, thresholds=9)
    assert 0 < float(result["ods"]["f"]) <= 1


def test_many_thresholds_are_matched_in_chunks(monkeypatch) -> None:
    """Chunked calls of the soft-map kernel (a bound far below the work) give the counts of one call."""
    gen = torch.Generator().manual_seed(0)
    pb = torch.rand(2, 40, 60, generator=gen)
    gt = torch.zeros(2, 2, 40, 60, dtype=torch.bool)
    gt[:, 0, 20, 5:55] = True
    gt[:, 1, 5:35, 30] = True

    def run() -> dict:
        metric = BoundaryPR(thresholds=500)
        metric.update(pb, gt)
        return metric.compute()

    whole = run()
    monkeypatch.setattr(matching, "_CHUNK_PIXELS", 3000)
    tasks = np.argwhere(np.ones((2, 500), bool))
    hist = np.full((2, 501), 4)
    assert len(matching._task_chunks(tasks, hist, np.arange(500))) > 10  # the bound really splits
    chunked = run()
    for key in ("precision", "recall", "thresholds"):
        torch.testing.assert_close(chunked[key], whole[key], rtol=0, atol=0)
