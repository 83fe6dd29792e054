"""``validate_args`` and ``normalize`` must be bools in every foreground function (and accumulator): ``bool("no")``
is True, so a string would silently switch the checks on (or, for another value, off). Before,
``mae(p, t, validate_args="no")`` was accepted while ``threshold_measures`` raised (issue 29: copies that drifted)."""

from __future__ import annotations

import inspect

import pytest
import torch

import segmetrics_torch.functional as F

FOREGROUND = sorted(
    name
    for name in F.__all__
    if getattr(getattr(F, name), "__module__", "").startswith("segmetrics_torch.functional.foreground")
    and "validate_args" in inspect.signature(getattr(F, name)).parameters
)


def test_the_list_is_not_empty() -> None:
    assert {"mae", "s_measure", "e_measure", "weighted_f_measure", "threshold_measures"} <= set(FOREGROUND)


@pytest.mark.parametrize("name", FOREGROUND)
@pytest.mark.parametrize("flag", ["validate_args", "normalize"])
def test_a_non_bool_flag_is_a_type_error(name: str, flag: str) -> None:
    fn = getattr(F, name)
    if flag not in inspect.signature(fn).parameters:
        pytest.skip(f"{name} has no `{flag}`")
    p = torch.rand(2, 12, 12, generator=torch.Generator().manual_seed(0))
    g = torch.zeros(2, 12, 12, dtype=torch.bool)
    g[:, 3:8, 4:9] = True
    extra = {}
    if "images" in inspect.signature(fn).parameters:  # the context measure reads the RGB images too
        extra["images"] = torch.randint(0, 256, (2, 12, 12, 3), dtype=torch.uint8)
    with pytest.raises(TypeError, match=f"`{flag}` to be a bool"):
        if inspect.isclass(fn):  # an accumulator (ForegroundSums): the flags are its constructor's
            fn(**{flag: "no"}).update(p, g)
        else:
            fn(p, g, **extra, **{flag: "no"})
