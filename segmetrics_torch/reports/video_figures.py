"""The DAVIS per-sequence figure: J&F, J and F Mean of every sequence as grouped bars (matplotlib, the ``plot`` extra).

``segmetrics evaluate davis`` writes it into ``--out``, and an evaluation report (``--config``) into its ``figures/``
folder, one per (method, set). matplotlib is imported on first use with the non-interactive Agg backend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from .figures import _paper_rc, _pyplot, _save_figure

__all__ = ["SEQUENCE_BARS", "plot_davis_per_sequence"]

#: the bars of each sequence: (key of ``DavisResults.per_sequence()``, legend label), in drawing order
SEQUENCE_BARS: tuple[tuple[str, str], ...] = (("jf_mean", "J&F-Mean"), ("j_mean", "J-Mean"), ("f_mean", "F-Mean"))


def plot_davis_per_sequence(
    per_sequence: Mapping[str, Mapping[str, float]],
    path: str | Path | Sequence[str | Path],
    *,
    title: str | None = None,
    bars: Sequence[tuple[str, str]] = SEQUENCE_BARS,
) -> Path | list[Path]:
    """Draw J&F-Mean, J-Mean and F-Mean of each sequence as grouped bars, the sequences in the given order, and the
    mean over sequences of each as a dashed line (the global J&F-Mean is a mean over *objects*, so it may differ:
    the legend says which is drawn).

    Args:
        per_sequence: ``{sequence: {"jf_mean", "j_mean", "f_mean", ...}}``, as
            :meth:`segmetrics_torch.functional.DavisResults.per_sequence` returns it (values in [0, 1]; NaN drawn as
            no bar).
        path: where to save (``.png``, ``.pdf``, ``.svg``), or several paths for one drawing in several formats.
        title: the figure's title.
        bars: ``(key, label)`` of the bars of each sequence.

    Returns:
        ``path`` as a Path (or a list of Paths).

    Raises:
        ValueError: no sequence, or a sequence without one of the ``bars`` keys.

    Example:
        >>> import tempfile, pathlib
        >>> rows = {"bike": {"jf_mean": 0.8, "j_mean": 0.75, "f_mean": 0.85}, "cows": {"jf_mean": 0.9,
        ...         "j_mean": 0.92, "f_mean": 0.88}}
        >>> out = plot_davis_per_sequence(rows, pathlib.Path(tempfile.mkdtemp()) / "seq.png", title="val")
        >>> out.is_file()
        True
    """
    if not per_sequence:
        raise ValueError("Expected `per_sequence` to hold at least one sequence, but got none.")
    for name, row in per_sequence.items():
        missing = [key for key, _ in bars if key not in row]
        if missing:
            raise ValueError(f"Expected `per_sequence[{name!r}]` to have {', '.join(missing)}, but got {sorted(row)}.")
    plt = _pyplot()
    names = list(per_sequence)
    width = 0.8 / len(bars)
    with plt.rc_context(_paper_rc()):
        # a sequence takes ~0.25 inch: DAVIS 2017 val's 30 sequences fit a two-column figure, test-dev's too
        fig, ax = plt.subplots(figsize=(max(3.5, 0.25 * len(names) + 1.0), 2.8))
        for i, (key, label) in enumerate(bars):
            values = [float(per_sequence[n][key]) for n in names]
            positions = [s + (i - (len(bars) - 1) / 2) * width for s in range(len(names))]
            finite = [v for v in values if not math.isnan(v)]
            mean = sum(finite) / len(finite) if finite else math.nan
            ax.bar(positions, values, width, color=f"C{i}", label=f"{label} ({mean:.3f})")
            if finite:
                ax.axhline(mean, color=f"C{i}", ls="--", lw=0.8)
        ax.set_xticks(range(len(names)), names, rotation=60, ha="right")
        ax.set_xlim(-0.6, len(names) - 0.4)
        ax.set_ylim(0, 1)
        ax.set_ylabel("Mean over the objects' frames")
        ax.grid(axis="x", visible=False)
        # outside the axes (a bar is never hidden), the dashed lines' values: the mean over sequences
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), title="mean over sequences", title_fontsize=7)
        if title:
            ax.set_title(title)
        saved = _save_figure(fig, path)
        plt.close(fig)
    return saved
