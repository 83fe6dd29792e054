"""Compiled CPU kernel of :func:`segmetrics_torch.ops.distance.distance_to_features`: the exact squared Euclidean
distance transform of a 3-D feature mask with anisotropic spacing (a 2-D mask is a volume of depth 1).

Separable (Felzenszwalb & Huttenlocher 2012): one pass per axis, each line the lower envelope of the parabolas
``w (x - c)^2 + f(c)`` (``w`` the squared spacing of the axis, ``f`` the previous passes' result, ``inf`` where no
feature is reachable yet). Lines are spread over tasks; each task keeps its scratch.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _envelope(f, w, out, v, z):  # pragma: no cover - compiled
    # out[x] = min_c (w (x - c)^2 + f[c]) over the c with a finite f[c]; inf everywhere when there is none.
    # The breakpoints are floats: at a crossing two parabolas give the same value up to rounding, so the minimum is
    # exact to the last bit or two whichever one is taken.
    n = f.shape[0]
    k = -1
    for q in range(n):
        fq = f[q]
        if fq == np.inf:
            continue
        cq = fq + w * q * q
        s = 0.0
        while k >= 0:
            p = v[k]
            s = (cq - (f[p] + w * p * p)) / (2.0 * w * (q - p))
            if s <= z[k]:
                k -= 1
            else:
                break
        k += 1
        v[k] = q
        z[k] = -np.inf if k == 0 else s
        z[k + 1] = np.inf
    if k < 0:
        out[:] = np.inf
        return
    j = 0
    for x in range(n):
        while z[j + 1] < x:
            j += 1
        d = x - v[j]
        out[x] = w * d * d + f[v[j]]


@numba.njit(parallel=True, cache=True, nogil=True)
def squared_edt(f, spacing, n_tasks):  # pragma: no cover - compiled
    # f: (A, B, C) float64, 0 at the features and inf elsewhere on entry, the squared distances on return
    a_len, b_len, c_len = f.shape
    longest = max(a_len, b_len, c_len)
    for axis in range(2, -1, -1):  # the contiguous axis first
        w = spacing[axis] * spacing[axis]
        n = (a_len, b_len, c_len)[axis]
        if axis == 2:
            lines = a_len * b_len
        elif axis == 1:
            lines = a_len * c_len
        else:
            lines = b_len * c_len
        for task in numba.prange(n_tasks):
            buf = np.empty(longest)
            out = np.empty(longest)
            v = np.empty(longest, np.int64)
            z = np.empty(longest + 1)
            for t in range(task, lines, n_tasks):
                if axis == 2:
                    line = f[t // b_len, t % b_len]
                    _envelope(line, w, out[:n], v, z)
                    line[:] = out[:n]
                elif axis == 1:
                    a, c = t // c_len, t % c_len
                    for i in range(n):
                        buf[i] = f[a, i, c]
                    _envelope(buf[:n], w, out[:n], v, z)
                    for i in range(n):
                        f[a, i, c] = out[i]
                else:
                    b, c = t // c_len, t % c_len
                    for i in range(n):
                        buf[i] = f[i, b, c]
                    _envelope(buf[:n], w, out[:n], v, z)
                    for i in range(n):
                        f[i, b, c] = out[i]
