"""DDP: two gloo processes on CPU, each with half of the images, give the single-process result.

The workers assert that the process group really has two members (a silent fallback to one process would make the
test meaningless) and return their world size with the results.
"""

from __future__ import annotations

import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from segmetrics_torch import (
    MAE,
    BoundaryPR,
    Dice,
    EMeasure,
    FMeasure,
    ForegroundMeasures,
    HierarchyMeasures,
    IoU,
    MorphologicalBoundaryF,
    PartitionMeasures,
    ProposalRecall,
    SMeasure,
    WeightedFMeasure,
)
from segmetrics_torch.synthetic import make_boundary_dataset

pytestmark = [pytest.mark.ddp, pytest.mark.slow]

METRICS = {
    "mae": MAE,
    "sm": SMeasure,
    "wfm": WeightedFMeasure,
    "fm": FMeasure,
    "em": EMeasure,
    "iou": IoU,
    "dice": Dice,
    "all": ForegroundMeasures,
}


def make_data():
    gen = torch.Generator().manual_seed(7)
    gts = (torch.rand(8, 24, 37, generator=gen) > 0.6).to(torch.uint8) * 255
    gts[3] = 0  # an empty ground truth
    preds = (torch.rand(8, 24, 37, generator=gen) * 255).to(torch.uint8)
    return preds, gts


def boundary_metrics():
    """(name, metric factory, preds, target) of the boundary family: integer-count states and sums."""
    d = make_boundary_dataset(6, (36, 48), 2, seed=5)
    preds, bounds = torch.from_numpy(d.preds), torch.from_numpy(d.boundaries)
    masks = torch.from_numpy(d.segmentations[:, 0] == 0)
    masks_gt = torch.from_numpy(d.segmentations[:, 1] == 0)
    return [
        ("bpr", lambda: BoundaryPR(thresholds=9, max_dist=2.5), preds, bounds),
        ("mbf", MorphologicalBoundaryF, masks, masks_gt),
    ]


def partition_metrics():
    """(name, metric factory, preds, target) of the partition family: float64 sums, int64 Fb counts."""
    gen = torch.Generator().manual_seed(11)
    blocks = torch.randint(0, 5, (6, 4, 5), generator=gen)
    segs = blocks.repeat_interleave(6, 1).repeat_interleave(7, 2)  # (6, 24, 35) blocky partitions
    gts = torch.stack([segs, torch.randint(0, 3, (6, 24, 35), generator=gen)], 1)
    gts[:, 1] = gts[:, 1].div(2, rounding_mode="floor") + segs * 3
    ucm = torch.zeros(6, 49, 71, dtype=torch.float64)
    ucm[:, 0::2, 1::2] = torch.rand(6, 25, 35, generator=gen, dtype=torch.float64)
    ucm[:, 1::2, 0::2] = torch.rand(6, 24, 36, generator=gen, dtype=torch.float64)
    return [
        ("partition", lambda: PartitionMeasures(max_dist=2.0), segs, gts),
        ("hierarchy", lambda: HierarchyMeasures(thresholds=7, measures=None), ucm, gts),
    ]


def proposal_images():
    """(pools, objects, voids, classes) of 6 images with pools of different sizes (the cat state grows unevenly)."""
    gen = torch.Generator().manual_seed(13)
    out = []
    for i in range(6):
        pool = torch.rand(5 + 3 * i, 14, 15, generator=gen) < 0.4
        objs = torch.rand(1 + i % 3, 14, 15, generator=gen) < 0.4
        out.append((pool, objs, torch.rand(14, 15, generator=gen) < 0.1, torch.arange(objs.shape[0]) % 2))
    return out


def proposal_metric() -> ProposalRecall:
    """Jaccard and boundary-F curves with classes: sum states and the cat states of the medians."""
    return ProposalRecall([2, 5, 100], num_classes=2, boundary=True, bound_th=2)


def _proposals(metric, images):
    for pool, objs, void, classes in images:
        metric.update(pool, objs, void, classes)
    return metric.compute()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, out_path: str) -> None:
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        assert dist.get_world_size() == 2, "the DDP test must run in two processes"
        preds, gts = make_data()
        results = {}
        for name, cls in METRICS.items():
            metric = cls()
            # each rank sees every other image, in two batches of different sizes (uneven work per update)
            mine = list(range(rank, preds.shape[0], world))
            metric.update(preds[mine[:1]], gts[mine[:1]])
            metric.update([preds[i] for i in mine[1:]], [gts[i] for i in mine[1:]])
            results[name] = metric.compute()
        for name, factory, preds_b, target_b in boundary_metrics() + partition_metrics():
            metric = factory()
            mine = list(range(rank, preds_b.shape[0], world))
            metric.update(preds_b[mine[:1]], target_b[mine[:1]])
            metric.update([preds_b[i] for i in mine[1:]], [target_b[i] for i in mine[1:]])
            results[name] = metric.compute()
        results["proposals"] = _proposals(proposal_metric(), proposal_images()[rank::world])
        if rank == 0:
            torch.save({"world_size": dist.get_world_size(), "results": results}, out_path)
    finally:
        dist.destroy_process_group()


def _assert_equal(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_equal(a[k], b[k])
    else:
        # the same float64 values summed in another order: equal to the last bits or nearly
        torch.testing.assert_close(a, b, rtol=0, atol=1e-14, equal_nan=True)


def test_two_process_gloo_equals_single_process(tmp_path):
    out_path = str(tmp_path / "ddp.pt")
    mp.spawn(_worker, args=(2, _free_port(), out_path), nprocs=2, join=True)
    got = torch.load(out_path, weights_only=False)
    assert got["world_size"] == 2
    preds, gts = make_data()
    for name, cls in METRICS.items():
        single = cls()
        single.update(preds, gts)
        _assert_equal(got["results"][name], single.compute())
    for name, factory, preds_b, target_b in boundary_metrics() + partition_metrics():
        single = factory()
        single.update(preds_b, target_b)
        _assert_equal(got["results"][name], single.compute())
    single = _proposals(proposal_metric(), proposal_images())
    _assert_equal(got["results"]["proposals"], single)
