"""Exact states under every cast: half-precision training must not turn the sums and counts into half precision.

Lightning's ``precision="bf16-true"`` / ``"16-true"`` call ``module.to(dtype=...)`` on the LightningModule, Metrics
included; torchmetrics guards ``set_dtype`` and the ``.half()`` family but not ``.to(dtype)``, so an ``MAE`` summed
in bfloat16 stopped growing (0.1709 logged over 1,500 steps where the truth is 0.4991). Every public Metric is cast
here in each way a user or a trainer can (directly and through a parent module, which reaches the Metric's
``_apply`` and never its ``to``), and its states, their defaults and its results must stay those of an uncast Metric.

The inputs of each family are those of the torchmetrics contract test (``test_metric_contract.CASES``), which fails
when a public Metric has none; :func:`test_every_public_metric_is_covered` checks the same here, over the package's
modules too, and that every one derives from ``ExactMetric``, where the guard lives.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torchmetrics import Metric

import segmetrics_torch as st
import segmetrics_torch.metrics as metrics_package
from segmetrics_torch.metrics._base import ExactMetric

from .test_metric_contract import CASES, _assert_same, _computed

#: casts a user or a trainer applies to the Metric itself (``set_dtype`` is the Metric's own)
DIRECT: dict[str, Callable[[Any], Any]] = {
    "to(bfloat16)": lambda m: m.to(torch.bfloat16),
    "half()": lambda m: m.half(),
    "to(float16)": lambda m: m.to(torch.float16),
    "type(float16)": lambda m: m.type(torch.float16),
    "bfloat16()": lambda m: m.bfloat16(),
    "float()": lambda m: m.float(),
    "double()": lambda m: m.double(),
    "to(cpu, float16)": lambda m: m.to("cpu", torch.float16),
    "to(dtype=bfloat16)": lambda m: m.to(dtype=torch.bfloat16),  # what Lightning's HalfPrecision.convert_module calls
    "set_dtype(bfloat16)": lambda m: m.set_dtype(torch.bfloat16),
}
#: the same Module casts of a parent (a LightningModule holding the Metric): they reach the Metric's ``_apply`` only
PARENT = [name for name in DIRECT if not name.startswith("set_dtype")]


def _public_metric_classes() -> dict[str, type]:
    """Every public Metric class: the package's ``__all__``, ``segmetrics_torch.metrics.__all__`` and any class of a
    family module that is not private (one added to a module but not yet exported counts too)."""
    found: dict[str, type] = {}
    for namespace in (st, metrics_package):
        for name in namespace.__all__:
            obj = getattr(namespace, name)
            if isinstance(obj, type) and issubclass(obj, Metric):
                found[name] = obj
    for info in pkgutil.iter_modules(metrics_package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"segmetrics_torch.metrics.{info.name}")
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and issubclass(obj, Metric)
                and obj.__module__ == module.__name__
                and not name.startswith("_")
                and not inspect.isabstract(obj)
            ):
                found[name] = obj
    return found


def test_every_public_metric_is_covered() -> None:
    public = _public_metric_classes()
    assert len(public) >= 38, sorted(public)  # the enumeration itself found the families
    missing = set(public) - set(CASES)
    assert not missing, f"public Metrics without inputs in test_metric_contract.CASES: {sorted(missing)}"
    not_exact = [name for name, cls in public.items() if not issubclass(cls, ExactMetric)]
    assert not not_exact, f"public Metrics not derived from ExactMetric (their states would follow a cast): {not_exact}"


def _tensor_dtypes(metric: Any) -> dict[str, torch.dtype]:
    """The dtypes of every state tensor and of its default (a list state: each of its tensors)."""
    out: dict[str, torch.dtype] = {}
    for key, default in metric._defaults.items():
        for where, value in (("state", getattr(metric, key)), ("default", default)):
            values = value if isinstance(value, list) else [value]
            for i, v in enumerate(values):
                out[f"{where} {key}[{i}]"] = v.dtype
    return out


def _check(name: str, cast: Callable[[Any], Any]) -> None:
    """``cast`` leaves the states as an uncast twin has them at each stage (built, fed, computed, reset), and the
    results equal the twin's."""
    make, batch = CASES[name]
    metric, twin = make(), make()
    assert set(_tensor_dtypes(twin).values()) <= {torch.float64, torch.int64}, _tensor_dtypes(twin)
    metric = cast(metric)
    assert _tensor_dtypes(metric) == _tensor_dtypes(twin)
    for seed in (0, 1):
        metric.update(*batch(seed))
        twin.update(*batch(seed))
    assert _tensor_dtypes(metric) == _tensor_dtypes(twin)  # list states (ProposalRecall's ``best``) included
    got = _computed(metric)
    _assert_same(got, _computed(twin), atol=1e-12)
    metric = cast(metric)  # a cast after compute(): the cached result stays the exact one
    _assert_same(_computed(metric), got, atol=0)
    metric.reset()  # the states are rebuilt from the defaults, which kept their dtype too
    twin.reset()
    assert _tensor_dtypes(metric) == _tensor_dtypes(twin)


@pytest.mark.parametrize("cast", list(DIRECT))
@pytest.mark.parametrize("name", sorted(CASES))
def test_states_keep_their_dtype_under_a_cast(name: str, cast: str) -> None:
    _check(name, DIRECT[cast])


@pytest.mark.parametrize("cast", PARENT)
@pytest.mark.parametrize("name", sorted(CASES))
def test_states_keep_their_dtype_under_a_parent_modules_cast(name: str, cast: str) -> None:
    def through_parent(metric: Any) -> Any:
        parent = torch.nn.ModuleDict({"metric": metric})
        return DIRECT[cast](parent)["metric"]

    _check(name, through_parent)


@pytest.mark.parametrize("dtype", [None, torch.float16, torch.bfloat16])
def test_a_device_move_still_moves_the_states(dtype: torch.dtype | None) -> None:
    """``.to(device)`` and ``.to(device, dtype)`` move every state and default (the meta device stands for an
    accelerator on a CPU-only machine); only the dtype part of the cast is left out."""
    metric = st.ThresholdMeasures()
    before = _tensor_dtypes(metric)
    moved = metric.to("meta") if dtype is None else metric.to("meta", dtype)
    assert _tensor_dtypes(moved) == before
    for key, default in moved._defaults.items():
        assert getattr(moved, key).device.type == "meta", key
        assert isinstance(default, torch.Tensor) and default.device.type == "meta", key
    assert moved.device.type == "meta"
    if dtype is not None:
        assert moved.dtype == dtype  # recorded, as set_dtype records it


def test_the_check_can_fail() -> None:
    """A Metric whose states follow ``.to(dtype)`` (torchmetrics' own behaviour) fails the dtype comparison."""
    from torchmetrics.regression import MeanAbsoluteError

    metric = MeanAbsoluteError()
    before = _tensor_dtypes(metric)
    assert _tensor_dtypes(metric.to(torch.bfloat16)) != before


@pytest.mark.parametrize("default", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_half_default_dtype_changes_nothing(name: str, default: torch.dtype) -> None:
    """Lightning's true-precision plugins set the default dtype while the module is built and in every step: a
    Metric built, fed and computed under it has the states and results of one under float32 (the inputs are made
    before, as a step makes them in explicit dtypes)."""
    make, batch = CASES[name]
    batches = [batch(seed) for seed in (0, 1)]
    twin = make()
    for inputs in batches:
        twin.update(*inputs)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(default)
    try:
        metric = make()
        for inputs in batches:
            metric.update(*inputs)
        got = _computed(metric)
    finally:
        torch.set_default_dtype(previous)
    assert _tensor_dtypes(metric) == _tensor_dtypes(twin)
    _assert_same(got, _computed(twin), atol=0)


def test_float_class_ids_are_read_in_float64_under_a_half_default_dtype() -> None:
    """Python float class ids took the default dtype: under bfloat16, id 257.0 read 256 (another class)."""
    objects = torch.zeros(1, 8, 8, dtype=torch.bool)
    objects[0, 2:6, 2:6] = True
    proposals = objects.clone()
    expected = st.ProposalRecall(counts=[1], num_classes=300)
    expected.update(proposals, objects, classes=torch.tensor([257]))
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        metric = st.ProposalRecall(counts=[1], num_classes=300)
        metric.update(proposals, objects, classes=[257.0])
    finally:
        torch.set_default_dtype(previous)
    assert metric.class_objects.nonzero().flatten().tolist() == [257]
    torch.testing.assert_close(metric.class_objects, expected.class_objects, rtol=0, atol=0)


# ------------------------------------------------------------------------------------------------------- Lightning

STEPS = 60


def _step_inputs(step: int) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Fixed inputs of one step in explicit dtypes: inside Lightning's true-precision step the default dtype is
    bfloat16 / float16, so a ``torch.rand`` without dtype would give other values than the float64 run."""
    gen = torch.Generator().manual_seed(1000 + step)
    preds = torch.rand(2, 16, 16, generator=gen, dtype=torch.float64)
    target = torch.rand(2, 16, 16, generator=gen, dtype=torch.float64) > 0.5
    a = torch.rand(2, 16, 16, generator=gen, dtype=torch.float64) > 0.6
    b = torch.rand(2, 16, 16, generator=gen, dtype=torch.float64) > 0.6
    seg = torch.randint(0, 4, (2, 4, 4), generator=gen, dtype=torch.int64).repeat_interleave(4, 1)
    seg = seg.repeat_interleave(4, 2)
    gt = torch.stack([seg // 2, (seg + step) % 3], dim=1)
    return {"foreground": (preds, target), "boundary": (a, b), "partition": (seg, gt), "surface": (a, b)}


def _family_metrics() -> dict[str, Any]:
    return {
        "foreground": st.MAE(),
        "boundary": st.MorphologicalBoundaryF(),
        "partition": st.VariationOfInformation(),
        "surface": st.AverageSurfaceDistance(symmetric=True),
    }


#: the families whose compute() is one scalar, logged as the Metric object (Lightning calls its compute())
LOGGED = ("foreground", "partition", "surface")


def _lightning_module(pl: Any) -> Any:
    """A LightningModule holding one Metric per family, fed in ``training_step`` (built here: Lightning is a test
    extra, and the cast tests above run without it)."""

    class FamilyModule(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)  # a parameter, to see that the plugin did cast the module
            self.family = torch.nn.ModuleDict(_family_metrics())
            self.automatic_optimization = False
            self.seen: dict[str, Any] = {}

        def training_step(self, batch: list[torch.Tensor], batch_idx: int) -> None:
            self.seen["default_dtype"] = torch.get_default_dtype()
            metrics: dict[str, Any] = dict(self.family.items())
            for family, inputs in _step_inputs(int(batch[0])).items():
                metrics[family].update(*inputs)
            for family in LOGGED:
                self.log(family, self.family[family], on_step=False, on_epoch=True)

        def on_train_epoch_end(self) -> None:
            self.seen["layer_dtype"] = self.layer.weight.dtype
            self.seen["states"] = {family: _tensor_dtypes(m) for family, m in self.family.items()}
            self.seen["computed"] = {family: _computed(m) for family, m in self.family.items()}

        def configure_optimizers(self) -> None:
            return None

    return FamilyModule()


def _float64_reference() -> dict[str, Any]:
    plain = _family_metrics()
    for step in range(STEPS):
        for family, inputs in _step_inputs(step).items():
            plain[family].update(*inputs)
    return {family: _computed(m) for family, m in plain.items()}


@pytest.mark.parametrize("precision", ["bf16-true", "16-true"])
def test_lightning_true_precision_logs_the_float64_values(precision: str) -> None:
    """The issue's case: a LightningModule under ``bf16-true`` / ``16-true`` on the CPU, one Metric per family fed
    in ``training_step``; the computed and the logged values equal a float64 run's within 1e-9 (60 MAE steps of
    ~0.5 each: a bfloat16 sum is off by ~1e-3, a float16 one by ~1e-5)."""
    pl = pytest.importorskip("pytorch_lightning")
    module = _lightning_module(pl)
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=1,
        max_steps=STEPS,
        precision=precision,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    # the step indices as int64 (the plugin casts floating inputs only); each step makes its own inputs
    steps = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(STEPS)), batch_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's notes: no optimizer, few workers, ...
        trainer.fit(module, steps)
    low = torch.bfloat16 if precision == "bf16-true" else torch.float16
    assert module.seen["default_dtype"] == low  # the step ran under the plugin's default dtype
    assert module.seen["layer_dtype"] == low  # and the module was cast
    for family, dtypes in module.seen["states"].items():
        assert set(dtypes.values()) <= {torch.float64, torch.int64}, (family, dtypes)
    expected = _float64_reference()
    for family in expected:
        _assert_same(module.seen["computed"][family], expected[family], atol=1e-9)
    for family in LOGGED:
        logged = float(trainer.callback_metrics[family])
        assert abs(logged - float(expected[family])) <= 1e-9, (family, logged, float(expected[family]))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_whole_float_counts_are_exact_under_a_half_default_dtype(dtype: torch.dtype) -> None:
    """``counts=[1001.0]`` / ``num_regions=[1001.0]`` built under a half default dtype (a module built in Lightning's
    ``trainer.init_module()``) stay 1001 (bfloat16 would read 1000)."""
    from segmetrics_torch import HierarchyMeasures, ProposalRecall

    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        recall = ProposalRecall(counts=[1.0, 1001.0])
        hierarchy = HierarchyMeasures(num_regions=[1001.0])
    finally:
        torch.set_default_dtype(previous)
    assert recall.counts.tolist() == [1, 1001]
    assert hierarchy.levels.tolist() == [1001]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_checkpoint_of_cast_states_loads_into_the_exact_dtypes(name: str, dtype: torch.dtype) -> None:
    """A state dict whose tensor states were cast (saved by another library, converted by hand) loads into the
    states' own dtypes, through a parent module as Lightning loads a checkpoint (torchmetrics set each state to the
    checkpoint's tensor as it was: float16 counts, float32 sums). A list state's tensors keep the checkpoint's dtype:
    none is declared for them."""
    make, batch = CASES[name]
    metric = make()
    metric.persistent(True)
    metric.update(*batch(0))
    tensors = [key for key, default in metric._defaults.items() if isinstance(default, torch.Tensor)]
    exact = {key: getattr(metric, key).dtype for key in tensors}
    cast = {k: v.to(dtype) if isinstance(v, torch.Tensor) else v for k, v in metric.state_dict().items()}
    parent, loaded = torch.nn.Module(), make()
    loaded.persistent(True)
    parent.metric = loaded
    parent.load_state_dict({f"metric.{k}": v for k, v in cast.items()})
    assert {key: getattr(loaded, key).dtype for key in tensors} == exact
    assert any(v.dtype != exact[k] for k, v in cast.items() if k in exact)  # the checkpoint was cast indeed
