r"""Per-object statistics of DAVIS' per-frame J or F: Mean, Recall and Decay (``davis2017/utils.py:db_statistics``).

For one object's values ``x_1..x_N`` over the evaluated frames:

* Mean ``= nanmean(x)``; Recall ``= mean(x > 0.5)`` (a NaN is not above 0.5);
* Decay ``= nanmean(bin_0) - nanmean(bin_3)`` with the bins ``x[e_i : e_{i+1} + 1]`` (0-based, end exclusive: the
  bins share their edge frames) and the edges ``e = round(linspace(1, N, 5) + 1e-10) - 1``.

The reference stores the edges as ``uint8``: from 257 evaluated frames on, the edges wrap modulo 256 and the bins
are other frames, often empty (a NaN Decay). ``decay_edges="reference"`` (the default) reproduces that, as published
tables computed it, and warns when it applies; ``decay_edges="corrected"`` uses the true edges. The ``+ 1`` after the
wrap is computed without a second wrap (numpy 1.x promoted ``uint8 + 1`` to int64, the behaviour the code was written
and run with; under numpy 2 the reference's own code would turn an edge of 255 into an empty bin as well: that case,
exactly 256 evaluated frames or a wrapped edge landing on 255, is the only difference).
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from ..._checks import check_choice, check_tensor

__all__ = ["DECAY_EDGES", "davis_decay_edges", "davis_statistics"]

#: the ``decay_edges`` choices
DECAY_EDGES = ("reference", "corrected")


def davis_decay_edges(num_frames: int, decay_edges: str = "reference") -> list[int]:
    """The five bin edges of the Decay for ``num_frames`` evaluated frames (see the module doc).

    Example:
        >>> davis_decay_edges(80), davis_decay_edges(300), davis_decay_edges(300, "corrected")
        ([0, 20, 40, 59, 79], [0, 75, 150, 224, 43], [0, 75, 150, 224, 299])
    """
    check_choice(decay_edges, "decay_edges", DECAY_EDGES)
    n = int(num_frames)
    # round-half-to-even of the reference's np.round on (linspace + 1e-10): computed in float64 as it does
    points = torch.linspace(1, n, 5, dtype=torch.float64) if n > 0 else torch.zeros(5, dtype=torch.float64)
    edges = [int(v) - 1 for v in torch.round(points + 1e-10).tolist()]
    if decay_edges == "reference":
        edges = [e % 256 for e in edges]
    return edges


def davis_statistics(values: Tensor, *, decay_edges: str = "reference", warn: bool = True) -> dict[str, Tensor]:
    """Mean, Recall and Decay of each object's per-frame values (see the module doc).

    Args:
        values: (O, N) float per-frame J or F of O objects over the same N evaluated frames (NaN-ignoring).
        decay_edges: "reference" (uint8-wrapped edges, the default) or "corrected".
        warn: warn (``UserWarning``) when the reference's edges wrap (N > 256).

    Returns:
        ``{"mean", "recall", "decay"}``: float64 (O,) on the input's device. An empty bin gives a NaN Decay only
        with the reference's wrapped edges (warned); N = 0 is a ``ValueError``.

    Example:
        >>> s = davis_statistics(torch.tensor([[1.0, 1.0, 0.4, 0.2]]))
        >>> [round(float(s[k]), 4) for k in ("mean", "recall", "decay")]
        [0.65, 0.5, 0.7]
    """
    check_tensor(values, "values")
    if values.ndim != 2:
        raise ValueError(f"Expected `values` of shape (O, N), but got {tuple(values.shape)}.")
    n = values.shape[1]
    if n == 0:
        raise ValueError("Expected at least one evaluated frame in `values`, but got none (shape (O, 0)).")
    x = values.to(torch.float64)
    edges = davis_decay_edges(n, decay_edges)
    if warn and decay_edges == "reference" and n > 256:
        warnings.warn(
            f"{n} evaluated frames: the DAVIS reference's Decay bins are wrapped (its uint8 edges {edges} instead of "
            f"{davis_decay_edges(n, 'corrected')}), as its published numbers are; pass decay_edges='corrected' for "
            "the true quarters.",
            UserWarning,
            stacklevel=2,
        )
    mean = x.nanmean(dim=1)
    recall = (x > 0.5).double().mean(dim=1)
    first = x[:, edges[0] : edges[1] + 1].nanmean(dim=1)
    last = x[:, edges[3] : edges[4] + 1].nanmean(dim=1)
    return {"mean": mean, "recall": recall, "decay": first - last}
