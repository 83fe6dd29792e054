"""help() of the public classes tells every argument (issue 28, item 10)."""

from __future__ import annotations

import inspect
import typing

import pytest
import torch

import segmetrics_torch as st
from segmetrics_torch import losses
from segmetrics_torch.metrics._base import MetricKeywords

CLASSES = [getattr(st, n) for n in st.__all__ if isinstance(getattr(st, n), type)]


def _accepted(cls: type) -> set[str]:
    """The arguments of every package ``__init__`` along the class's bases (what ``**kwargs`` forwards; a base's
    positional-only plumbing excepted), and the keys of a ``**kwargs: Unpack[TypedDict]`` but torchmetrics' own."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("segmetrics_torch") and "__init__" in klass.__dict__:
            parameters = inspect.signature(klass.__init__).parameters.values()
            names |= {
                p.name
                for p in parameters
                if p.name not in ("self", "kwargs", "args") and p.kind is not p.POSITIONAL_ONLY
            }
            hints = typing.get_type_hints(klass.__init__, include_extras=True)
            unpacked = hints.get("kwargs")
            if typing.get_origin(unpacked) is typing.Unpack:
                (keywords,) = typing.get_args(unpacked)
                names |= set(keywords.__annotations__) - set(MetricKeywords.__optional_keys__)
    return names


@pytest.mark.parametrize("cls", CLASSES, ids=[c.__name__ for c in CLASSES])
def test_every_argument_is_in_the_signature_or_the_docstring(cls: type) -> None:
    shown = set(inspect.signature(cls).parameters)
    doc = (cls.__doc__ or "") + (cls.__init__.__doc__ or "")
    hidden = sorted(name for name in _accepted(cls) if name not in shown and name not in doc)
    assert not hidden, f"{cls.__name__}: {hidden} appear neither in help()'s signature nor in the docstring"


@pytest.mark.parametrize("name", ["e_measure_loss", "weighted_f_measure_loss", "soft_f_measure_loss", "soft_iou_loss"])
def test_loss_docstrings_give_shapes_dtypes_reductions_and_an_example(name: str) -> None:
    doc = getattr(losses, name).__doc__ or ""
    for needed in ("(B, H, W)", "float", "reduction", '"none"', '"sum"', '"mean"', ">>> "):
        assert needed in doc, (name, needed)


def test_logits_are_named_as_such() -> None:
    with pytest.raises(ValueError, match="look like logits: apply a sigmoid first"):
        st.SMeasure().update(torch.randn(2, 10, 10) * 3, torch.rand(2, 10, 10) > 0.5)
    with pytest.raises(ValueError, match="divide by 255 first"):
        st.SMeasure().update(torch.rand(2, 10, 10) * 255, torch.rand(2, 10, 10) > 0.5)
