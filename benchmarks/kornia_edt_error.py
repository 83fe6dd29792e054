"""How far kornia's ``distance_transform`` and its separable filter are from what the weighted F needs.

``distance_transform`` (an iterative soft-min approximation) is from the exact EDT.

The design card names kornia for the distance and Gaussian work. Its distance transform is a cascade of soft-min
convolutions (Pham et al. 2021), not an exact transform. This script measures its error against
``scipy.ndimage.distance_transform_edt`` on the inputs of the EDT tests (BSDS-shaped blobs, sparse pixels, tie-heavy
lattices) and times it beside the exact tensor path (``distance_transform_edt(backend="torch")``) on the same CPU,
for docs/how-it-works.md; its ``filter2d_separable`` with a zero (``constant``) border is compared with
:func:`segmetrics_torch.ops.filters.gaussian_blur_zero` (MATLAB's ``imfilter`` of ``fspecial('gaussian', 7, 5)``)
for exactness and time. kornia is not a dependency: ``pip install kornia`` to run this. Run::

    python benchmarks/kornia_edt_error.py
"""

from __future__ import annotations

import time

import numpy as np
import torch
from scipy import ndimage

from segmetrics_torch.ops.distance import distance_transform_edt


def blobs(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    yy, xx = np.mgrid[:h, :w]
    mask = np.zeros((h, w), bool)
    for _ in range(rng.integers(1, 5)):
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        ry, rx = rng.uniform(3, h / 4), rng.uniform(3, w / 4)
        mask |= ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1
    return mask


def main() -> None:
    import kornia
    from kornia.contrib import distance_transform

    rng = np.random.default_rng(0)
    cases = {
        "blobs 321x481": np.stack([blobs(rng, 321, 481) for _ in range(4)]),
        "sparse 0.1% 321x481": rng.random((4, 321, 481)) < 0.001,
        "lattice 6x6 37x37": (np.add.outer(np.arange(37) % 6, np.arange(37) % 6) == 0)[None],
    }
    print(f"kornia {kornia.__version__}, torch {torch.__version__}")
    print(
        f"{'input':22s} {'max |err| px':>12s} {'mean |err| px':>13s} {'wrong px %':>10s} "
        f"{'kornia ms/img':>13s} {'exact torch ms/img':>18s}"
    )
    for name, masks in cases.items():
        exact = np.stack([ndimage.distance_transform_edt(~m) for m in masks])
        image = torch.from_numpy(masks.astype(np.float32))[:, None]
        start = time.perf_counter()
        approx = distance_transform(image)[:, 0].double().numpy()
        t_k = (time.perf_counter() - start) / len(masks) * 1e3
        start = time.perf_counter()
        ours = distance_transform_edt(torch.from_numpy(masks), backend="torch")[0].numpy()
        t_o = (time.perf_counter() - start) / len(masks) * 1e3
        assert np.array_equal(ours, exact)
        err = np.abs(approx - exact)
        print(
            f"{name:22s} {err.max():12.3f} {err.mean():13.4f} {100 * (err > 0.5).mean():10.2f} {t_k:13.2f} {t_o:18.2f}"
        )

    from kornia.filters import filter2d_separable

    from segmetrics_torch.ops.filters import gaussian_blur_zero, matlab_gaussian_kernel1d

    print("\nGaussian 7x7, sigma 5, zero border, (16, 352, 352):")
    for dtype in (torch.float32, torch.float64):
        x = torch.rand(16, 352, 352, dtype=dtype, generator=torch.Generator().manual_seed(0))
        k = matlab_gaussian_kernel1d(7, 5.0, dtype=dtype)[None]
        theirs = filter2d_separable(x[:, None], k, k, border_type="constant")[:, 0]
        ours = gaussian_blur_zero(x, 7, 5.0)
        t_k = _time(lambda x=x, k=k: filter2d_separable(x[:, None], k, k, border_type="constant"))
        t_o = _time(lambda x=x: gaussian_blur_zero(x, 7, 5.0))
        print(
            f"  {dtype!s:14s} max |kornia - ours| {float((theirs - ours).abs().max()):.2e}   kornia {t_k:7.2f} ms"
            f"   ours {t_o:6.2f} ms"
        )


def _time(fn, repeats: int = 5) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats * 1e3


if __name__ == "__main__":
    main()
