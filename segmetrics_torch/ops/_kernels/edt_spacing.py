"""Compiled CPU kernel of :func:`segmetrics_torch.ops.distance.distance_to_features`: the exact squared Euclidean
distance transform of a 3-D feature mask with anisotropic spacing (a 2-D mask is a volume of depth 1).

Separable (Felzenszwalb & Huttenlocher 2012): one pass per axis, each line the lower envelope of the parabolas
``w (x - c)^2 + f(c)`` (``w`` the squared spacing of the axis, ``f`` the previous passes' result, ``inf`` where no
feature is reachable yet). The first pass, along the contiguous axis, reads the bool mask itself, where the
envelope is the squared distance to the nearest feature of the line: two scans, no breakpoints. The strided passes
copy blocks of neighbouring lines into scratch row by row and back; each task takes one contiguous run of lines or
blocks (lines dealt out round-robin made two threads write the same cache lines) and keeps its scratch.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _lower_envelope(f, w, v, z, cst):  # pragma: no cover - compiled
    # The lower envelope of the parabolas w (x - c)^2 + f[c] over the c with a finite f[c]: parabola v[j] wins on
    # [z[j], z[j + 1]]; returns the last index k (-1: none). The breakpoints are floats: at a crossing two parabolas
    # give the same value up to rounding, so the minimum is exact to the last bit or two whichever one is taken.
    # cst[k] = f[v[k]] + w v[k]^2, kept beside the stack (the same float operations as recomputing it, without the
    # gather).
    n = f.shape[0]
    w2 = 2.0 * w
    k = -1
    for q in range(n):
        fq = f[q]
        if fq == np.inf:
            continue
        cq = fq + w * q * q
        s = 0.0
        while k >= 0:
            s = (cq - cst[k]) / (w2 * (q - v[k]))
            if s <= z[k]:
                k -= 1
            else:
                break
        k += 1
        v[k] = q
        cst[k] = cq
        z[k] = -np.inf if k == 0 else s
        z[k + 1] = np.inf
    return k


@numba.njit(cache=True, nogil=True)
def _envelope(f, w, out, v, z, cst):  # pragma: no cover - compiled
    # out[x] = min_c (w (x - c)^2 + f[c]) over the c with a finite f[c]; inf everywhere when there is none.
    n = f.shape[0]
    if _lower_envelope(f, w, v, z, cst) < 0:
        out[:] = np.inf
        return
    j = 0
    for x in range(n):
        while z[j + 1] < x:
            j += 1
        d = x - v[j]
        out[x] = w * d * d + f[v[j]]


@numba.njit(cache=True, nogil=True)
def _envelope_at(f, w, out, v, z, cst, want, n_want):  # pragma: no cover - compiled
    # _envelope's values at the n_want increasing positions want[:n_want] only, into out[:n_want] (the same float
    # operations: the same bits)
    if _lower_envelope(f, w, v, z, cst) < 0:
        out[:n_want] = np.inf
        return
    j = 0
    for i in range(n_want):
        x = want[i]
        while z[j + 1] < x:
            j += 1
        d = x - v[j]
        out[i] = w * d * d + f[v[j]]


@numba.njit(cache=True, nogil=True)
def _lower_envelope_unit(f, v, z, cst):  # pragma: no cover - compiled
    # _lower_envelope for a unit spacing, where every finite f is an integer: integer breakpoints (parabola v[j]
    # wins on the integers of [z[j], z[j + 1]), int64 z and cst), no division but one per parabola kept (the
    # exact test of ops/_kernels/edt.lower_envelope); the values are exact integers either way: the same bits, ~20 %
    # faster on dense lines
    n = f.shape[0]
    k = -1
    for q in range(n):
        fq = f[q]
        if fq == np.inf:
            continue
        cq = np.int64(fq) + q * q
        while k >= 0 and cq - cst[k] < z[k] * 2 * (q - v[k]):
            k -= 1
        if k < 0:
            k = 0
            v[0] = q
            z[0] = 0
            cst[0] = cq
        else:
            num = cq - cst[k]
            den = 2 * (q - v[k])
            if num < (n - 1) * den:  # else q wins only right of the line
                k += 1
                v[k] = q
                z[k] = num // den + 1
                cst[k] = cq
    z[k + 1] = n
    return k


@numba.njit(cache=True, nogil=True)
def _envelope_unit(f, out, v, z, cst):  # pragma: no cover - compiled
    # _envelope with a unit spacing (see _lower_envelope_unit)
    k = _lower_envelope_unit(f, v, z, cst)
    if k < 0:
        out[:] = np.inf
        return
    for j in range(k + 1):
        c = v[j]
        fc = cst[j] - c * c
        for x in range(z[j], z[j + 1]):
            out[x] = (x - c) * (x - c) + fc


@numba.njit(cache=True, nogil=True)
def _envelope_at_unit(f, out, v, z, cst, want, n_want):  # pragma: no cover - compiled
    # _envelope_at with a unit spacing (see _lower_envelope_unit)
    if _lower_envelope_unit(f, v, z, cst) < 0:
        out[:n_want] = np.inf
        return
    j = 0
    for i in range(n_want):
        x = want[i]
        while z[j + 1] <= x:
            j += 1
        c = v[j]
        out[i] = (x - c) * (x - c) + cst[j] - c * c


@numba.njit(cache=True, nogil=True)
def _indicator_line(mask, out, w, left):  # pragma: no cover - compiled
    # out[x] = w d^2 with d the distance from x to the nearest True of the bool line `mask` (the envelope's value
    # w (x - c)^2 + 0, the same float operations), 0 on it, inf when the line has none. `left`: int64 scratch for
    # the nearest one on the left.
    n = mask.shape[0]
    last = -1
    for x in range(n):
        if mask[x]:
            last = x
        left[x] = last
    nxt = -1
    for x in range(n - 1, -1, -1):
        if mask[x]:
            nxt = x
            out[x] = 0.0
            continue
        best = np.inf
        if left[x] >= 0:
            d = x - left[x]
            best = w * d * d
        if nxt >= 0:
            d = nxt - x
            r = w * d * d
            if r < best:
                best = r
        out[x] = best


#: strided passes take this many neighbouring lines at a time: each row of the block is one contiguous read (a
#: column of a 512-wide float64 image steps 4 KiB per element, and one line at a time thrashed the L1 cache's sets)
_BLOCK = 16


@numba.njit(parallel=True, cache=True, nogil=True)
def squared_edt(mask, spacing, n_tasks, at, only_at, unit):  # pragma: no cover - compiled
    # mask: (A, B, C) bool, the features; returns the (A, B, C) float64 squared distances. With only_at (and A > 1),
    # they are right only where the (A, B, C) bool `at` is True: the last pass (along A) builds the envelope of the
    # lines that hold such an element and evaluates it there alone (a 250^3 sphere's corner box: 57 -> 47 ms; on
    # lines dense with such elements listing them costs more than it saves). `unit`: every spacing is 1 (the
    # integer envelopes)
    a_len, b_len, c_len = mask.shape
    f = np.empty((a_len, b_len, c_len))
    longest = max(a_len, b_len, c_len)
    n_blk = (c_len + _BLOCK - 1) // _BLOCK
    for axis in range(2, -1, -1):  # the contiguous axis first
        w = spacing[axis] * spacing[axis]
        n = (a_len, b_len, c_len)[axis]
        if n == 1 and axis != 2:
            continue  # w 0^2 + f: the identity (the depth axis of a 2-D image)
        if axis == 2:
            units = a_len * b_len  # one line each
        elif axis == 1:
            units = a_len * n_blk  # a block of lines f[a, :, c0:c0 + _BLOCK]
        else:
            units = b_len * n_blk  # f[:, b, c0:c0 + _BLOCK]
        for task in numba.prange(n_tasks):
            buf = np.empty((_BLOCK, longest))
            out = np.empty(longest)
            v = np.empty(longest, np.int64)
            z = np.empty(longest + 1)
            cst = np.empty(longest)
            want = np.empty(longest, np.int64)
            zi = np.empty(longest + 1, np.int64)
            ci = np.empty(longest, np.int64)
            for u in range(task * units // n_tasks, (task + 1) * units // n_tasks):
                if axis == 2:
                    _indicator_line(mask[u // b_len, u % b_len], f[u // b_len, u % b_len], w, v)
                    continue
                outer = u // n_blk
                c0 = (u % n_blk) * _BLOCK
                kk = min(_BLOCK, c_len - c0)
                for i in range(n):
                    row = f[outer, i] if axis == 1 else f[i, outer]
                    for j in range(kk):
                        buf[j, i] = row[c0 + j]
                if axis == 0 and only_at:
                    for j in range(kk):
                        m = np.int64(0)
                        for i in range(n):
                            if at[i, outer, c0 + j]:
                                want[m] = i
                                m += 1
                        if m > 0:
                            if unit:
                                _envelope_at_unit(buf[j, :n], out, v, zi, ci, want, m)
                            else:
                                _envelope_at(buf[j, :n], w, out, v, z, cst, want, m)
                            for i in range(m):
                                f[want[i], outer, c0 + j] = out[i]
                    continue
                for j in range(kk):
                    if unit:
                        _envelope_unit(buf[j, :n], out[:n], v, zi, ci)
                    else:
                        _envelope(buf[j, :n], w, out[:n], v, z, cst)
                    buf[j, :n] = out[:n]
                for i in range(n):
                    row = f[outer, i] if axis == 1 else f[i, outer]
                    for j in range(kk):
                        row[c0 + j] = buf[j, i]
    return f
