"""Lightning: the example logs Metric values equal to a direct computation; its validation under DDP (2 gloo
processes) logs the single-process values."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pl = pytest.importorskip("pytorch_lightning")

from segmetrics_torch import MAE, EMeasure, FMeasure, SMeasure, WeightedFMeasure  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lightning_training.py"


def _example():
    spec = importlib.util.spec_from_file_location("lightning_training", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_logged_values_equal_direct_metric_computation():
    ex = _example()
    args = ex.parse_args(["--epochs", "1", "--train-images", "16", "--val-images", "8", "--batch-size", "4"])
    pl.seed_everything(0)
    train = torch.utils.data.DataLoader(ex.make_data(16, seed=1), batch_size=4, shuffle=True)
    val_set = ex.make_data(8, seed=2)
    val = torch.utils.data.DataLoader(val_set, batch_size=4)
    model = ex.LitSegmentation(loss="e")
    trainer = ex.build_trainer(args, max_steps=3)
    trainer.fit(model, train, val)
    logged = trainer.validate(model, val, verbose=False)[0]
    model.eval()
    with torch.no_grad():
        x, y = val_set.tensors
        probs, target = model(x)[:, 0], y[:, 0]
    # the example scores the probabilities as they are (normalize=False), as a loss on the same tensor would
    direct = {
        "val/mae": MAE(normalize=False)(probs, target),
        "val/sm": SMeasure(normalize=False)(probs, target),
        "val/wfm": WeightedFMeasure(normalize=False)(probs, target),
    }
    assert float(direct["val/mae"]) == pytest.approx(float((probs - target.float()).abs().mean()), abs=1e-6)
    fm, em = FMeasure(normalize=False), EMeasure(normalize=False)
    fm.update(probs, target)
    em.update(probs, target)
    for k in ("adaptive", "mean", "max"):
        direct[f"val/fm_{k}"] = fm.compute()[k]
        direct[f"val/em_{k}"] = em.compute()[k]
    assert set(direct) == set(logged)
    for key, value in direct.items():
        assert float(logged[key]) == pytest.approx(float(value), abs=1e-6), key


@pytest.mark.slow
@pytest.mark.ddp
def test_ddp_validation_logs_the_single_process_values(tmp_path):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    # 13 images on 2 processes: Lightning's own DistributedSampler would repeat one (the example brings its own)
    common = [sys.executable, str(EXAMPLE), "--validate-only", "--val-images", "13", "--batch-size", "3"]
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    subprocess.run([*common, "--json", str(one)], check=True, env=env, capture_output=True, timeout=300)
    run = subprocess.run(
        [*common, "--devices", "2", "--strategy", "ddp", "--json", str(two)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    single, ddp = json.loads(one.read_text()), json.loads(two.read_text())
    assert (single["world_size"], ddp["world_size"]) == (1, 2)  # a silent fallback to one process would fail here
    single, ddp = single["metrics"], ddp["metrics"]
    assert single.keys() == ddp.keys() and len(single) == 9
    for key in single:
        assert ddp[key] == pytest.approx(single[key], abs=1e-12), key
