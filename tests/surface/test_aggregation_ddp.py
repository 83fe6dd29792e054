"""DDP: the dataset means of every ``aggregation`` rule and the counts of dropped values, from two gloo processes
with half of the images each, equal one process's (the states are sums; ``dropped()`` synchronises as ``compute()``).
The workers assert a world of two (a silent fallback to one process would make the test meaningless)."""

from __future__ import annotations

import os
import socket
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import segmetrics_torch as st

from .test_medical_habits import _batch

pytestmark = [pytest.mark.ddp, pytest.mark.slow]

RULES: dict[str, dict[str, Any]] = {
    "inf": {"aggregation": "inf"},
    "drop_nan": {"aggregation": "drop_nan"},
    "worst_case": {"aggregation": "worst_case", "worst_case": 373.13},
}


def _results(rank: int | None, world: int = 2) -> dict[str, Any]:
    p, g = _batch(2, batch=6)
    mine = list(range(p.shape[0])) if rank is None else list(range(rank, p.shape[0], world))
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, rule in RULES.items():
            metric = st.SurfaceDistanceMeasures(num_classes=3, tolerance=1.0, **rule)
            metric.update(p[mine[:1]], g[mine[:1]])
            metric.update(p[mine[1:]], g[mine[1:]])
            out[name] = {"mean": metric.compute(), "dropped": metric.dropped()}
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _worker(rank: int, world: int, port: int, out_path: str) -> None:
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        assert dist.get_world_size() == 2, "the DDP test must run in two processes"
        results = _results(rank, world)
        if rank == 0:
            torch.save({"world_size": dist.get_world_size(), "results": results}, out_path)
    finally:
        dist.destroy_process_group()


def test_two_processes_equal_one(tmp_path: Path) -> None:
    out_path = str(tmp_path / "ddp.pt")
    mp.spawn(_worker, args=(2, _free_port(), out_path), nprocs=2, join=True)
    got = torch.load(out_path, weights_only=False)
    assert got["world_size"] == 2
    single = _results(None)
    for name in RULES:
        for part in ("mean", "dropped"):
            assert got["results"][name][part].keys() == single[name][part].keys()
            for key, value in single[name][part].items():
                torch.testing.assert_close(got["results"][name][part][key], value, rtol=0, atol=1e-12, equal_nan=True)
    # the data exercise the rules: a missed structure and a pair of empty masks
    assert any(bool(v.isinf().any()) for v in single["inf"]["mean"].values())
    assert any(int(v.sum()) > 0 for v in single["drop_nan"]["dropped"].values())
