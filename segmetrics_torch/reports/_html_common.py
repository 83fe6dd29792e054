"""What the HTML report (:mod:`.html_report`) and its drawing (:mod:`._html_drawing`) share, torch-free: the files
of an image and a drawing job."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CHUNK", "HtmlImage", "Job"]


@dataclass(frozen=True)
class HtmlImage:
    """The files of one evaluated image (the per-image table's ``dataset`` and ``image``).

    Attributes:
        dataset: the dataset's name.
        image: the stem, as in the per-image table.
        gt: the ground-truth file (PNG/JPG map, BSDS .mat, label PNG, NIfTI, ...).
        predictions: method -> its prediction file.
        source: the RGB image, when the caller knows it (thumbnailed and linked, not embedded).
    """

    dataset: str
    image: str
    gt: Path
    predictions: Mapping[str, Path] = field(default_factory=dict)
    source: Path | None = None


@dataclass(frozen=True)
class Job:
    """One (image, method) to draw: ``index`` of the image in the gallery, ``slot`` of the method, the image's
    per-image ``row`` of that method (a boundary row's threshold)."""

    index: int
    slot: int
    method: str
    image: HtmlImage
    row: Mapping[str, Any]
    #: the row's threshold (``options["threshold_key"]``) as a finite float, else None: the image's best is searched
    threshold: float | None = None


#: jobs are drawn in chunks of this many (foreground: one prepare/threshold pass each; bounded memory)
CHUNK = 32
