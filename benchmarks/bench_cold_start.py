"""The first run on a new machine: cold (empty numba cache) and warm times of the command and the library.

A cold numba cache makes the first call of each CPU kernel compile it; numba caches the result on disk, so later
processes load it. Printed, each in a fresh process with an empty ``NUMBA_CACHE_DIR`` (cold) and then with the
cache that run filled (warm):

* ``segmetrics evaluate foreground`` on 3 synthetic 320x320 pairs (a small cold run takes the tensor path: see
  ``segmetrics_torch.app.cold_start``), and the same with ``--backend compiled`` (it compiles; until issue 42 the
  variable ``SEGMETRICS_COLD_START=compile``);
* ``segmetrics evaluate boundary`` on 3 BSDS500 images (soft maps: the gPb ucm2 blurred; needs ``../shared``);
* in Python: ``import segmetrics_torch``, the first ``ForegroundMeasures`` update of uint8 maps, then of float32
  maps (one kernel serves both: it should compile nothing).

Targets (issue "The first hour of a new user", this 2-core machine): cold foreground <= 8 s, cold boundary <= 15 s,
float after uint8 ~0 s. Run::

    python benchmarks/bench_cold_start.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "bsds_sample" / "BSDS500"

_PYTHON_STEPS = r"""
import time
t = time.perf_counter()
import torch, segmetrics_torch as st
print(f"import {time.perf_counter() - t:.2f}")
g = torch.zeros(4, 320, 320, dtype=torch.bool); g[:, 80:240, 100:220] = True
p = (torch.rand(4, 320, 320, generator=torch.Generator().manual_seed(0)) * 255).to(torch.uint8)
m = st.ForegroundMeasures()
t = time.perf_counter(); m.update(p, g); print(f"uint8 {time.perf_counter() - t:.2f}")
t = time.perf_counter(); m.update(p.float() / 255, g); print(f"float {time.perf_counter() - t:.2f}")
"""


def _foreground_data(root: Path) -> tuple[Path, Path]:
    from PIL import Image

    rng = np.random.default_rng(0)
    for i in range(3):
        gt = np.zeros((320, 320), np.uint8)
        gt[60 + 10 * i : 220, 80 : 240 - 10 * i] = 255
        (root / "gt").mkdir(parents=True, exist_ok=True)
        (root / "pred").mkdir(exist_ok=True)
        Image.fromarray(gt).save(root / "gt" / f"im{i}.png")
        noisy = np.clip(gt * 0.7 + rng.integers(0, 80, gt.shape), 0, 255).astype(np.uint8)
        Image.fromarray(noisy).save(root / "pred" / f"im{i}.png")
    return root / "pred", root / "gt"


def _boundary_data(root: Path) -> tuple[Path, Path] | None:
    import scipy.io
    from PIL import Image
    from scipy import ndimage

    gt_dir = SHARED / "data" / "groundTruth" / "test"
    if not gt_dir.is_dir():
        return None
    (root / "bgt").mkdir(parents=True, exist_ok=True)
    (root / "bpred").mkdir(exist_ok=True)
    for name in sorted(os.listdir(gt_dir))[:3]:
        (root / "bgt" / name).write_bytes((gt_dir / name).read_bytes())
        ucm = scipy.io.loadmat(SHARED / "ucm2" / "test" / name)["ucm2"][2::2, 2::2]
        soft = ndimage.gaussian_filter(ucm, 1.5)
        soft = np.clip(soft / np.percentile(soft, 99.5), 0, 1)
        Image.fromarray((soft * 255).astype(np.uint8)).save(root / "bpred" / f"{name[:-4]}.png")
    return root / "bpred", root / "bgt"


def _timed(command: list[str], cache: str, extra: dict[str, str] | None = None) -> tuple[float, str]:
    # the default backend ("auto", where the command's cold-start shortcut applies) unless a run's options say else
    env = {k: v for k, v in os.environ.items() if k != "SEGMETRICS_BACKEND"}
    env.update({"NUMBA_CACHE_DIR": cache, **(extra or {})})
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout + proc.stderr


def main() -> None:
    cli = [sys.executable, "-m", "segmetrics_torch.app.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
        pred, gt = _foreground_data(root / "fg")
        runs = {
            "evaluate foreground, 3 x 320x320": [
                *cli,
                "evaluate",
                "foreground",
                "--pred",
                str(pred),
                "--gt",
                str(gt),
                "--no-progress",
            ]
        }
        bdry = _boundary_data(root / "bd")
        if bdry is not None:
            runs["evaluate boundary, 3 BSDS images, 99 thresholds"] = [
                *cli,
                "evaluate",
                "boundary",
                "--pred",
                str(bdry[0]),
                "--gt",
                str(bdry[1]),
                "--no-progress",
            ]
        runs["evaluate foreground, --backend compiled"] = [
            *runs["evaluate foreground, 3 x 320x320"],
            "--backend",
            "compiled",
        ]
        for label, command in runs.items():
            cache = tempfile.mkdtemp(dir=tmp)
            cold, out = _timed(command, cache)
            warm, _ = _timed(command, cache)
            if "compiling segmetrics-torch's CPU kernels" in out:
                how = "compiled, announced"
            elif "takes the tensor path" in out:
                how = "tensor path, announced"
            else:
                how = "NOT announced"
            print(f"{label:50s} cold {cold:6.1f} s ({how})   warm {warm:5.1f} s")
        cache = tempfile.mkdtemp(dir=tmp)
        _, out = _timed([sys.executable, "-c", _PYTHON_STEPS], cache)
        steps = dict(line.split() for line in out.splitlines() if line.split()[0] in ("import", "uint8", "float"))
        print(
            f"{'Python, cold cache':50s} import {steps['import']} s, first uint8 update {steps['uint8']} s, "
            f"then float32 {steps['float']} s"
        )


if __name__ == "__main__":
    main()
