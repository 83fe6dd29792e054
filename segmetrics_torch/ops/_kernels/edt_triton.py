"""Triton kernels of the exact distance transform on CUDA: the column pass and a row pass, one launch each.

The same separable algorithm, sentinels and tie rule as the tensor route (``ops.distance._edt_torch``), fused:

* ``_columns``: one program per image and block of ``BLOCK`` columns walks the rows down (the last feature at or
  above) and back up (the first at or below), and writes each pixel's nearest feature row in its column ``gy``
  (the one above on a tie) and its packed key part ``(g << bits) | c``, with ``g`` the squared vertical distance
  (``big`` for a column without a feature). Loads and stores of a row's block are coalesced.
* ``_rows``: one program per image row and block of ``BLOCK_X`` pixels scans the row's columns in tiles of
  ``BLOCK_C`` for ``min_c ((x - c)^2 << bits) + packed[c]``, keeping the minimum in registers (O(W^2) arithmetic,
  but one read of the row), then writes the squared distance (``inf`` for an empty image; the caller takes the
  square root) and the flat index ``gy[c] * W + c`` (-1 for an empty image).

On a GPU this beats the tensor route's ``log2(W)`` levels of full-size passes (and its atomic ``scatter_reduce``)
because the work is register arithmetic, not memory traffic.

* ``_rows_envelope`` (the row pass every image takes): each lane of a program
  takes one image row (``BLOCK_R`` rows a program, advancing together over the columns, so that a warp does 32 rows'
  work, not one) and builds the lower envelope of the parabolas ``(x - c)^2 + g[c]`` of its columns with a feature
  (Felzenszwalb & Huttenlocher; the intersection of two parabolas by an exact floor division of int64 integers),
  then walks it left to right, writing each pixel's squared distance and flat index. O(W) per row, with two int32
  scratch rows per image row (the parabolas' columns and the first pixel of each); where two parabolas are equal
  at a pixel the left one keeps it, so the smallest column wins, as in the tiled pass. Its work per pixel does not
  grow with W, and it needs no packed keys, so it serves images of any width up to about 32,000 x 32,000. On an H200
  (2026-11-29, ``benchmarks/bench_edt_row_pass.py``) it took 0.25x (768x768) to 0.71x (352x352) the tiled pass's
  time, so ``_rows`` runs only where this kernel fails to build (images up to 836 x 836).

Exactness: the tiled pass's keys are int32 (wider images never take it) and a plain
minimum of ``d2 << bits | c`` picks the smallest squared distance and, among equal ones, the smallest column:
the same tie rule as the other kernels, so the results are identical. Measured on an H100 (2026-11-27) with the row
kernel alone (the column pass still tensor code): the transform with indices of 256 masks of 320x320 in 9.9 ms
against 28.8 ms for the tensor route; on an H200 (2026-11-29) with both fused kernels, 6.0 ms tiled and 3.5 ms with
the envelope row pass.

The jitted kernels are made on first use (:func:`kernels`), not at import: ``triton.jit`` reads
``TRITON_INTERPRET`` when it decorates, so the tests can run the same kernel on the CPU under the interpreter.
"""

from __future__ import annotations

import functools
from typing import Any

import triton
import triton.language as tl


def _columns(mask_ptr, gy_ptr, packed_ptr, h, w, scale, big, BLOCK: tl.constexpr, PACK: tl.constexpr):
    image = tl.program_id(0)
    cs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = cs < w
    base = image.to(tl.int64) * h * w
    far = 2 * h + 1  # `far` and `far - y` exceed any real vertical distance (at most H - 1)
    last = tl.zeros([BLOCK], dtype=tl.int32) - 1
    for y in range(0, h):  # down: the last feature row at or above y (-1: none)
        at = base + y * w + cs
        last = tl.where(tl.load(mask_ptr + at, mask=inside, other=0) != 0, y, last)
        tl.store(gy_ptr + at, last, mask=inside)
    nxt = tl.zeros([BLOCK], dtype=tl.int32) + far
    for up in range(0, h):  # up: the first feature row at or below y (`far`: none), and the choice
        y = h - 1 - up
        at = base + y * w + cs
        nxt = tl.where(tl.load(mask_ptr + at, mask=inside, other=0) != 0, y, nxt)
        above = tl.load(gy_ptr + at, mask=inside, other=-1)
        d_above = tl.where(above >= 0, y - above, far)
        d_below = nxt - y
        take_below = d_below < d_above  # strict: the feature above wins a tie
        gd = tl.minimum(d_above, d_below)
        tl.store(gy_ptr + at, tl.where(take_below, nxt, above), mask=inside)
        if PACK:  # the int32 key part of the tiled row pass
            tl.store(packed_ptr + at, tl.where(gd < h, gd * gd, big) * scale + cs, mask=inside)
        else:  # the squared vertical distance alone, for the envelope row pass
            tl.store(packed_ptr + at, tl.where(gd < h, gd * gd, big), mask=inside)


def _rows(packed_ptr, gy_ptr, dist_ptr, index_ptr, w, scale, big, top, BLOCK_X: tl.constexpr, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    xs = tl.program_id(1) * BLOCK_X + tl.arange(0, BLOCK_X)
    base = row.to(tl.int64) * w
    best = tl.zeros([BLOCK_X], dtype=tl.int32) + top
    for c0 in range(0, w, BLOCK_C):
        cs = c0 + tl.arange(0, BLOCK_C)
        inside = cs < w
        column = tl.load(packed_ptr + base + cs, mask=inside, other=0)
        dx = xs[:, None] - cs[None, :]
        key = tl.where(inside[None, :], dx * dx * scale + column[None, :], top)
        best = tl.minimum(best, tl.min(key, axis=1))
    col = best % scale
    d2 = best // scale
    pixel = xs < w
    feature_row = tl.load(gy_ptr + base + col, mask=pixel, other=0)
    empty = d2 >= big  # every column without a feature: the image is empty
    index = tl.where(empty, -1, feature_row.to(tl.int64) * w + col)
    # the squared distance: the caller takes the correctly rounded square root in place (Triton's fp64 sqrt is
    # not documented as correctly rounded; CUDA's IEEE sqrt and numpy's are)
    tl.store(dist_ptr + base + xs, tl.where(empty, float("inf"), d2.to(tl.float64)), mask=pixel)
    tl.store(index_ptr + base + xs, index, mask=pixel)


def _rows_envelope(g_ptr, gy_ptr, v_ptr, z_ptr, dist_ptr, index_ptr, n_rows, w, big, lowest, BLOCK_R: tl.constexpr):
    # one image row per lane: the rows advance together over the columns, each with its own envelope
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    live = rows < n_rows
    base = rows.to(tl.int64) * w
    zbase = rows.to(tl.int64) * (w + 1)
    # the lower envelope of the parabolas (x - q)^2 + g[q] of the row's columns with a feature (g < big), left to
    # right: v[k] the column of the k-th parabola kept, z[k] the first pixel where it is the minimum (ties go to the
    # smaller column: the parabola to the left keeps the pixel where two are equal)
    k = tl.zeros([BLOCK_R], dtype=tl.int32) - 1
    for q in range(0, w):
        q64 = tl.zeros([BLOCK_R], dtype=tl.int64) + q  # int64: q^2 overflows int32 from 46,341 columns
        gq = tl.load(g_ptr + base + q, mask=live, other=big).to(tl.int64)
        has = gq < big
        fq = gq + q64 * q64
        s = tl.zeros([BLOCK_R], dtype=tl.int64) + lowest
        searching = has & (k >= 0)
        while tl.max(searching.to(tl.int32), axis=0) > 0:
            at = tl.maximum(k, 0)
            vk = tl.load(v_ptr + base + at, mask=searching, other=0).to(tl.int64)
            gv = tl.load(g_ptr + base + vk, mask=searching, other=0).to(tl.int64)
            # q is strictly below v[k] from s + 1 on: s = floor(((q^2 + g_q) - (v^2 + g_v)) / (2 (q - v))), an exact
            # floor under C's truncating division (compiled) and numpy's flooring one (interpreted)
            num = fq - (gv + vk * vk)
            den = tl.where(searching, 2 * (q64 - vk), 1)
            quotient = num // den
            quotient = tl.where(num - quotient * den < 0, quotient - 1, quotient)
            s = tl.where(searching, quotient, s)
            hidden = searching & (quotient < tl.load(z_ptr + zbase + at, mask=searching, other=0))
            k = tl.where(hidden, k - 1, k)  # v[k] is the minimum nowhere any more
            searching = hidden & (k >= 0)
        start = tl.where(k >= 0, s + 1, lowest)
        k = tl.where(has, k + 1, k)
        tl.store(v_ptr + base + k, tl.zeros([BLOCK_R], dtype=tl.int32) + q, mask=has)
        tl.store(z_ptr + zbase + k, start.to(tl.int32), mask=has)
    # each pixel's parabola: walk the envelope left to right
    top = k
    empty = top < 0  # no column has a feature: the image is empty
    j = tl.zeros([BLOCK_R], dtype=tl.int32)
    for x in range(0, w):
        moving = live & (j < top)
        while tl.max(moving.to(tl.int32), axis=0) > 0:
            step = moving & (tl.load(z_ptr + zbase + j + 1, mask=moving, other=0) <= x)
            j = tl.where(step, j + 1, j)
            moving = step & (j < top)
        col = tl.load(v_ptr + base + j, mask=live & ~empty, other=0)
        dx = (x - col).to(tl.int64)
        d2 = dx * dx + tl.load(g_ptr + base + col, mask=live, other=0).to(tl.int64)
        feature_row = tl.load(gy_ptr + base + col, mask=live, other=0).to(tl.int64)
        tl.store(dist_ptr + base + x, tl.where(empty, float("inf"), d2.to(tl.float64)), mask=live)
        tl.store(index_ptr + base + x, tl.where(empty, -1, feature_row * w + col), mask=live)


@functools.cache
def kernels() -> tuple[Any, Any, Any]:
    """The jitted ``(columns, rows, rows_envelope)`` kernels (Triton compiles each on its first launch per block
    size)."""
    return triton.jit(_columns), triton.jit(_rows), triton.jit(_rows_envelope)
