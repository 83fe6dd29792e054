r"""Dataset means of the per-image boundary distances, and what a missed structure does to them (``aggregation=``).

A structure that one mask misses (exactly one of the prediction and the ground truth empty) has no finite distance:
its Hausdorff distance is ``inf`` (MONAI, DeepMind, TorchMetrics), its percentile Hausdorff distance ``NaN`` under
MONAI (the quantile of a list of infinities, MONAI issue 9095). Three communities average such values three ways,
and each is one named rule here, for the distance measures (HD, percentile HD, ASD, ASSD):

* ``"inf"`` (the default, this package's rule since the family exists): a pair with exactly one empty mask counts as
  ``inf`` whatever its convention's value, so one missed structure makes its class's mean ``inf`` (it cannot vanish
  from a table); ``NaN`` values (both masks empty: nothing to compare) are left out.
* ``"drop_nan"``: MONAI's ``do_metric_reduction(f, "mean_batch")`` (``"mean"`` for one class): the convention's
  own per-image values, ``NaN`` left out and ``inf`` kept. Under the MONAI convention a missed structure's HD95 is
  ``NaN`` and so left out (what MONAI users see), its HD and ASD ``inf``. One difference: a class whose every value
  is dropped has a ``NaN`` mean here, 0 in MONAI.
* ``"worst_case"``: the BraTS evaluation's rule: a pair with exactly one empty mask counts as the fixed
  ``worst_case`` value (BraTS: 373.13 mm for HD95, the diagonal of its 240 x 240 x 155 mm volumes); a pair with both
  masks empty is left out (BraTS scores it 0).

Scores (NSD, Boundary IoU, clDice) are 0 for a missed structure and need no rule: their means leave out ``NaN``
under every ``aggregation``. Every rule reports how many values each mean left out (``dropped``).

Example:
    >>> import torch
    >>> g = torch.zeros(3, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
    >>> p = g.clone(); p[2] = False  # the third image misses the structure
    >>> import warnings
    >>> from segmetrics_torch.functional.surface import hd95
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # the missed structure's EmptyMaskWarning
    ...     values = hd95(p, g)  # MONAI's values: 0, 0 and NaN (its issue 9095)
    >>> [float(aggregate_distances(values, p, g, aggregation=a).mean) for a in ("inf", "drop_nan")]
    [inf, 0.0]
    >>> out = aggregate_distances(values, p, g, aggregation="worst_case", worst_case=373.13)
    >>> round(float(out.mean), 4), int(out.dropped)
    (124.3767, 0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple, Unpack, get_args

import torch
from torch import Tensor

from ..._checks import check_choice, check_tensor
from ._inputs import as_tensor_input, channel_columns, one_hot_inputs, prepare_pairs
from .options import MASK_DEFAULTS, MaskOptions, with_defaults

__all__ = ["AGGREGATIONS", "AGGREGATION_REFERENCES", "AggregatedDistances", "aggregate_distances", "empty_sides"]

#: how a dataset mean treats a missed structure (see the module doc)
Aggregation = Literal["inf", "drop_nan", "worst_case"]
AGGREGATIONS: tuple[str, ...] = get_args(Aggregation)

#: the reference each rule mirrors, as the outputs record it
AGGREGATION_REFERENCES = {
    "inf": "segmetrics-torch: a pair with one empty mask counts as inf; NaN (both empty) left out",
    "drop_nan": "MONAI do_metric_reduction('mean'): the convention's values, NaN left out, inf kept",
    "worst_case": "BraTS: a pair with one empty mask counts as the worst-case value; both empty left out",
}


class AggregatedDistances(NamedTuple):
    """The mean over images of one measure: ``mean``, ``counted`` (the values averaged) and ``dropped`` (the values
    left out), each 0-d for masks or (C',) per class.

    Example:
        >>> values = torch.tensor([[1.0, 2.0], [3.0, float("nan")]])  # 2 images, 2 classes
        >>> out = aggregate_distances(values, aggregation="drop_nan")
        >>> out.mean.tolist(), out.counted.tolist(), out.dropped.tolist()
        ([2.0, 2.0], [2, 1], [0, 1])
    """

    mean: Tensor
    counted: Tensor
    dropped: Tensor


def check_aggregation(aggregation: object, worst_case: object) -> tuple[str, float | None]:
    """``(aggregation, worst_case)`` checked: one of :data:`AGGREGATIONS`; ``worst_case`` a finite number >= 0 with
    ``"worst_case"`` (required there: it depends on the dataset) and None otherwise."""
    name = check_choice(aggregation, "aggregation", AGGREGATIONS)
    if name != "worst_case":
        if worst_case is not None:
            raise ValueError(
                f"Expected `worst_case` only with aggregation='worst_case', but got worst_case={worst_case!r} with "
                f"aggregation={name!r}."
            )
        return name, None
    if worst_case is None:
        raise ValueError(
            "Expected `worst_case` with aggregation='worst_case': the value a missed structure counts as, in spacing "
            "units (BraTS: 373.13 for HD95 in mm); it depends on the dataset and has no default."
        )
    if isinstance(worst_case, bool) or not isinstance(worst_case, (int, float)) or not math.isfinite(worst_case):
        raise ValueError(f"Expected `worst_case` to be a finite number >= 0, but got {worst_case!r}.")
    if worst_case < 0:
        raise ValueError(f"Expected `worst_case` to be a finite number >= 0, but got {worst_case!r}.")
    return name, float(worst_case)


def empty_sides(preds: object, target: object, **options: Unpack[MaskOptions]) -> tuple[Tensor, Tensor]:
    """``(pred_empty, target_empty)``: (B,) for masks, (B, C') for label maps and one-hot input, True where that
    side of the (image, class) pair has no foreground, with the classes as the functions read them (``ignore_index``
    pixels removed from both; the class ``ignore_index`` itself is no pair: False on both sides).

    Example:
        >>> g = torch.zeros(3, 8, 8, dtype=torch.bool); g[:2, 2:5, 2:5] = True  # the third image has no structure
        >>> p = g.clone(); p[1] = False  # the second prediction misses it
        >>> [side.tolist() for side in empty_sides(p, g)]
        [[False, True, True], [False, False, True]]
    """
    reading = with_defaults("empty_sides", options, MASK_DEFAULTS)
    # the functions' checks, naming the arguments (shapes, dtypes, labels in range, the options): a 2-D input read
    # row by row, a label past num_classes reported "empty", num_classes 0 or 1 failing inside torch
    prepare_pairs(preds, target, spacing=None, **reading)
    return unchecked_empty_sides(preds, target, reading)


def unchecked_empty_sides(preds: object, target: object, reading: Mapping[str, Any]) -> tuple[Tensor, Tensor]:
    """:func:`empty_sides` of inputs a function has already checked (a Metric's batch, after its ``update`` ran the
    function on it), ``reading``: every mask option (:data:`MASK_DEFAULTS`' keys). Not checked again: the function's
    checks prepare every (image, class) pair, a second time for nothing."""
    num_classes, ignore_index = reading["num_classes"], reading["ignore_index"]
    input_format, include_background = reading["input_format"], reading["include_background"]
    preds, target = as_tensor_input(preds), as_tensor_input(target)
    if input_format != "index":
        p_ch, t_ch = one_hot_inputs(preds, target, input_format, num_classes, validate_args=False)
        columns = channel_columns(p_ch.shape[1], include_background)
        return ~p_ch[:, columns].flatten(2).any(2), ~t_ch[:, columns].flatten(2).any(2)
    p_rows, t_rows = [], []
    for i, (p, g) in enumerate(zip(preds, target, strict=True)):  # type: ignore[call-overload]
        p, g = check_tensor(p, f"preds[{i}]"), check_tensor(g, f"target[{i}]")
        if num_classes is None:
            p_rows.append(~p.bool().any().reshape(1))
            t_rows.append(~g.bool().any().reshape(1))
            continue
        keep = (g != ignore_index) if ignore_index is not None else torch.ones_like(g, dtype=torch.bool)
        classes = [c for c in range(0 if include_background else 1, num_classes)]
        ids = torch.tensor(classes, device=p.device).view(-1, *([1] * p.ndim))
        scored = torch.tensor([c != ignore_index for c in classes], device=p.device)
        # one reduction per side for all classes: (C', *spatial) -> (C',)
        p_rows.append(~((p.unsqueeze(0) == ids) & keep).flatten(1).any(1) & scored)
        t_rows.append(~((g.unsqueeze(0) == ids) & keep).flatten(1).any(1) & scored)
    p_empty, t_empty = torch.stack(p_rows), torch.stack(t_rows)
    return (p_empty[:, 0], t_empty[:, 0]) if num_classes is None else (p_empty, t_empty)


def aggregated_values(
    values: Tensor,
    pred_empty: Tensor | None,
    target_empty: Tensor | None,
    aggregation: str,
    worst_case: float | None = None,
) -> Tensor:
    """The per-image distances as ``aggregation`` averages them (float64, same shape): ``"inf"``: a pair with one
    empty side ``inf``; ``"drop_nan"``: as given; ``"worst_case"``: a pair with one empty side ``worst_case``, both
    empty ``NaN``. The emptiness masks are read only where a value is not finite (None: none is)."""
    v = values.detach().to(torch.float64)
    if aggregation == "drop_nan" or bool(torch.isfinite(v).all()):
        return v
    if pred_empty is None or target_empty is None:
        raise ValueError(f"aggregation={aggregation!r} needs the emptiness of each pair for non-finite values.")
    p_empty, t_empty = pred_empty.to(v.device).reshape(v.shape), target_empty.to(v.device).reshape(v.shape)
    one_empty = p_empty != t_empty
    if aggregation == "inf":
        return torch.where(one_empty, torch.full_like(v, math.inf), v)
    assert worst_case is not None
    v = torch.where(one_empty, torch.full_like(v, worst_case), v)
    return torch.where(p_empty & t_empty, torch.full_like(v, math.nan), v)


def aggregate_distances(
    values: Tensor,
    preds: object = None,
    target: object = None,
    *,
    aggregation: Aggregation = "inf",
    worst_case: float | None = None,
    **options: Unpack[MaskOptions],
) -> AggregatedDistances:
    r"""The mean over images of per-image boundary distances (HD, percentile HD, ASD, ASSD), per class, with a named
    rule for missed structures: the function form of the Metrics' ``aggregation``.

    .. math::
        \bar d_c = \frac{1}{|I_c|}\sum_{i \in I_c} \tilde d_{ic}, \qquad I_c = \{i : \tilde d_{ic} \ne \mathrm{NaN}\}

    with :math:`\tilde d` the values as the rule reads them (see the module doc: ``"inf"``, the default;
    ``"drop_nan"``, MONAI's ``do_metric_reduction``; ``"worst_case"``, BraTS' fixed value), and ``inf`` when some
    :math:`\tilde d_{ic}` is ``inf``.

    Args:
        values: (B,) or (B, C') per-image values of a distance function of this family (float).
        preds, target: the function's inputs, read for which side of each pair is empty (needed by ``"inf"`` and
            ``"worst_case"`` where a value is not finite; not read by ``"drop_nan"``). numpy arrays too.
        aggregation: ``"inf"``, ``"drop_nan"`` or ``"worst_case"``.
        worst_case: the value of a missed structure with ``"worst_case"`` (required there; spacing units).
        **options: ``num_classes``, ``include_background``, ``ignore_index``, ``input_format`` as the function that
            gave ``values`` took them (:class:`~.options.MaskOptions`).

    Returns:
        :class:`AggregatedDistances` ``(mean, counted, dropped)``: 0-d for (B,) values, (C',) for (B, C'); a class
        with no value left has a ``NaN`` mean.

    Example:
        >>> g = torch.zeros(3, 8, 8, dtype=torch.bool); g[:2, 2:5, 2:5] = True  # the third image has no structure
        >>> p = g.clone(); p[1] = False  # the second prediction misses it
        >>> values = torch.tensor([1.0, float("inf"), float("nan")])  # e.g. their Hausdorff distances
        >>> for rule, worst in (("inf", None), ("drop_nan", None), ("worst_case", 10.0)):
        ...     out = aggregate_distances(values, p, g, aggregation=rule, worst_case=worst)
        ...     print(rule, float(out.mean), int(out.counted), int(out.dropped))
        inf inf 2 1
        drop_nan inf 2 1
        worst_case 5.5 2 1
        >>> float(aggregate_distances(torch.tensor([1.0, 3.0, float("nan")]), aggregation="drop_nan").mean)
        2.0
    """
    name, worst = check_aggregation(aggregation, worst_case)
    v = check_tensor(values, "values")
    if v.ndim not in (1, 2) or not v.is_floating_point():
        raise ValueError(f"Expected `values` of shape (B,) or (B, C') and a floating dtype, got {tuple(v.shape)}.")
    empties: tuple[Any, Any] = (None, None)
    if name != "drop_nan" and not bool(torch.isfinite(v).all()):
        if preds is None or target is None:
            raise ValueError(
                f"Expected `preds` and `target` with aggregation={name!r}: a value that is not finite counts by which "
                "side of its pair is empty."
            )
        empties = empty_sides(preds, target, **options)
    v = aggregated_values(v, empties[0], empties[1], name, worst)
    kept = ~torch.isnan(v)
    count = kept.sum(dim=0)
    total = torch.where(kept & torch.isfinite(v), v, 0.0).sum(dim=0)
    mean = torch.where(count > 0, total / count.clamp_min(1), torch.full_like(total, math.nan))
    mean = torch.where(torch.isinf(v).any(dim=0), torch.full_like(mean, math.inf), mean)
    return AggregatedDistances(mean, count, v.shape[0] - count)
