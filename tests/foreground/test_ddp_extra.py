"""DDP for the issue-15 foreground Metrics: two gloo processes, each with half of the images, == one process.

Same pattern as ``tests/metrics/test_ddp.py``: the workers assert a world size of 2 and rank 0 saves its results.
"""

from __future__ import annotations

import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from segmetrics_torch.metrics.foreground_extra import (
    CamouflageContextMeasure,
    ContextMeasure,
    HumanCorrectionEffort,
    MultiScaleIoU,
    SizeInvariantMAE,
    SizeInvariantThresholdMeasures,
    ThresholdMeasures,
)
from tests.metrics.test_ddp import _assert_equal, _free_port

pytestmark = [pytest.mark.ddp, pytest.mark.slow]

METRICS = {
    "threshold_sample": lambda: ThresholdMeasures(),
    "threshold_pooled": lambda: ThresholdMeasures(sample_based=False, beta2=1.0),
    "si_sample": lambda: SizeInvariantThresholdMeasures(),
    "si_pooled": lambda: SizeInvariantThresholdMeasures(sample_based=False),
    "si_mae": SizeInvariantMAE,
    "msiou": lambda: MultiScaleIoU(with_binary=True),
    "hce": HumanCorrectionEffort,
    "cm": ContextMeasure,
    "ccm": CamouflageContextMeasure,
}


def make_data():
    gen = torch.Generator().manual_seed(9)
    gts = torch.zeros(8, 30, 41, dtype=torch.uint8)
    for i in range(8):
        for _ in range(i):  # 0..7 rectangles: empty GT, one target, many small components
            y, x = torch.randint(0, 26, (1,), generator=gen), torch.randint(0, 37, (1,), generator=gen)
            hh, ww = torch.randint(1, 12, (2,), generator=gen)
            gts[i, y : y + hh, x : x + ww] = 255
    preds = (torch.rand(8, 30, 41, generator=gen) * 255).to(torch.uint8)
    images = (torch.rand(8, 30, 41, 3, generator=gen) * 255).to(torch.uint8)  # RGB, for the camouflage measure
    return preds, gts, images


def _update(metric, name: str, preds, gts, images) -> None:
    if name == "ccm":
        metric.update(preds, gts, images)
    else:
        metric.update(preds, gts)


def _worker(rank: int, world: int, port: int, out_path: str) -> None:
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        assert dist.get_world_size() == 2, "the DDP test must run in two processes"
        preds, gts, images = make_data()
        results = {}
        for name, factory in METRICS.items():
            metric = factory()
            mine = list(range(rank, preds.shape[0], world))
            _update(metric, name, preds[mine[:1]], gts[mine[:1]], images[mine[:1]])
            _update(
                metric, name, [preds[i] for i in mine[1:]], [gts[i] for i in mine[1:]], [images[i] for i in mine[1:]]
            )
            results[name] = metric.compute()
        if rank == 0:
            torch.save({"world_size": dist.get_world_size(), "results": results}, out_path)
    finally:
        dist.destroy_process_group()


def test_two_process_gloo_equals_single_process(tmp_path):
    out_path = str(tmp_path / "ddp.pt")
    mp.spawn(_worker, args=(2, _free_port(), out_path), nprocs=2, join=True)
    got = torch.load(out_path, weights_only=False)
    assert got["world_size"] == 2
    preds, gts, images = make_data()
    for name, factory in METRICS.items():
        single = factory()
        _update(single, name, preds, gts, images)
        _assert_equal(got["results"][name], single.compute())
