"""Which Triton row pass the distance transform should take on CUDA: the tiled minimum over the row's columns
(``_rows``: int32 packed keys, O(W^2) register work per row; what ``row_pass="auto"`` takes up to 836 x 836) or the
lower envelope of the row's parabolas (``_rows_envelope``: O(W) per row; taken from 837 x 837), at the sizes where
both run, same masks, same run; then what the choice costs the two users of the transform that the GPU targets name:
``WeightedFMeasure`` (320x320 uint8, batch 256, images/s) and ``weighted_f_measure_loss`` (32 x 352^2 float32,
forward + backward, ms), with the automatic choice and with the envelope forced.

Both row passes are exact and use the same tie rule: the script checks that their distances and indices are equal.
Timing as :mod:`bench_gpu` (synchronised, warm-up excluded, median). Run on a CUDA device::

    python benchmarks/bench_edt_row_pass.py [--repeats 7]

A dry run on a CPU (Triton's interpreter, tiny sizes): ``TRITON_INTERPRET=1 python benchmarks/bench_edt_row_pass.py
--device cpu --sizes 24x2 --skip-users``.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_foreground import make_maps
from bench_gpu import _maps, _timed

import segmetrics_torch as st
from segmetrics_torch import losses
from segmetrics_torch.ops import distance

SIZES = ((320, 256), (352, 32), (512, 64), (768, 32), (1024, 16))


def _row_pass_table(device: str, sizes: list[tuple[int, int]], repeats: int) -> None:
    print("Triton row pass of the distance transform with indices: ms per batch (ns per pixel)")
    print(f"{'masks':<20}{'tiled':>20}{'envelope':>20}{'envelope/tiled':>16}{'identical':>11}")
    for size, batch in sizes:
        g = _maps(size, batch, "uint8")[1].to(device)
        h, w = g.shape[1:]
        big, bits = h * h + w * w, max(1, (w - 1).bit_length())
        results: dict = {}
        cells, times = {}, {}
        for row_pass in ("tiled", "envelope"):

            def run(row_pass=row_pass, g=g, big=big, bits=bits, results=results):
                results[row_pass] = distance._edt_triton(g, big, bits, row_pass=row_pass)

            run()
            if results[row_pass] is None:  # the tiled keys would overflow int32: only the envelope runs
                cells[row_pass] = "-"
                continue
            times[row_pass] = _timed(run, device, repeats)
            cells[row_pass] = f"{times[row_pass] * 1e3:.2f} ({times[row_pass] * 1e9 / g.numel():.2f})"
        ratio = f"{times['envelope'] / times['tiled']:.2f}" if len(times) == 2 else "-"
        same = "-"
        if len(times) == 2:
            same = "yes" if all(torch.equal(a, c) for a, c in zip(*results.values(), strict=True)) else "NO"
        print(f"{f'{batch} x {size}x{size}':<20}{cells['tiled']:>20}{cells['envelope']:>20}{ratio:>16}{same:>11}")


def _users(device: str, repeats: int) -> None:
    p, g = (t.to(device) for t in _maps(320, 256, "uint8"))
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(32, 1, 352, 352, generator=gen).to(device).requires_grad_(True)
    target = torch.from_numpy(make_maps(32, 352, seed=1)[1] > 128)[:, None].to(device)
    metric = st.WeightedFMeasure().to(device)

    def update():
        metric.reset()
        metric.update(p, g)
        metric.compute()

    def loss():
        logits.grad = None
        losses.weighted_f_measure_loss(torch.sigmoid(logits), target).backward()

    original = distance._edt_triton
    rows = {}
    for choice in ("auto", "envelope"):
        distance._edt_triton = original if choice == "auto" else functools.partial(original, row_pass="envelope")
        try:
            rate = len(p) / _timed(update, device, repeats)
            rows[choice] = (rate, _timed(loss, device, repeats) * 1e3, metric.compute().item())
        finally:
            distance._edt_triton = original
    print("\nThe users of the transform, row pass as chosen (auto) and the envelope forced")
    print(f"{'row pass':<12}{'WeightedFMeasure img/s':>24}{'weighted-F loss ms':>20}{'value':>20}")
    for choice, (rate, ms, value) in rows.items():
        print(f"{choice:<12}{rate:>24,.0f}{ms:>20.2f}{value:>20.15f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sizes", nargs="+", metavar="SIZExBATCH", help="e.g. 320x256 768x32")
    parser.add_argument("--skip-users", action="store_true")
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes] if args.sizes else list(SIZES)
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device
    print(f"torch {torch.__version__}, device {args.device} ({name})")
    _row_pass_table(args.device, sizes, args.repeats)  # type: ignore[arg-type]
    if not args.skip_users:
        _users(args.device, args.repeats)


if __name__ == "__main__":
    main()
