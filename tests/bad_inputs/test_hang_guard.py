"""The bad-input hang guard does not count numba's first-time compilation (issue 28, item 1), and still catches a
call that runs past it without compiling."""

from __future__ import annotations

import time

import numba
import numpy as np
import pytest

from tests.bad_inputs import cases


def test_a_call_that_compiles_past_the_timeout_passes(monkeypatch) -> None:
    monkeypatch.setattr(cases, "TIMEOUT", 1)

    @numba.njit(parallel=True, cache=False)
    def fresh_kernel(x):  # compiled on its first call below: ~1-3 s of compilation, longer than TIMEOUT
        out = np.empty_like(x)
        for i in numba.prange(x.shape[0]):
            acc = 0.0
            for j in range(x.shape[1]):
                acc += np.sqrt(abs(x[i, j])) * np.sin(x[i, j]) + np.cos(acc)
            out[i, 0] = acc
        return out

    def slow_compile():
        time.sleep(0.9)  # most of the budget gone before the compilation starts
        return float(fresh_kernel(np.ones((4, 4)))[0, 0])

    assert np.isfinite(cases.run_case(cases.Case("compiles", slow_compile)))


def test_a_call_that_hangs_without_compiling_fails(monkeypatch) -> None:
    monkeypatch.setattr(cases, "TIMEOUT", 1)
    with pytest.raises(cases._Timeout, match="without compiling"):
        cases.run_case(cases.Case("hangs", lambda: time.sleep(3)))
