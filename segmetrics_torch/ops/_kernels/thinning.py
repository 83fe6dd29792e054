"""Compiled thinning (Guo & Hall / Lam, Lee & Suen parallel two-subiteration thinning) of binary maps.

Behind :func:`segmetrics_torch.ops.morphology.thin`, which builds the lookup tables and documents the rule. Images are
handled through *padded* uint8 buffers with a one-pixel zero border, so that neighbourhood reads need no bounds checks;
that border is exactly the zero padding of ``scipy.ndimage.correlate(..., mode="constant")`` used by
``skimage.morphology.thin``.
"""

import numba
import numpy as np


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
def window_luts(lut1, lut2):  # pragma: no cover - compiled
    # The two deletion tables re-indexed by a 9-bit window code: three column codes of 3 bits (top, middle, bottom
    # row; see thin_listed), for the columns x - 1, x, x + 1 at bits 0-2, 3-5, 6-8. The centre (bit 4) is ignored.
    out = np.empty((2, 512), np.uint8)
    for win in range(512):
        code = (
            ((win >> 7) & 1)  # E: right column, middle row
            | (((win >> 6) & 1) << 1)  # NE
            | (((win >> 3) & 1) << 2)  # N
            | ((win & 1) << 3)  # NW
            | (((win >> 1) & 1) << 4)  # W
            | (((win >> 2) & 1) << 5)  # SW
            | (((win >> 5) & 1) << 6)  # S
            | (((win >> 8) & 1) << 7)  # SE
        )
        out[0, win] = lut1[code]
        out[1, win] = lut2[code]
    return out


@numba.njit(cache=True, nogil=True)
def thin_listed(img, ys, xs, lut1, lut2):  # pragma: no cover - compiled
    # Thinning of a padded uint8 {0,1} image, in place, to convergence (thin_positions); (ys, xs) are the raster-order
    # (padded) coordinates of all its on pixels. Returns the raster-order coordinates (padded) of the remaining
    # pixels.
    h2, w2 = img.shape
    n = ys.shape[0]
    pos = np.empty(n, np.int32)
    for k in range(n):
        pos[k] = ys[k] * w2 + xs[k]
        img[ys[k], xs[k]] = 0
    m = thin_positions(pos, n, h2, w2, lut1, lut2)
    out_y = np.empty(m, np.int32)
    out_x = np.empty(m, np.int32)
    for k in range(m):
        out_y[k] = pos[k] // w2
        out_x[k] = pos[k] - out_y[k] * w2
        img[out_y[k], out_x[k]] = 1
    return out_y, out_x


@numba.njit(cache=True, nogil=True)
def thin_positions(pos, n, h2, w2, lut1, lut2):  # pragma: no cover - compiled
    # Parallel two-subiteration thinning, to convergence, of the binary image of h2 x w2 pixels whose on pixels are
    # at the flat positions pos[:n] (raster order, none on the outer rows and columns: a padded image). Each
    # subiteration decides every deletion from the image as it was before that subiteration (that is what makes it
    # "parallel"), so deletions are collected first and applied after. Only on pixels are visited, from the list of
    # positions, compacted in raster order in place; returns the number m of remaining pixels, at pos[:m].
    # The image itself is a plane of column codes, col[p] = on(p - w2) | on(p) << 1 | on(p + w2) << 2: the 3x3
    # window of p is three adjacent bytes of one row, col[p - 1], col[p], col[p + 1], and one lookup in a 512-entry
    # table (window_luts) decides; a deletion clears its bit in the three column codes that hold it. (Re-examining
    # only the neighbours of deletions, with a work list or per-pixel "stale" bits, is exact too but slower: the
    # test it adds per pixel costs about what the neighbour code it saves does.)
    luts = window_luts(lut1, lut2)
    # the column codes from the on pixels (fewer than the pixels of the plane: cheaper than a pass over it)
    col = np.zeros(h2 * w2, np.uint8)
    for k in range(n):
        p = pos[k]
        col[p - w2] |= 4
        col[p] |= 2
        col[p + w2] |= 1
    dels = np.empty(max(n, 1), np.int32)
    idle = 0  # subiterations in a row that deleted nothing: two (a whole iteration) end the thinning
    sub = 0
    while idle < 2 or sub == 1:
        # one pass: drop the entries deleted by the previous subiteration (their position is -1), decide this one's
        lut = luts[sub]
        m = 0
        removed = 0
        for k in range(n):
            p = pos[k]
            if p < 0:
                continue
            pos[m] = p
            dels[removed] = m  # kept only if the table says delete (no branch: deletions come unpredictably)
            removed += lut[col[p - 1] | (np.int32(col[p]) << 3) | (np.int32(col[p + 1]) << 6)]
            m += 1
        n = m
        for d in range(removed):
            p = pos[dels[d]]
            pos[dels[d]] = -1
            col[p - w2] &= 3  # the bottom bit of the column code above
            col[p] &= 5
            col[p + w2] &= 6
        idle = idle + 1 if removed == 0 else 0
        sub ^= 1
    m = 0
    for k in range(n):
        if pos[k] >= 0:
            pos[m] = pos[k]
            m += 1
    return m


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
