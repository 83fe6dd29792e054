"""Figures in the style of published evaluations (matplotlib, the optional extra ``plot``).

Every function takes results as returned by the metrics' ``compute()`` (tensors or plain lists), one entry per method,
draws one line per method and writes the figure to ``path`` (the suffix picks the format: ``.png``, ``.pdf``, ``.svg``).
matplotlib is imported lazily with the non-interactive Agg backend, so nothing here needs a display.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["plot_proposal_recall"]

#: the panels of :func:`plot_proposal_recall`: (result key without prefix, y label)
PROPOSAL_PANELS: tuple[tuple[str, str], ...] = (
    ("recall_50", "recall at {v} > 0.5"),
    ("recall_70", "recall at {v} > 0.7"),
    ("average_recall", "average recall ({v} 0.5:0.05:0.95)"),
    ("{value}_object", "mean best {v} per object"),
)


def _pyplot():
    try:
        import matplotlib
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("Figures need matplotlib: pip install 'segmetrics-torch[plot]'.") from error
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def _save(fig, path: str | Path) -> Path:
    path = Path(path)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    return path


def plot_proposal_recall(
    results: Mapping[str, Mapping[str, Any]],
    path: str | Path,
    *,
    boundary: bool | None = None,
    title: str | None = None,
) -> Path:
    """Object-proposal curves vs the number of proposals (log axis), as in the MCG / SEISM papers.

    Panels: recall at J > 0.5 and J > 0.7, average recall over 0.5:0.05:0.95, and the mean best J per object (with
    J_c dashed when present); a second row with the morphological boundary F when the results hold it. The x value
    of each point is the mean number of proposals per image (``num_proposals``), so pools smaller than N flatten the
    curve where they run out, as in the MCG plots. The legend gives each method's average recall at its largest N.

    Args:
        results: ``{method: ProposalRecall.compute() result}`` (tensors or lists).
        path: output file; the suffix picks the format.
        boundary: draw the boundary-F row (default: when every result has ``boundary_f_object``).
        title: figure title.

    Returns:
        The written path.
    """
    if not results:
        raise ValueError("Expected at least one method in `results`, but got none.")
    if boundary is None:
        boundary = all("boundary_f_object" in r for r in results.values())
    rows = [("", "jaccard", "J")] + ([("boundary_", "f", "F")] if boundary else [])
    plt = _pyplot()
    fig, axes = plt.subplots(len(rows), len(PROPOSAL_PANELS), figsize=(4.2 * len(PROPOSAL_PANELS), 3.6 * len(rows)),
                             squeeze=False)  # fmt: skip
    for r, (prefix, value, symbol) in enumerate(rows):
        for c, (key, label) in enumerate(PROPOSAL_PANELS):
            ax = axes[r, c]
            full = prefix + key.format(value=value)
            for i, (method, res) in enumerate(results.items()):
                if full not in res:
                    raise ValueError(f"Expected key {full!r} in the results of {method!r}.")
                x, y = _array(res["num_proposals"]), _array(res[full])
                colour = f"C{i % 10}"
                ar = _array(res[f"{prefix}average_recall"])[-1]
                ax.plot(x, y, color=colour, lw=1.6, label=f"{method} (AR {ar:.3f})")
                class_key = f"{prefix}{value}_class"
                if key == "{value}_object" and class_key in res:
                    ax.plot(x, _array(res[class_key]), color=colour, lw=1.2, ls="--")
            ax.set_xscale("log")
            ax.set_xlabel("number of proposals")
            ax.set_ylabel(label.format(v=symbol))
            ax.set_ylim(0, 1)
            ax.grid(True, which="both", alpha=0.3)
            if key == "{value}_object" and any(f"{prefix}{value}_class" in res for res in results.values()):
                ax.set_title(f"solid: per object, dashed: class-averaged {symbol}_c", fontsize=8)
    axes[0, 0].legend(fontsize=8, loc="lower right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = _save(fig, path)
    plt.close(fig)
    return out

