"""torchmetrics' compute groups never merge two Metrics of other classes or settings (metrics/_base.py: the
``settings_id`` state), found by a new user whose Lightning collection reported one distance for four measures."""

from __future__ import annotations

import inspect
import warnings

import pytest
import torch
from torchmetrics import Metric, MetricCollection

import segmetrics_torch.metrics as metrics
from segmetrics_torch.metrics import (
    MAE,
    AverageSurfaceDistance,
    BoundaryPR,
    ForegroundMeasures,
    HausdorffDistance,
    SMeasure,
    WeightedFMeasure,
)


def _masks(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    target = torch.zeros(2, 16, 16, dtype=torch.bool)
    target[:, 4:9, 4:11] = True
    return torch.rand(2, 16, 16, generator=gen) > 0.7, target


def test_distances_after_an_empty_first_batch_are_each_their_own() -> None:
    """An untrained net's first batch predicts nothing: every distance is inf, so torchmetrics would have merged the
    four Metrics (equal state names and values) and reported one value for all of them."""
    built = {
        "hd": lambda: HausdorffDistance(),
        "hd95": lambda: HausdorffDistance(percentile=95),
        "assd": lambda: AverageSurfaceDistance(symmetric=True),
        "asd": lambda: AverageSurfaceDistance(),
        "hd_again": lambda: HausdorffDistance(),
    }
    collection = MetricCollection({k: make() for k, make in built.items()})
    empty = torch.zeros(2, 16, 16, dtype=torch.bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the empty predictions' warnings
        collection.update(empty, _masks(0)[1])
        collection.compute()
    collection.reset()
    groups = sorted(sorted(g) for g in collection.compute_groups.values())
    assert groups == [["asd"], ["assd"], ["hd", "hd_again"], ["hd95"]]  # only Metrics built alike share
    preds, target = _masks(1)
    collection.update(preds, target)
    got = collection.compute()
    for key, make in built.items():
        alone = make()
        alone.update(preds, target)
        assert float(got[key]) == float(alone.compute()), key
    assert len({float(got[k]) for k in ("hd", "hd95", "assd", "asd")}) == 4


BUILT = {
    "mae": lambda: MAE(),
    "mae_raw": lambda: MAE(normalize=False),
    "s": lambda: SMeasure(),
    "s_raw": lambda: SMeasure(normalize=False),
    "wf": lambda: WeightedFMeasure(),
    "wf_raw": lambda: WeightedFMeasure(normalize=False),  # a setting its base class keeps
}


def test_one_class_with_other_settings_is_not_merged() -> None:
    """A binary first batch scores alike stretched or not (equal first states); the second, in [0.2, 0.6], does not:
    a merged pair reported the stretched value for the raw one (the training-loop setting of docs/training.md)."""
    gen = torch.Generator().manual_seed(2)
    target = _masks(0)[1]
    first = target.float()
    second = 0.2 + 0.4 * torch.rand(2, 16, 16, generator=gen)
    collection = MetricCollection({k: make() for k, make in BUILT.items()})
    for preds in (first, second):
        collection.update(preds, target)
    assert sorted(sorted(g) for g in collection.compute_groups.values()) == sorted([k] for k in BUILT)
    got = collection.compute()
    for key, make in BUILT.items():
        metric = make()
        for preds in (first, second):
            metric.update(preds, target)
        assert float(got[key]) == float(metric.compute()), key
    assert float(got["mae"]) != float(got["mae_raw"]) and float(got["wf"]) != float(got["wf_raw"])


def test_metrics_holding_metrics_never_share_a_group() -> None:
    """A compute group updates its first member only: ForegroundMeasures' included Metrics of the others would
    never see a batch, so it never shares, even with a twin."""
    include = ["size_invariant_mae"]
    collection = MetricCollection({"a": ForegroundMeasures(include=include), "b": ForegroundMeasures(include=include)})
    batches = [_masks(3), _masks(5)]  # two batches: a member fed the first only would differ
    for preds, target in batches:
        collection.update(preds.float(), target)
    assert len(collection.compute_groups) == 2
    alone = ForegroundMeasures(include=include)
    for preds, target in batches:
        alone.update(preds.float(), target)
    expected = float(alone.compute()["size_invariant_mae"])
    for key in ("a", "b"):
        assert float(collection[key].compute()["size_invariant_mae"]) == expected, key
    original = ForegroundMeasures(include=include)
    twins = MetricCollection({"a": original, "b": original.clone()})  # a clone draws its own id
    for preds, target in batches:
        twins.update(preds.float(), target)
    assert len(twins.compute_groups) == 2
    assert float(twins["b"].compute()["size_invariant_mae"]) == expected


def test_the_id_is_the_metrics_own_after_a_load_or_a_merge() -> None:
    hd, hd95 = HausdorffDistance(), HausdorffDistance(percentile=95)
    hd.persistent(True)
    hd95.persistent(True)
    assert "settings_id" not in hd.state_dict()  # never saved: it belongs to the Metric as built
    before = hd95.settings_id.clone()
    hd95.load_state_dict(hd.state_dict())
    assert torch.equal(hd95.settings_id, before)
    mae, other = MAE(), MAE(normalize=True)  # the same settings, given otherwise: another id, a legal merge
    own = mae.settings_id.clone()
    assert not torch.equal(own, other.settings_id)
    preds, target = _masks(4)
    other.update(preds.float(), target)
    mae.merge_state(other)
    assert torch.equal(mae.settings_id, own)
    states = {k: v for k, v in other.metric_state.items() if k != "settings_id"}  # a dict saved without it
    mae.merge_state(states)
    assert torch.equal(mae.settings_id, own)


def test_boundary_tolerances_are_not_merged() -> None:
    target = torch.zeros(1, 24, 24, dtype=torch.bool)
    target[0, 12, 4:20] = True
    shifted = torch.roll(target, 2, dims=1).float()
    annotations = target[:, None]  # (B, K, H, W): one annotator
    collection = MetricCollection({"near": BoundaryPR(max_dist=1.0), "far": BoundaryPR(max_dist=2.0)})
    collection.update(target.float(), annotations)  # equal first states (a perfect map)
    collection.update(shifted, annotations)
    assert sorted(sorted(g) for g in collection.compute_groups.values()) == [["far"], ["near"]]
    # a dict result is flattened by the collection: each Metric's own compute() (its states, shared or not)
    got = {key: collection[key].compute() for key in ("near", "far")}
    for key, metric in {"near": BoundaryPR(max_dist=1.0), "far": BoundaryPR(max_dist=2.0)}.items():
        metric.update(target.float(), annotations)
        metric.update(shifted, annotations)
        assert float(got[key]["ods"]["f"]) == float(metric.compute()["ods"]["f"]), key
    assert float(got["near"]["ods"]["f"]) != float(got["far"]["ods"]["f"])


def _public_metric_classes() -> list[type[Metric]]:
    return [
        cls for name in metrics.__all__ if inspect.isclass(cls := getattr(metrics, name)) and issubclass(cls, Metric)
    ]


@pytest.mark.parametrize("cls", _public_metric_classes(), ids=lambda c: c.__name__)
def test_every_metric_holds_a_constant_settings_id(cls: type[Metric]) -> None:
    try:
        metric = cls()
    except TypeError:
        pytest.skip(f"{cls.__name__} has a required argument")
    assert "settings_id" in metric._defaults and metric._reductions["settings_id"].__name__ == "dim_zero_max"
    before = metric.settings_id.clone()
    metric.reset()
    assert torch.equal(metric.settings_id, before) and before.dtype == torch.float64
    assert torch.equal(cls().settings_id, before)  # built alike: the same id
