"""A small ``segmetrics evaluate foreground`` run on a machine whose kernels are not compiled yet takes the tensor
path instead of waiting for the compilation (issue 28, item 3): the note says so, nothing is compiled, the values are
the compiled path's to rounding, a larger run still compiles, the backend setting is left as it was and the
environment untouched; ``--backend compiled`` (or ``SEGMETRICS_BACKEND=compiled``, which tests/conftest.py sets)
always compiles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segmetrics_torch.app import cold_start
from segmetrics_torch.app.cli import main
from segmetrics_torch.ops import get_backend, use_backend
from segmetrics_torch.ops.backend import BACKEND_ENV
from segmetrics_torch.ops.foreground import foreground_kernel_ready, foreground_statistics

ROOT = Path(__file__).resolve().parents[2]


def _folders(root: Path, n: int = 3) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    (root / "gt").mkdir(parents=True)
    (root / "pred").mkdir()
    for i in range(n):
        gt = np.zeros((40, 48), np.uint8)
        gt[5 + i : 30, 8 : 40 - i] = 255
        Image.fromarray(gt).save(root / "gt" / f"im{i}.png")
        pred = np.clip(gt * 0.6 + rng.integers(0, 90, gt.shape), 0, 255).astype(np.uint8)
        Image.fromarray(pred).save(root / "pred" / f"im{i}.png")
    return root / "pred", root / "gt"


def _values(node: object, prefix: str = "") -> dict[str, float]:
    """Every float of a results tree (curves and per-image values included), by its path."""
    if isinstance(node, dict):
        return {k: v for key, child in node.items() for k, v in _values(child, f"{prefix}/{key}").items()}
    if isinstance(node, list):
        return {k: v for i, child in enumerate(node) for k, v in _values(child, f"{prefix}[{i}]").items()}
    return {prefix: node} if isinstance(node, float) else {}


def _results(path: Path) -> dict[str, float]:
    return _values(json.loads(path.read_text())["results"])


def test_the_readiness_check_sees_the_process_and_an_empty_cache(tmp_path: Path) -> None:
    import torch

    foreground_statistics(
        torch.zeros(1, 4, 4, dtype=torch.uint8), torch.zeros(1, 4, 4, dtype=torch.bool), s_measure=True, weighted_f=True
    )
    assert foreground_kernel_ready()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "empty"), "PYTHONPATH": str(ROOT)}
    code = "from segmetrics_torch.ops.foreground import foreground_kernel_ready as r; print(r())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    assert not list((tmp_path / "empty").rglob("*.nbc"))  # looked, compiled nothing


def test_a_small_cold_run_takes_the_tensor_path(tmp_path: Path) -> None:
    pred, gt = _folders(tmp_path / "data")
    assert (
        main(
            [
                "evaluate",
                "foreground",
                "--pred",
                str(pred),
                "--gt",
                str(gt),
                "--no-progress",
                "--json",
                str(tmp_path / "warm.json"),
            ]
        )
        == 0
    )
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != BACKEND_ENV}  # "auto": the shortcut applies
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "segmetrics_torch.app.cli",
            "evaluate",
            "foreground",
            "--pred",
            str(pred),
            "--gt",
            str(gt),
            "--no-progress",
            "--json",
            str(tmp_path / "cold.json"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("take the tensor path instead of waiting") == 1
    assert "(the first run: 3 images of 40x48)" in run.stderr
    assert "note: compiling" not in run.stderr
    assert not list(cache.rglob("*.nbc"))
    warm, cold = _results(tmp_path / "warm.json"), _results(tmp_path / "cold.json")
    assert warm.keys() == cold.keys() and len(warm) >= 500  # the measures, their curves
    for key, value in warm.items():
        assert cold[key] == pytest.approx(value, rel=1e-10, abs=1e-12), key


def test_the_switch_is_undone_and_large_runs_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pred, gt = _folders(tmp_path / "data")
    monkeypatch.setattr(cold_start, "foreground_kernel_ready", lambda: False)
    seen: list[str] = []
    original = foreground_statistics

    def spy(*args, **kwargs):  # the compiled path's entry point: called only when the run compiles
        seen.append(get_backend())
        return original(*args, **kwargs)

    monkeypatch.setattr("segmetrics_torch.functional.foreground._intermediates.foreground_statistics", spy)
    monkeypatch.setitem(cold_start._spent, "pixels", 0)
    monkeypatch.setattr(cold_start, "TENSOR_PATH_PIXELS", 3 * 40 * 48 + 100)  # room for one run of 3 images
    argv = ["evaluate", "foreground", "--pred", str(pred), "--gt", str(gt), "--no-progress"]
    ours = lambda: {k: v for k, v in os.environ.items() if k.startswith("SEGMETRICS_")}  # noqa: E731
    environment = ours()
    with use_backend("auto"):  # the default setting (the suite's is "compiled": tests/conftest.py)
        assert main(argv) == 0
        assert seen == [] and get_backend() == "auto"  # the tensor path, then the setting back
        assert main(argv) == 0  # the process's budget is spent (a report's jobs add up): this one compiles
        assert seen == ["auto"] and get_backend() == "auto"
        monkeypatch.setattr(cold_start, "TENSOR_PATH_PIXELS", 10**9)
        monkeypatch.setitem(cold_start._spent, "pixels", 0)
        seen.clear()
        assert main([*argv, "--backend", "compiled"]) == 0  # the option: compile whatever the size
        assert seen == ["compiled"] and get_backend() == "auto"
        with use_backend("compiled"):  # the setting itself (SEGMETRICS_BACKEND=compiled): the same
            seen.clear()
            assert main(argv) == 0
            assert seen == ["compiled"]
        seen.clear()
        assert main([*argv, "--backend", "tensor"]) == 0  # the tensor path for any run
        assert seen == [] and get_backend() == "auto"
    assert ours() == environment  # the command steered the library through its API only


def test_a_report_notes_the_tensor_path_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A report whose jobs all take the tensor path says so once, with the first run's images."""
    pred, gt = _folders(tmp_path / "data")
    (tmp_path / "eval.yaml").write_text(
        f"output: {tmp_path / 'report'}\nfigures: false\nfamilies: [foreground]\ndatasets:\n  DS: {gt}\n"
        f"methods:\n  A: {pred}\n  B: {pred}\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(cold_start, "foreground_kernel_ready", lambda: False)
    monkeypatch.setitem(cold_start._spent, "pixels", 0)
    monkeypatch.setitem(cold_start._spent, "announced", False)
    with use_backend("auto"):
        assert main(["evaluate", "--config", str(tmp_path / "eval.yaml"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count("take the tensor path instead of waiting") == 1, err
    assert "(the first run: 3 images of 40x48)" in err
