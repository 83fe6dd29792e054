"""Docstring paragraphs that many functions and Metrics share, written once.

A docstring line that holds only ``{{name}}`` stands for the paragraph ``name`` of :data:`PARAGRAPHS`:
:func:`fill_doc` puts the paragraph there, every line indented as the placeholder, so ``help()``, the doctests and
the docs read the whole text (matplotlib's ``_docstring.interpd`` and MNE's ``fill_doc`` do the same). What every
measure of a family takes (its inputs, its example batch) is then written and corrected in one place; what a
measure computes stays in its own docstring. A name missing from :data:`PARAGRAPHS` is a ``KeyError`` at import.

Example:
    >>> @fill_doc
    ... def loss(preds, target):
    ...     '''A loss.
    ...
    ...     Args:
    ...         {{loss_args}}
    ...     '''
    >>> print(loss.__doc__.splitlines()[3].strip())
    preds: (B, H, W) or (B, 1, H, W) probabilities in [0, 1], float16 / bfloat16 / float32 / float64 (apply
"""

from __future__ import annotations

import re
import textwrap
from typing import TypeVar

__all__ = ["PARAGRAPHS", "fill_doc"]

T = TypeVar("T")

_FIELD = re.compile(r"^([ \t]*)\{\{(\w+)\}\}[ \t]*$", re.MULTILINE)

#: the shared paragraphs, by name (each dedented; its first line takes the placeholder's indentation)
PARAGRAPHS = {
    # --- foreground maps: the functions' arguments, the Metrics' inputs, the examples' batch
    "foreground_args": """
        preds: (B, H, W) or (B, 1, H, W) maps (uint8 0..255, or float in [0, 1]), or a list of (H, W) maps.
        target: ground truth of the same shape (uint8 binarised ``> 128``, bool, or {0, 1}).
    """,
    "foreground_reading": """
        normalize: per-image min-max stretch of ``preds`` as PySODMetrics (constant maps are left alone).
        validate_args: check values (NaN, range, binary target); these checks synchronise a CUDA device.
    """,
    "foreground_update": """
        As input to ``update`` (and ``forward``):

        - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
          unless ``normalize=False``), or a list of (H, W) maps of any sizes.
        - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

        As output of ``compute`` (``forward`` returns the same for the batch alone):
    """,
    "foreground_batch": """
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
    """,
    # --- partitions: the Metrics' inputs and the examples' pair
    "partition_update": """
        As input to ``update`` (and ``forward``):

        - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
        - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

        As output of ``compute`` (``forward`` returns the same for the batch alone):
    """,
    "partition_pair": """
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
    """,
    # --- boundary distances: the Metrics' inputs, the results, the examples' pair of masks
    "surface_update": """
        As input to ``update`` (and ``forward``):

        - ``preds``: (B, H, W) or (B, D, H, W) masks (bool or {0, 1}), or label maps (integers in [0, ``num_classes``))
          with ``num_classes``; or a list of (H, W) / (D, H, W) tensors of different sizes.
        - ``target``: ground truth of the same form and shape.
        - ``spacing`` (keyword, optional): this batch's voxel spacing, in place of the constructor's.
    """,
    "surface_keywords": """
        the keywords every distance function shares (``**kwargs``, typed as ``DistanceMetricOptions``:
        :class:`~segmetrics_torch.functional.surface.options.DistanceOptions` and torchmetrics'; meanings and
        defaults at :func:`~segmetrics_torch.functional.hausdorff_distance`): ``convention``, ``spacing`` (the
        constructor's voxel spacing, used when ``update`` gives none), ``distance_metric``, ``connectivity``,
        ``num_classes``, ``include_background``, ``ignore_index``, ``input_format``, ``validate_args``; plus
        torchmetrics' Metric keywords (``compute_on_cpu``, ``dist_sync_on_step``, ``process_group``, ...).
    """,
    "surface_returns": """
        Returns:
            (B,) float64 for binary masks, (B, C') for label maps.
    """,
    "surface_pair": """
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
    """,
    # --- losses: the arguments and the result of every loss function
    "loss_args": """
        preds: (B, H, W) or (B, 1, H, W) probabilities in [0, 1], float16 / bfloat16 / float32 / float64 (apply
            ``torch.sigmoid`` to logits first; no min-max stretch). Gradients flow to it.
        target: the same shape, bool, {0, 1} floats or uint8 (binarised ``> 128``); no gradient.
        reduction: ``"mean"`` (default) or ``"sum"`` over the images, or ``"none"`` for the (B,) per-image losses.
        validate_args: check shapes, dtypes and values (one pass and one synchronisation); ``False`` for a
            sync-free training step.
    """,
    "loss_returns": """
        Returns:
            A 0-d tensor (``"mean"`` / ``"sum"``) or a (B,) tensor (``"none"``) in ``preds``' dtype (computed in
            float32 at least).
    """,
}


def fill(doc: str) -> str:
    """``doc`` with each ``{{name}}`` line replaced by the paragraph ``name``, indented as that line."""

    def paragraph(match: re.Match[str]) -> str:
        indent, name = match.group(1), match.group(2)
        lines = textwrap.dedent(PARAGRAPHS[name]).strip("\n").splitlines()
        return "\n".join(indent + line if line else "" for line in lines)

    return _FIELD.sub(paragraph, doc)


def fill_doc(obj: T) -> T:
    """Decorator: fill the shared paragraphs of ``obj``'s docstring (see the module doc); none under ``python -OO``."""
    if obj.__doc__:
        obj.__doc__ = fill(obj.__doc__)
    return obj
