"""End to end: ``segmetrics evaluate`` on a folder of PNGs vs a plain PySODMetrics read-and-step loop, same files.

Writes N seeded synthetic 320x320 prediction / ground-truth PNG pairs (the maps of ``bench_foreground.py``) to a
temporary folder, then times, as separate processes from start to exit (interpreter start and imports included):

* the peer, the loop PySODEvalToolkit runs: for every pair ``cv2.imread(path, cv2.IMREAD_GRAYSCALE)`` twice, then
  ``step`` of PySODMetrics 1.6.2's ``MAE``, ``Smeasure``, ``WeightedFmeasure``, ``Fmeasure`` and ``Emeasure``,
  then ``get_results()``;
* ``segmetrics evaluate --gt GT --pred PRED --output OUT --no-cache`` on the CPU: the full foreground suite (the
  five measures plus IoU, Dice and the curves), decoding in worker processes, writing the report (terminal table,
  results.json, Markdown / LaTeX / CSV tables, three figures as PNG and PDF); once as a process of its own, once as
  a ``segmetrics_torch.app.cli.main()`` call in a process that imported torch and the package first.

Two ratios: whole processes (interpreter start, imports, reading, measures, report, exit; torch, torchmetrics and
numba take ~2.3 s to load, a fixed cost) and after the imports (the peer's read-and-step loop vs the ``main()``
call). The runs alternate (peer, ours, ours in-process, peer, ...) so that both tools see the same machine load; it
prints every time, the best of each, the ratios, the largest difference between the two tools' dataset values and
``uptime`` before and after. Run::

    python benchmarks/bench_cli.py                      # 1,000 pairs, 2 rounds
    python benchmarks/bench_cli.py --n 200 --rounds 3 --workers 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_foreground import make_maps

PEER = r"""
import json, sys, time, warnings
start = time.perf_counter()
import cv2
import py_sod_metrics as ps
warnings.simplefilter("ignore")  # Fmeasure's deprecation warning
pred_dir, gt_dir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
imported = time.perf_counter()
mae, sm, wfm, fm, em = ps.MAE(), ps.Smeasure(), ps.WeightedFmeasure(), ps.Fmeasure(), ps.Emeasure()
for name in names:
    gt = cv2.imread(f"{gt_dir}/{name}", cv2.IMREAD_GRAYSCALE)
    pred = cv2.imread(f"{pred_dir}/{name}", cv2.IMREAD_GRAYSCALE)
    for metric in (mae, sm, wfm, fm, em):
        metric.step(pred=pred, gt=gt)
f, e = fm.get_results()["fm"], em.get_results()["em"]
results = {"mae": mae.get_results()["mae"], "s_measure": sm.get_results()["sm"],
           "weighted_f_measure": wfm.get_results()["wfm"], "f_measure/adaptive": f["adp"],
           "f_measure/mean": f["curve"].mean(), "f_measure/max": f["curve"].max(), "e_measure/adaptive": e["adp"],
           "e_measure/mean": e["curve"].mean(), "e_measure/max": e["curve"].max()}
print(json.dumps({"loop_s": time.perf_counter() - imported, "import_s": imported - start,
                  "results": {k: float(v) for k, v in results.items()}}))
"""


OURS = r"""
import json, sys, time
start = time.perf_counter()
import torch
import matplotlib.pyplot
from segmetrics_torch import ForegroundMeasures
from segmetrics_torch.app.cli import main
imported = time.perf_counter()
status = main(sys.argv[1:])
print(json.dumps({"main_s": time.perf_counter() - imported, "import_s": imported - start, "status": status}))
"""


def write_pairs(root: Path, n: int, size: int, seed: int) -> list[str]:
    preds, gts = make_maps(n, size, seed)
    (root / "pred").mkdir(parents=True)
    (root / "gt").mkdir()
    names = [f"{i:05d}.png" for i in range(n)]
    for name, pred, gt in zip(names, preds, gts, strict=True):
        Image.fromarray(pred).save(root / "pred" / name)
        Image.fromarray(gt).save(root / "gt" / name)
    return names


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "(uptime unavailable)"


def run_peer(root: Path, names: list[str]) -> tuple[float, dict]:
    script = root / "peer.py"
    script.write_text(PEER)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(script), str(root / "pred"), str(root / "gt"), *names],
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - start, json.loads(out.stdout)


def run_ours(root: Path, workers: int | None, figures: str, in_process: bool) -> tuple[float, dict, str]:
    """``segmetrics evaluate`` as its own process (``in_process`` False), or ``main()`` called in a process that
    imported torch and the package first (the time of the call is then reported apart)."""
    out_dir = root / "report"
    options = [
        "evaluate",
        "--gt",
        str(root / "gt"),
        "--pred",
        f"ours={root / 'pred'}",
        "--output",
        str(out_dir),
        "--no-cache",
        "--no-progress",
        "--device",
        "cpu",
        "--figures",
        figures,
    ]
    if workers is not None:
        options += ["--workers", str(workers)]
    if in_process:
        script = root / "ours.py"
        script.write_text(OURS)
        command = [sys.executable, str(script), *options]
    else:
        command = [sys.executable, "-m", "segmetrics_torch.app.cli", *options]
    start = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    report = json.loads((out_dir / "results.json").read_text())
    (dataset,) = report["results"].values()
    timing = json.loads(out.stdout.splitlines()[-1]) if in_process else {}
    return wall, {"results": dataset["foreground"]["ours"]["results"], **timing}, out.stdout


def flat(results: dict) -> dict[str, float]:
    return {
        "mae": results["mae"],
        "s_measure": results["s_measure"],
        "weighted_f_measure": results["weighted_f_measure"],
        **{f"{k}/{s}": results[k][s] for k in ("f_measure", "e_measure") for s in ("adaptive", "mean", "max")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="number of pairs (default 1000)")
    parser.add_argument("--size", type=int, default=320, help="image side (default 320)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs of each (default 2)")
    parser.add_argument("--workers", type=int, default=None, help="--workers for segmetrics (default: its own)")
    parser.add_argument("--figures", default="png,pdf", help="--figures for segmetrics (default png,pdf)")
    args = parser.parse_args()

    print(f"load before: {uptime()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        names = write_pairs(root, args.n, args.size, args.seed)
        size_mb = sum(p.stat().st_size for p in root.rglob("*.png")) / 2**20
        took = time.perf_counter() - start
        print(f"wrote {args.n} pairs of {args.size}x{args.size} PNGs ({size_mb:.0f} MB) in {took:.1f} s")
        peer_walls, peer_loops, our_walls, our_calls = [], [], [], []
        for r in range(args.rounds):
            peer_wall, peer = run_peer(root, names)
            peer_walls.append(peer_wall)
            peer_loops.append(peer["loop_s"])
            print(
                f"round {r + 1}: PySODMetrics loop        process {peer_wall:6.2f} s "
                f"(imports {peer['import_s']:.2f} s, loop {peer['loop_s']:.2f} s)"
            )
            our_wall, ours, stdout = run_ours(root, args.workers, args.figures, in_process=False)
            our_walls.append(our_wall)
            summary = next(line for line in stdout.splitlines() if line.startswith("Evaluated"))
            print(f"round {r + 1}: segmetrics evaluate      process {our_wall:6.2f} s ({summary.split(': ', 1)[1]})")
            _, ours_main, _ = run_ours(root, args.workers, args.figures, in_process=True)
            our_calls.append(ours_main["main_s"])
            print(
                f"round {r + 1}: segmetrics cli.main()    call    {ours_main['main_s']:6.2f} s (after "
                f"{ours_main['import_s']:.2f} s of imports)"
            )
        ours_flat = flat(ours["results"])
        diff = max(abs(ours_flat[k] - v) for k, v in peer["results"].items())
        n = args.n
        peer_wall, our_wall = min(peer_walls), min(our_walls)
        peer_loop, our_call = min(peer_loops), min(our_calls)
        print(f"\nbest of {args.rounds}, {n} pairs of {args.size}x{args.size}:")
        print(
            f"  whole processes (interpreter start, imports, reading, measures, report, exit): PySODMetrics "
            f"{peer_wall:.2f} s ({peer_wall / n * 1e3:.2f} ms/img), segmetrics {our_wall:.2f} s "
            f"({our_wall / n * 1e3:.2f} ms/img): {peer_wall / our_wall:.1f}x"
        )
        print(
            f"  after imports (the read-and-step loop vs the cli.main() call, reading + measures + report): "
            f"PySODMetrics {peer_loop:.2f} s ({peer_loop / n * 1e3:.2f} ms/img), segmetrics {our_call:.2f} s "
            f"({our_call / n * 1e3:.2f} ms/img): {peer_loop / our_call:.1f}x"
        )
        print(f"  largest |difference| of the 9 dataset values (MAE, S, wF, adp/mean/max F and E): {diff:.1e}")
    print(f"load after: {uptime()}")


if __name__ == "__main__":
    main()
