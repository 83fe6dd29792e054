"""DAVIS J&F: ours vs a faithful run of davis2017-evaluation's algorithm and vs vos-benchmark, same sequences, one
process.

The data: the real masks shipped with ``davisvideochallenge/davis2017-evaluation`` (``results/semi-supervised/osvos``
and ``results/unsupervised/rvos``, 30 DAVIS 2017 val sequences at 480p) when a checkout is given (``--davis-eval``),
used as the ground truth (OSVOS's masks) and the results (OSVOS's masks shifted by a few pixels for the semi-supervised
task, RVOS's proposals for the unsupervised one); otherwise synthetic 480x854 sequences of moving ellipses.

Timed, each end to end from the PNG files to the per-object statistics, in this one process:

* ``ours``: :func:`segmetrics_torch.functional.video.evaluate_davis` (compiled kernel, frames streamed in chunks, each
  PNG decoded once by zlib-ng + a compiled unfilter in threads while the previous chunk is counted);
* ``reference``: :func:`segmetrics_torch.reference.video.evaluate_folder` with OpenCV's ``cv2.dilate`` and the
  ``skimage`` disk, i.e. davis2017-evaluation's algorithm step by step (float64 frames, one-hot float64 stacks, one
  object and one frame at a time) -- the official package is not on the registries;
* ``vos-benchmark`` (0.1.0): its ``VideoEvaluator`` called per sequence in this process (its ``benchmark`` would start
  a multiprocessing pool); semi-supervised only (it has no unsupervised task).

The numbers are checked equal before the times are printed (per-object J and F means to 1e-9). Run::

    python benchmarks/bench_davis.py --davis-eval /path/to/davis2017-evaluation [--sequences 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image


def _save(path: Path, labels: np.ndarray, palette: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.fromarray(labels.astype(np.uint8), mode="P")
    im.putpalette(palette)
    im.save(path)


def _palette() -> list[int]:
    cmap = []
    for i in range(256):
        r = g = b = 0
        c = i
        for j in range(8):
            r |= ((c >> 0) & 1) << (7 - j)
            g |= ((c >> 1) & 1) << (7 - j)
            b |= ((c >> 2) & 1) << (7 - j)
            c >>= 3
        cmap += [r, g, b]
    return cmap


def _read(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im)


def _pil_read(path: str) -> np.ndarray:
    # the reference's reader: np.array(Image.open(path)) (davis.py, results.py)
    return np.array(Image.open(path))


def from_davis_eval(repo: Path, work: Path, sequences: int | None) -> list[str]:
    """Lay out the masks of a davis2017-evaluation checkout (a git dir or a work tree) as a DAVIS root + results."""
    pal = _palette()
    git = ["git", "-C", str(repo)]
    listing = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", "results"], capture_output=True, text=True)
    files = [f for f in listing.stdout.split() if f.endswith(".png")]
    names = sorted({f.split("/")[3] for f in files if f.startswith("results/semi-supervised/osvos/")})
    if sequences:
        names = names[:sequences]
    rng = np.random.default_rng(0)
    for f in files:
        parts = f.split("/")
        task, seq, frame = parts[1], parts[3], parts[4]
        if seq not in names:
            continue
        blob = subprocess.run([*git, "show", f"HEAD:{f}"], capture_output=True, check=True).stdout
        tmp = work / "blob.png"
        tmp.write_bytes(blob)
        labels = _read(tmp)
        if task == "semi-supervised":
            for folder in ("Annotations", "Annotations_unsupervised"):
                _save(work / "DAVIS" / folder / "480p" / seq / frame, labels, pal)
            shifted = np.roll(labels, (int(rng.integers(-4, 5)), int(rng.integers(-4, 5))), axis=(0, 1))
            _save(work / "semi" / seq / frame, shifted, pal)
        else:
            _save(work / "unsup" / seq / frame, np.minimum(labels, 20), pal)
    (work / "DAVIS" / "ImageSets" / "2017").mkdir(parents=True, exist_ok=True)
    (work / "DAVIS" / "ImageSets" / "2017" / "val.txt").write_text("".join(f"{n}\n" for n in names))
    return names


def synthetic(work: Path, sequences: int, frames: int = 60, objects: int = 3) -> list[str]:
    """Moving ellipses at 480x854 (GT), the results shifted and with an extra proposal."""
    pal = _palette()
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:480, :854]
    names = [f"seq{i:02d}" for i in range(sequences)]
    for name in names:
        params = [
            (rng.uniform(100, 380), rng.uniform(100, 750), rng.uniform(30, 90), rng.uniform(-2, 2))
            for _ in range(objects)
        ]
        for t in range(frames):
            gt = np.zeros((480, 854), np.uint8)
            for k, (cy, cx, r, v) in enumerate(params):
                gt[(yy - cy - v * t) ** 2 + (xx - cx - v * t) ** 2 < r**2] = k + 1
            for folder in ("Annotations", "Annotations_unsupervised"):
                _save(work / "DAVIS" / folder / "480p" / name / f"{t:05d}.png", gt, pal)
            res = np.roll(gt, (3, -2), axis=(0, 1))
            _save(work / "semi" / name / f"{t:05d}.png", res, pal)
            res2 = res.copy()
            res2[:20, :20] = objects + 1
            _save(work / "unsup" / name / f"{t:05d}.png", res2, pal)
    (work / "DAVIS" / "ImageSets" / "2017").mkdir(parents=True, exist_ok=True)
    (work / "DAVIS" / "ImageSets" / "2017" / "val.txt").write_text("".join(f"{n}\n" for n in names))
    return names


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _cv2_dilate(mask: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """The reference's call: ``cv2.dilate(boundary.astype(uint8), disk(bound_pix).astype(uint8))``, its disk made
    again each call as ``f_measure`` does."""
    import cv2
    from skimage.morphology import disk

    return cv2.dilate(mask.astype(np.uint8), disk(int(kernel.shape[0] // 2)).astype(np.uint8))


def run_task(task: str, root: Path, res_dir: Path, names: list[str], args: argparse.Namespace) -> str:
    """One task end to end: ours, the reference's algorithm, vos-benchmark (semi-supervised); the numbers checked."""
    from segmetrics_torch.functional.video import evaluate_davis
    from segmetrics_torch.reference import video as ref

    evaluate_davis(root, res_dir, task=task, sequences=names[:1])  # compile / warm the kernel
    t_ours, ours = _best(lambda: evaluate_davis(root, res_dir, task=task), args.repeat)
    got = np.array([[o.stats["j_mean"], o.stats["f_mean"]] for o in ours.objects])
    line = f"{task:16s} ours {t_ours:7.2f} s"
    if not args.skip_reference:
        t0 = time.perf_counter()
        r = ref.evaluate_folder(str(root), str(res_dir), names, _pil_read, task=task, dilate=_cv2_dilate)
        t_ref = time.perf_counter() - t0
        want = np.array([r["J"]["M"], r["F"]["M"]]).T
        assert np.allclose(got, want, atol=1e-9, rtol=0), np.abs(got - want).max()
        line += f" | davis2017-evaluation algorithm {t_ref:7.2f} s ({t_ref / t_ours:5.1f}x)"
    if task == "semi-supervised":
        from vos_benchmark.benchmark import VideoEvaluator

        evaluator = VideoEvaluator(str(root / "Annotations" / "480p"), str(res_dir))
        t_vos, vos = _best(lambda: [evaluator(n) for n in names], args.repeat)
        # vos-benchmark averages an object over the frames since it first appeared: equal where it is in every frame
        by_name = {name: (iou, f) for name, iou, f in vos}
        same = sum(
            abs(o.stats["j_mean"] * 100 - by_name[o.sequence][0].get(o.object_id, np.nan)) <= 1e-9 for o in ours.objects
        )
        line += f" | vos-benchmark {t_vos:7.2f} s ({t_vos / t_ours:5.1f}x; J-Mean equal on {same}/{len(ours.objects)})"
    return line


def compute_only(task: str, root: Path, res_dir: Path, names: list[str], args: argparse.Namespace) -> str:
    """The same sequences decoded beforehand (not timed): ours (the kernel and the protocol) against the reference's
    per-object loops (``_evaluate_semisupervised`` / ``_evaluate_unsupervised`` + ``db_statistics``)."""
    import torch

    from segmetrics_torch.functional.video import DavisSequence
    from segmetrics_torch.reference import video as ref

    folder = "Annotations" if task == "semi-supervised" else "Annotations_unsupervised"
    data = []
    for name in names:
        frames = sorted(p.name[:-4] for p in (root / folder / "480p" / name).iterdir())
        gt = np.stack([_read(root / folder / "480p" / name / f"{f}.png") for f in frames])
        evaluated = frames[1:-1] if task == "semi-supervised" else frames
        res = np.stack([_read(res_dir / name / f"{f}.png") for f in evaluated])
        data.append((name, gt, res))

    def ours() -> int:
        n = 0
        for name, gt, res in data:
            k = int(np.where(gt[0] == 255, 0, gt[0]).max())
            seq = DavisSequence(name, k, task=task)
            g = gt[1:-1] if task == "semi-supervised" else gt
            for i in range(0, len(g), 32):
                seq.add(torch.from_numpy(res[i : i + 32]), torch.from_numpy(g[i : i + 32]))
            n += len(seq.finish())
        return n

    def reference() -> int:
        n = 0
        for _, gt, res in data:
            masks = gt.astype(np.float64)
            void = masks == 255
            masks[void] = 0
            k = int(masks[0].max())
            gt_oh = np.ones((k, *masks.shape)) * np.arange(1, k + 1)[:, None, None, None] == masks[None]
            p = int(res.max())
            res_oh = np.ones((p, *res.shape)) * np.arange(1, p + 1)[:, None, None, None] == res[None].astype(float)
            if task == "semi-supervised":
                j, f = ref.evaluate_semisupervised(gt_oh[:, 1:-1], res_oh, dilate=_cv2_dilate)
            else:
                j, f, _, _ = ref.evaluate_unsupervised(gt_oh, res_oh, void, dilate=_cv2_dilate)
            for i in range(j.shape[0]):
                ref.db_statistics(j[i])
                ref.db_statistics(f[i])
            n += j.shape[0]
        return n

    ours()  # warm
    t_ours, n1 = _best(ours, args.repeat)
    t0 = time.perf_counter()
    n2 = reference()
    t_ref = time.perf_counter() - t0
    assert n1 == n2
    return (
        f"{task:16s} compute only: ours {t_ours:7.2f} s | reference algorithm {t_ref:7.2f} s ({t_ref / t_ours:5.1f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--davis-eval", type=Path, help="a davis2017-evaluation checkout (git dir or work tree)")
    parser.add_argument("--sequences", type=int, default=None, help="the first N sequences only")
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs of ours and vos-benchmark")
    parser.add_argument("--skip-reference", action="store_true", help="ours and vos-benchmark only")
    parser.add_argument("--tasks", default="semi-supervised,unsupervised", help="comma-separated")
    parser.add_argument("--compute-only", action="store_true", help="also time the frames decoded beforehand")
    args = parser.parse_args()

    import torch

    work = Path(tempfile.mkdtemp(prefix="bench_davis_"))
    try:
        if args.davis_eval:
            names = from_davis_eval(args.davis_eval, work, args.sequences)
            source = f"davis2017-evaluation's osvos/rvos masks, {len(names)} sequences"
        else:
            names = synthetic(work, args.sequences or 8)
            source = f"synthetic 480x854, {len(names)} sequences"
        root = work / "DAVIS"
        n_frames = sum(len(list((root / "Annotations" / "480p" / n).iterdir())) for n in names)
        from segmetrics_torch.ops import davis as ops_davis

        decoder = "zlib-ng + compiled unfilter" if ops_davis._INFLATE is not None else "Pillow (no zlib-ng)"
        print(
            f"data: {source}, {n_frames} frames; torch threads {torch.get_num_threads()}; our PNG decoding: {decoder}",
            flush=True,
        )
        dirs = {"semi-supervised": work / "semi", "unsupervised": work / "unsup"}
        for task in args.tasks.split(","):
            print(run_task(task, root, dirs[task], names, args), flush=True)
            if args.compute_only and not args.skip_reference:
                print(compute_only(task, root, dirs[task], names, args), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
