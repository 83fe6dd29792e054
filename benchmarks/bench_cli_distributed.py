"""``segmetrics evaluate foreground`` in one process vs under ``torchrun --nproc-per-node 2`` (gloo, CPU).

Writes N seeded synthetic 320x320 prediction / ground-truth PNG pairs (the maps of ``bench_foreground.py``) to a
temporary folder, then times whole commands (interpreter start, imports, process group, pre-scan, decoding,
measures, ``--json`` report, exit), alternating one process and two so that both see the same machine load:

* ``python -m segmetrics_torch.app.cli evaluate foreground --pred P --gt G --json J``;
* ``python -m torch.distributed.run --standalone --nproc-per-node 2 -m segmetrics_torch.app.cli evaluate foreground
  ...`` (same arguments).

torchrun sets ``OMP_NUM_THREADS=1`` in each rank; the one process keeps torch's default threads. ``--workers`` is
passed to both (decoding processes per rank; default 0, so that the two processes of torchrun are
the only parallelism). It prints every time, the best of each, the speed-up, the largest difference between the two
JSON reports' dataset values and ``uptime`` before and after; and, apart, the evaluation time each command prints
(``Evaluated ... in X s``: decoding, measures and gathering, after interpreter start, imports and the pre-scan). Run::

    python benchmarks/bench_cli_distributed.py                  # 1,000 pairs, 2 rounds
    python benchmarks/bench_cli_distributed.py --n 200 --rounds 3 --workers 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_foreground import make_maps

REPO = Path(__file__).resolve().parents[1]


def write_pairs(root: Path, n: int, size: int, seed: int) -> None:
    preds, gts = make_maps(n, size, seed)
    for folder in ("pred", "gt"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for i, (pred, gt) in enumerate(zip(preds, gts, strict=True)):
        Image.fromarray(pred).save(root / "pred" / f"img_{i:04d}.png")
        Image.fromarray(gt).save(root / "gt" / f"img_{i:04d}.png")


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "(uptime unavailable)"


def run(root: Path, processes: int, workers: int) -> tuple[float, float, dict]:
    out = root / f"report-{processes}.json"
    cli = [
        "-m",
        "segmetrics_torch.app.cli",
        "evaluate",
        "foreground",
        "--pred",
        str(root / "pred"),
        "--gt",
        str(root / "gt"),
        "--json",
        str(out),
        "--no-progress",
        "--device",
        "cpu",
        "--workers",
        str(workers),
    ]
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(processes)]
    command = [sys.executable, *cli] if processes == 1 else [*launcher, *cli]
    # torchrun gives each rank OMP_NUM_THREADS=1; the one process keeps torch's default (a thread per core)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env, cwd=root)
    elapsed = time.perf_counter() - start
    # the command's own "Evaluated ... in X s": decoding, measures and (torchrun) the gathering, after start-up
    evaluation = float(re.search(r" in ([0-9.]+) s", done.stdout).group(1))  # type: ignore[union-attr]
    return elapsed, evaluation, json.loads(out.read_text())["results"]


def scalars(results: dict) -> dict[str, float]:
    flat = {}
    for key, value in results.items():
        if isinstance(value, dict) and key != "per_image":
            flat.update({f"{key}/{k}": v for k, v in value.items() if isinstance(v, float)})
        elif isinstance(value, float):
            flat[key] = value
    return flat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="pairs (default 1000)")
    parser.add_argument("--size", type=int, default=320, help="side of the square maps (default 320)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds (default 2)")
    parser.add_argument("--workers", type=int, default=0, help="decoding processes per rank (default 0)")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPU(s) visible; {uptime()}")
    with tempfile.TemporaryDirectory(prefix="bench-ddp-") as folder:
        root = Path(folder)
        write_pairs(root, args.n, args.size, seed=0)
        times: dict[int, list[float]] = {1: [], 2: []}
        evals: dict[int, list[float]] = {1: [], 2: []}
        results = {}
        for r in range(args.rounds):
            for processes in (1, 2):
                elapsed, evaluation, results[processes] = run(root, processes, args.workers)
                times[processes].append(elapsed)
                evals[processes].append(evaluation)
                print(
                    f"round {r + 1}: {processes} process(es): {elapsed:.2f} s (evaluation {evaluation:.2f} s)",
                    flush=True,
                )
        one, two = scalars(results[1]), scalars(results[2])
        diff = max(abs(one[k] - two[k]) for k in one if not (math.isnan(one[k]) and math.isnan(two[k])))
        same_images = list(results[1]["per_image"]) == list(results[2]["per_image"])
    best1, best2 = min(times[1]), min(times[2])
    print(
        f"{args.n} pairs {args.size}x{args.size}, --workers {args.workers}: best of {args.rounds}: 1 process "
        f"{best1:.2f} s, torchrun 2 processes {best2:.2f} s, speed-up x{best1 / best2:.2f}"
    )
    e1, e2 = min(evals[1]), min(evals[2])
    print(
        f"evaluation alone (the command's 'in X s': decoding, measures, gathering): 1 process {e1:.2f} s, "
        f"2 processes {e2:.2f} s, speed-up x{e1 / e2:.2f}"
    )
    print(f"largest difference of the dataset values: {diff:.3g}; per-image rows in the same order: {same_images}")
    print(f"after: {uptime()}")


if __name__ == "__main__":
    main()
