"""The GPU batch-evaluation example runs (on the CPU here) and prints the dataset values of the Metric."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from segmetrics_torch import ForegroundMeasures
from segmetrics_torch.synthetic import make_foreground_dataset

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_gpu_batch_eval_example_prints_the_metric_values():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "gpu_batch_eval.py"), "--device", device, "--images", "12",
         "--batch-size", "5"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    printed = {key.strip(): value for key, value in (line.split(":") for line in run.stdout.splitlines()[1:])}
    data = make_foreground_dataset(n=12, size=(320, 320), methods=("good",))
    metric = ForegroundMeasures()
    metric.update(torch.from_numpy(data.preds["good"]), torch.from_numpy(data.gt))
    expected = metric.compute()
    assert float(printed["mae"]) == pytest.approx(float(expected["mae"]), abs=5e-5)
    assert float(printed["f_measure/max"]) == pytest.approx(float(expected["f_measure"]["max"]), abs=5e-5)
