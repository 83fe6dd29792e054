"""``SemanticBoundaryPR``: equal to the functional form on the whole dataset, whatever the batching; DDP with two
gloo processes equal to one process; the preset's values applied."""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from segmetrics_torch.functional.semantic_boundary import (
    protocol_thresholds,
    regenerate_boundaries,
    semantic_boundary_pr,
    semantic_boundary_protocol,
)
from segmetrics_torch.metrics.semantic_boundary import SemanticBoundaryPR

KW = {"max_dist": 2.0, "kill_internal": True, "skip_if_nonexistent": True, "ignore_border": 1}


def make_data(n: int = 6, k: int = 3, shape: tuple[int, int] = (22, 27), seed: int = 2):
    gen = torch.Generator().manual_seed(seed)
    segs = torch.randint(0, k, (n, 4, 5), generator=gen).repeat_interleave(6, 1).repeat_interleave(6, 2)
    segs = segs[:, : shape[0], : shape[1]].contiguous()
    gts = torch.stack([regenerate_boundaries(s, list(range(k)), radius=1, thin=True) for s in segs])
    preds = (gts * 0.7 + 0.5 * torch.rand(gts.shape, generator=gen) ** 3).clamp(0, 1)
    return preds, gts, segs


def _close(a, b) -> None:
    if isinstance(a, dict):
        for key in ("ods_f", "ois_f", "ap"):
            torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-12)
        for key in ("ods_f", "ois_f", "ap"):
            torch.testing.assert_close(a["mean"][key], b["mean"][key], rtol=0, atol=1e-12)
    else:
        raise AssertionError(type(a))


def test_metric_equals_functional_over_batches() -> None:
    preds, gts, segs = make_data()
    metric = SemanticBoundaryPR(3, thresholds=15, **KW)
    metric.update(preds[:2], gts[:2], segs[:2])
    metric.update(list(preds[2:]), list(gts[2:]), list(segs[2:]))
    _close(metric.compute(), semantic_boundary_pr(preds, gts, segs, thresholds=15, **KW))


def test_protocol_sets_the_values() -> None:
    protocol = semantic_boundary_protocol("pre-seal", "sbd", thin=True).replace(thresholds=9, max_dist=2.0)
    metric = SemanticBoundaryPR(3, protocol=protocol)
    assert metric.kill_internal and metric.skip_if_nonexistent and metric.ignore_border == 5 and metric.max_dist == 2
    torch.testing.assert_close(metric.levels, protocol_thresholds(protocol))
    np.testing.assert_array_equal(metric.levels.numpy(), np.linspace(0.1, 0.9, 9))


@pytest.mark.filterwarnings("ignore:The ``compute`` method")
def test_no_update_is_nan_with_a_warning() -> None:
    with pytest.warns(RuntimeWarning, match="saw no image"):
        res = SemanticBoundaryPR(2, thresholds=3).compute()
    assert torch.isnan(res["ods_f"]).all()


def test_wrong_class_count_is_refused() -> None:
    preds, gts, _segs = make_data(k=3)
    with pytest.raises(ValueError, match="Expected 2 classes"):
        SemanticBoundaryPR(2, thresholds=3).update(preds, gts)


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
        preds, gts, segs = make_data()
        metric = SemanticBoundaryPR(3, thresholds=15, **KW)
        mine = list(range(rank, preds.shape[0], world))
        metric.update(preds[mine[:1]], gts[mine[:1]], segs[mine[:1]])
        metric.update([preds[i] for i in mine[1:]], [gts[i] for i in mine[1:]], [segs[i] for i in mine[1:]])
        res = metric.compute()
        if rank == 0:
            torch.save({"world_size": dist.get_world_size(), "result": res}, out_path)
    finally:
        dist.destroy_process_group()


@pytest.mark.ddp
@pytest.mark.slow
def test_two_process_gloo_equals_single_process(tmp_path) -> None:
    out_path = str(tmp_path / "ddp.pt")
    mp.spawn(_worker, args=(2, _free_port(), out_path), nprocs=2, join=True)
    got = torch.load(out_path, weights_only=False)
    assert got["world_size"] == 2
    preds, gts, segs = make_data()
    single = SemanticBoundaryPR(3, thresholds=15, **KW)
    single.update(preds, gts, segs)
    _close(got["result"], single.compute())


def test_contract_pickle_merge_forward_and_casts() -> None:
    """The checks of tests/metrics/test_metric_contract.py, on this Metric (until the lead lists it there)."""
    import pickle

    preds, gts, segs = make_data()
    whole = SemanticBoundaryPR(3, thresholds=7, **KW)
    whole.update(preds, gts, segs)
    a, b = SemanticBoundaryPR(3, thresholds=7, **KW), SemanticBoundaryPR(3, thresholds=7, **KW)
    a.update(preds[:3], gts[:3], segs[:3])
    b.update(preds[3:], gts[3:], segs[3:])
    restored = pickle.loads(pickle.dumps(a))
    restored.merge_state(b)
    _close(restored.compute(), whole.compute())
    with pytest.raises(ValueError, match="max_dist"):
        a.merge_state(SemanticBoundaryPR(3, thresholds=7, **{**KW, "max_dist": 3.0}))
    f = SemanticBoundaryPR(3, thresholds=7, **KW)
    batch = f(preds[:3], gts[:3], segs[:3])
    _close(batch, semantic_boundary_pr(preds[:3], gts[:3], segs[:3], thresholds=7, **KW))
    f(preds[3:], gts[3:], segs[3:])
    _close(f.compute(), whole.compute())
    half = SemanticBoundaryPR(3, thresholds=7, **KW).half()
    half.update(preds, gts, segs)
    assert half.cnt_r.dtype == torch.int64
    _close(half.compute(), whole.compute())
