"""The torchmetrics contract, for every public Metric of the package (issue 26, item 6).

torchmetrics' ``MetricTester`` checks its own Metrics for these properties; this is our own test of the same
contracts (no code of it copied), run over every public Metric class on small inputs of its family:

* ``clone()`` and ``pickle`` give a Metric that computes the same;
* ``state_dict`` with ``persistent(True)`` round-trips into a fresh Metric;
* ``merge_state`` of a Metric fed one batch into one fed another equals one Metric fed both;
* ``forward`` batch by batch accumulates as ``update`` does (and returns the batch's own value);
* float16 / bfloat16 / float64 maps give the results of the same values in float64 (foreground family);
* two gloo processes, with ``dist_sync_on_step`` off and on, give the single-process results (``slow``, ``ddp``).

TorchScript (``torch.jit.script``) is not supported (documented in docs/training.md): the Metrics are written with
postponed annotations and dynamic Python that torch's deprecated scripting does not compile.
"""

from __future__ import annotations

import math
import os
import pickle
import socket
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torchmetrics import Metric

import segmetrics_torch as st
from segmetrics_torch import registry

Batch = tuple[Any, Any]


def _foreground(seed: int) -> Batch:
    gen = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(24), torch.arange(28), indexing="ij")
    g = torch.stack([((yy - 8 - 4 * i - seed) ** 2 + (xx - 10 - 3 * i) ** 2) < 30 + 10 * i for i in range(2)])
    p = (g.float() * 0.5 + torch.rand(2, 24, 28, generator=gen) * 0.5).double()
    return p, g


def _camouflage(seed: int) -> tuple[Any, Any, Any]:
    p, g = _foreground(seed)
    gen = torch.Generator().manual_seed(seed + 10)
    return p, g, torch.randint(0, 256, (*g.shape, 3), dtype=torch.uint8, generator=gen)


def _boundary(seed: int) -> Batch:
    gen = torch.Generator().manual_seed(seed)
    gt = torch.zeros(2, 2, 24, 28, dtype=torch.bool)
    gt[:, 0, 12, 3:25] = True
    gt[:, 1, 4:20, 14 + seed % 3] = True
    pb = torch.rand(2, 24, 28, generator=gen) * 0.4
    pb[:, 11:14, 3:25] += 0.5
    return pb, gt


def _semantic(seed: int) -> Batch:
    pb, gt = _boundary(seed)  # two classes: the soft map and its complement, (B, K, H, W)
    return torch.stack([pb, 1 - pb], 1), gt


def _video(seed: int) -> Batch:
    gt = torch.zeros(5, 24, 28, dtype=torch.uint8)  # one sequence of 5 frames, two objects
    gt[:, 4:14, 3:12] = 1
    gt[:, 12:22, 14 + seed % 3 : 26] = 2
    pred = gt.clone()
    pred[2, 4:8] = 0  # a frame where object 1 is partly missed
    return pred, gt


def _masks(seed: int) -> Batch:
    p, g = _foreground(seed)
    return p > 0.6, g


def _labels(seed: int) -> Batch:
    p, g = _masks(seed)
    pred, target = p.long(), g.long()
    target[:, 18:, 20:] = 2  # a second class, present in both
    pred[:, 17:, 21:] = 2
    return pred, target


def _partition(seed: int) -> Batch:
    gen = torch.Generator().manual_seed(seed)
    seg = torch.randint(0, 4, (2, 4, 5), generator=gen).repeat_interleave(4, 1).repeat_interleave(4, 2)
    return seg, torch.stack([seg // 2, (seg + seed) % 3], dim=1)


def _stack(seed: int) -> Batch:
    seg, gt = _partition(seed)
    return torch.stack([seg // 2, seg, seg * 2 + (seg > 1).long()], dim=1), gt


def _proposals(seed: int) -> Batch:
    objects = torch.zeros(2, 20, 20, dtype=torch.bool)
    objects[0, 2:9, 2:11] = True
    objects[1, 10:18, 6 + seed : 17] = True
    proposals = torch.zeros(4, 20, 20, dtype=torch.bool)
    for i in range(4):
        proposals[i, 2 + 3 * i : 10 + 3 * i, 2 + i : 12 + i] = True
    return proposals, objects


#: each family's small batches (a family's Metric whose defaults run on them needs no entry of its own below)
BATCHES: dict[str, Callable[[int], tuple[Any, ...]]] = {
    "foreground": _foreground,
    "partition": _partition,
    "boundary": _boundary,
    "surface": _masks,
    "semantic-boundary": _semantic,
    "video": _video,
    "proposals": _proposals,
}

#: the Metrics of the registry's records and suites (:mod:`segmetrics_torch.registry`), each with its defaults on its
#: family's batches: a new measure's Metric is covered by its record, with no edit here
REGISTERED: dict[str, str] = {
    **{m.metric: m.family for m in registry.MEASURES.values() if m.metric and m.family in BATCHES},
    **{name: family for name, family in registry.SUITES.items() if family in BATCHES},
}

#: name -> (factory taking torchmetrics kwargs, batch maker by seed): the registry's Metrics, then those that need
#: arguments or another batch, and suites in a second configuration
CASES: dict[str, tuple[Callable[..., Any], Callable[[int], tuple[Any, ...]]]] = {
    **{name: (getattr(st, name), BATCHES[family]) for name, family in REGISTERED.items()},
    "ForegroundMeasures+include": (
        lambda **kw: st.ForegroundMeasures(include=["size_invariant_mae", "threshold_measures"], **kw),
        _foreground,
    ),
    # the MATLAB-toolbox protocol through the suite (issue 49): the same states, the toolbox's values
    "ForegroundMeasures+toolbox": (lambda **kw: st.ForegroundMeasures(protocol="matlab-toolbox", **kw), _foreground),
    "CamouflageContextMeasure": (st.CamouflageContextMeasure, _camouflage),
    "BoundaryPR": (lambda **kw: st.BoundaryPR(thresholds=5, max_dist=2.0, **kw), _boundary),
    "MorphologicalBoundaryF": (st.MorphologicalBoundaryF, _masks),
    "HierarchyMeasures": (lambda **kw: st.HierarchyMeasures(3, input_format="stack", **kw), _stack),
    "RegionBenchmark": (lambda **kw: st.RegionBenchmark(3, input_format="stack", **kw), _stack),
    "ProposalRecall": (lambda **kw: st.ProposalRecall(counts=[1, 2, 4], **kw), _proposals),
    "HausdorffDistance": (lambda **kw: st.HausdorffDistance(percentile=95, **kw), _masks),
    "AverageSurfaceDistance": (lambda **kw: st.AverageSurfaceDistance(symmetric=True, **kw), _masks),
    "NormalizedSurfaceDistance": (lambda **kw: st.NormalizedSurfaceDistance(tolerance=1.0, **kw), _masks),
    "SurfaceDistanceMeasures": (lambda **kw: st.SurfaceDistanceMeasures(num_classes=3, **kw), _labels),
    "SemanticBoundaryPR": (
        lambda **kw: st.SemanticBoundaryPR(2, thresholds=5, max_dist=2.0, skip_if_nonexistent=True, **kw),
        _semantic,
    ),
}


def test_every_public_metric_is_covered() -> None:
    from torchmetrics import Metric

    public = {n for n in st.__all__ if isinstance(getattr(st, n), type) and issubclass(getattr(st, n), Metric)}
    assert public <= set(CASES), public - set(CASES)


def _flat(result: Any, prefix: str = "") -> dict[str, torch.Tensor]:
    if isinstance(result, dict):
        out: dict[str, torch.Tensor] = {}
        for key, value in result.items():
            out.update(_flat(value, f"{prefix}{key}/"))
        return out
    if isinstance(result, (list, tuple)):  # a curve's values, or one summary per class (dicts)
        out = {}
        for i, value in enumerate(result):
            out.update(_flat(value, f"{prefix}{i}/") if isinstance(value, dict) else {f"{prefix}{i}": value})
        return {key: torch.as_tensor(v).double() for key, v in out.items()}
    return {prefix: torch.as_tensor(result).detach().double().cpu()}


def _assert_same(got: Any, expected: Any, atol: float = 1e-12) -> None:
    a, b = _flat(got), _flat(expected)
    assert set(a) == set(b)
    for key in b:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=atol, equal_nan=True, msg=key)


def _computed(metric: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # documented NaN warnings of tiny inputs
        return metric.compute()


def _fed(name: str, seeds: tuple[int, ...], **kwargs: Any) -> Any:
    make, batch = CASES[name]
    metric = make(**kwargs)
    for seed in seeds:
        metric.update(*batch(seed))
    return metric


NAMES = sorted(CASES)


@pytest.mark.parametrize("name", NAMES)
def test_clone_and_pickle(name: str) -> None:
    metric = _fed(name, (0,))
    expected = _computed(metric)
    _assert_same(_computed(metric.clone()), expected)
    _assert_same(_computed(pickle.loads(pickle.dumps(metric))), expected)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip(name: str) -> None:
    metric = _fed(name, (0, 1))
    metric.persistent(True)
    fresh = CASES[name][0]()
    fresh.persistent(True)
    fresh.load_state_dict(metric.state_dict())
    fresh._update_count = 1  # as after an update: compute() then reads the loaded states without torchmetrics' warning
    _assert_same(_computed(fresh), _computed(metric))


@pytest.mark.parametrize("name", NAMES)
def test_merge_state_equals_one_metric_fed_both(name: str) -> None:
    a, b = _fed(name, (0,)), _fed(name, (1,))
    a.merge_state(b)
    _assert_same(_computed(a), _computed(_fed(name, (0, 1))))


@pytest.mark.parametrize("name", NAMES)
def test_merge_state_of_a_dict_of_states(name: str) -> None:
    """torchmetrics' other form, ``merge_state(other.metric_state)``, merges as the Metric itself does; a Metric that
    holds Metrics (whose states the dict lacks) refuses it (it merged its own states and silently kept the included
    measures' of one batch)."""
    a, b = _fed(name, (0,)), _fed(name, (1,))
    if any(isinstance(child, Metric) for child in a.modules() if child is not a):
        with pytest.raises(ValueError, match="dict of states"):
            a.merge_state(b.metric_state)
        return
    a.merge_state(b.metric_state)
    _assert_same(_computed(a), _computed(_fed(name, (0, 1))))


@pytest.mark.parametrize("name", NAMES)
def test_forward_accumulates_as_update(name: str) -> None:
    make, batch = CASES[name]
    metric = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = metric(*batch(0))
        metric(*batch(1))
    _assert_same(first, _computed(_fed(name, (0,))))  # forward returns the batch's own value
    _assert_same(_computed(metric), _computed(_fed(name, (0, 1))))


@pytest.mark.parametrize("name", [n for n in NAMES if CASES[n][1] is _foreground])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_half_bfloat16_and_double_maps(name: str, dtype: torch.dtype) -> None:
    make, _ = CASES[name]
    p, g = _foreground(0)
    low = p.to(dtype)
    got, expected = make(), make()
    got.update(low, g)
    expected.update(low.double(), g)  # the same values, in float64
    _assert_same(_computed(got), _computed(expected))


# ---------------------------------------------------------------------------------------------- two processes


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, out_path: str, names: list[str]) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        assert dist.get_world_size() == 2, "the contract test must run in two processes"
        results: dict[str, Any] = {}
        for name in names:
            make, batch = CASES[name]
            for on_step in (False, True):
                metric = make(dist_sync_on_step=on_step)
                step = metric(*batch(rank))  # forward: with dist_sync_on_step, the batch value of both ranks
                results[f"{name}/{on_step}"] = {"step": step, "total": _computed(metric)}
            # a rank given no batch (a dataset smaller than the ranks): its list states sync as empty items (a
            # ProposalRecall aborted both processes in gloo there)
            metric = make()
            for i in (0, 1) if rank == 0 else ():
                metric.update(*batch(i))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torchmetrics' "compute before update" on rank 1
                results[f"{name}/one rank"] = _computed(metric)
        if rank == 0:
            torch.save({"world_size": dist.get_world_size(), "results": results}, out_path)
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
@pytest.mark.ddp
def test_two_processes_with_and_without_dist_sync_on_step(tmp_path) -> None:
    names = NAMES
    out_path = str(tmp_path / "out.pt")
    mp.spawn(_worker, args=(2, _free_port(), out_path, names), nprocs=2, join=True)
    got = torch.load(out_path, weights_only=False)
    assert got["world_size"] == 2
    for name in names:
        both = _computed(_fed(name, (0, 1)))  # rank 0 had batch 0, rank 1 batch 1
        own = _computed(_fed(name, (0,)))
        for on_step in (False, True):
            result = got["results"][f"{name}/{on_step}"]
            _assert_same(result["total"], both)
            _assert_same(result["step"], both if on_step else own)
        _assert_same(got["results"][f"{name}/one rank"], both)


def test_a_synced_list_state_is_restored_as_it_was() -> None:
    """A process given no batch sends an empty item of each list state in the gather; once unsync() restores the
    states, the list is empty again, not one empty item longer."""
    metric = st.ProposalRecall(counts=[1, 2, 4])
    metric.sync(dist_sync_fn=lambda x, group=None: [x], distributed_available=lambda: True)
    assert tuple(torch.cat(list(metric.best)).shape if isinstance(metric.best, list) else metric.best.shape) == (0, 3)
    metric.unsync()
    assert metric.best == []


def test_the_contract_test_can_fail() -> None:
    """The comparison really compares: two different datasets differ."""
    with pytest.raises(AssertionError):
        _assert_same(_computed(_fed("MAE", (0,))), _computed(_fed("MAE", (1,))))
    assert not math.isnan(float(_computed(_fed("MAE", (0,)))))
