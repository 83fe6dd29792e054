"""``segmetrics warmup``: compile the CPU kernels ahead of time (:func:`segmetrics_torch.warmup.compile_kernels`), for
a Docker image or a CI machine, and say where numba cached them."""

from __future__ import annotations

import argparse
import time

from ..warmup import cache_folder, compile_kernels


def run_warmup(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    seconds = compile_kernels(args.families)
    for family, elapsed in seconds.items():
        print(f"{family:<12} {elapsed:7.2f} s")
    print(
        f"Compiled (or loaded) the CPU kernels of {len(seconds)} famil{'y' if len(seconds) == 1 else 'ies'} in "
        f"{time.perf_counter() - start:.2f} s; numba caches them in {cache_folder()} (set NUMBA_CACHE_DIR to move it)."
    )
    return 0
