"""Compiled thinning (Guo & Hall / Lam, Lee & Suen parallel two-subiteration thinning) of binary maps.

Behind :func:`segmetrics_torch.ops.morphology.thin`, which builds the lookup tables and documents the rule. Images are
handled through *padded* uint8 buffers with a one-pixel zero border, so that neighbourhood reads need no bounds checks;
that border is exactly the zero padding of ``scipy.ndimage.correlate(..., mode="constant")`` used by
``skimage.morphology.thin``.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def neighbour_code(img, y, x):  # pragma: no cover - compiled
    # Bit k set iff the k-th neighbour is on, neighbours counted counter-clockwise from East:
    # E, NE, N, NW, W, SW, S, SE (the numbering of the lookup tables in morphology.py).
    return (
        np.int64(img[y, x + 1])
        | (np.int64(img[y - 1, x + 1]) << 1)
        | (np.int64(img[y - 1, x]) << 2)
        | (np.int64(img[y - 1, x - 1]) << 3)
        | (np.int64(img[y, x - 1]) << 4)
        | (np.int64(img[y + 1, x - 1]) << 5)
        | (np.int64(img[y + 1, x]) << 6)
        | (np.int64(img[y + 1, x + 1]) << 7)
    )


@numba.njit(cache=True, nogil=True)
def foreground_coords(img):  # pragma: no cover - compiled
    # Raster-order (row-major) coordinates of the on pixels of a padded image, in padded coordinates.
    h2, w2 = img.shape
    n = 0
    for y in range(1, h2 - 1):
        for x in range(1, w2 - 1):
            if img[y, x]:
                n += 1
    ys = np.empty(n, np.int32)
    xs = np.empty(n, np.int32)
    k = 0
    for y in range(1, h2 - 1):
        for x in range(1, w2 - 1):
            if img[y, x]:
                ys[k] = y
                xs[k] = x
                k += 1
    return ys, xs


@numba.njit(cache=True, nogil=True)
def thin_padded(img, lut1, lut2):  # pragma: no cover - compiled
    # Thinning of a padded uint8 {0,1} image, in place (thin_listed on all its on pixels); returns the raster-order
    # coordinates (padded) of the remaining pixels.
    ys, xs = foreground_coords(img)
    return thin_listed(img, ys, xs, lut1, lut2)


@numba.njit(cache=True, nogil=True)
def thin_listed(img, ys, xs, lut1, lut2):  # pragma: no cover - compiled
    # Parallel two-subiteration thinning of a padded uint8 {0,1} image, in place, to convergence; (ys, xs) are the
    # raster-order (padded) coordinates of all its on pixels, overwritten. Each subiteration decides every deletion
    # from the image as it was before that subiteration (that is what makes it "parallel"), so deletions are
    # collected first and applied after. Only on pixels are visited: the list of them is kept and compacted, in
    # raster order, after every subiteration that deleted something. (Re-examining only the neighbours of deletions,
    # with a work list or per-pixel "stale" bits, is exact too but slower: the test it adds per pixel costs about
    # what the neighbour code it saves does.)
    # Returns the raster-order coordinates (padded) of the remaining pixels.
    n = ys.shape[0]
    dels = np.empty(n, np.int32)
    while True:
        removed = 0
        for sub in range(2):
            lut = lut1 if sub == 0 else lut2
            nd = 0
            for k in range(n):
                if lut[neighbour_code(img, ys[k], xs[k])]:
                    dels[nd] = k
                    nd += 1
            if nd == 0:
                continue
            removed += nd
            for d in range(nd):
                img[ys[dels[d]], xs[dels[d]]] = 0
            m = 0
            for k in range(n):
                if img[ys[k], xs[k]]:
                    ys[m] = ys[k]
                    xs[m] = xs[k]
                    m += 1
            n = m
        if removed == 0:
            break
    return ys[:n].copy(), xs[:n].copy()


@numba.njit(cache=True, nogil=True)
def padded_binary(m, h, w):  # pragma: no cover - compiled
    # m[:h, :w] as a {0, 1} uint8 image with a one-pixel zero border: any non-zero value is "on", so that the
    # neighbour code stays below 256 (the size of the thinning tables) whatever values arrive
    img = np.zeros((h + 2, w + 2), np.uint8)
    for y in range(h):
        for x in range(w):
            if m[y, x]:
                img[y + 1, x + 1] = 1
    return img


@numba.njit(cache=True, nogil=True, parallel=True)
def thin_batch(stack, lut1, lut2):  # pragma: no cover - compiled
    # Thin every (H, W) map of a (N, H, W) uint8 stack in place.
    n, h, w = stack.shape
    for i in numba.prange(n):
        img = padded_binary(stack[i], h, w)
        thin_padded(img, lut1, lut2)
        stack[i] = img[1:-1, 1:-1]
