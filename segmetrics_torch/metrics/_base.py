"""The one torchmetrics base of the package's Metrics: exact accumulation whatever ``set_dtype`` asks.

Every state of the package's Metrics is an exact accumulator: float64 sums of per-image values, float64 or int64
counts (pixels, images, correspondences), fixed-size float64 curves of such sums. torchmetrics' ``set_dtype`` (and
Lightning's precision plugins, which call it) would cast them: in float16, counts above 2048 lose units and
``4 x 300 x 300`` pixel counts overflow to ``inf`` (``ThresholdMeasures`` then computed ``nan``); in float32 sums of
thousands of images lose the 1e-6 agreement with the references. So the states keep their dtype: ``set_dtype`` is
accepted and recorded (``metric.dtype``), and the states, their defaults and the results stay as they are. ``.to(
device)`` moves them as usual.

``merge_state`` of two Metrics built with different settings (thresholds, measures, tolerances, ...) is a
``ValueError`` naming the settings that differ, before torchmetrics would compare states.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypedDict

import torch
from torch import Tensor
from torch.nn import Module
from torchmetrics import Metric

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
    """A torchmetrics ``Metric`` whose states keep their exact dtype under ``set_dtype`` (see the module doc)."""

    def _apply(self, fn: Callable, exclude_state: Sequence[str] = ()) -> Module:
        if self._dtype_convert:  # set_dtype: a dtype cast, applied to no state
            exclude_state = tuple(self._defaults)
        return super()._apply(fn, exclude_state=exclude_state)

    def plot(self, val: Any = None, ax: Any = None) -> tuple[Any, Any]:
        """Plot a result (default: ``compute()``): curves with their axes (PR curve, value against the threshold,
        recall against the number of proposals), scalars as torchmetrics does; ``(figure, axes)``. Needs
        matplotlib."""
        from ._plot import plot_metric

        return plot_metric(self, val, ax)

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
            warnings.warn(f"{type(self).__name__}.compute(): no image has been added (no update succeeded), so the "
                          "value is NaN.", RuntimeWarning, stacklevel=3)  # fmt: skip
        return getattr(self, name) / count

    def _settings(self) -> dict[str, Any]:
        """The constructor's arguments as this Metric holds them (what two Metrics must share to be merged)."""
        out: dict[str, Any] = {}
        for name in (*inspect.signature(type(self).__init__).parameters, *self._keyword_settings):
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
        super().merge_state(incoming_state)


#: constructor arguments that are not settings of the measure (torchmetrics' own, and the checking switch)
_NOT_SETTINGS = frozenset({"self", "kwargs", "validate_args"})
#: where a Metric keeps an argument under another name
_HELD_AS = {"thresholds": ("levels",)}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            return False
        return a.shape == b.shape and bool(torch.equal(a.cpu(), b.cpu()))
    try:
        return bool(a == b)
    except (TypeError, ValueError, RuntimeError):
        return a is b


def _show(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"{value.numel()} values" if value.numel() > 4 or value.ndim != 1 else str(value.tolist())
    return repr(value)
