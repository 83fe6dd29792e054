"""Video object segmentation: the DAVIS J&F protocol (semi-supervised and unsupervised), batched.

* :mod:`.jf`: J (region IoU, the reference's void rules) and F (``seg2bmap`` boundaries, disk tolerance) of every
  object and frame of a video in one batched op;
* :mod:`.statistics`: the per-object Mean, Recall and Decay (the reference's uint8 bin edges by default);
* :mod:`.protocol`: one sequence by the rules of a task (frames, objects, padding, the Hungarian matching);
* :mod:`.davis`: a DAVIS folder and a results folder, streamed in bounded memory, and the reference's two CSVs.

Reference: Pont-Tuset, Perazzi, Caelles et al., "The 2017 DAVIS Challenge on Video Object Segmentation"
(arXiv:1704.00675), and its code ``davisvideochallenge/davis2017-evaluation``; see ``docs/video.md``.
"""

from .davis import (
    GLOBAL_COLUMNS,
    PER_SEQUENCE_COLUMNS,
    DavisResults,
    davis_global_csv,
    davis_per_sequence_csv,
    davis_sequences,
    evaluate_davis,
    read_davis_mask,
)
from .jf import davis_j_and_f, davis_radius, jf_from_counts
from .protocol import MAX_PROPOSALS, TASKS, DavisObject, DavisSequence, davis_sequence
from .statistics import DECAY_EDGES, davis_decay_edges, davis_statistics

__all__ = [
    "DECAY_EDGES",
    "GLOBAL_COLUMNS",
    "MAX_PROPOSALS",
    "PER_SEQUENCE_COLUMNS",
    "TASKS",
    "DavisObject",
    "DavisResults",
    "DavisSequence",
    "davis_decay_edges",
    "davis_global_csv",
    "davis_j_and_f",
    "davis_per_sequence_csv",
    "davis_radius",
    "davis_sequence",
    "davis_sequences",
    "davis_statistics",
    "evaluate_davis",
    "jf_from_counts",
    "read_davis_mask",
]
