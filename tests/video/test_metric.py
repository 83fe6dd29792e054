"""VideoObjectSegmentation: the folder evaluation's global row, states as sums (DDP with two gloo processes)."""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from segmetrics_torch.functional.video import evaluate_davis
from segmetrics_torch.metrics.video import VideoObjectSegmentation
from tests.video.layout import moving_objects, perturb, write_davis

KEYS = {
    "jf_mean": "J&F-Mean",
    "j_mean": "J-Mean",
    "j_recall": "J-Recall",
    "j_decay": "J-Decay",
    "f_mean": "F-Mean",
    "f_recall": "F-Recall",
    "f_decay": "F-Decay",
}


def sequences(task, n=4, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n):
        k = int(rng.integers(1, 4))
        gt = moving_objects(rng, int(rng.integers(3, 9)), 20, 28, k, void=True, vanish=True)
        gt[0, 0, 0] = k
        out[f"s{i}"] = (gt, perturb(rng, gt, max_id=k if task == "semi-supervised" else 5))
    return out


@pytest.mark.parametrize("task", ["semi-supervised", "unsupervised"])
def test_metric_equals_the_folder_evaluation(tmp_path, task):
    seqs = sequences(task)
    write_davis(tmp_path / "D", tmp_path / "R", seqs, task=task)
    want = evaluate_davis(tmp_path / "D", tmp_path / "R", task=task).global_results()
    metric = VideoObjectSegmentation(task=task)
    names = list(seqs)
    metric.update(torch.from_numpy(seqs[names[0]][1]), torch.from_numpy(seqs[names[0]][0]))
    metric.update([torch.from_numpy(seqs[n][1]) for n in names[1:]], [torch.from_numpy(seqs[n][0]) for n in names[1:]])
    got = metric.compute()
    for key, column in KEYS.items():
        assert got[key].dtype == torch.float64
        assert got[key].item() == pytest.approx(want[column], abs=1e-12)
    assert got["num_objects"].item() == sum(int(np.where(g[0] == 255, 0, g[0]).max()) for g, _ in seqs.values())


def test_metric_arguments_and_empty_state():
    with pytest.raises(ValueError, match="`task`"):
        VideoObjectSegmentation(task="both")
    with pytest.raises(ValueError, match="`decay_edges`"):
        VideoObjectSegmentation(decay_edges="fixed")
    with pytest.raises(ValueError, match="`max_proposals`"):
        VideoObjectSegmentation(max_proposals=0)
    metric = VideoObjectSegmentation()
    with pytest.raises(ValueError, match="No object"), pytest.warns(UserWarning):
        metric.compute()
    with pytest.raises(ValueError, match="lists of one length"):
        metric.update([torch.zeros(3, 4, 4, dtype=torch.uint8)], [])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank, port, seqs, task, out):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        metric = VideoObjectSegmentation(task=task)
        names = sorted(seqs)[rank::2]
        metric.update([torch.from_numpy(seqs[n][1]) for n in names], [torch.from_numpy(seqs[n][0]) for n in names])
        res = metric.compute()
        out[rank] = (dist.get_world_size(), {k: v.item() for k, v in res.items()})
    finally:
        dist.destroy_process_group()


@pytest.mark.ddp
@pytest.mark.slow
def test_ddp_two_processes_equal_one():
    task = "unsupervised"
    seqs = sequences(task, n=5, seed=3)
    single = VideoObjectSegmentation(task=task)
    names = sorted(seqs)
    single.update([torch.from_numpy(seqs[n][1]) for n in names], [torch.from_numpy(seqs[n][0]) for n in names])
    want = {k: v.item() for k, v in single.compute().items()}
    out = mp.Manager().dict()
    mp.spawn(_worker, args=(_free_port(), seqs, task, out), nprocs=2, join=True)
    for rank in (0, 1):
        world, got = out[rank]
        assert world == 2
        for key, value in want.items():
            assert got[key] == pytest.approx(value, abs=1e-12)
