"""Evaluation sharding: every image once over the ranks, unlike DistributedSampler's padding.

The two-process test runs a DataLoader over 5 images on 2 gloo ranks twice: with ``DistributedSampler`` (which pads
the shorter shard with image 0 again, so 6 images are counted) and with :class:`EvaluationSampler`. The first differs
from the single-process result, the second equals it.
"""

from __future__ import annotations

import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from segmetrics_torch import MAE, ForegroundMeasures
from segmetrics_torch.sharding import EvaluationSampler, shard_indices


@pytest.mark.parametrize("length", [0, 1, 2, 5, 7, 64, 101])
@pytest.mark.parametrize("world", [1, 2, 3, 8])
def test_shards_cover_every_index_once_in_order(length, world):
    shards = [shard_indices(length, r, world) for r in range(world)]
    assert [i for s in shards for i in s] == list(range(length))
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1


def test_sampler_without_process_group_is_the_whole_dataset():
    assert list(EvaluationSampler(range(4))) == [0, 1, 2, 3]
    assert len(EvaluationSampler(3, num_replicas=2, rank=0)) == 1


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((5, 2, 2), ValueError, "rank"),
        ((5, -1, 2), ValueError, "rank"),
        ((5, 0, 0), ValueError, "world_size"),
        ((-1, 0, 1), ValueError, "length"),
        ((5.0, 0, 1), TypeError, "length"),
        ((5, True, 2), TypeError, "rank"),
    ],
)
def test_bad_shard_arguments(args, error, match):
    with pytest.raises(error, match=match):
        shard_indices(*args)


def _data():
    gen = torch.Generator().manual_seed(3)
    preds = (torch.rand(5, 16, 18, generator=gen) * 255).to(torch.uint8)
    gts = (torch.rand(5, 16, 18, generator=gen) > 0.5).to(torch.uint8) * 255
    gts[0] = 255  # image 0 (the one DistributedSampler repeats) is far from the others
    preds[0] = 0
    return TensorDataset(preds, gts)


def _evaluate(loader):
    metrics = {"mae": MAE(), "all": ForegroundMeasures()}
    for preds, gts in loader:
        for m in metrics.values():
            m.update(preds, gts)
    return {k: m.compute() for k, m in metrics.items()}


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
        assert dist.get_world_size() == 2, "the test must run in two processes"
        data = _data()
        padded = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, shuffle=False))
        ours = DataLoader(data, batch_size=2, sampler=EvaluationSampler(data))
        out = {"padded_len": len(padded.sampler), "padded": _evaluate(padded), "ours": _evaluate(ours)}
        if rank == 0:
            torch.save({"world_size": dist.get_world_size(), **out}, out_path)
    finally:
        dist.destroy_process_group()


@pytest.mark.ddp
@pytest.mark.slow
def test_distributed_sampler_padding_changes_the_result_and_ours_does_not(tmp_path):
    out_path = str(tmp_path / "ddp.pt")
    mp.spawn(_worker, args=(2, _free_port(), out_path), nprocs=2, join=True)
    got = torch.load(out_path, weights_only=False)
    assert got["world_size"] == 2 and got["padded_len"] == 3  # 2 x 3 = 6 images evaluated out of 5
    single = _evaluate(DataLoader(_data(), batch_size=2))
    # ours: the single-process numbers
    torch.testing.assert_close(got["ours"]["mae"], single["mae"], rtol=0, atol=1e-14)
    torch.testing.assert_close(got["ours"]["all"]["s_measure"], single["all"]["s_measure"], rtol=0, atol=1e-14)
    torch.testing.assert_close(
        got["ours"]["all"]["f_measure"]["curve"], single["all"]["f_measure"]["curve"], rtol=0, atol=1e-14
    )
    # DistributedSampler: image 0 counted twice, a different (wrong) dataset mean
    assert abs(float(got["padded"]["mae"]) - float(single["mae"])) > 1e-3
