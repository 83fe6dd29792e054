"""The ``segmetrics`` command: a demo on embedded synthetic data, and evaluation of prediction folders.

Usage::

    segmetrics demo [--n 24] [--device auto] [--seed 0]
    segmetrics evaluate sod --pred DIR --gt DIR [--json FILE] [--csv FILE] [--device cpu] [--batch-size 16]
                            [--allow-missing] [--no-progress] [--name NAME]

Exit status: 0 on success; 2 for usage and input errors (a missing folder, unmatched files, unreadable or mismatched
images, an unavailable device), reported as one ``error: ...`` line on stderr; 1 for unexpected errors (with the
traceback); 130 when interrupted. The table and a summary go to stdout, warnings and the progress bar to stderr.

This module only parses arguments and orchestrates: reading is :mod:`segmetrics_torch.io`, measures are
:class:`segmetrics_torch.ForegroundMeasures`, tables and files are :mod:`segmetrics_torch.report`.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from . import __version__

__all__ = ["main"]

CURVE_CONVENTION = (
    "entry i of every 256-point curve binarises the (min-max normalised) map at trunc(255 * p) >= 255 - i, "
    "i.e. thresholds in descending order, as PySODMetrics 1.6.2"
)


class InputError(Exception):
    """A problem with the user's input or environment: reported as one ``error:`` line, exit status 2."""


# ------------------------------------------------------------------------------------------------------ helpers


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def _device(name: str):
    """``"auto"`` -> CUDA when available, else CPU; otherwise a torch device that must be available."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise InputError(f"unknown device {name!r} (use cpu, cuda, cuda:N or auto)") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise InputError(f"device {name!r} requested but CUDA is not available (use --device cpu)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise InputError(f"device {name!r} requested but only {torch.cuda.device_count()} CUDA device(s) exist")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise InputError(f"device {name!r} requested but MPS is not available (use --device cpu)")
    return device


def _check_output(path: str | None, option: str) -> Path | None:
    """Fail before the evaluation, not after it, when an output file cannot be written."""
    if path is None:
        return None
    out = Path(path)
    if out.is_dir():
        raise InputError(f"{option} {out} is a directory; give a file name")
    if not out.parent.is_dir():
        raise InputError(f"{option} {out}: the folder {out.parent} does not exist")
    return out


def _sync(device) -> None:
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)


# --------------------------------------------------------------------------------------------------------- demo


def _run_demo(args: argparse.Namespace) -> int:
    import torch

    from . import ForegroundMeasures
    from .report import SOD_COLUMNS, format_table, scalar_row
    from .synthetic import make_foreground_dataset

    device = _device(args.device)
    start = time.perf_counter()
    data = make_foreground_dataset(n=args.n, size=(240, 320), seed=args.seed)
    generated = time.perf_counter() - start
    gt = torch.from_numpy(data.gt).to(device)
    # one tiny batch first: compiled kernels (numba on CPU, CUDA context on GPU) start here, outside the timing
    start = time.perf_counter()
    warm = ForegroundMeasures().to(device)
    warm.update(gt[:1, :32, :32], gt[:1, :32, :32])
    warm.compute()
    _sync(device)
    warmup = time.perf_counter() - start
    rows: dict[str, dict[str, float]] = {}
    start = time.perf_counter()
    for method, maps in data.preds.items():
        metric = ForegroundMeasures().to(device)
        preds = torch.from_numpy(maps).to(device)
        for i in range(0, args.n, args.batch_size):
            metric.update(preds[i : i + args.batch_size], gt[i : i + args.batch_size])
        rows[method] = scalar_row(metric.compute())
    _sync(device)
    elapsed = time.perf_counter() - start
    empty = " (one with an empty ground truth)" if args.n >= 2 else ""
    print(format_table(rows, SOD_COLUMNS))
    print(
        f"Data: {args.n} synthetic 240x320 ground-truth maps{empty} of random ellipses, blobs and thin structures "
        f"(seed {args.seed}), and per method a map damaged to a graded degree: good = slightly blurred + mild noise, "
        "blurry = strongly blurred + shifted, noisy = strong noise + false blobs (segmetrics_torch.synthetic)."
    )
    print(
        f"Evaluated {args.n * len(rows)} maps with ForegroundMeasures on {device} in {elapsed:.2f} s "
        f"(data generated in {generated:.2f} s; one-time warm-up, e.g. kernel compilation, {warmup:.2f} s)."
    )
    return 0


# ------------------------------------------------------------------------------------------------ evaluate sod


def _read_pairs(pairs, progress) -> Iterator[tuple[str, Any, Any]]:
    from .io import read_gray

    for stem, pred_path, gt_path in pairs:
        try:
            pred, gt = read_gray(pred_path), read_gray(gt_path)
        except (ValueError, OSError) as error:
            raise InputError(str(error)) from None
        if pred.shape != gt.shape:
            raise InputError(
                f"{stem}: the prediction {pred_path} is {pred.shape[1]}x{pred.shape[0]} (WxH) but the ground truth "
                f"{gt_path} is {gt.shape[1]}x{gt.shape[0]}; resize the prediction to the ground truth"
            )
        progress.update(1)
        yield stem, pred, gt


def _batches(images: Iterator[tuple[str, Any, Any]], batch_size: int, device):
    """Group same-size images into (B, H, W) batches; holds at most ~4 batches of images of mixed sizes.

    Yields ``(preds, target)``: stacked tensors for a full group of one size, or lists of (H, W) tensors when the
    pending images of several sizes are flushed together (the metric groups them by size itself).
    """
    import numpy as np
    import torch

    pending: dict[tuple[int, int], list[tuple[Any, Any]]] = {}
    held = 0
    for _, pred, gt in images:
        group = pending.setdefault(pred.shape, [])
        group.append((pred, gt))
        held += 1
        if len(group) == batch_size:
            del pending[pred.shape]
            held -= batch_size
            preds = torch.from_numpy(np.stack([p for p, _ in group])).to(device)
            target = torch.from_numpy(np.stack([g for _, g in group])).to(device)
            yield preds, target
        elif held >= 4 * batch_size:
            yield _as_lists(pending, device)
            pending.clear()
            held = 0
    if pending:
        yield _as_lists(pending, device)


def _as_lists(pending, device):
    import torch

    items = [item for group in pending.values() for item in group]
    return (
        [torch.from_numpy(p).to(device) for p, _ in items],
        [torch.from_numpy(g).to(device) for _, g in items],
    )


def _run_evaluate_sod(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from . import ForegroundMeasures
    from .io import find_pairs
    from .report import SOD_COLUMNS, format_table, scalar_row, write_csv, write_json

    device = _device(args.device)
    json_path = _check_output(args.json, "--json")
    csv_path = _check_output(args.csv, "--csv")
    try:
        pairing = find_pairs(args.pred, args.gt)
    except ValueError as error:
        raise InputError(str(error)) from None
    if not pairing.pairs:
        raise InputError(f"no prediction in {args.pred} matches a ground truth in {args.gt} by file name (stem)")
    if not pairing.complete:
        if not args.allow_missing:
            raise InputError(f"the folders do not match: {pairing.problems()} (use --allow-missing to skip them)")
        print(
            f"warning: {pairing.problems()}; evaluating the {len(pairing.pairs)} matched pair(s) only",
            file=sys.stderr,
        )
    name = args.name or Path(args.pred).resolve().name

    metric = ForegroundMeasures().to(device)
    start = time.perf_counter()
    disable = args.no_progress or not sys.stderr.isatty()
    with tqdm(total=len(pairing.pairs), desc=name, unit="img", file=sys.stderr, disable=disable) as progress:
        images = _read_pairs(pairing.pairs, progress)
        for preds, target in _batches(images, args.batch_size, device):
            metric.update(preds, target)
    results = metric.compute()
    _sync(device)
    elapsed = time.perf_counter() - start

    rows = {name: scalar_row(results)}
    print(format_table(rows, SOD_COLUMNS))
    count = int(metric.count)
    print(f"Evaluated {count} image(s) of {args.pred} against {args.gt} on {device} in {elapsed:.2f} s.")
    if json_path is not None:
        write_json(
            json_path,
            {
                "segmetrics_version": __version__,
                "task": "sod",
                "name": name,
                "pred_dir": str(Path(args.pred).resolve()),
                "gt_dir": str(Path(args.gt).resolve()),
                "num_images": count,
                "missing_predictions": pairing.missing,
                "unmatched_predictions": pairing.unmatched,
                "settings": {
                    "device": str(device),
                    "batch_size": args.batch_size,
                    "allow_missing": args.allow_missing,
                    "normalize": metric.normalize,
                    **metric.settings,
                    "reader": "segmetrics_torch.io.read_gray (== cv2.imread(path, cv2.IMREAD_GRAYSCALE))",
                    "gt_binarisation": "> 128",
                },
                "curve_convention": CURVE_CONVENTION,
                "elapsed_s": elapsed,
                "results": results,
            },
        )
        print(f"Wrote {json_path}")
    if csv_path is not None:
        write_csv(csv_path, {name: {"num_images": count, **rows[name]}})
        print(f"Wrote {csv_path}")
    return 0


# ------------------------------------------------------------------------------------------------------- parser


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="segmetrics",
        description="Reference-exact segmentation evaluation measures (PySODMetrics-exact foreground measures).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="evaluate three synthetic methods of graded quality on embedded synthetic data",
        description="Generate a synthetic foreground dataset in memory and print every measure for three methods.",
    )
    demo.add_argument("--n", type=_positive_int, default=24, help="number of images (default: 24)")
    demo.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default: auto)")
    demo.add_argument("--seed", type=_non_negative_int, default=0, help="random seed (default: 0)")
    demo.add_argument("--batch-size", type=_positive_int, default=8, help="images per update (default: 8)")
    demo.set_defaults(handler=_run_demo)

    evaluate = commands.add_parser(
        "evaluate", help="evaluate a folder of predictions", description="Evaluate a folder of predictions."
    )
    tasks = evaluate.add_subparsers(dest="task", metavar="TASK")
    sod = tasks.add_parser(
        "sod",
        help="foreground maps (salient / camouflaged object detection): MAE, S, weighted F, F, E, IoU, Dice",
        description=(
            "Evaluate grayscale prediction maps against binary ground-truth masks, files paired by name (stem). "
            "Images are read as cv2.imread(..., IMREAD_GRAYSCALE); ground truth is binarised > 128; the results "
            "equal PySODMetrics 1.6.2."
        ),
    )
    sod.add_argument("--pred", required=True, metavar="DIR", help="folder of prediction maps")
    sod.add_argument("--gt", required=True, metavar="DIR", help="folder of ground-truth masks")
    sod.add_argument("--json", metavar="FILE", help="write every number (curves included) and metadata as JSON")
    sod.add_argument("--csv", metavar="FILE", help="write one CSV row of the scalar measures")
    sod.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto (default: cpu)")
    sod.add_argument("--batch-size", type=_positive_int, default=16, help="images per update (default: 16)")
    sod.add_argument(
        "--allow-missing", action="store_true", help="evaluate the matched pairs when some files have no counterpart"
    )
    sod.add_argument("--no-progress", action="store_true", help="no progress bar (it is off when stderr is no TTY)")
    sod.add_argument("--name", help="row name in the table and outputs (default: the prediction folder's name)")
    sod.set_defaults(handler=_run_evaluate_sod)
    evaluate.set_defaults(handler=None, subparser=evaluate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``segmetrics`` command line.

    Args:
        argv: arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 ok, 2 usage or input error, 1 unexpected error, 130 interrupted. ``--help`` and argparse's
        own usage errors raise ``SystemExit`` (0 and 2) as usual.
    """
    parser = _build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        (getattr(args, "subparser", None) or parser).print_help(sys.stderr)
        return 2
    try:
        return handler(args)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        traceback.print_exc()
        print(f"error: unexpected {type(error).__name__}: {error} (a bug? please report it)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
