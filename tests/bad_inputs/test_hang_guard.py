"""The bad-input hang guard does not count numba's first-time compilation (issue 28, item 1), and still catches a
call that runs past it without compiling."""

from __future__ import annotations

import os
import signal
import time

import numba
import numpy as np
import pytest
from numba.core import event

from tests.bad_inputs import cases


def test_a_call_that_compiles_past_the_timeout_passes(monkeypatch) -> None:
    """The guard's timeout arrives while numba compiles and again just after: both are events (a SIGALRM sent by a
    compile listener, and right after the call), not a sleep meant to spend most of a one-second budget, which a
    loaded machine stretched past the budget before the compilation had started."""
    monkeypatch.setattr(cases, "TIMEOUT", 600)  # the real alarm never decides: the signals below do

    @numba.njit(parallel=True, cache=False)
    def fresh_kernel(x):  # compiled on its first call below
        out = np.empty_like(x)
        for i in numba.prange(x.shape[0]):
            acc = 0.0
            for j in range(x.shape[1]):
                acc += np.sqrt(abs(x[i, j])) * np.sin(x[i, j]) + np.cos(acc)
            out[i, 0] = acc
        return out

    class TimeoutWhileCompiling(event.Listener):
        def on_start(self, _event: event.Event) -> None:
            os.kill(os.getpid(), signal.SIGALRM)  # the guard's timeout, in the middle of the compilation

        def on_end(self, _event: event.Event) -> None:
            pass

    def compiles_through_timeouts():
        with event.install_listener("numba:compile", TimeoutWhileCompiling()):
            value = float(fresh_kernel(np.ones((4, 4)))[0, 0])
        os.kill(os.getpid(), signal.SIGALRM)  # and once more after it compiled, before the call returns
        return value

    assert np.isfinite(cases.run_case(cases.Case("compiles", compiles_through_timeouts)))


def test_a_call_that_hangs_without_compiling_fails(monkeypatch) -> None:
    monkeypatch.setattr(cases, "TIMEOUT", 1)
    with pytest.raises(cases._Timeout, match="without compiling"):
        cases.run_case(cases.Case("hangs", lambda: time.sleep(60)))  # a hang: the guard ends it after 1 s
