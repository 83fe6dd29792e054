"""``ForegroundSums``, the torchmetrics-free accumulator of the foreground suite: bit-identical to
``ForegroundMeasures`` (same state, same update, same summary), per-image values equal to ``foreground_measures``,
the same settings and checks, and the sums of several accumulators added across "processes"."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch import ForegroundMeasures, flatten_results
from segmetrics_torch.functional import ForegroundSums, foreground_measures, summarize_foreground


def _batches(seed: int, n: int = 7, shape: tuple[int, int] = (33, 41)) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    preds = (torch.rand(n, *shape, generator=gen) * 255).to(torch.uint8)
    target = (torch.rand(n, *shape, generator=gen) > 0.6).to(torch.uint8) * 255
    if n >= 4:
        target[2] = 0  # an empty ground truth
        target[3] = 255  # a full one
    return preds, target


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-equal values, NaN where the other is NaN."""
    nan = torch.isnan(a)
    return torch.equal(nan, torch.isnan(b)) and torch.equal(a[~nan], b[~nan])


def _equal(a: dict, b: dict) -> bool:
    fa, fb = flatten_results(a, curves=True), flatten_results(b, curves=True)
    return fa.keys() == fb.keys() and all(_same(fa[k], fb[k]) for k in fa)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("settings", [{}, {"alpha": 0.4, "beta2": 0.5, "wf_beta2": 2.0}, {"empty_quadrant": "skip"}])
def test_equals_the_metric_exactly(seed: int, settings: dict) -> None:
    preds, target = _batches(seed)
    metric, sums = ForegroundMeasures(**settings), ForegroundSums(**settings)
    for lo in (0, 3, 5):
        metric.update(preds[lo : lo + 3], target[lo : lo + 3])
        sums.update(preds[lo : lo + 3], target[lo : lo + 3])
    assert _equal(metric.compute(), sums.compute())
    assert int(sums.count) == int(metric.count) == 8 and sums.settings == metric.settings
    assert sums.normalize is metric.normalize is True
    for name in ForegroundSums.NAMES:  # the very state of the Metric
        assert torch.equal(getattr(sums, f"{name}_sum"), getattr(metric, f"{name}_sum")), name


def test_lists_of_sizes_and_float_maps_equal_the_metric() -> None:
    gen = torch.Generator().manual_seed(5)
    preds = [torch.rand(h, w, generator=gen, dtype=torch.float64) for h, w in ((20, 31), (17, 17), (40, 9))]
    target = [torch.rand(p.shape, generator=gen) > 0.5 for p in preds]
    metric, sums = ForegroundMeasures(normalize=False), ForegroundSums(normalize=False)
    metric.update(preds, target)
    values = sums.update(preds, target)
    assert _equal(metric.compute(), sums.compute())
    assert values["f_curve"].shape == (3, 256)


def test_update_returns_the_per_image_values_of_foreground_measures() -> None:
    preds, target = _batches(7)
    sums = ForegroundSums(alpha=0.3)
    first, second = sums.update(preds[:4], target[:4]), sums.update(preds[4:], target[4:])
    expected = foreground_measures(preds, target, alpha=0.3)
    assert set(first) == set(expected)
    for key, value in expected.items():
        assert torch.equal(torch.cat([first[key], second[key]]), value), key


def test_an_image_summary_is_the_dataset_summary_of_that_image_alone() -> None:
    preds, target = _batches(8, n=3)
    values = foreground_measures(preds, target)
    alone = ForegroundSums()
    alone.update(preds[1:2], target[1:2])
    assert _equal(summarize_foreground({key: value[1] for key, value in values.items()}), alone.compute())


def test_sums_and_load_add_processes() -> None:
    """What DDP does for the Metric: every process's sums added, loaded into one accumulator."""
    preds, target = _batches(9)
    whole, parts = ForegroundSums(), [ForegroundSums(), ForegroundSums()]
    whole.update(preds, target)
    parts[0].update(preds[:4], target[:4])
    parts[1].update(preds[4:], target[4:])
    total = {name: parts[0].sums()[name] + parts[1].sums()[name] for name in ForegroundSums.NAMES}
    parts[0].load(total, int(parts[0].count) + int(parts[1].count))
    a, b = flatten_results(whole.compute(), curves=True), flatten_results(parts[0].compute(), curves=True)
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], rtol=0, atol=1e-12) for k in a)
    assert int(parts[0].count) == 7 and parts[0].count.dtype == torch.int64


def test_reset_and_an_empty_dataset() -> None:
    preds, target = _batches(10, n=2)
    sums = ForegroundSums()
    sums.update(preds, target)
    sums.reset()
    assert int(sums.count) == 0
    with pytest.warns(RuntimeWarning, match="no image has been added"):
        res = sums.compute()
    assert torch.isnan(res["mae"]) and torch.isnan(res["f_measure"]["max"])


def test_a_nan_s_measure_warns_as_the_metric() -> None:
    target = torch.zeros(2, 16, 16, dtype=torch.bool)
    target[:, -1, :] = True  # the centroid on the last row: an empty quadrant, S-measure NaN
    preds = torch.rand(2, 16, 16, generator=torch.Generator().manual_seed(0))
    sums, metric = ForegroundSums(), ForegroundMeasures()
    assert torch.isnan(sums.update(preds, target)["s_measure"]).all()
    metric.update(preds, target)
    with pytest.warns(RuntimeWarning, match="s_measure is NaN"):
        res = sums.compute()
    with pytest.warns(RuntimeWarning, match="s_measure is NaN"):
        assert _equal(res, metric.compute())


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"beta2": 0.0}, ValueError, "beta2"),
        ({"wf_beta2": -1.0}, ValueError, "wf_beta2"),
        ({"alpha": 1.5}, ValueError, "alpha"),
        ({"empty_quadrant": "zero"}, ValueError, "empty_quadrant"),
        ({"edt_backend": "scipy"}, ValueError, "edt_backend"),
        ({"normalize": "no"}, TypeError, "`normalize` to be a bool"),
        ({"validate_args": 1}, TypeError, "`validate_args` to be a bool"),
    ],
)
def test_the_checks_of_the_metric(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ForegroundMeasures(**kwargs)
    with pytest.raises(error, match=match):
        ForegroundSums(**kwargs)


def test_the_edt_backend_can_change_between_updates() -> None:
    preds, target = _batches(11, n=4)
    sums, reference = ForegroundSums(), ForegroundSums()
    sums.update(preds[:2], target[:2])
    sums.edt_backend = "torch"
    assert sums.settings["edt_backend"] == "torch"
    sums.update(preds[2:], target[2:])
    reference.update(preds, target)
    a, b = flatten_results(sums.compute(), curves=True), flatten_results(reference.compute(), curves=True)
    assert all(torch.allclose(a[k], b[k], rtol=0, atol=1e-12) for k in a)
    with pytest.raises(ValueError, match="edt_backend"):
        sums.edt_backend = "scipy"  # type: ignore[assignment]


def test_a_bad_batch_adds_nothing() -> None:
    preds, target = _batches(12, n=2)
    sums = ForegroundSums()
    with pytest.raises(ValueError):
        sums.update(preds, target[:1])
    assert int(sums.count) == 0 and not sums.sums()["mae"].any()


def test_no_torchmetrics_is_imported() -> None:
    import subprocess
    import sys

    code = (
        "import sys, torch\n"
        "from segmetrics_torch.functional import ForegroundSums\n"
        "s = ForegroundSums(); s.update(torch.rand(1, 8, 8), torch.rand(1, 8, 8) > 0.5); s.compute()\n"
        "print('torchmetrics' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
