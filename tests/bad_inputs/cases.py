"""Table-driven bad-input cases (issue 20): each case calls a public API and names its exact outcome.

A :class:`Case` either raises (``error`` type and a ``match`` regex that names the argument) or returns a value,
optionally with a documented ``RuntimeWarning`` (``warns`` regex) and a ``check`` of the value. A value returned
without a warning must hold no NaN (no silent NaN), and any call must end within ``TIMEOUT`` seconds (no hang).
"""

from __future__ import annotations

import math
import signal
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch

TIMEOUT = 60


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[], Any]
    error: type[Exception] | None = None
    match: str | None = None
    warns: str | None = None
    category: type[Warning] = RuntimeWarning
    check: Callable[[Any], None] | None = None
    nan_ok: bool = False  # a documented NaN (named in ``warns`` or in the API's docs)

    def param(self):
        return pytest.param(self, id=self.id)


def raises(id: str, call: Callable[[], Any], error: type[Exception], match: str) -> Case:
    return Case(id, call, error=error, match=match)


def value(
    id: str,
    call: Callable[[], Any],
    check: Callable[[Any], None] | None = None,
    *,
    warns: str | None = None,
    category: type[Warning] = RuntimeWarning,
    nan_ok: bool = False,
) -> Case:
    return Case(id, call, check=check, warns=warns, category=category, nan_ok=nan_ok)


def _floats(x: Any):
    if isinstance(x, torch.Tensor):
        if x.is_floating_point() or x.is_complex():
            yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from _floats(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _floats(v)
    elif isinstance(x, float):
        yield torch.tensor(x)
    elif hasattr(x, "__dataclass_fields__"):
        for name in x.__dataclass_fields__:
            yield from _floats(getattr(x, name))


def has_nan(x: Any) -> bool:
    return any(bool(torch.isnan(t).any()) for t in _floats(x))


class _Timeout(Exception):
    pass


class _Compiling:
    """numba's compile events, counted: the hang guard below does not count first-time compilation.

    A kernel's first call compiles it (tens of seconds on a loaded 2-core machine); raising the guard's exception
    in the middle of that compilation both failed the case and left numba's dispatcher without a compiled object
    ("no compiled object yet") for the cases after it.
    """

    def __init__(self) -> None:
        self.active = 0
        self.finished = 0

    def install(self) -> None:
        from numba.core import event

        compiling = self

        class Listener(event.Listener):
            def on_start(self, event: Any) -> None:
                compiling.active += 1

            def on_end(self, event: Any) -> None:
                compiling.active -= 1
                compiling.finished += 1

        event.register("numba:compile", Listener())


_COMPILING = _Compiling()
_COMPILING.install()


def _guard() -> Callable[[int, Any], None]:
    """The SIGALRM handler of one call: a timeout while numba compiles (or after it compiled) re-arms the alarm
    instead of failing; a call that runs TIMEOUT seconds without compiling is a hang."""
    seen = {"finished": _COMPILING.finished}

    def alarm(signum: int, frame: Any) -> None:  # pragma: no cover - only when slow
        if _COMPILING.active or _COMPILING.finished != seen["finished"]:
            seen["finished"] = _COMPILING.finished
            signal.alarm(TIMEOUT)
            return
        raise _Timeout(f"the call did not return within {TIMEOUT} s without compiling (a hang)")

    return alarm


def run_case(case: Case) -> Any:
    """Run ``case`` and assert its outcome; returns the value (or None for an error case)."""
    old = signal.signal(signal.SIGALRM, _guard())
    signal.alarm(TIMEOUT)
    try:
        if case.error is not None:
            with pytest.raises(case.error, match=case.match):
                case.call()
            return None
        if case.warns is not None:
            with pytest.warns(case.category, match=case.warns):
                out = case.call()
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                out = case.call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if not case.nan_ok and case.warns is None:
        assert not has_nan(out), f"silent NaN in {out!r}"
    if case.check is not None:
        case.check(out)
    return out


def close(expected: Any, atol: float = 1e-9) -> Callable[[Any], None]:
    """A check that the value equals ``expected`` (tensors, dicts of tensors, numbers; NaN equals NaN)."""

    def check(out: Any) -> None:
        assert_close(out, expected() if callable(expected) else expected, atol)

    return check


def assert_close(a: Any, b: Any, atol: float = 1e-9) -> None:
    if isinstance(b, dict):
        assert isinstance(a, dict) and set(a) == set(b), (sorted(a), sorted(b))
        for k in b:
            assert_close(a[k], b[k], atol)
    elif isinstance(b, (list, tuple)) and not isinstance(a, torch.Tensor):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_close(x, y, atol)
    elif isinstance(b, torch.Tensor) or isinstance(a, torch.Tensor):
        ta, tb = torch.as_tensor(a).double().cpu(), torch.as_tensor(b).double().cpu()
        torch.testing.assert_close(ta, tb, atol=atol, rtol=0, equal_nan=True)
    elif isinstance(b, float) and math.isnan(b):
        assert math.isnan(a)
    elif hasattr(b, "__dataclass_fields__"):
        for name in b.__dataclass_fields__:
            assert_close(getattr(a, name), getattr(b, name), atol)
    else:
        assert a == b or (isinstance(b, float) and abs(a - b) <= atol), (a, b)


def metric_run(cls: type, updates: list[tuple], **options) -> Any:
    """Construct ``cls(**options)``, apply ``update(*args)`` for each of ``updates``, return ``compute()``."""
    metric = cls(**options)
    for args in updates:
        metric.update(*args)
    return metric.compute()


def meta(x: torch.Tensor) -> torch.Tensor:
    return torch.empty(x.shape, dtype=x.dtype, device="meta")


def grad(x: torch.Tensor) -> torch.Tensor:
    return x.double().requires_grad_(True)
