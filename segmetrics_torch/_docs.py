"""Docstring paragraphs that many functions and Metrics share: the canonical text, and a check that every copy agrees.

What every measure of a family takes (its inputs, its example batch) is written out in each docstring, so the source
reads as ``help()`` does; :data:`PARAGRAPHS` holds the canonical text of each such paragraph. :func:`copies` finds the
docstrings that hold a paragraph whole and :func:`partial_copies` those that hold a part of it only (a run of its
words holding at least :data:`PART` of its characters; :data:`VARIANTS` names the deliberate ones): a copy edited
alone, or a paragraph edited here alone, leaves such parts, and ``tests/test_docstrings.py`` fails naming them (and
when a paragraph is held whole by fewer than two docstrings). No count is kept: a new function that holds a
paragraph whole is a new copy and needs no edit here. To change a shared paragraph, change it here and in each
docstring that holds it. Nothing is templated at import (an earlier
``{{name}}`` form showed placeholders to anyone reading the source).

Example:
    >>> def loss(preds, target):
    ...     '''A loss.
    ...
    ...     Args:
    ...         preds: (B, H, W) or (B, 1, H, W) probabilities in [0, 1], float16 / bfloat16 / float32 / float64 (apply
    ...             ``torch.sigmoid`` to logits first; no min-max stretch). Gradients flow to it.
    ...     '''
    >>> holds(loss.__doc__, "loss_args"), part_of(loss.__doc__, "loss_args")  # a part: its first lines
    (False, 181)
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
import textwrap

__all__ = ["PARAGRAPHS", "PART", "VARIANTS", "copies", "holds", "part_of", "partial_copies"]

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


#: the share of a paragraph's characters that a run of its words must hold to make a docstring holding it (but not
#: whole) a partial copy: above what docstrings share by their common wording (up to 0.40: a "Returns:" sentence, an
#: "As input" line), below what an edited copy keeps (0.59-0.68 for one edited sentence, re-wrapped or not)
PART = 0.45

#: docstrings that hold a deliberate variant of a paragraph (a part of it, the rest rewritten on purpose), and why
VARIANTS = {
    ("segmetrics_torch.functional.foreground.matlab_toolbox.toolbox_measures", "foreground_args"): "the toolbox's "
    "own reading of the maps",
    ("segmetrics_torch.functional.foreground.matlab_toolbox.toolbox_measures", "foreground_reading"): "no "
    "``normalize``: the protocol decides the reading",
    ("segmetrics_torch.metrics.matlab_toolbox.MatlabToolboxMeasures", "foreground_update"): "bool maps too, and no "
    "min-max stretch",
    ("segmetrics_torch.metrics.matlab_toolbox.MatlabToolboxMeasures", "foreground_batch"): "its example's maps are "
    "uint8",
    ("segmetrics_torch.metrics.foreground_extra.CamouflageContextMeasure", "foreground_update"): "it takes the RGB "
    "images too",
    ("segmetrics_torch.meta.metameasures.noise_test", "foreground_batch"): "its example draws its own maps",
    ("segmetrics_torch.functional.surface.hausdorff.hausdorff_distance", "surface_returns"): "its shapes for label "
    "maps and one-hot input too",
    ("segmetrics_torch.losses.weighted_f_measure_loss", "loss_args"): "its ``beta2`` argument",
    ("segmetrics_torch.losses.soft_f_measure_loss", "loss_args"): "its ``beta2`` argument",
}


def _lines(text: str) -> list[str]:
    """The stripped lines of ``text`` (indentation is the docstring's business, not the paragraph's)."""
    return [line.strip() for line in textwrap.dedent(text).strip("\n").splitlines()]


def holds(doc: str, name: str) -> bool:
    """Whether ``doc`` holds the whole paragraph ``name``, line for line (indentation aside)."""
    lines, para = [line.strip() for line in doc.splitlines()], _lines(PARAGRAPHS[name])
    return any(lines[i : i + len(para)] == para for i in range(len(lines) - len(para) + 1))


def _words(name: str) -> list[str]:
    """The words of the paragraph ``name`` (what :func:`part_of` compares and :func:`partial_copies` measures)."""
    return " ".join(_lines(PARAGRAPHS[name])).split()


def part_of(doc: str, name: str) -> int:
    """The characters of the longest run of consecutive words of the paragraph ``name`` that ``doc`` holds (words
    compared whole, whitespace and line breaks aside, so that a copy re-wrapped after an edit is still found); the
    whole paragraph's length when ``doc`` holds it whole."""
    words, para = doc.split(), _words(name)
    match = difflib.SequenceMatcher(None, words, para, autojunk=False).find_longest_match(0, len(words), 0, len(para))
    return len(" ".join(para[match.b : match.b + match.size]))


def _documented() -> list[tuple[str, str]]:
    """``(qualified name, docstring)`` of every module, class, method and function defined in the package (its numba
    kernels left out), each once, where it is defined."""
    import segmetrics_torch

    out: list[tuple[str, str]] = []
    seen: set[int] = set()
    for info in pkgutil.walk_packages(segmetrics_torch.__path__, "segmetrics_torch."):
        if ".ops._kernels" in info.name or info.name.endswith("__main__") or info.name == __name__:
            continue
        module = importlib.import_module(info.name)
        objects = [module, *vars(module).values()]
        objects += [m for obj in list(objects) if inspect.isclass(obj) for m in vars(obj).values()]
        for obj in objects:
            home = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None) or ""
            doc = getattr(obj, "__doc__", None)
            if home != info.name or not isinstance(doc, str) or id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append((f"{home}.{getattr(obj, '__qualname__', '')}".rstrip("."), doc))
    return out


def partial_copies() -> dict[str, list[str]]:
    """``{paragraph: the qualified names of the docstrings that hold a part of it (a run of its words, at least
    PART of its characters) but not all of it}``, :data:`VARIANTS` aside: edited copies, or copies of a paragraph
    edited here alone."""
    size = {name: len(" ".join(_words(name))) for name in PARAGRAPHS}
    found: dict[str, list[str]] = {name: [] for name in PARAGRAPHS}
    for qualified, doc in _documented():
        for name in PARAGRAPHS:
            if (qualified, name) in VARIANTS or holds(doc, name):
                continue
            if part_of(doc, name) >= PART * size[name]:
                found[name].append(qualified)
    return {name: holders for name, holders in found.items() if holders}


def copies() -> dict[str, list[str]]:
    """``{paragraph: the qualified names of the docstrings that hold it whole}`` over every module, class, method and
    function defined in the package (its numba kernels left out)."""
    found: dict[str, list[str]] = {name: [] for name in PARAGRAPHS}
    for qualified, doc in _documented():
        for name in PARAGRAPHS:
            if holds(doc, name):
                found[name].append(qualified)
    return found
