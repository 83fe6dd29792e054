"""The public ops in front of the compiled kernels check their arguments; `check_choice` names the argument."""

import pytest
import torch

from segmetrics_torch._checks import BACKENDS, check_choice
from segmetrics_torch.ops.foreground import foreground_statistics
from segmetrics_torch.ops.masks import boundary_match_counts, signature_counts


def test_check_choice_returns_the_value_or_names_argument_choices_and_value():
    assert check_choice("numba", "backend", BACKENDS) == "numba"
    with pytest.raises(ValueError, match=r"Expected `backend` to be one of 'auto', 'numba', 'torch', but got 'cuda'"):
        check_choice("cuda", "backend", BACKENDS)
    with pytest.raises(ValueError, match="`side`"):
        check_choice(None, "side", ("row", "col"))


def test_foreground_statistics_checks_its_inputs():
    p = torch.rand(2, 5, 6)
    g = torch.rand(2, 5, 6) > 0.5
    with pytest.raises(TypeError, match="target"):
        foreground_statistics(p, g.float())
    with pytest.raises(TypeError, match="preds"):
        foreground_statistics(p.to(torch.int32), g)
    with pytest.raises(ValueError, match="shape"):
        foreground_statistics(p, g[:, :4])
    with pytest.raises(ValueError, match="distance"):
        foreground_statistics(p, g, weighted_f=True, distance=(torch.zeros(2, 5, 6), torch.zeros(2, 5, 6)))
    out = foreground_statistics(p, g, s_measure=True)
    assert out.histogram.shape == (2, 2, 256) and out.weighted_f_measure is None and out.s_measure.shape == (2,)
    assert torch.equal(out.histogram.sum((1, 2)), torch.full((2,), 30))


def test_mask_count_ops_check_their_inputs():
    masks = torch.zeros(3, 4, 5, dtype=torch.bool)
    masks[:, 1:3, 1:4] = True
    with pytest.raises(ValueError, match="masks"):
        signature_counts(masks.to(torch.uint8), torch.zeros(4, 5, dtype=torch.int64), 1)
    with pytest.raises(ValueError, match="signature"):
        signature_counts(masks, torch.zeros(5, 4, dtype=torch.int64), 1)
    assert signature_counts(masks, torch.zeros(4, 5, dtype=torch.int64), 1).tolist() == [[6], [6], [6]]
    ones = torch.ones(4, 5, dtype=torch.bool)
    zero = torch.zeros(1, dtype=torch.int64)
    with pytest.raises(ValueError, match="valid"):
        boundary_match_counts(masks, ones.float(), ones, zero.view(1, 1).expand(4, 5), 1, zero, zero, 1, zero, zero)
    # pixel 0 (top-left) lies on the seg2bmap boundary of each mask (its diagonal neighbour is on)
    per_sig, matched, count = boundary_match_counts(
        masks, ones, ones, torch.zeros(4, 5, dtype=torch.int64), 1, torch.tensor([0]), zero, 1, zero, zero
    )
    assert per_sig.shape == (3, 1) and matched.tolist() == [[1], [1], [1]] and torch.equal(per_sig[:, 0], count)
