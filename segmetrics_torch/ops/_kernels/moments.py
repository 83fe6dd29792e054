"""Compiled mask moments: pixel count, coordinate sums and bounding box of binary masks in one pass.

Behind :func:`segmetrics_torch.ops.masks.mask_moments`. Integer sums are exact (int64); one pass reads each mask once,
which on a large image costs less than ``np.argwhere`` followed by ``np.cov`` (the coordinate list alone is 16 bytes
per foreground pixel).
"""

import numba


@numba.njit(cache=True, nogil=True)
def mask_moments(masks, out):  # pragma: no cover - compiled
    # masks: (B, H, W) uint8 (0 / non-zero); out: (B, 10) int64 =
    # n, sum i, sum j, sum i^2, sum j^2, sum i*j, first row, last row, first column, last column
    # (an empty mask keeps first > last: H, -1, W, -1)
    b, h, w = masks.shape
    for k in range(b):
        n = 0
        si = 0
        sj = 0
        sii = 0
        sjj = 0
        sij = 0
        r0 = h
        r1 = -1
        c0 = w
        c1 = -1
        for i in range(h):
            rn = 0
            rj = 0
            rjj = 0
            first = -1
            last = -1
            for j in range(w):
                if masks[k, i, j] != 0:
                    rn += 1
                    rj += j
                    rjj += j * j
                    if first < 0:
                        first = j
                    last = j
            if rn > 0:
                if r0 == h:
                    r0 = i
                r1 = i
                c0 = min(c0, first)
                c1 = max(c1, last)
                n += rn
                si += rn * i
                sii += rn * i * i
                sj += rj
                sjj += rjj
                sij += i * rj
        out[k, 0] = n
        out[k, 1] = si
        out[k, 2] = sj
        out[k, 3] = sii
        out[k, 4] = sjj
        out[k, 5] = sij
        out[k, 6] = r0
        out[k, 7] = r1
        out[k, 8] = c0
        out[k, 9] = c1
    return out
