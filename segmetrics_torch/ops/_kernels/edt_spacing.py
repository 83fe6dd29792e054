"""Compiled CPU kernel of :func:`segmetrics_torch.ops.distance.distance_to_features`: the exact squared Euclidean
distance transform of a 3-D feature mask with anisotropic spacing (a 2-D mask is a volume of depth 1).

Separable (Felzenszwalb & Huttenlocher 2012): one pass per axis, each line the lower envelope of the parabolas
``(s (x - c))^2 + f(c)`` (``s`` the spacing of the axis, ``f`` the previous passes' result, ``inf`` where no feature
is reachable yet). The values are scipy's float operations (``distance_transform_edt(sampling=)``: each axis's
offset times its spacing, squared, the squares added in axis order): the passes run along axis 0 first, so that a
value is ``((s0 d0)^2 + (s1 d1)^2) + (s2 d2)^2`` as scipy adds them, and the distance is scipy's bit for bit
wherever one feature is the nearest. Where features are equally near in real arithmetic (two parabolas crossing at a
whole position: 1 pixel at 0.3 and 3 pixels at 0.1) their rounded values can differ by an ulp (0.3 against
0.30000000000000004, on either side of a tolerance of 0.3), and the rounded breakpoint could hand the position to
either: both are evaluated there and the lower taken (the tensor transform's minimum over every candidate; scipy's
value on the test sets, though scipy names one of equally near features by its own feature transform: an ulp apart
on about 1 element in 10^5 of random smooth shapes). A tolerance
test such as the NSD's ``d <= tau`` at ``tau`` = whole voxels then falls where the references' does (with ``w d^2``
and the contiguous axis first, 9 pixels at 0.1 mm came out 0.9000000000000001). The first pass reads the bool mask
itself, where the envelope is the squared distance to the nearest feature of the line: two scans, no breakpoints.
The strided passes copy blocks of neighbouring lines into scratch row by row and back; each task takes one
contiguous run of lines or blocks (lines dealt out round-robin made two threads write the same cache lines) and
keeps its scratch.
"""

import numba
import numpy as np

#: how near x (relative) the rounded breakpoint of two parabolas must lie for both to be evaluated at x: two parabolas
#: equal at x in real arithmetic cross at x, and the breakpoint's rounding is many orders below this
_NEAR = 1e-7


@numba.njit(cache=True, nogil=True)
def _lower_envelope(f, w, v, z, cst, alt):  # pragma: no cover - compiled
    # The lower envelope of the parabolas w (x - c)^2 + f[c] over the c with a finite f[c]: parabola v[j] wins on [z[j],
    # z[j + 1]]; returns the last index k (-1: none). cst[k] = f[v[k]] + w v[k]^2, kept beside the stack (the same float
    # operations as recomputing it, without the gather). The breakpoints are floats: at a crossing two parabolas give
    # the same value up to rounding, and either may be taken there; the evaluation then takes the lower of them (written
    # out in _envelope and _envelope_at: a helper function cost 4x the time). alt[j] (-1: none) is a parabola popped
    # because its interval shrank to a point at z[j], within rounding: three parabolas equal there in real arithmetic (1
    # pixel at 0.3 and 3 pixels at 0.1 on both sides), of which the popped one's rounded value can be the lowest. Any
    # parabola is a candidate whose value is never below the envelope in real arithmetic, so evaluating it besides
    # changes nothing but the ulp the minimum takes.
    n = f.shape[0]
    w2 = 2.0 * w
    k = -1
    for q in range(n):
        fq = f[q]
        if fq == np.inf:
            continue
        cq = fq + w * q * q
        s = 0.0
        tie = -1
        while k >= 0:
            s = (cq - cst[k]) / (w2 * (q - v[k]))
            if s <= z[k]:
                tie = v[k] if z[k] - s <= _NEAR * (1.0 + abs(z[k])) else -1
                k -= 1
            else:
                break
        k += 1
        v[k] = q
        cst[k] = cq
        z[k] = -np.inf if k == 0 else s
        alt[k] = tie if k > 0 else -1
        z[k + 1] = np.inf
    return k


@numba.njit(cache=True, nogil=True)
def _envelope(f, s, out, v, z, cst, alt):  # pragma: no cover - compiled
    # out[x] = min_c ((s (x - c))^2 + f[c]) over the c with a finite f[c]; inf everywhere when there is none.
    n = f.shape[0]
    k = _lower_envelope(f, s * s, v, z, cst, alt)
    if k < 0:
        out[:] = np.inf
        return
    j = 0
    for x in range(n):
        while z[j + 1] < x:
            j += 1
        t = s * (x - v[j])
        best = t * t + f[v[j]]
        # where a breakpoint lies at x, the parabolas equal there in real arithmetic: the lowest rounded value
        if j > 0 and x - z[j] < _NEAR * (1.0 + x):
            t = s * (x - v[j - 1])
            best = min(best, t * t + f[v[j - 1]])
            c = alt[j]
            if c >= 0:
                t = s * (x - c)
                best = min(best, t * t + f[c])
        if j < k and z[j + 1] - x < _NEAR * (1.0 + x):
            t = s * (x - v[j + 1])
            best = min(best, t * t + f[v[j + 1]])
            c = alt[j + 1]
            if c >= 0:
                t = s * (x - c)
                best = min(best, t * t + f[c])
        out[x] = best


@numba.njit(cache=True, nogil=True)
def _envelope_at(f, s, out, v, z, cst, alt, want, n_want):  # pragma: no cover - compiled
    # _envelope's values at the n_want increasing positions want[:n_want] only, into out[:n_want] (the same float
    # operations: the same bits). The loop is _envelope's, kept twice on purpose: _envelope as this function over
    # want = 0..n-1 took 15-25 % longer (random 128^3: 19 -> 23 ms), and a shared helper function 4x
    k = _lower_envelope(f, s * s, v, z, cst, alt)
    if k < 0:
        out[:n_want] = np.inf
        return
    j = 0
    for i in range(n_want):
        x = want[i]
        while z[j + 1] < x:
            j += 1
        t = s * (x - v[j])
        best = t * t + f[v[j]]
        # where a breakpoint lies at x, the parabolas equal there in real arithmetic: the lowest rounded value
        if j > 0 and x - z[j] < _NEAR * (1.0 + x):
            t = s * (x - v[j - 1])
            best = min(best, t * t + f[v[j - 1]])
            c = alt[j]
            if c >= 0:
                t = s * (x - c)
                best = min(best, t * t + f[c])
        if j < k and z[j + 1] - x < _NEAR * (1.0 + x):
            t = s * (x - v[j + 1])
            best = min(best, t * t + f[v[j + 1]])
            c = alt[j + 1]
            if c >= 0:
                t = s * (x - c)
                best = min(best, t * t + f[c])
        out[i] = best


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
def _indicator_line(mask, out, s, left):  # pragma: no cover - compiled
    # out[x] = (s d)^2 with d the distance from x to the nearest True of the bool line `mask` (the envelope's value
    # (s (x - c))^2, the same float operations), 0 on it, inf when the line has none. `left`: int64 scratch for
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
            t = s * (x - left[x])
            best = t * t
        if nxt >= 0:
            t = s * (nxt - x)
            r = t * t
            if r < best:
                best = r
        out[x] = best


#: strided passes take this many neighbouring lines at a time: each row of the block is one contiguous read (a
#: column of a 512-wide float64 image steps 4 KiB per element, and one line at a time thrashed the L1 cache's sets)
_BLOCK = 16


@numba.njit(parallel=True, cache=True, nogil=True)
def squared_edt(mask, spacing, n_tasks, at, only_at, unit):  # pragma: no cover - compiled
    # mask: (A, B, C) bool, the features; returns the (A, B, C) float64 squared distances. With only_at, they are
    # right only where the (A, B, C) bool `at` is True: the last pass, along the contiguous axis C, builds the
    # envelope of the lines that hold such an element and evaluates it there alone (a sphere's surface; on lines
    # dense with such elements listing them costs more than it saves). `unit`: every spacing is 1 (the integer
    # envelopes). The passes run along A, then B, then C (scipy's order of adding the squares), skipping an axis of
    # length 1 (the identity), the first reading the mask.
    shape = mask.shape
    a_len, b_len, c_len = shape
    f = np.empty((a_len, b_len, c_len))
    longest = max(a_len, b_len, c_len)
    n_blk = (c_len + _BLOCK - 1) // _BLOCK
    first_axis = 2
    for axis in range(2, -1, -1):
        if shape[axis] > 1:
            first_axis = axis
    for axis in range(first_axis, 3):
        n = shape[axis]
        if n == 1 and axis != first_axis:
            continue  # (s 0)^2 + f: the identity (the depth axis of a 2-D image)
        s = spacing[axis]
        first = axis == first_axis
        last_at = only_at and axis == 2 and not first
        if axis == 2:
            units = a_len * b_len  # one line each
        elif axis == 1:
            units = a_len * n_blk  # a block of lines f[a, :, c0:c0 + _BLOCK]
        else:
            units = b_len * n_blk  # f[:, b, c0:c0 + _BLOCK]
        for task in numba.prange(n_tasks):
            buf = np.empty((_BLOCK, longest))
            bits = np.empty((_BLOCK, longest), np.bool_)
            out = np.empty(longest)
            v = np.empty(longest, np.int64)
            z = np.empty(longest + 1)
            cst = np.empty(longest)
            alt = np.empty(longest + 1, np.int64)
            want = np.empty(longest, np.int64)
            zi = np.empty(longest + 1, np.int64)
            ci = np.empty(longest, np.int64)
            for u in range(task * units // n_tasks, (task + 1) * units // n_tasks):
                if axis == 2:
                    line = f[u // b_len, u % b_len]
                    if first:
                        _indicator_line(mask[u // b_len, u % b_len], line, s, v)
                        continue
                    if last_at:
                        wanted = at[u // b_len, u % b_len]
                        m = np.int64(0)
                        for x in range(n):
                            if wanted[x]:
                                want[m] = x
                                m += 1
                        if m > 0:
                            if unit:
                                _envelope_at_unit(line, out, v, zi, ci, want, m)
                            else:
                                _envelope_at(line, s, out, v, z, cst, alt, want, m)
                            for i in range(m):
                                line[want[i]] = out[i]
                        continue
                    if unit:
                        _envelope_unit(line, out[:n], v, zi, ci)
                    else:
                        _envelope(line, s, out[:n], v, z, cst, alt)
                    line[:] = out[:n]
                    continue
                outer = u // n_blk
                c0 = (u % n_blk) * _BLOCK
                kk = min(_BLOCK, c_len - c0)
                if first:
                    for i in range(n):
                        mrow = mask[outer, i] if axis == 1 else mask[i, outer]
                        for j in range(kk):
                            bits[j, i] = mrow[c0 + j]
                    for j in range(kk):
                        _indicator_line(bits[j, :n], buf[j, :n], s, v)
                else:
                    for i in range(n):
                        row = f[outer, i] if axis == 1 else f[i, outer]
                        for j in range(kk):
                            buf[j, i] = row[c0 + j]
                    for j in range(kk):
                        if unit:
                            _envelope_unit(buf[j, :n], out[:n], v, zi, ci)
                        else:
                            _envelope(buf[j, :n], s, out[:n], v, z, cst, alt)
                        buf[j, :n] = out[:n]
                for i in range(n):
                    row = f[outer, i] if axis == 1 else f[i, outer]
                    for j in range(kk):
                        row[c0 + j] = buf[j, i]
    return f
