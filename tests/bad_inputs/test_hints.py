"""Hints fit the mistake: a channel dimension is not a missing batch dimension, and a hint never suggests the value
the user already gave."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch import MAE
from segmetrics_torch.app.single_folder import _warn_about_r50


def test_a_channel_dimension_gets_the_channel_hint() -> None:
    with pytest.raises(ValueError, match="2 channels") as error:
        MAE().update(torch.rand(2, 2, 8, 8), torch.zeros(2, 2, 8, 8, dtype=torch.bool))
    assert "unsqueeze" not in str(error.value) and "argmax(1)" in str(error.value)


def test_a_single_image_gets_the_unsqueeze_hint() -> None:
    with pytest.raises(ValueError, match=r"unsqueeze\(0\)"):
        MAE().update(torch.rand(8, 8), torch.zeros(8, 8, dtype=torch.bool))


@pytest.mark.parametrize(("count", "suggested"), [(9, "--thresholds 99"), (99, "--thresholds 197")])
def test_the_r50_hint_never_suggests_the_given_count(count: int, suggested: str, capsys) -> None:
    summary = {
        "r50": torch.tensor(0.4),
        "r50_dollar": torch.tensor(0.4),
        "precision": torch.full((count,), 0.8),
        "thresholds": torch.linspace(0.01, 0.99, count),
    }
    _warn_about_r50(summary)
    err = capsys.readouterr().err
    assert suggested in err and f"--thresholds {count}," not in err
