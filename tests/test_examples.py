"""The GPU batch-evaluation example runs (on the CPU here) and prints the dataset values of the Metric."""

from __future__ import annotations

import json
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
        [
            sys.executable,
            str(EXAMPLES / "gpu_batch_eval.py"),
            "--device",
            device,
            "--images",
            "12",
            "--batch-size",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    printed = {key.strip(): value for key, value in (line.split(":") for line in run.stdout.splitlines()[1:])}
    data = make_foreground_dataset(n=12, size=(320, 320), methods=("good",))
    metric = ForegroundMeasures()
    metric.update(torch.from_numpy(data.preds["good"]), torch.from_numpy(data.gt))
    expected = metric.compute()
    assert float(printed["mae"]) == pytest.approx(float(expected["mae"]), abs=5e-5)
    assert float(printed["f_measure/max"]) == pytest.approx(float(expected["f_measure"]["max"]), abs=5e-5)


@pytest.mark.ddp
@pytest.mark.slow
def test_ddp_evaluation_example_under_torchrun_equals_one_process():
    """`torchrun --nproc-per-node 2` over 11 images (odd: the shards differ) gives the one-process numbers."""
    script = str(EXAMPLES / "ddp_evaluation.py")
    runs = {}
    for world in (1, 2):
        cmd = [sys.executable, script, "--images", "11", "--batch-size", "3"]
        if world == 2:
            torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
            cmd = [*torchrun, *cmd[1:]]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
        runs[world] = json.loads(run.stdout.strip().splitlines()[-1])
    assert runs[1]["world_size"] == 1 and runs[2]["world_size"] == 2
    assert runs[1]["images"] == runs[2]["images"] == 11
    for key, value in runs[1].items():
        if key == "world_size":
            continue
        assert runs[2][key] == pytest.approx(value, rel=0, abs=1e-12), key
