r"""Meta-measures: how well does a measure tell good results from bad ones?

Every test scores results with one *measure* and counts how often the measure's judgement agrees with a judgement
that nobody disputes. A measure is given by name (the package's partition and foreground measures), as a
``torchmetrics.Metric`` (evaluated one image at a time: a Metric aggregates, so per-image values need one
update/compute each), as a callable returning per-image values, or as a :class:`Measure`; see :func:`as_measure`.

Partition measures (Pont-Tuset & Marques, "Measures and meta-measures for the supervised evaluation of image
segmentation", CVPR 2013, §4; SEISM ``src/misc/SIHD_error.m``, ``compute_pdf.m``, ``pdf_intersection.m``,
``compute_percentile_index.m``), each a percentage of *correct* judgements:

* :func:`sihd` (swapped-image human discrimination, after Martin's PhD thesis): the measure's values on pairs of
  human partitions of the same image and of different images; a threshold at the intersection of the two
  30-bin PDFs classifies each pair; the rate is the mean of the two classes' correct fractions ("the sum of the
  area under the curve above and below the threshold for the same-image and different-image pairs", §4.1).
* :func:`sabd` (SoA-baseline discrimination): per image, correct when a state-of-the-art result scores strictly
  better than a baseline made without looking at the image (SEISM's quadtree; our random hierarchy).
* :func:`sisd` (swapped-image SoA discrimination): per image, correct when the SoA result of that image scores
  strictly better against its ground truth than the same method's result on another image.

Foreground maps (Margolin, Zelnik-Manor & Tal, "How to evaluate foreground maps?", CVPR 2014, §6; Fan et al.,
"Structure-measure", ICCV 2017, §5 and "Enhanced-alignment measure", IJCAI 2018, §4), each an *error* rate:

* :func:`generic_map_test`: how often a generic map (centred Gaussian or circle) scores better than the SoA maps.
* :func:`noise_test` (Fan et al. 2018): how often a random Gaussian noise map scores better than the SoA maps.
* :func:`gt_switch_test`: how often a SoA map scores better against another image's ground truth than its own.
* :func:`annotation_error_test`: ``1 - Spearman's rho`` between the rankings of the SoA maps under the true and a
  morphologically perturbed ground truth (averaged over images).

What we could verify: SEISM's SIHD code (ported rule by rule, with its quirks: ``histc`` on 29 left edges drops the
values above the last edge from the PDF, the bin centres are offset by ``(min+max)/num_bins/2``) and the CVPR 2013
definitions of the three partition meta-measures (the paper ships with SEISM). The foreground papers' full texts were
not available here; their protocols are implemented from their published summaries, and these details are ours and
marked in the docstrings: comparing with the *mean* score of the SoA maps (``compare="mean"``) or with every map,
the generic maps' and noise maps' parameters, the GT-switch pairing, the perturbation's structuring element, ties
(never counted as errors, never as correct judgements; their number is reported), and per-image vs dataset rankings.

"Better" follows the measure's direction (``higher_is_better``). Every random choice takes a ``seed``; a seed gives
the same result on every run and device.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, overload

import numpy as np
import torch
from torch import Tensor

from .._checks import ImageBatch, batch_items, check_bool, check_choice
from ..functional.boundary.summary import matlab_linspace
from ..functional.foreground import foreground_measures
from ..functional.partition import partition_measures
from ..functional.partition.pairs import PartitionPairs
from ..functional.partition.tables import TABLE_MEASURES
from ..registry import MEASURES, META_FOREGROUND, PARTITION, meta_name
from .baselines import (
    Perturbation,
    centered_circle_map,
    centered_gaussian_map,
    gaussian_noise_maps,
    match_size,
    perturb_ground_truth,
    switch_pairing,
)

__all__ = [
    "FOREGROUND_MEASURES",
    "PARTITION_MEASURES",
    "AnnotationErrorResult",
    "Measure",
    "RateResult",
    "SIHDResult",
    "annotation_error_test",
    "as_measure",
    "generic_map_test",
    "gt_switch_test",
    "noise_test",
    "sabd",
    "shared_computations",
    "sihd",
    "sihd_from_values",
    "sisd",
    "spearman_rho",
]


# --------------------------------------------------------------------------------------------------- measures


@dataclass(frozen=True)
class Measure:
    """A measure as the meta-measures use it: per-image values of a batch and the direction of "better".

    Attributes:
        name: display name.
        fn: ``fn(preds, target) -> (B,)`` tensor of per-image values; ``preds``/``target`` are what the meta-measure
            was given, batched as a (B, ...) tensor when all images share a size, else as a list.
        higher_is_better: direction of the measure.
    """

    name: str
    fn: Callable[[Any, Any], Tensor]
    higher_is_better: bool
    #: measures computed together (the foreground family from one kernel pass, the partition measures from one set
    #: of contingency tables): ``(group name, fn_all(preds, target) -> {key: (B, ...) values}, extract(all) -> (B,))``.
    #: Inside :func:`shared_computations`, :func:`_evaluate` runs ``fn_all`` once per input set for the whole group.
    group: tuple[str, Callable[[Any, Any], dict[str, Tensor]], Callable[[dict[str, Tensor]], Tensor]] | None = field(
        default=None, compare=False
    )

    def __call__(self, preds: Any, target: Any) -> Tensor:
        values = self.fn(preds, target)
        if not isinstance(values, Tensor):
            values = torch.as_tensor(values)
        return values.detach().double().flatten().cpu()


def _all_foreground(preds: Any, target: Any) -> dict[str, Tensor]:

    return foreground_measures(preds, target)


def _foreground_extract(key: str, reduce: str | None) -> Callable[[dict[str, Tensor]], Tensor]:
    def extract(values: dict[str, Tensor]) -> Tensor:
        v = values[key]
        if reduce == "mean":
            return v.mean(-1)
        if reduce == "max":
            return v.max(-1).values
        return v

    return extract


def _foreground(key: str, reduce: str | None = None) -> Callable[[Any, Any], Tensor]:
    extract = _foreground_extract(key, reduce)

    def fn(preds: Any, target: Any) -> Tensor:
        return extract(_all_foreground(preds, target))

    fn.group = ("foreground", _all_foreground, extract)  # type: ignore[attr-defined]
    return fn


#: the groups of partition measures computed together (see :func:`_group_measures`)
_PARTITION_GROUPS = ("partition_tables", "partition_fb")


def _group_measures(group: str) -> tuple[str, ...]:
    """Every measure but Fb comes from one set of contingency tables; Fb (boundary matching, the costly one) alone."""

    return ("fb",) if group == "partition_fb" else TABLE_MEASURES


def _all_partition(group: str) -> Callable[[Any, Any], dict[str, Tensor]]:
    def fn_all(preds: Any, target: Any) -> dict[str, Tensor]:

        return partition_measures(preds, target, measures=list(_group_measures(group)))

    return fn_all


def _partition(key: str) -> Callable[[Any, Any], Tensor]:
    def fn(preds: Any, target: Any) -> Tensor:

        return partition_measures(preds, target, measures=[key])[key]

    group = "partition_fb" if key == "fb" else "partition_tables"
    fn.group = (group, _all_partition(group), lambda values: values[key])  # type: ignore[attr-defined]
    return fn


#: how each foreground measure of the registry's META_FOREGROUND is read from one ForegroundMeasures pass
_FOREGROUND_PARTS = {
    "mae": ("mae",),
    "s": ("s_measure",),
    "wf": ("weighted_f_measure",),
    "adpf": ("f_adaptive",),
    "meanf": ("f_curve", "mean"),
    "maxf": ("f_curve", "max"),
    "adpe": ("e_adaptive",),
    "meane": ("e_curve", "mean"),
    "maxe": ("e_curve", "max"),
}

# name (the registry's meta name): (function, higher_is_better, description)
FOREGROUND_MEASURES: dict[str, tuple[Callable[[Any, Any], Tensor], bool, str]] = {
    name: (_foreground(*_FOREGROUND_PARTS[key]), MEASURES[key].higher_is_better, MEASURES[key].description)
    for key, name in META_FOREGROUND.items()
}


def _partition_registry() -> dict[str, tuple[Callable[[Any, Any], Tensor], bool, str]]:
    return {
        m: (_partition(m), MEASURES[m].higher_is_better, f"SEISM {m}: {MEASURES[m].description}") for m in PARTITION
    }


PARTITION_MEASURES = _partition_registry()


def _size(x: Tensor) -> tuple[int, int]:
    """(H, W) of an (..., H, W) tensor."""
    return x.shape[-2], x.shape[-1]


def as_measure(
    measure: object, *, higher_is_better: bool | None = None, key: str | None = None, name: str | None = None
) -> Measure:
    """Turn ``measure`` into a :class:`Measure`.

    Args:
        measure: a name of :data:`PARTITION_MEASURES` (``fb, fop, voi, pri, sc, ssc, ...``) or
            :data:`FOREGROUND_MEASURES` (``mae, s_measure, weighted_f, f_adaptive, f_mean, f_max, e_adaptive, e_mean,
            e_max``); a ``torchmetrics.Metric`` (cloned, then reset, updated with one image and computed per image;
            ``higher_is_better`` read from the Metric unless given); a callable ``fn(preds, target)`` returning (B,)
            values or a dict (then ``key`` picks the entry); or a :class:`Measure`.
        higher_is_better: direction; required for a callable, optional for a Metric (overrides its attribute).
        key: entry of a dict-valued result (e.g. ``"adaptive"`` of :class:`segmetrics_torch.EMeasure`).
        name: display name (default: the name, the Metric's class name or the callable's ``__name__``).

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import as_measure
        >>> m = as_measure("mae")
        >>> m.name, m.higher_is_better
        ('mae', False)
        >>> target = torch.zeros(2, 8, 8, dtype=torch.bool)
        >>> target[:, 2:6, 2:6] = True
        >>> m.fn(target.double(), target).tolist()
        [0.0, 0.0]
        >>> as_measure(lambda p, t: (p == t).double().mean((1, 2)), higher_is_better=True, name="accuracy").name
        'accuracy'
    """
    if isinstance(measure, Measure):
        return measure
    if higher_is_better is not None:
        check_bool(higher_is_better, "higher_is_better")
    if isinstance(measure, str):
        measure = meta_name(measure)
        for registry in (PARTITION_MEASURES, FOREGROUND_MEASURES):
            if measure in registry:
                fn, hib, _ = registry[measure]
                return Measure(
                    name or measure,
                    fn,
                    hib if higher_is_better is None else higher_is_better,
                    group=getattr(fn, "group", None),
                )
        known = sorted(PARTITION_MEASURES) + sorted(FOREGROUND_MEASURES)
        raise ValueError(f"Expected `measure` to name one of {known}, but got {measure!r}.")

    # torchmetrics is imported here: at the module top it added scipy.signal and matplotlib (~1 s) to `import
    # segmetrics_torch.meta`, which a user of the functional measures never needs
    from torchmetrics import Metric

    if isinstance(measure, Metric):
        direction = measure.higher_is_better if higher_is_better is None else higher_is_better
        if direction is None:
            raise ValueError(
                f"Expected `higher_is_better` for the Metric {type(measure).__name__}, whose attribute is None."
            )
        template = measure.clone()

        def per_image(preds: Any, target: Any) -> Tensor:
            out = []
            for p, g in zip(_items(preds), _items(target), strict=True):
                m = template.clone()
                m.reset()
                m.update([p], [g])
                out.append(_pick(m.compute(), key, type(measure).__name__))
            return torch.stack([v.detach().double().reshape(()).cpu() for v in out])

        return Measure(name or type(measure).__name__, per_image, bool(direction))
    if callable(measure):
        if higher_is_better is None:
            raise ValueError("Expected `higher_is_better` (True or False) for a callable `measure`.")

        def call(preds: Any, target: Any) -> Tensor:
            return _pick(measure(preds, target), key, getattr(measure, "__name__", "measure"))

        return Measure(name or str(getattr(measure, "__name__", "measure")), call, bool(higher_is_better))
    raise TypeError(
        f"Expected `measure` to be a name, a torchmetrics.Metric, a callable or a Measure, but got "
        f"{type(measure).__name__}."
    )


def _pick(value: Any, key: str | None, what: str) -> Tensor:
    if isinstance(value, Mapping):
        if key is None or key not in value:
            raise ValueError(f"{what} returns a dict with keys {sorted(value)}: pass `key` to pick one, got {key!r}.")
        value = value[key]
    elif key is not None:
        raise ValueError(f"`key` {key!r} was given but {what} does not return a dict.")
    return value if isinstance(value, Tensor) else torch.as_tensor(value)


def _items(x: Any) -> list[Tensor]:
    return list(x.unbind(0)) if isinstance(x, Tensor) else list(x)


def _batch(items: list[Tensor]) -> ImageBatch:
    """One (B, ...) tensor when every item has the same shape and device, else the list (the measures take both)."""
    if all(t.shape == items[0].shape and t.device == items[0].device for t in items):
        if items[0].device.type == "cpu" and not any(t.requires_grad for t in items):
            # numpy's single-threaded copy: torch.stack's two-thread copy was 7-60x slower on the shared 2-core VM
            # (29 of the 47 CPU seconds of `segmetrics meta foreground --demo`)
            return torch.from_numpy(np.stack([t.numpy() for t in items]))
        return torch.stack(items)
    return items


def _check_batch_size(batch_size: object) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"Expected `batch_size` to be a positive int, but got {batch_size!r}.")
    return int(batch_size)


#: the computations shared inside :func:`shared_computations` (None outside it)
_SHARED: ContextVar[dict[Any, Any] | None] = ContextVar("segmetrics_meta_shared", default=None)


@contextlib.contextmanager
def shared_computations() -> Iterator[None]:
    """Within the block, compute what several meta-measure tests of several measures share only once.

    The nine foreground measures come from one pass of the foreground kernel and the partition measures (but Fb)
    from one set of contingency tables; the tests of a measure re-evaluate the same state-of-the-art maps, and the
    baselines (noise maps, generic maps, perturbed and switched ground truths) are the same for every measure. Inside
    the block, :func:`_evaluate` evaluates a group's function once per set of inputs and every measure of the group
    reads its values from that result, and the baselines are built once. Partition measures go further, pair by pair
    (:class:`_SharedPairs`): every distinct map is prepared once and every (partition, ground truth) pair evaluated
    once per group (tables; Fb), whichever test, measure and batch asks for it. Inputs are recognised by their memory
    (data pointer, shape, strides, dtype, device) and torch's version counter (an input changed in place is a new
    input), and the cache keeps them alive for the block's lifetime, so a key cannot be reused by another tensor.
    The numbers are identical to evaluating each measure on its own (tested).

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import generic_map_test
        >>> g = torch.zeros(4, 16, 16, dtype=torch.bool); g[:, 4:12, 4:12] = True
        >>> preds = {"a": g.double() * 0.9, "b": g.double() * 0.7}
        >>> with shared_computations():
        ...     rates = [generic_map_test(m, preds, g).rate for m in ("mae", "s_measure", "f_max")]
        >>> rates
        [0.0, 0.0, 0.0]
    """
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _generic_map(make: Callable[[int, int], Tensor], h: int, w: int, device: torch.device) -> Tensor:
    return make(h, w).to(device)


def _fingerprint(items: Sequence[Tensor]) -> tuple:
    # torch's version counter (raised by every in-place change of the tensor or of a view of its storage): a buffer
    # reused for another method's maps inside the block is another input, not the first method's cached scores
    return tuple((t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, str(t.device), t._version) for t in items)


def _shared(key: tuple, make: Callable[[], Any], *pinned: Any) -> Any:
    """``make()``, computed once per ``key`` inside :func:`shared_computations` (``pinned`` kept alive with it)."""
    cache = _SHARED.get()
    if cache is None:
        return make()
    if key not in cache:
        cache[key] = (make(), pinned)
    return cache[key][0]


class _SharedPairs:
    """Partition measures inside :func:`shared_computations`, pair by pair: every distinct map (recognised by its
    memory, kept alive here) is registered once with one :class:`~segmetrics_torch.functional.partition.pairs.
    PartitionPairs`, and every (partition, ground truth) pair is evaluated once per group of measures, whichever test
    and measure asks for it (SABD and SISD of several measures score the same results at shared levels)."""

    def __init__(self) -> None:

        self.pairs = PartitionPairs()
        self._ids: dict[tuple, int] = {}
        self._pinned: list[Tensor] = []
        self._done: dict[tuple[str, int, int], tuple[dict[str, Tensor], int]] = {}

    def _id(self, kind: str, x: Tensor) -> int:
        key = (kind, *_fingerprint([x]))
        if key not in self._ids:
            self._ids[key] = self.pairs.add_partition(x) if kind == "partition" else self.pairs.add_target(x)
            self._pinned.append(x)
        return self._ids[key]

    def values(self, group: str, preds: list[Tensor], target: list[Tensor]) -> dict[str, Tensor]:
        """{key: (B,) values} of the group's measures for the aligned lists, evaluating only pairs not seen yet."""
        ids = [(self._id("partition", p), self._id("target", g)) for p, g in zip(preds, target, strict=True)]
        new = list(dict.fromkeys(i for i in ids if (group, *i) not in self._done))
        if new:
            result = self.pairs.evaluate(new, measures=_group_measures(group))
            self._done.update({(group, *i): (result, row) for row, i in enumerate(new)})
        refs = [self._done[(group, *i)] for i in ids]
        by_result: dict[int, tuple[dict[str, Tensor], list[int], list[int]]] = {}
        for position, (result, row) in enumerate(refs):
            entry = by_result.setdefault(id(result), (result, [], []))
            entry[1].append(position)
            entry[2].append(row)
        out = {k: torch.empty(len(refs), dtype=v.dtype) for k, v in refs[0][0].items()}
        for result, positions, rows in by_result.values():
            for k, v in result.items():
                out[k][torch.tensor(positions)] = v[torch.tensor(rows)]
        return out


def _evaluate(measure: Measure, preds: list[Tensor], target: list[Tensor], batch_size: int) -> Tensor:
    """Per-image values of aligned lists, in chunks of ``batch_size`` (float64, CPU). Inside
    :func:`shared_computations`, a group's values are computed once per input set, and partition measures once per
    (partition, ground truth) pair (see :class:`_SharedPairs`)."""
    batch_size = _check_batch_size(batch_size)
    chunks = range(0, len(preds), batch_size)
    if measure.group is not None and measure.group[0] in _PARTITION_GROUPS and _SHARED.get() is not None and preds:
        group, _, extract = measure.group
        shared_pairs = _shared(("partition_pairs",), _SharedPairs)
        out = [extract(shared_pairs.values(group, preds, target)).detach().double().flatten().cpu()]
    elif measure.group is not None and _SHARED.get() is not None:
        group, fn_all, extract = measure.group

        def run_group() -> list[dict[str, Tensor]]:
            return [fn_all(_batch(preds[i : i + batch_size]), _batch(target[i : i + batch_size])) for i in chunks]

        key = (group, batch_size, _fingerprint(preds), _fingerprint(target))
        parts = _shared(key, run_group, list(preds), list(target))
        out = [extract(part).detach().double().flatten().cpu() for part in parts]
    else:
        out = [measure(_batch(preds[i : i + batch_size]), _batch(target[i : i + batch_size])) for i in chunks]
    values = torch.cat(out) if out else torch.zeros(0, dtype=torch.float64)
    if values.numel() != len(preds):
        raise ValueError(f"Measure {measure.name!r} returned {values.numel()} values for {len(preds)} images.")
    return values


def _better(a: Tensor, b: Tensor, higher_is_better: bool) -> Tensor:
    """``a`` strictly better than ``b`` (NaN compares as neither)."""
    return a > b if higher_is_better else a < b


# ---------------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class RateResult:
    """The outcome of a counting meta-measure.

    Attributes:
        test: the meta-measure (``"sabd"``, ``"sisd"``, ``"generic"``, ``"noise"``, ``"gt_switch"``).
        measure: the measure's name.
        rate: ``count / total`` (NaN when ``total`` is 0).
        count: judgements of the kind named by ``kind`` (correct ones, or errors).
        total: judgements made.
        ties: judgements where the two values were equal (counted as neither correct nor errors).
        kind: ``"correct"`` (higher rate is better) or ``"error"`` (lower is better).
        values: the compared per-judgement values, ``(total, 2)``: (expected better, expected worse).
    """

    test: str
    measure: str
    rate: float
    count: int
    total: int
    ties: int
    kind: str
    values: Tensor = field(repr=False, compare=False, default_factory=lambda: torch.zeros(0, 2))

    def __str__(self) -> str:
        counts = f"({self.count}/{self.total}, {self.ties} ties)"
        return f"{self.test}[{self.measure}]: {100 * self.rate:.1f}% {self.kind} {counts}"


def _rate(test: str, measure: Measure, good: Tensor, bad: Tensor, kind: str) -> RateResult:
    """Judgements over pairs (good[i] expected better than bad[i]).

    Raises:
        ValueError: the measure returned NaN on some map (a NaN is neither better nor worse than anything, so it
            would count as neither a correct judgement nor an error: a rate of 0 that means nothing).
    """
    nan = torch.isnan(good) | torch.isnan(bad)
    if bool(nan.any()):
        raise ValueError(
            f"{test}: the measure {measure.name!r} returned NaN in {int(nan.sum())} of {nan.numel()} judgements; a "
            "meta-measure cannot rank NaN scores (see the measure's documented NaN cases, or leave out the maps "
            "that give them)"
        )
    correct = _better(good, bad, measure.higher_is_better)
    error = _better(bad, good, measure.higher_is_better)
    ties = int((good == bad).sum())
    count = int(correct.sum()) if kind == "correct" else int(error.sum())
    total = good.numel()
    return RateResult(
        test, measure.name, count / total if total else math.nan, count, total, ties, kind, torch.stack([good, bad], 1)
    )


@dataclass(frozen=True)
class SIHDResult:
    """Swapped-image human discrimination (CVPR 2013 §4.1).

    Attributes:
        measure: the measure's name.
        rate: ``(same_correct / same_total + different_correct / different_total) / 2``.
        threshold: the PDF-intersection threshold (SEISM ``pdf_intersection.m``).
        same_correct, same_total: same-image pairs classified as such, and their number.
        different_correct, different_total: the same for different-image pairs.
        same_above: True when the same-image pairs are the ones above the threshold (a similarity); False for a
            distance such as VoI (SEISM's swap when ``error1 + error2 > 1``).
        same, different: the measure's values on the pairs.
    """

    measure: str
    rate: float
    threshold: float
    same_correct: int
    same_total: int
    different_correct: int
    different_total: int
    same_above: bool
    same: Tensor = field(repr=False, compare=False)
    different: Tensor = field(repr=False, compare=False)

    def __str__(self) -> str:
        return (
            f"sihd[{self.measure}]: {100 * self.rate:.1f}% correct (same {self.same_correct}/{self.same_total}, "
            f"different {self.different_correct}/{self.different_total}, threshold {self.threshold:.4g})"
        )


@dataclass(frozen=True)
class AnnotationErrorResult:
    """Margolin et al.'s annotation-error meta-measure.

    Attributes:
        measure: the measure's name.
        rate: mean over the ranked images of ``1 - rho`` (0 = rankings unchanged, 2 = reversed; NaN if none).
        images: images whose two rankings both have a defined Spearman rho.
        skipped: images left out because a ranking was constant (rho undefined), e.g. all maps tied.
        per_image: (B,) ``1 - rho`` per image (NaN where skipped).
    """

    measure: str
    rate: float
    images: int
    skipped: int
    per_image: Tensor = field(repr=False, compare=False)

    def __str__(self) -> str:
        counts = f"over {self.images} images ({self.skipped} skipped)"
        return f"annotation_errors[{self.measure}]: 1 - rho = {self.rate:.4f} {counts}"


# ----------------------------------------------------------------------------------------------------- SIHD


def _seism_pdf(samples: np.ndarray, num_bins: int, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """SEISM ``compute_pdf.m``: ``histc`` on the left edges ``linspace(lo, hi, num_bins)(1:end-1)``, normalised by
    ``trapz`` over the (offset) bin centres."""
    edges = matlab_linspace(lo, hi, num_bins).numpy()[:-1]
    centres = edges + (lo + hi) / num_bins / 2  # SEISM's offset, verbatim (not half a bin width)
    idx = np.searchsorted(edges, samples, side="right") - 1
    # MATLAB histc: edges(k) <= x < edges(k+1); the last bin only counts x == edges(end); others are dropped
    keep = (idx >= 0) & ((idx < edges.size - 1) | (samples == edges[-1]))
    counts = np.bincount(idx[keep], minlength=edges.size).astype(np.float64)
    area = float(((counts[1:] + counts[:-1]) / 2 * np.diff(centres)).sum())  # MATLAB trapz
    if not area > 0:
        raise ValueError("SIHD: a PDF has zero area (all its values fall outside SEISM's histc bins).")
    return counts / area, centres


def _percentile_index(pdf: np.ndarray, percentile: float = 0.5) -> float:
    """SEISM ``compute_percentile_index.m``: the fractional 1-based index where the cumulative sum reaches
    ``percentile`` of the total (linear interpolation inside the bin)."""
    th = pdf.sum() * percentile
    accum = pdf.copy()
    ii = 0
    while accum[ii] < th:
        accum[ii + 1] += accum[ii]
        ii += 1
    if ii == 0:
        return 1.0
    return (ii + 1) - (accum[ii] - th) / (accum[ii] - accum[ii - 1])


def _intersection(left: np.ndarray, median_left: float, right: np.ndarray, centres: np.ndarray) -> float:
    """SEISM ``pdf_intersection.m``/``intersection``: walk right from the left PDF's median bin while it is above the
    right PDF, then intersect the two linear pieces."""
    index = math.floor(median_left) - 1  # 0-based
    while index < left.size and left[index] > right[index]:
        index += 1
    if index == 0 or index >= left.size:
        raise ValueError("SIHD: the PDFs do not cross after the median (SEISM's pdf_intersection.m fails here too).")
    x1, x2, y1, y2 = right[index - 1], right[index], left[index - 1], left[index]
    if x2 - x1 - y2 + y1 == 0:  # the two linear pieces are parallel: MATLAB divides by zero
        if y1 == x1:  # 0/0 = NaN: SIHD_error.m then reports no error at all (a rate of 1.0 that means nothing)
            raise ValueError(
                "SIHD: the two PDFs are equal on both bins where SEISM's pdf_intersection.m intersects them (too few "
                "distinct values for the bins); it returns a NaN threshold here, whose rate would read as 100 %."
            )
        return math.copysign(math.inf, float(y1 - x1))  # (y1 - x1) / 0 = +-Inf, SEISM's threshold
    return float(centres[index - 1] + (y1 - x1) / (x2 - x1 - y2 + y1) * (centres[index] - centres[index - 1]))


def sihd_from_values(
    same: Tensor | Sequence[float], different: Tensor | Sequence[float], *, num_bins: int = 30, measure: str = "values"
) -> SIHDResult:
    """SIHD from the measure's values on same-image and different-image pairs, SEISM's ``SIHD_error.m`` rule by rule.

    1. ``lo = floor(min(all))``, ``hi = ceil(max(all))``; each PDF = ``histc`` counts on the 29 left edges of
       ``linspace(lo, hi, 30)`` (values above the last edge are not counted) divided by their ``trapz`` area over
       the centres ``edges + (lo + hi) / 30 / 2``.
    2. Each PDF's median index (``compute_percentile_index.m``); walking from the lower median's bin while the lower
       PDF is above the other, the threshold is the linear intersection of the two PDFs between the last two bins.
    3. ``error1 = mean(same <= t)``, ``error2 = mean(different > t)``; if ``error1 + error2 > 1`` (a distance) the
       classes swap: ``error1 = mean(different <= t)``, ``error2 = mean(same > t)``.

    The rate is ``1 - (error1 + error2) / 2``, the percentage of correct classifications of CVPR 2013 §4.1.

    Where the two PDFs are parallel but apart on the bins of the crossing, SEISM's intersection divides by zero and
    the threshold is -inf or +inf (every pair on one side: a rate of 0.5), as here.

    Raises:
        ValueError: empty or non-finite values, fewer than 2 bins, or PDFs SEISM cannot intersect (equal medians
            without its special case, no crossing after the median: SEISM stops with an error there too; equal
            PDFs on the crossing's bins, where its threshold is NaN).

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import sihd_from_values
        >>> g = torch.Generator().manual_seed(0)
        >>> same = 0.8 + 0.1 * torch.randn(200, generator=g, dtype=torch.float64)
        >>> different = 0.4 + 0.1 * torch.randn(200, generator=g, dtype=torch.float64)
        >>> res = sihd_from_values(same, different)
        >>> round(res.rate, 4), round(res.threshold, 4), res.same_above
        (0.9725, 0.5851, True)
    """
    if isinstance(num_bins, bool) or not isinstance(num_bins, int) or num_bins < 3:
        raise ValueError(f"Expected `num_bins` to be an int >= 3, but got {num_bins!r}.")
    values = {}
    for name, raw in (("same", same), ("different", different)):
        try:
            values[name] = torch.as_tensor(raw, dtype=torch.float64).flatten().cpu()
        except (TypeError, ValueError, RuntimeError) as err:
            raise TypeError(f"Expected `{name}` to be a tensor or a sequence of numbers, but got {raw!r}.") from err
    s, d = values["same"], values["different"]
    for name, v in (("same", s), ("different", d)):
        if v.numel() == 0 or not bool(torch.isfinite(v).all()):
            raise ValueError(f"Expected `{name}` to hold at least one value, all finite, but got {v.numel()} values.")
    sn, dn = s.numpy(), d.numpy()
    lo = math.floor(min(sn.min(), dn.min()))
    hi = math.ceil(max(sn.max(), dn.max()))
    if hi == lo:
        hi = lo + 1  # every value is the same integer: MATLAB would divide by zero; one unit keeps the bins valid
    pdf_same, centres = _seism_pdf(sn, num_bins, lo, hi)
    pdf_diff, _ = _seism_pdf(dn, num_bins, lo, hi)
    m1, m2 = _percentile_index(pdf_same), _percentile_index(pdf_diff)
    if m1 < m2:
        t = _intersection(pdf_same, m1, pdf_diff, centres)
    elif m1 > m2:
        t = _intersection(pdf_diff, m2, pdf_same, centres)
    elif m1 == 1 and pdf_same[round(m1) - 1] > pdf_diff[round(m2) - 1]:
        t = _intersection(pdf_same, m1, pdf_diff, centres)
    else:
        raise ValueError("SIHD: both PDFs have the same median bin (SEISM's pdf_intersection.m: 'Case not thought').")
    e1, e2 = float((s <= t).double().mean()), float((d > t).double().mean())
    same_above = not e1 + e2 > 1
    if same_above:
        same_ok, diff_ok = int((s > t).sum()), int((d <= t).sum())
    else:
        same_ok, diff_ok = int((s <= t).sum()), int((d > t).sum())
    rate = (same_ok / s.numel() + diff_ok / d.numel()) / 2
    return SIHDResult(measure, rate, t, same_ok, s.numel(), diff_ok, d.numel(), same_above, s, d)


def _annotation_list(annotations: Any, name: str) -> list[Tensor]:
    if isinstance(annotations, (list, tuple)) and not annotations:
        return []  # the caller names the number of images it needs
    items = batch_items(annotations, name, 3, "of shape (B, K, H, W)")
    for i, a in enumerate(items):
        if not isinstance(a, Tensor) or a.ndim != 3 or a.shape[0] == 0:
            raise ValueError(f"Expected `{name}[{i}]` to be a (K, H, W) tensor with K >= 1.")
    return items


@overload
def sihd(
    measure: list[str] | tuple[str, ...],
    annotations: Any,
    *,
    num_bins: int = ...,
    max_different: int | None = ...,
    ordered: bool = ...,
    seed: int = ...,
    batch_size: int = ...,
) -> dict[str, SIHDResult]: ...


@overload
def sihd(
    measure: object,
    annotations: Any,
    *,
    num_bins: int = ...,
    max_different: int | None = ...,
    ordered: bool = ...,
    seed: int = ...,
    batch_size: int = ...,
) -> SIHDResult: ...


def sihd(
    measure: object,
    annotations: Any,
    *,
    num_bins: int = 30,
    max_different: int | None = None,
    ordered: bool = True,
    seed: int = 0,
    batch_size: int = 64,
) -> SIHDResult | dict[str, SIHDResult]:
    """Swapped-image human discrimination of a partition measure (CVPR 2013 §4.1; Martin's coherence test of
    BSDS300): can the measure tell whether two human partitions come from the same image?

    Pairs are ordered (the measures are asymmetric): a same-image pair is annotation ``a`` scored as the partition
    against annotation ``b != a`` of the same image as the (single) ground truth; a different-image pair scores
    annotation ``b`` of image ``j`` against annotation ``a`` of image ``i != j``, brought to image ``i``'s size with
    :func:`.baselines.match_size` (rotated when portrait vs landscape, as BSDS500's two sizes). SEISM ships no code
    for the pairing; whether the paper used ordered pairs is not verified. With ordered pairs a measure and its
    mirror (``dhd``/``sdhd``, ``sc``/``ssc``) see the same values and get the same SIHD; CVPR 2013 Table 2 reports
    different values for them, so the paper scored each pair in one direction or against several annotations.
    ``ordered=False`` scores each unordered pair once (annotation ``b`` against ``a`` for ``a < b``; the partition
    from image ``j`` against the ground truth of ``i`` for ``i < j``).

    Args:
        measure: a partition measure (see :func:`as_measure`), e.g. ``"fb"``, ``"fop"``, ``"voi"``; or a list of
            names of :data:`PARTITION_MEASURES`, all computed from one pass over the pairs (then a dict is returned).
        annotations: (B, K, H, W) or a list of B (K_b, H_b, W_b) human label maps; images with one annotation give
            no same-image pair. B >= 2.
        num_bins: SEISM's 30.
        max_different: score a seeded random sample of this many different-image pairs (all when None).
        ordered: both directions of every pair (default) or one.
        seed: seeds that sample.
        batch_size: pairs per measure call, for a measure not given by name (named measures are evaluated pair by
            pair from maps prepared once, see :func:`_human_pair_measures`).

    Returns:
        :class:`SIHDResult`, or {name: :class:`SIHDResult`} for a list of names.

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import quadtree_partition, sihd
        >>> g = torch.Generator().manual_seed(0)
        >>> base = [quadtree_partition(32, 32, n) for n in (4, 7, 10, 13)]  # 4 images
        >>> annotations = torch.stack([torch.stack([b] * 3) for b in base])  # 3 annotations each, noisy:
        >>> noise = torch.rand(annotations.shape, generator=g) < 0.05
        >>> annotations = torch.where(noise, 0, annotations)
        >>> res = sihd("pri", annotations)
        >>> res.same_total, res.different_total, round(res.rate, 4)
        (24, 108, 0.8333)
    """
    multi = isinstance(measure, (list, tuple))
    if isinstance(measure, (list, tuple)):
        names = list(measure)
        bad = [n for n in names if n not in PARTITION_MEASURES]
        if bad or not names:
            raise ValueError(f"Expected a list of names of {sorted(PARTITION_MEASURES)}, but got {names!r}.")
    else:
        m = as_measure(measure)
        names = [m.name]
    batch_size = _check_batch_size(batch_size)
    items = _annotation_list(annotations, "annotations")
    if len(items) < 2:
        raise ValueError(f"Expected `annotations` of at least 2 images, but got {len(items)}.")
    same_pairs, diff_pairs = _human_pairs(items, max_different, seed, check_bool(ordered, "ordered"))
    if multi or (isinstance(measure, str) and measure in PARTITION_MEASURES):
        values = _human_pair_measures(items, same_pairs + diff_pairs, names)
        same = {k: v[: len(same_pairs)] for k, v in values.items()}
        diff = {k: v[len(same_pairs) :] for k, v in values.items()}
    else:
        same, diff = (_measure_human_pairs(m, items, pairs, batch_size) for pairs in (same_pairs, diff_pairs))
    results = {k: sihd_from_values(same[k], diff[k], num_bins=num_bins, measure=k) for k in names}
    return results if multi else results[names[0]]


def _measure_human_pairs(
    m: Measure, items: list[Tensor], pairs: list[tuple[int, int, int, int]], batch_size: int
) -> dict[str, Tensor]:
    """{name: values} of any measure on human-partition pairs (gt image, gt annotation, partition image, partition
    annotation), batched by image size in calls of ``batch_size`` pairs."""
    out = torch.empty(len(pairs), dtype=torch.float64)
    order = sorted(range(len(pairs)), key=lambda k: tuple(items[pairs[k][0]].shape[-2:]))
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        preds = [match_size(items[pairs[k][2]][pairs[k][3]], _size(items[pairs[k][0]])) for k in chunk]
        target = [items[pairs[k][0]][pairs[k][1]][None] for k in chunk]
        out[torch.tensor(chunk)] = m(_batch(preds), _batch(target))
    return {m.name: out}


def _human_pair_measures(
    items: list[Tensor], pairs: list[tuple[int, int, int, int]], names: list[str]
) -> dict[str, Tensor]:
    """SEISM's measures ``names`` of human-partition pairs (gt image, gt annotation, partition image, annotation),
    as :func:`.partition_measures` on each pair but with every annotation prepared once per image size it is scored
    at (about 100 maps in about 10,000 pairs on BSDS500's test set): see
    :class:`~segmetrics_torch.functional.partition.pairs.PartitionPairs`."""

    evaluator = PartitionPairs()
    partitions: dict[tuple[int, int, tuple[int, int]], int] = {}
    targets: dict[tuple[int, int], int] = {}

    def ids(i: int, a: int, j: int, b: int) -> tuple[int, int]:
        size = _size(items[i])
        if (j, b, size) not in partitions:
            partitions[(j, b, size)] = evaluator.add_partition(match_size(items[j][b], size))
        if (i, a) not in targets:
            targets[(i, a)] = evaluator.add_target(items[i][a][None])
        return partitions[(j, b, size)], targets[(i, a)]

    values = evaluator.evaluate([ids(*pair) for pair in pairs], measures=names)
    return {k: values[k].detach().double().cpu() for k in names}


def _human_pairs(
    items: list[Tensor], max_different: int | None, seed: int, ordered: bool = True
) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, int, int, int]]]:
    """Same-image and different-image ordered pairs (gt image, gt annotation, partition image, annotation)."""
    same_pairs = [
        (i, a, i, b)
        for i, t in enumerate(items)
        for a in range(t.shape[0])
        for b in range(t.shape[0])
        if (a != b if ordered else a < b)
    ]
    if not same_pairs:
        raise ValueError("Expected some image with at least 2 annotations (same-image pairs), but found none.")
    if max_different is not None and (
        isinstance(max_different, bool) or not isinstance(max_different, int) or max_different < 1
    ):
        raise ValueError(f"Expected `max_different` to be a positive int or None, but got {max_different!r}.")
    rng = np.random.default_rng(_seed(seed))
    flat = [(i, a) for i, t in enumerate(items) for a in range(t.shape[0])]
    n = len(flat)
    all_diff = (n * n - sum(t.shape[0] ** 2 for t in items)) // (1 if ordered else 2)
    if max_different is None or max_different >= all_diff:
        return same_pairs, [(i, a, j, b) for (i, a) in flat for (j, b) in flat if (i != j if ordered else i < j)]
    chosen: set[tuple[int, int]] = set()  # sampled without replacement among the different-image pairs
    while len(chosen) < max_different:
        for x, y in rng.integers(0, n, size=(2 * max_different, 2)).tolist():
            if flat[x][0] != flat[y][0] and (ordered or flat[x][0] < flat[y][0]):
                chosen.add((x, y))
                if len(chosen) == max_different:
                    break
    return same_pairs, [(*flat[x], *flat[y]) for x, y in sorted(chosen)]


def _seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"Expected `seed` to be a non-negative int, but got {seed!r}.")
    return int(seed)


# ----------------------------------------------------------------------------------------------- SABD / SISD


def _methods(x: Any, name: str) -> dict[str, list[Tensor]]:
    """One method (a (B, ...) tensor or a list of B tensors) or a dict of them, as {name: list}."""
    if isinstance(x, Mapping):
        if not x:
            raise ValueError(f"Expected `{name}` to hold at least one method, but got an empty dict.")
        return {str(k): _items(v) for k, v in x.items()}
    if isinstance(x, Tensor) or (isinstance(x, Sequence) and not isinstance(x, (str, bytes))):
        return {name: _items(x)}
    raise TypeError(f"Expected `{name}` to be a tensor, a list of tensors or a dict of them, got {type(x).__name__}.")


def _check_lengths(n: int, **lists: list) -> None:
    for k, v in lists.items():
        if len(v) != n:
            raise ValueError(f"Expected `{k}` to hold {n} images (one per ground truth), but got {len(v)}.")
    if n == 0:
        raise ValueError("Expected at least one image, but got none.")


def sabd(measure: object, soa: Any, baseline: Any, target: Any, *, batch_size: int = 16) -> RateResult:
    """SoA-baseline discrimination (CVPR 2013 §4.2): the fraction of (method, image) pairs where the measure scores
    the state-of-the-art partition strictly better than the baseline partition of the same image.

    Table 2 of the paper evaluates every method and the quadtree each "at the Optimal Dataset Scale with respect to
    each evaluation measure": pass the partitions at those parameters (``segmetrics meta partition`` does this).

    Args:
        measure: see :func:`as_measure`.
        soa: one method's partitions ((B, H, W) or a list of (H_b, W_b)) or a dict {method: partitions}.
        baseline: the baseline's partitions of the same images (e.g. :func:`.baselines.quadtree_partition`).
        target: (B, K, H, W) or a list of (K_b, H_b, W_b) ground truths.

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import quadtree_partition, sabd
        >>> gt = torch.zeros(2, 1, 16, 16, dtype=torch.int64)
        >>> gt[:, :, :, 8:] = 1
        >>> soa = gt[:, 0].clone()  # a perfect method
        >>> baseline = torch.stack([quadtree_partition(16, 16, 16)] * 2)
        >>> res = sabd("voi", soa, baseline, gt)
        >>> res.rate, res.count, res.total
        (1.0, 2, 2)
    """
    m = as_measure(measure)
    gts = _items(target)
    base = _items(baseline)
    methods = _methods(soa, "soa")
    _check_lengths(len(gts), baseline=base, **methods)
    b = _evaluate(m, base, gts, batch_size)
    good = torch.cat([_evaluate(m, parts, gts, batch_size) for parts in methods.values()])
    return _rate("sabd", m, good, b.repeat(len(methods)), "correct")


def _pairing(n: int, pairing: Any, seed: int) -> list[tuple[int, int]]:
    """(own image, other image) pairs: ``"all"`` every ordered pair, ``"random"`` one seeded derangement, or an
    explicit (n,) sequence ``other[i]``."""
    if isinstance(pairing, str):
        if pairing == "all":
            return [(i, j) for i in range(n) for j in range(n) if i != j]
        if pairing == "random":
            return list(enumerate(switch_pairing(n, seed=_seed(seed)).tolist()))
        raise ValueError(f"Expected `pairing` to be 'all', 'random' or a sequence, but got {pairing!r}.")
    other = torch.as_tensor(pairing).flatten().tolist()
    if len(other) != n or any(not 0 <= j < n or j == i for i, j in enumerate(other)):
        raise ValueError(f"Expected `pairing` to give every image i another image j != i in [0, {n}), got {other!r}.")
    return list(enumerate(other))


def sisd(
    measure: object, soa: Any, target: Any, *, pairing: Any = "all", seed: int = 0, batch_size: int = 16
) -> RateResult:
    """Swapped-image SoA discrimination (CVPR 2013 §4.3): against the ground truth of image ``i``, the method's
    partition of ``i`` must score strictly better than the same method's partition of another image ``j``
    (brought to ``i``'s size by :func:`.baselines.match_size`). The rate is the fraction of correct judgements over
    all (method, i, j) triples.

    Which other image the paper used is not stated (and SEISM has no code for it); ``pairing="all"`` (default) uses
    every ordered pair, deterministic; ``"random"`` one seeded partner per image; or pass ``other[i]`` explicitly.

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import sisd
        >>> gt = torch.zeros(2, 1, 16, 16, dtype=torch.int64)
        >>> gt[0, :, :, 8:] = 1  # image 0: left / right
        >>> gt[1, :, 8:, :] = 1  # image 1: top / bottom
        >>> res = sisd("pri", gt[:, 0], gt)
        >>> res.rate, res.total
        (1.0, 2)
    """
    m = as_measure(measure)
    gts = _items(target)
    methods = _methods(soa, "soa")
    _check_lengths(len(gts), **methods)
    if len(gts) < 2:
        raise ValueError("Expected at least 2 images for a swapped-image test.")
    pairs = _pairing(len(gts), pairing, seed)
    good, bad = [], []
    for parts in methods.values():
        own = _evaluate(m, parts, gts, batch_size)
        swapped = [
            _shared(
                ("swapped", _fingerprint([parts[j]]), _size(gts[i])),
                functools.partial(match_size, parts[j], _size(gts[i])),
                parts[j],
            )
            for i, j in pairs
        ]
        bad.append(_evaluate(m, swapped, [gts[i] for i, _ in pairs], batch_size))
        good.append(own[torch.tensor([i for i, _ in pairs])])
    return _rate("sisd", m, torch.cat(good), torch.cat(bad), "correct")


# ----------------------------------------------------------------------------------------- foreground tests


#: what a noise / generic map is compared with: the per-image mean state-of-the-art score, or each map
Compare = Literal["mean", "each"]
COMPARE: tuple[str, ...] = get_args(Compare)


def _soa_scores(m: Measure, methods: dict[str, list[Tensor]], gts: list[Tensor], batch_size: int) -> Tensor:
    """(M, B) scores of the SoA maps."""
    return torch.stack([_evaluate(m, maps, gts, batch_size) for maps in methods.values()])


def _against(m: Measure, soa: Tensor, other: Tensor, compare: Compare, test: str) -> RateResult:
    """Errors where ``other`` (R, B) beats the SoA (M, B): against the per-image mean SoA score or every map."""
    check_choice(compare, "compare", COMPARE)
    ref = soa.mean(0, keepdim=True) if compare == "mean" else soa
    good = ref[:, None, :].expand(ref.shape[0], other.shape[0], -1).flatten()
    bad = other[None, :, :].expand(ref.shape[0], -1, -1).flatten()
    return _rate(test, m, good, bad, "error")


def generic_map_test(
    measure: object,
    preds: Any,
    target: Any,
    *,
    generic: str | Tensor = "gaussian",
    compare: Compare = "mean",
    batch_size: int = 16,
) -> RateResult:
    """State-of-the-art vs generic map (Margolin et al. CVPR 2014; Fan et al. ICCV 2017, IJCAI 2018): a measure
    should score a map computed from the image better than a generic map that ignores it. The error rate is the
    fraction of images where the generic map scores strictly better than the SoA maps.

    Args:
        measure: a foreground measure (see :func:`as_measure`).
        preds: the SoA maps: one method ((B, H, W) or a list) or a dict {method: maps}.
        target: ground-truth masks ((B, H, W) or a list).
        generic: ``"gaussian"`` (:func:`.baselines.centered_gaussian_map`, Margolin's generic map for non-binary
            maps), ``"circle"`` (:func:`.baselines.centered_circle_map`, a binary generic map) or an (H, W) map
            (resized per image with :func:`.baselines.match_size`).
        compare: ``"mean"``: against the per-image mean score of the SoA maps (our reading of "scored higher than
            the mean score of the SoA maps", not verified against the paper's text); ``"each"``: against every map,
            one judgement per (method, image).

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import generic_map_test
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[0, 2:8, 2:8] = True  # objects away from the centre
        >>> target[1, 9:15, 9:15] = True
        >>> res = generic_map_test("mae", target.double() * 0.9, target)
        >>> res.test, res.rate, res.total
        ('generic', 0.0, 2)
    """
    m = as_measure(measure)
    gts = _items(target)
    methods = _methods(preds, "preds")
    _check_lengths(len(gts), **methods)
    maps = []
    for g in gts:
        h, w = g.shape[-2:]
        if isinstance(generic, Tensor):
            gm = match_size(generic, (h, w))
        elif generic in ("gaussian", "circle"):
            make = centered_gaussian_map if generic == "gaussian" else centered_circle_map
            gm = _shared((generic, h, w, str(g.device)), functools.partial(_generic_map, make, h, w, g.device))
        else:
            raise ValueError(f"Expected `generic` to be 'gaussian', 'circle' or a tensor, but got {generic!r}.")
        maps.append(gm.to(g.device))
    soa = _soa_scores(m, methods, gts, batch_size)
    return _against(m, soa, _evaluate(m, maps, gts, batch_size)[None], compare, "generic")


def noise_test(
    measure: object,
    preds: Any,
    target: Any,
    *,
    num_maps: int = 1,
    mean: float = 0.5,
    std: float = 0.25,
    binary: bool = False,
    seed: int = 0,
    compare: Compare = "mean",
    batch_size: int = 16,
) -> RateResult:
    """State-of-the-art vs random Gaussian noise (Fan et al., IJCAI 2018 §4): the error rate is the fraction of
    (noise map, image) pairs where a noise map (:func:`.baselines.gaussian_noise_maps`) scores strictly better than
    the SoA maps (``compare`` as :func:`generic_map_test`). ``binary`` thresholds the noise at 0.5 (a binary noise
    map for binary-map measures). Image ``b`` uses seed ``seed + b`` (``num_maps`` maps), so subsets of a dataset
    see the same noise. The noise parameters of the paper are not verified here (ours: N(0.5, 0.25^2) clipped).

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import noise_test
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> res = noise_test("s_measure", target.double(), target, num_maps=3)
        >>> res.test, res.rate, res.total
        ('noise', 0.0, 6)
    """
    m = as_measure(measure)
    check_bool(binary, "binary")
    gts = _items(target)
    methods = _methods(preds, "preds")
    _check_lengths(len(gts), **methods)
    seed = _seed(seed)

    def make_noise() -> list[Tensor]:
        maps = [
            gaussian_noise_maps(num_maps, *g.shape[-2:], mean=mean, std=std, seed=seed + b, device=g.device)
            for b, g in enumerate(gts)
        ]
        return [(x >= 0.5).double() for x in maps] if binary else maps

    noise_key = ("noise", num_maps, mean, std, seed, binary, tuple((tuple(g.shape), str(g.device)) for g in gts))
    noise = _shared(noise_key, make_noise)
    soa = _soa_scores(m, methods, gts, batch_size)
    scores = torch.stack([_evaluate(m, [x[r] for x in noise], gts, batch_size) for r in range(num_maps)])
    return _against(m, soa, scores, compare, "noise")


def gt_switch_test(
    measure: object,
    preds: Any,
    target: Any,
    *,
    pairing: Any = "all",
    seed: int = 0,
    batch_size: int = 16,
) -> RateResult:
    """Ground-truth switch (Margolin et al. CVPR 2014; Fan et al. ICCV 2017): a SoA map should score better against
    its own ground truth than against another image's. The error rate is the fraction of (method, image, other
    image) judgements where the switched ground truth (brought to the size by :func:`.baselines.match_size`) gives a
    strictly better score. ``pairing`` as :func:`sisd` (``"all"`` ordered pairs, default; ``"random"`` one seeded
    partner per image; or explicit). Which images the papers paired is not verified here.

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import gt_switch_test
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[0, 2:8, 2:8] = True
        >>> target[1, 8:14, 8:14] = True
        >>> res = gt_switch_test("mae", target.double(), target)
        >>> res.test, res.rate, res.total
        ('gt_switch', 0.0, 2)
    """
    m = as_measure(measure)
    gts = _items(target)
    methods = _methods(preds, "preds")
    _check_lengths(len(gts), **methods)
    if len(gts) < 2:
        raise ValueError("Expected at least 2 images for a ground-truth switch.")
    pairs = _pairing(len(gts), pairing, seed)
    good, bad = [], []
    switched = [
        _shared(
            ("switched", _fingerprint([gts[j]]), _size(gts[i])),
            functools.partial(match_size, gts[j], _size(gts[i])),
            gts[j],
        )
        for i, j in pairs
    ]
    for maps in methods.values():
        own = _evaluate(m, maps, gts, batch_size)
        good.append(own[torch.tensor([i for i, _ in pairs])])
        bad.append(_evaluate(m, [maps[i] for i, _ in pairs], switched, batch_size))
    return _rate("gt_switch", m, torch.cat(good), torch.cat(bad), "error")


def spearman_rho(x: Tensor, y: Tensor) -> Tensor:
    """Spearman's rank correlation along the last dim (average ranks for ties, as ``scipy.stats.spearmanr``): the
    Pearson correlation of the ranks; NaN where either ranking is constant.

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import spearman_rho
        >>> spearman_rho(torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([10.0, 20.0, 40.0, 30.0]))
        tensor(0.8000, dtype=torch.float64)
    """
    x, y = torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y, dtype=torch.float64)
    if x.shape != y.shape or x.ndim == 0:
        raise ValueError(f"Expected `x` and `y` of one shape (..., M), but got {tuple(x.shape)} and {tuple(y.shape)}.")

    def ranks(v: Tensor) -> Tensor:
        # average rank of equal values: (number below) + (number equal + 1) / 2
        below = (v[..., None, :] < v[..., :, None]).sum(-1).double()
        equal = (v[..., None, :] == v[..., :, None]).sum(-1).double()
        return below + (equal + 1) / 2

    rx, ry = ranks(x), ranks(y)
    rx, ry = rx - rx.mean(-1, keepdim=True), ry - ry.mean(-1, keepdim=True)
    den = (rx.square().sum(-1) * ry.square().sum(-1)).sqrt()
    return torch.where(den > 0, (rx * ry).sum(-1) / torch.where(den > 0, den, 1.0), torch.nan)


def annotation_error_test(
    measure: object,
    preds: Any,
    target: Any,
    *,
    operation: Perturbation = "dilate",
    radius: float = 5.0,
    batch_size: int = 16,
) -> AnnotationErrorResult:
    """Annotation errors (Margolin et al. CVPR 2014; Fan et al. ICCV 2017): slightly wrong ground truth should not
    change how a measure ranks results. Per image, the M >= 2 SoA maps are ranked by the measure against the true
    mask and against the mask perturbed by :func:`.baselines.perturb_ground_truth` (``operation`` by a disk of
    ``radius``); the rate is the mean over images of ``1 - rho`` (Spearman's rank correlation, :func:`spearman_rho`),
    0 when the rankings agree. Ranking per image (rather than by dataset means) and the structuring element are our
    reading, not verified against the papers' texts. Images whose ranking is constant are skipped and counted.

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import annotation_error_test
        >>> target = torch.zeros(2, 24, 24, dtype=torch.bool)
        >>> target[:, 6:18, 6:18] = True
        >>> good = target.double()
        >>> fair = torch.zeros(2, 24, 24, dtype=torch.float64)
        >>> fair[:, 8:18, 6:18] = 1.0
        >>> poor = torch.zeros(2, 24, 24, dtype=torch.float64)
        >>> poor[:, 12:18, 6:12] = 1.0
        >>> res = annotation_error_test("mae", {"good": good, "fair": fair, "poor": poor}, target, radius=1)
        >>> res.rate, res.images, res.skipped
        (0.0, 2, 0)
    """
    m = as_measure(measure)
    gts = _items(target)
    methods = _methods(preds, "preds")
    _check_lengths(len(gts), **methods)
    if len(methods) < 2:
        raise ValueError(f"Expected at least 2 methods to rank, but got {len(methods)}.")
    perturbed = [
        _shared(
            ("perturbed", _fingerprint([g]), operation, radius),
            functools.partial(perturb_ground_truth, g, operation=operation, radius=radius),
            g,
        )
        for g in gts
    ]
    orig = _soa_scores(m, methods, gts, batch_size)
    pert = _soa_scores(m, methods, perturbed, batch_size)
    per_image = 1 - spearman_rho(orig.T, pert.T)
    ok = ~torch.isnan(per_image)
    n = int(ok.sum())
    rate = float(per_image[ok].mean()) if n else math.nan
    return AnnotationErrorResult(m.name, rate, n, len(gts) - n, per_image)
