"""Bad inputs of the video functions and Metric are named (a fuzzing pass found raw AttributeError / RuntimeError
for a numpy array, None, an empty video, and a string taken as the bool ``void``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from segmetrics_torch import VideoObjectSegmentation
from segmetrics_torch.functional import davis_j_and_f, davis_sequence


def _video() -> torch.Tensor:
    v = torch.zeros(4, 24, 24, dtype=torch.uint8)
    v[:, 5:15, 5:15] = 1
    return v


@pytest.mark.parametrize(
    ("preds", "target", "error", "match"),
    [
        (_video().numpy(), _video().numpy(), TypeError, r"`preds` to be a torch\.Tensor"),
        (None, _video(), TypeError, r"`preds` to be a torch\.Tensor"),
        (_video()[:, :0], _video()[:, :0], ValueError, r"`preds` and `target` with frames and pixels"),
        (_video().float(), _video(), TypeError, r"`preds` to be integer label maps"),
        (_video(), _video()[:2], ValueError, r"\(T, H, W\) label maps of one shape"),
    ],
)
def test_named(preds: object, target: object, error: type[Exception], match: str) -> None:
    for call in (davis_sequence, davis_j_and_f):
        with pytest.raises(error, match=match):
            call(preds, target)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match="`preds`"):  # the Metric also takes lists of sequences
        VideoObjectSegmentation().update(preds, target)


def test_void_is_a_bool() -> None:
    with pytest.raises(TypeError, match="`void` to be a bool"):
        davis_j_and_f(_video(), _video(), void="y")  # type: ignore[arg-type]
    assert np.isfinite(davis_j_and_f(_video(), _video())["j"].numpy()).all()


def test_counts_and_ids_are_named_as_the_function_names_them() -> None:
    """The op's internal names (`num_targets`, `pred`) reached the user of davis_j_and_f."""
    target = _video()
    preds = target.clone()
    preds[2, 0, 0] = 2  # an id above the objects of the first target frame
    with pytest.raises(ValueError, match=r"`num_objects` to be None or an int in \[0, 254\]"):
        davis_j_and_f(target, target, num_objects=-1)
    with pytest.raises(ValueError, match=r"`preds` ids in \[0, 1\].*frame 2 has id 2"):
        davis_j_and_f(preds, target)


def test_ids_are_checked_where_the_counts_are_derived() -> None:
    """Ids the op would take for counts (a 255 under pairs='all', a target id of 300) or index with (a negative id:
    a raw IndexError on the tensor path), and bool maps, are named before any count (a review)."""
    v = _video()
    p = v.clone()
    p[0, 0, 0] = 255
    with pytest.raises(ValueError, match=r"`preds` ids in \[0, 254\] with pairs='all'"):
        davis_j_and_f(p, v, pairs="all")
    with pytest.raises(ValueError, match=r"`preds` ids in \[0, 255\]"):
        davis_j_and_f(v.long() - 3, v)
    with pytest.raises(ValueError, match=r"`target` ids in \[0, 255\]"):
        davis_j_and_f(v, v.long() * 300)
    with pytest.raises(TypeError, match="`preds` to be integer label maps"):
        davis_j_and_f(v.bool(), v)
