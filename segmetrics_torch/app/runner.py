"""The one runner of every ``segmetrics evaluate <family>`` form: a planned (dataset, method, family) job's pairs in,
its family evaluator's :class:`~.family_job.Evaluated` out.

Every form runs its jobs through here: the single-folder commands (:mod:`.single_folder`, a plan of one job), the
report of ``--output`` / ``--config`` (:mod:`.report_run`, one job per combination, with its cache) and all of them
under torchrun. The runner

1. takes this rank's contiguous share of the pairs (:func:`.distributed.shard`; all of them without torchrun) and
   starts decoding it (:class:`~segmetrics_torch.datasets.decoding.DecodeStream`, in worker processes when asked:
   they decode while torch and the measures load) or, for families that read their own files (proposal pools,
   volumes), hands the paths on;
2. counts each pair on the progress bar as the evaluator takes it (under torchrun the bar counts the rank's share;
   the bar leads the measures by at most one batch);
3. calls the family's evaluator with a :class:`~.family_job.FamilyInput` and stops the decoding workers however the
   evaluator ends.

Adding a family means one evaluator module and one entry in :data:`FAMILY_EVALUATORS`.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..datasets.decoding import DecodeStream, decode_tasks
from . import distributed
from .family_job import BATCH_SIZES, Evaluated, FamilyInput


@dataclass(frozen=True)
class FamilyEvaluator:
    """A family's entry: its evaluator, and how the runner feeds it.

    Attributes:
        module, function: the evaluator, ``segmetrics_torch.app.<module>.<function>``; imported when the job runs,
            after :func:`start` began decoding: the evaluators import torch and the library (1-2 s), which the
            decoding workers, started first, overlap (the command's second and last deferred import, by design).
        decoded: the :class:`~segmetrics_torch.datasets.decoding.DecodeTask` formats the runner decodes the pairs with
            (``input_format``, ``gt_format``, ``resize``), or None where the evaluator reads its own files.
        batch_size: the report form's images per update (the single-folder commands' ``--batch-size`` default too).
    """

    module: str
    function: str
    decoded: tuple[str, ...] | None
    batch_size: int

    def evaluate(self, work: FamilyInput) -> Evaluated:
        """Run the evaluator on ``work``."""
        evaluator = getattr(importlib.import_module(f"{__package__}.{self.module}"), self.function)
        result: Evaluated = evaluator(work)
        return result


#: the family evaluators, by family name: the families a configuration may name (``report_config.FAMILIES``)
FAMILY_EVALUATORS: dict[str, FamilyEvaluator] = {
    "foreground": FamilyEvaluator("evaluation", "evaluate_foreground", ("resize",), BATCH_SIZES["foreground"]),
    "boundary": FamilyEvaluator(
        "evaluation", "evaluate_boundary", ("input_format", "gt_format", "resize"), BATCH_SIZES["boundary"]
    ),
    "partition": FamilyEvaluator(
        "partition_evaluation", "evaluate_partition", ("input_format", "gt_format"), BATCH_SIZES["partition"]
    ),
    "proposals": FamilyEvaluator("proposal_evaluation", "evaluate_proposals", None, BATCH_SIZES["proposals"]),
    "surface": FamilyEvaluator("surface_evaluation", "evaluate_surface", None, BATCH_SIZES["surface"]),
}


def start(
    family: str,
    pairs: Sequence[tuple[str, Path, Path]],
    *,
    input_format: str,
    gt_format: str,
    resize: bool | None = None,
    workers: int = 0,
) -> Iterable[tuple[str, Any, Any]]:
    """This rank's share of ``pairs``, its decoding started (a
    :class:`~segmetrics_torch.datasets.decoding.DecodeStream`), or the share itself for a family that reads its own
    files.

    Raises:
        InputError: fewer pairs than torchrun processes.
    """
    own = distributed.shard(pairs)
    decoded = FAMILY_EVALUATORS[family].decoded
    if decoded is None:
        return own
    formats = {"input_format": input_format, "gt_format": gt_format, "resize": resize}
    tasks = decode_tasks(own, family, **{key: formats[key] for key in decoded})
    return DecodeStream(tasks, workers)


def run(
    family: str,
    pairs: Sequence[tuple[str, Path, Path]],
    source: Iterable[tuple[str, Any, Any]],
    *,
    options: Mapping[str, Any],
    input_format: str,
    gt_format: str,
    device: Any,
    batch_size: int,
    progress: Any = None,
) -> Evaluated:
    """Run the family's evaluator on ``source`` (from :func:`start`), counting each pair on ``progress`` (a tqdm-like
    bar or None) when the evaluator takes it (so the bar leads the measures by at most one batch); the decoding is
    stopped however the evaluator ends."""
    try:
        distributed.shard_progress(progress, len(pairs))
        work = FamilyInput(pairs, counted(source, progress), options, input_format, gt_format, device, batch_size)
        return FAMILY_EVALUATORS[family].evaluate(work)
    finally:
        stop(source)


def counted(images: Iterable[tuple[str, Any, Any]], progress: Any) -> Iterator[tuple[str, Any, Any]]:
    """``images``, each counted on ``progress`` (a tqdm-like bar, or None) as the evaluator takes it."""
    for item in images:
        if progress is not None:
            progress.update(1)
        yield item


def load_measures() -> None:
    """Import torch and the foreground measures' functional core (numba's kernels; torchmetrics, another second, is
    left to the families whose cores use Metric classes) with the cyclic GC paused: a report calls it once its
    decoding workers run, so that the two overlap.

    Imports allocate millions of objects and no garbage worth collecting; pausing the collector during them saves
    ~15 % of the import time. The collector's previous state is restored.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        # the deferred import this function exists for (the module itself imports no torch)
        from ..functional import foreground  # noqa: F401  (the foreground measures and their kernels)
    finally:
        if enabled:
            gc.enable()


def stop(source: Iterable[tuple[str, Any, Any]]) -> None:
    """Stop the decoding workers of a :func:`start` that is not run (nothing for a share of paths)."""
    if isinstance(source, DecodeStream):
        source.close()
