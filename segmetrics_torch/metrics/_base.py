"""The one torchmetrics base of the package's Metrics: exact accumulation whatever dtype a cast asks for.

Every state of the package's Metrics is an exact accumulator: float64 sums of per-image values, float64 or int64
counts (pixels, images, correspondences), fixed-size float64 curves of such sums. A cast would ruin them: in float16,
counts above 2048 lose units and ``4 x 300 x 300`` pixel counts overflow to ``inf`` (``ThresholdMeasures`` then
computed ``nan``); in bfloat16 a sum of per-image MAEs stops growing near 256 (an ``MAE`` logged over 1,500 steps of
Lightning's ``"bf16-true"`` read 0.1709 where the truth was 0.4991); in float32 sums of thousands of images lose the
1e-6 agreement with the references. So the states keep their dtype under every cast: ``.to(dtype)``,
``.to(device, dtype)``, ``.half()``, ``.bfloat16()``, ``.float()``, ``.double()``, ``.type(dtype)``, ``set_dtype``,
applied to the Metric or to a module holding it (Lightning's ``"16-true"`` / ``"bf16-true"`` call
``module.to(dtype=...)`` on the LightningModule). The device part of a cast still applies: ``.to(device)`` and
``.to(device, dtype)`` move the states and their defaults. The requested dtype is recorded (``metric.dtype``), as
torchmetrics records it.

Results: ``compute()`` and ``forward()`` return float64 (int64 for ``ProposalRecall``'s ``counts``) whatever dtype
was requested, a cached result included: they are computed from the exact states, and returning them in the
requested half precision would round away what the states keep (a cast of a result is the caller's choice, one
``.to(dtype)`` away). The Metrics make their states and temporaries with explicit dtypes, so Lightning's default
dtype of a true-precision run (``torch.set_default_dtype(bfloat16)`` while the module is built and in each step)
changes nothing either.

``merge_state`` of two Metrics built with different settings (thresholds, measures, tolerances, ...) is a
``ValueError`` naming the settings that differ, before torchmetrics would compare states.

Compute groups: a ``MetricCollection`` (``compute_groups=True``, its default) lets Metrics whose states have the same
names and equal values after the first ``update`` share one state, whatever their class and settings. Many of the
package's Metrics share state names (the boundary distances' ``value_sum`` ..., ``BoundaryPR`` and
``SemanticBoundaryPR``, one class built twice with other settings), and their first states can be equal (an untrained
net's empty predictions make every distance ``inf``; a binary first batch scores alike with ``normalize`` on or off),
after which one Metric reported another's value. So every Metric holds one more state, ``settings_id``: four float64
numbers drawn from a hash of its class and the arguments its constructor was given (:func:`_settings_id`), constant
(``reset`` keeps it, ``merge_state`` and ``load_state_dict`` leave it, it is never saved; reduced by ``max`` across
processes, so a synchronised value is the same). Two Metrics of one class built with the same arguments share a
group, as torchmetrics intends; any others never do, nor does a Metric that holds Metrics
(``ForegroundMeasures(include=...)``: a group updates its first member only).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

import torch
from torch import Tensor
from torch.nn import Module
from torchmetrics import Metric

from .._checks import check_keywords

__all__ = ["ExactMetric", "MetricKeywords"]


class MetricKeywords(TypedDict, total=False):
    """torchmetrics' own ``Metric`` keywords (1.9), for the Metrics that type their ``**kwargs``."""

    compute_on_cpu: bool
    dist_sync_on_step: bool
    process_group: Any
    dist_sync_fn: Callable[..., Any] | None
    distributed_available_fn: Callable[[], bool] | None
    sync_on_compute: bool
    compute_with_cache: bool


class ExactMetric(Metric):
    """A torchmetrics ``Metric`` whose states keep their exact dtype under every cast (see the module doc).

    The guard is an override of torch's private ``Module._apply``, because no public hook exists: torch offers no
    per-tensor dtype policy for a module's casts (its ``register_module_buffer_registration_hook`` and the like see
    registration, not casts, and the states are not buffers). torchmetrics' ``Metric._apply`` (1.9) skips the
    ``.half()`` / ``.float()`` / ``.type()`` family, recognised by the name of the function it is given, but casts
    the states under ``.to(dtype)`` and ``set_dtype``. Overriding the public casts does not work: ``.to()``,
    ``.half()``, ``.type()`` of a parent module (the LightningModule that Lightning's precision plugins cast with
    ``module.to(dtype=...)``) call each child's ``_apply(fn)``, never the child's ``to()``; ``_apply`` is the one
    method every cast reaches, and torchmetrics' own override takes ``exclude_state`` for a subclass that handles
    its states itself, which is what this does.
    """

    def _apply(self, fn: Callable, exclude_state: Sequence[str] = ()) -> Module:
        keep = _dtype_kept(fn)
        # torchmetrics would cast a cached compute() / forward() result with ``fn``: set aside, kept exact below
        computed, forward_cache = self._computed, self._forward_cache
        self._computed = self._forward_cache = None
        try:
            # torchmetrics applies ``fn`` to the parameters, buffers and children, and records device and dtype
            super()._apply(fn, exclude_state=tuple(self._defaults))
        finally:
            self._computed, self._forward_cache = computed, forward_cache
        for key, default in self._defaults.items():
            if key in exclude_state:  # a subclass's own business, as in torchmetrics
                continue
            self._defaults[key] = _map_tensors(default, keep)
            setattr(self, key, _map_tensors(getattr(self, key), keep))
        self._computed = _map_tensors(computed, keep)
        self._forward_cache = _map_tensors(forward_cache, keep)
        return self  # what Module._apply returns, and torchmetrics' after it

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every Metric class's ``__init__`` ends by registering the ``settings_id`` state (module doc) once the
        outermost constructor has set the settings: each class's constructor (its own, or the one it inherits) is
        wrapped, and only the wrapper of the instance's own class registers it."""
        super().__init_subclass__(**kwargs)
        init = cls.__init__

        @functools.wraps(init)
        def __init__(self: ExactMetric, *args: Any, **kw: Any) -> None:
            init(self, *args, **kw)
            if type(self) is cls:
                identity = _settings_id(self, args, kw)
                self.add_state("settings_id", default=identity, dist_reduce_fx="max", persistent=False)

        cls.__init__ = __init__  # type: ignore[method-assign]

    def __init__(self, **kwargs: Any) -> None:
        """torchmetrics' keywords (:class:`MetricKeywords`); any other is the ``TypeError`` of an unexpected keyword
        with the nearest keyword of the Metric as a hint (a misspelt setting, ``includ=``), as the functions say it,
        in place of torchmetrics' ``ValueError`` listing the unknown names."""
        named = [p for p in _init_parameters(type(self)) if p not in _NOT_SETTINGS]
        check_keywords(
            f"{type(self).__name__}",
            kwargs,
            [*named, *MetricKeywords.__annotations__],
            known=MetricKeywords.__annotations__,
        )
        super().__init__(**kwargs)
        # a checkpoint whose states were cast (a float16 count, saved by another library or converted by hand) loads
        # into the states' exact dtypes: a public hook of torch, run for every Metric of a loaded module tree
        self.register_load_state_dict_post_hook(_exact_after_loading)

    def plot(self, val: Any = None, ax: Any = None) -> tuple[Any, Any]:
        """Plot a result (default: ``compute()``): curves with their axes (PR curve, value against the threshold,
        recall against the number of proposals), scalars as torchmetrics does; ``(figure, axes)``. Needs
        matplotlib."""
        from ._plot import plot_metric

        return plot_metric(self, val, ax)

    def add_list_state(self, name: str, item_shape: Sequence[int], dtype: torch.dtype = torch.float64) -> None:
        """A list state (``dist_reduce_fx="cat"``) of tensors ``(k, *item_shape)`` of ``dtype``, for values a sum
        cannot hold (a median needs every value): registered with what a process that was given no batch sends in
        the gather (:meth:`sync`)."""
        self.add_state(name, default=[], dist_reduce_fx="cat")
        self._list_items = {**getattr(self, "_list_items", {}), name: ((0, *item_shape), dtype)}

    def sync(
        self,
        dist_sync_fn: Callable | None = None,
        process_group: Any | None = None,
        should_sync: bool = True,
        distributed_available: Callable | None = None,
    ) -> None:
        """torchmetrics' ``sync``, where a process that was given no batch sends an empty ``(0, *item_shape)`` item
        of each list state (:meth:`add_list_state`). torchmetrics sends a 1-D tensor of the recorded dtype there,
        whose shape and dtype differ from the other processes' items: gloo aborted the processes (a DDP run whose
        dataset left a rank without an image). ``sync`` is the public hook every synchronisation goes through."""
        items = getattr(self, "_list_items", {})
        empty = [name for name in items if isinstance(getattr(self, name), list) and not getattr(self, name)]
        for name in empty:
            shape, dtype = items[name]
            setattr(self, name, [torch.zeros(shape, dtype=dtype, device=self.device)])
        super().sync(dist_sync_fn, process_group, should_sync, distributed_available)
        for name in empty:  # the state as it was: now, or when unsync() restores the cache taken above
            if self._is_synced and self._cache is not None:
                self._cache[name] = []
            else:
                setattr(self, name, [])

    #: list states (:meth:`add_list_state`) -> the shape and dtype of the empty item a process without a batch sends
    _list_items: dict[str, tuple[tuple[int, ...], torch.dtype]]

    #: the constant state of the module doc's "Compute groups" (registered by the constructor's wrapper)
    settings_id: Tensor

    #: settings the constructor takes through its typed ``**kwargs`` (a TypedDict's keys), held as attributes
    _keyword_settings: tuple[str, ...] = ()

    #: the ``_update_count`` at which :meth:`_mean` last warned of no image
    _warned_at = -1

    def _mean(self, name: str) -> Tensor:
        """The state ``name`` (a sum over images) divided by the image count ``self.count``: NaN with no image.

        No image after ``update`` calls that all raised warns here; no ``update`` at all is torchmetrics' own "compute
        before update" warning, not repeated; images all left out by ``skip_empty_gt`` are counted in
        ``skipped_empty_gt`` and give the documented NaN without a warning (``forward`` of such a batch included)."""
        count = self.count
        skipped = getattr(self, "skipped_empty_gt", 0)
        # once per state of the Metric (a compute reads many sums), not once per sum
        if self._update_count > 0 and not bool(count) and not bool(skipped) and self._warned_at != self._update_count:
            self._warned_at = self._update_count
            warnings.warn(
                f"{type(self).__name__}.compute(): no image has been added (no update succeeded), so the value is NaN.",
                RuntimeWarning,
                stacklevel=3,
            )
        return getattr(self, name) / count

    def _settings(self) -> dict[str, Any]:
        """The arguments of the Metric's constructors (its class's and its bases') as this Metric holds them: what
        two Metrics must share to be merged."""
        out: dict[str, Any] = {}
        for name in (*_init_parameters(type(self)), *self._keyword_settings):
            if name in _NOT_SETTINGS:
                continue
            for attribute in (name, *_HELD_AS.get(name, ())):
                if hasattr(self, attribute):
                    out[name] = getattr(self, attribute)
                    break
        return out

    def merge_state(self, incoming_state: dict[str, Any] | Metric) -> None:
        """torchmetrics' ``merge_state``; a Metric of another class or built with other settings is a ``ValueError``
        that names the settings that differ (torchmetrics would report a state's shape or name)."""
        if isinstance(incoming_state, Metric):
            if type(incoming_state) is not type(self):
                raise ValueError(
                    f"Cannot merge a {type(incoming_state).__name__} into a {type(self).__name__}: merge Metrics of "
                    "one class."
                )
            assert isinstance(incoming_state, ExactMetric)
            mine, theirs = self._settings(), incoming_state._settings()
            differ = [name for name in mine if not _same(mine[name], theirs.get(name))]
            if differ:
                shown = "; ".join(f"{n}={_show(mine[n])} here, {_show(theirs.get(n))} there" for n in differ)
                raise ValueError(
                    f"Cannot merge {type(self).__name__} states: the two Metrics were built with different settings "
                    f"({shown}); merge Metrics built alike."
                )
        identity = self.settings_id
        if isinstance(incoming_state, dict) and "settings_id" not in incoming_state:
            incoming_state = {**incoming_state, "settings_id": identity}  # states saved without it (not persistent)
        super().merge_state(incoming_state)
        self.settings_id = identity  # this Metric's own, whatever the other held

    def __setstate__(self, state: dict[str, Any]) -> None:
        """torchmetrics' ``__setstate__`` (``clone()``, ``deepcopy``, unpickling); a copy of a Metric that holds
        Metrics draws its own ``settings_id``, so that a clone beside its original never shares their group."""
        super().__setstate__(state)
        if "settings_id" in self._defaults and _holds_metrics(self):
            identity = _settings_id(self, (), {})
            self._defaults["settings_id"] = identity.to(self.settings_id.device)
            self.settings_id = identity.to(self.settings_id.device)

    def persistent(self, mode: bool = False) -> None:
        """torchmetrics' ``persistent``; ``settings_id`` is never saved: it belongs to the Metric as built, and a
        checkpoint of another Metric loaded into this one must not give it that one's identity."""
        super().persistent(mode)
        self._persistent["settings_id"] = False


#: constructor arguments that are not settings of the measure (torchmetrics' own, and the checking switch)
_NOT_SETTINGS = frozenset({"self", "kwargs", "validate_args"})
#: where a Metric keeps an argument under another name
_HELD_AS = {"thresholds": ("levels",)}


def _holds_metrics(metric: Metric) -> bool:
    """Whether ``metric`` holds other Metrics (their states are not its states: a compute group cannot share them)."""
    return any(isinstance(child, Metric) for child in metric.modules() if child is not metric)


def _init_parameters(cls: type) -> list[str]:
    """The parameter names of every constructor of ``cls`` and its package bases (a base may take ``normalize``,
    ``protocol``, ``max_dist`` ... that the subclass passes on through ``**kwargs``), the class's own first."""
    names: list[str] = []
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or not (isinstance(klass, type) and issubclass(klass, ExactMetric)):
            continue
        for name, parameter in inspect.signature(init).parameters.items():
            if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD) and name not in names:
                names.append(name)
    return names


def _settings_id(metric: ExactMetric, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Tensor:
    """Four float64 numbers in [0, 1) from a hash of the Metric's class and the arguments its constructor was given
    (whatever base class keeps them, under whatever name): equal for two Metrics of one class built with the same
    arguments, and otherwise as far apart as random numbers (``allclose`` of two differing ones: odds of about
    1e-20). Arguments given differently but meaning the same (``MAE()`` and ``MAE(normalize=True)``) only cost the
    sharing. A Metric holding other Metrics (``ForegroundMeasures(include=...)``) never shares: a compute group
    updates its first member only, and the others' inner Metrics would never see a batch."""
    call = [_stable(a) for a in args], sorted((k, _stable(v)) for k, v in kwargs.items())
    text = repr((type(metric).__module__, type(metric).__qualname__, call))
    if _holds_metrics(metric):
        text += os.urandom(16).hex()
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    numbers = [int.from_bytes(digest[8 * i : 8 * i + 8], "little") >> 11 for i in range(4)]
    return torch.tensor([n / 2.0**53 for n in numbers], dtype=torch.float64)


def _exact_after_loading(metric: Module, incompatible_keys: Any) -> None:
    """After ``load_state_dict``: every tensor state back in its default's dtype (torchmetrics sets a state to the
    checkpoint's tensor as it is; a list state's tensors are left as loaded, their dtype is not declared)."""
    defaults = getattr(metric, "_defaults", {})
    for key, default in defaults.items():
        value = getattr(metric, key, None)
        if isinstance(default, Tensor) and isinstance(value, Tensor) and value.dtype != default.dtype:
            setattr(metric, key, value.to(default.dtype))


def _dtype_kept(fn: Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """``fn`` without its dtype change: what ``fn`` does to an empty tensor of a state's dtype and device says
    whether it casts (``.to(dtype)`` casts floats only, ``set_dtype``'s ``.type()`` integers too, a device move
    neither); a cast state gets only the device move, any other ``fn`` applies as it is."""

    def apply(t: Tensor) -> Tensor:
        probe = fn(t.new_empty(0))
        return fn(t) if probe.dtype == t.dtype else t.to(probe.device)

    return apply


def _map_tensors(value: Any, fn: Callable[[Tensor], Tensor]) -> Any:
    """``fn`` on every tensor of a state (a tensor or a list of them) or of a cached result (nested dicts, lists,
    tuples); anything else as it is."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, dict):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_map_tensors(v, fn) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)  # a namedtuple by position
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            return False
        return a.shape == b.shape and bool(torch.equal(a.cpu(), b.cpu()))
    try:
        return bool(a == b)
    except (TypeError, ValueError, RuntimeError):
        return a is b


def _stable(value: Any) -> str:
    """A setting's whole value as text (a tensor's or an array's every number, not a summary)."""
    if isinstance(value, Tensor):
        return f"tensor({value.detach().cpu().tolist()!r}, {value.dtype})"
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy arrays and scalars
        return f"array({value.tolist()!r}, {value.dtype})"
    return repr(value)


def _show(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"{value.numel()} values" if value.numel() > 4 or value.ndim != 1 else str(value.tolist())
    return repr(value)
