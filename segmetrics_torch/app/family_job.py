"""What a family evaluator receives and returns: the contract between :mod:`.runner` and the evaluators of
:mod:`.evaluation`, :mod:`.proposal_evaluation` and :mod:`.surface_evaluation`.

The runner shards the pairs (torchrun), decodes this rank's share (or hands the paths on, for families that read
their files themselves), counts each pair on the progress bar as the evaluator takes it, and calls the family's
evaluator with a :class:`FamilyInput`; the evaluator runs the library's measures and returns an
:class:`Evaluated`, the same whichever command form asked (a single folder, ``--output``, ``--config``, torchrun).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: each family's images per update in the report form (the single-folder commands' ``--batch-size`` default
#: too): here, not in :mod:`.runner`, so that building the parser imports no evaluator
BATCH_SIZES: dict[str, int] = {"foreground": 16, "boundary": 8, "partition": 8, "proposals": 1, "surface": 1}


@dataclass
class FamilyInput:
    """One (dataset, method, family) evaluation, ready to run.

    Attributes:
        pairs: every ``(stem, pred_path, gt_path)`` of the job, every rank's, in order (stems name the per-image
            rows; under torchrun the ranks hold contiguous blocks of them).
        images: this rank's pairs, counted on the progress bar as they are taken: decoded ``(stem, pred, gt)``
            arrays for the families the runner decodes, the ``(stem, pred_path, gt_path)`` pairs themselves for the
            others (proposal pools, volumes).
        options: the family's options (the keys of ``family_options.OPTION_DEFAULTS[family]``) and the job's
            extras (``skip_empty_gt`` of surfaces; ``classes`` and ``class_option`` of proposals).
        input_format, gt_format: as decided by the pairing (``"gray"`` for foreground maps).
        device: where the measures run.
        batch_size: images per update.
    """

    pairs: Sequence[tuple[str, Path, Path]]
    images: Iterator[tuple[str, Any, Any]]
    options: Mapping[str, Any]
    input_format: str
    gt_format: str
    device: Any
    batch_size: int


@dataclass
class Evaluated:
    """What a family evaluator returns.

    Attributes:
        results: what the JSON reports hold: the family's results and ``"per_image"`` (``{stem: {measure: value}}``;
            curves are dataset-level), tensors or plain values.
        settings: the settings the evaluation decided and records beside the options (the proposal counts, the
            partition measures and levels).
        state: the family's accumulator or summary (the command's table reads it: a Metric, the boundary summary),
            or None.
    """

    results: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)
    state: Any = None
