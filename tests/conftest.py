"""Shared test fixtures: devices, the ../shared reference data, hypothesis profiles, a signal at a rename."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, settings

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
#: CI sets it: a test whose ../shared data is absent fails instead of skipping
REQUIRED = os.environ.get("SEGMETRICS_REQUIRE_SHARED") == "1"

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
# CI (.ci/run) loads "ci": the same examples on every run, so a red CI is reproducible and never a dice roll;
# local runs keep drawing new examples, which is how edge cases are found.
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("SEGMETRICS_HYPOTHESIS_PROFILE", "default"))

# The command's small-run shortcut on a cold numba cache (app/cold_start.py, under the backend setting "auto") would
# send the CLI tests of a fresh clone to the tensor path; the suite tests the path it names, so it compiles: the
# backend "compiled" (segmetrics_torch.ops.backend), which is "auto" in the library and never takes the shortcut. An
# environment variable, not set_backend(): the CLI tests' subprocesses (and torchrun's workers) inherit it.
# tests/app/test_cold_start.py takes it out to test the shortcut.
os.environ.setdefault("SEGMETRICS_BACKEND", "compiled")

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])

# Without a GPU, Triton kernels run under Triton's interpreter (tests/ops/test_edt_triton.py): it must be chosen before
# triton is first imported, because triton.language's own helpers are jitted at import.
if not torch.cuda.is_available() and "triton" not in __import__("sys").modules:
    os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture(params=DEVICES)
def device(request) -> str:
    """Every device the machine has: the CPU always, CUDA when present (a lent GPU runs the same suite)."""
    return request.param


def against_a_randomised_peer(compare: Callable[[], None]) -> None:
    """Run ``compare`` (a comparison with a fresh run of pyEdgeEval, whose CSA matcher BSR seeds from the clock and
    no caller can seed) and, if it fails, once more with another fresh run before the failure counts: a bound set
    from the peer's run-to-run spread is then exceeded by chance once in thousands, not once in fifty."""
    try:
        compare()
    except AssertionError:
        compare()


def shared_path(*parts: str) -> Path:
    """Path under ../shared; skip with a reason when absent, fail instead when SEGMETRICS_REQUIRE_SHARED=1 (CI)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        reason = f"reference data {path} is absent (it lives in ../shared beside the repository)"
        if REQUIRED:
            pytest.fail(f"SEGMETRICS_REQUIRE_SHARED=1 but {reason}")
        pytest.skip(reason)
    return path


def interrupted(*args: object, **kwargs: object) -> None:
    """A stand-in for a function of the run, raising what Ctrl-C raises (patch it over a writer or an evaluator)."""
    raise KeyboardInterrupt


def signal_at_first_replace(
    monkeypatch: pytest.MonkeyPatch, signum: int = signal.SIGINT, onto: str | None = None
) -> list[str]:
    """Patch ``os.replace`` so that its first call (``onto``: its first call onto a file of that name) raises
    ``signum`` in this process, as a user's Ctrl-C landing there; returns the targets of the renames made since."""
    real, moved = os.replace, []

    def replace(src, dst):
        if not moved and (onto is None or Path(dst).name == onto):
            moved.append(str(dst))
            signal.raise_signal(signum)
        elif moved:
            moved.append(str(dst))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    return moved
