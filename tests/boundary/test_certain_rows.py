"""The boundary counts solve the exact assignment only where it can change cntP (issue 16), and nothing changes.

Three facts carry the speed-up (``segmetrics_torch.ops._kernels.correspondence``): a maximum matching alone gives
cntR and the machine pixels that every maximum matching keeps (the rows not reached by an alternating path from an
unmatched row); a component is solved only while one of its other rows is not yet matched by some annotator; and
the solver may stop as soon as the watched rows or columns are decided. Each is checked here against a definition
that nobody here wrote (scipy's maximum bipartite matching) or against the full solve, and the whole path against
the per-pair kernel that solves every component of every annotator.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from segmetrics_torch.ops._kernels import correspondence as k
from segmetrics_torch.ops._kernels.assignment import assign_rows, min_cost_maximum_matching, pack_edge
from segmetrics_torch.ops.matching import _big, offsets_within


@st.composite
def graphs(draw, max_side=40):
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    n_rows = draw(st.integers(1, max_side))
    n_cols = draw(st.integers(1, max_side))
    density = draw(st.floats(0.02, 0.4))
    n_costs = draw(st.sampled_from([1, 2, 3, 500]))
    degree = np.maximum(rng.binomial(n_cols, density, n_rows), 1)  # every row has a candidate (as in the kernels)
    start = np.zeros(n_rows + 1, np.int64)
    start[1:] = np.cumsum(degree)
    adj = np.concatenate([np.sort(rng.choice(n_cols, d, replace=False)) for d in degree]).astype(np.int32)
    cost = (rng.integers(1, n_costs + 1, len(adj)) * 100).astype(np.int64)
    return start, adj, cost, n_cols


def _cardinality(n_rows, n_cols, start, adj, drop=-1):
    rows = np.repeat(np.arange(n_rows), np.diff(start))
    keep = rows != drop
    m = csr_matrix((np.ones(int(keep.sum())), (rows[keep], adj[keep])), shape=(n_rows, n_cols))
    return int((maximum_bipartite_matching(m, perm_type="column") >= 0).sum())


def _kuhn_buffers(n_rows, n_cols):
    return (
        np.empty(n_rows + 1, np.int64),
        np.empty(n_cols, np.int64),
        np.empty(n_cols, np.int64),
        np.empty(n_rows + 1, np.int64),
        np.empty(n_rows + 1, np.int64),
        np.empty(n_rows + 1, np.int64),
        np.empty(n_cols, np.int64),
    )


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_certain_rows_are_those_every_maximum_matching_keeps(graph):
    start, adj, _cost, n_cols = graph
    n_rows = len(start) - 1
    rows = np.arange(n_rows, dtype=np.int64)
    acc = np.zeros(n_rows, np.bool_)
    unc = np.zeros(n_rows, np.bool_)
    size = k._certain_rows(rows, start[:-1], start[1:], adj, n_cols, acc, unc, *_kuhn_buffers(n_rows, n_cols))
    full = _cardinality(n_rows, n_cols, start, adj)
    assert size == full
    for r in range(n_rows):
        # some maximum matching leaves r unmatched iff dropping r keeps the maximum cardinality
        assert unc[r] == (_cardinality(n_rows, n_cols, start, adj, drop=r) == full)
    np.testing.assert_array_equal(acc, ~unc)


@settings(max_examples=300, deadline=None)
@given(graphs(), st.integers(0, 2**31 - 1), st.sampled_from(["rows", "rows with deficit", "columns"]))
def test_early_stop_decides_the_watched_rows_and_columns(graph, seed, mode):
    start, adj, cost, n_cols = graph
    n_rows = len(start) - 1
    big = _big(int(cost.max()), n_rows + n_cols)
    full_c4r, full_r4c = min_cost_maximum_matching(start, adj, cost, n_cols, big, np.ones(n_rows, np.bool_))
    watch_cols = mode == "columns"
    watch = np.random.default_rng(seed).random(n_cols if watch_cols else n_rows) < 0.2
    deficit = n_rows - _cardinality(n_rows, n_cols, start, adj) if mode == "rows with deficit" else -1
    edges = np.array([pack_edge(a, c) for a, c in zip(adj, cost, strict=True)], np.int64)
    work = np.empty(8 * (n_rows + n_cols) + 2 * n_rows, np.int64)
    heap = np.empty(len(adj) + n_rows + 1, np.int64)
    rest = assign_rows(
        start, edges, n_cols, big, np.ones(n_rows, np.bool_), work, heap, heap.copy(), watch, watch_cols, deficit
    )
    if watch_cols:
        np.testing.assert_array_equal(work[n_rows : n_rows + n_cols][watch] >= 0, full_r4c[watch] >= 0)
    else:
        matched = (work[:n_rows] >= 0) | (np.arange(n_rows) >= rest)  # rows from `rest` on: matched, not added
        np.testing.assert_array_equal(matched[watch], full_c4r[watch] >= 0)
        assert rest == n_rows or mode == "rows with deficit"


def test_costs_beyond_the_packed_edge_are_refused():
    start = np.array([0, 1], np.int64)
    with pytest.raises(ValueError, match="2\\*\\*31"):
        min_cost_maximum_matching(
            start, np.zeros(1, np.int32), np.array([2**31], np.int64), 1, 2**40, np.ones(1, np.bool_)
        )


@st.composite
def boundary_scenes(draw):
    # annotators drawing nearby curves, a machine map with doubled, shifted and spurious edges: many ties
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    h, w = draw(st.integers(8, 40)), draw(st.integers(8, 40))
    n_gt = draw(st.integers(1, 4))
    yy, xx = np.mgrid[:h, :w]
    gts = np.zeros((n_gt, h, w), np.uint8)
    for a in range(n_gt):
        for _ in range(rng.integers(1, 4)):
            c = rng.uniform(0, max(h, w))
            s = rng.uniform(-1.5, 1.5)
            gts[a] |= (np.abs(yy - (c + s * xx) % h) < 0.6).astype(np.uint8)
        gts[a] &= rng.random((h, w)) < 0.9
    machine = gts.max(0).astype(bool)
    machine = machine | np.roll(machine, rng.integers(-2, 3), axis=int(rng.integers(0, 2)))
    machine |= rng.random((h, w)) < draw(st.floats(0.0, 0.15))
    machine &= rng.random((h, w)) < 0.9
    return machine, gts, draw(st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.2]))


@settings(max_examples=150, deadline=None)
@given(boundary_scenes())
def test_level_counts_equal_the_full_solve_of_every_component(scene):
    machine, gts, tol = scene
    n_gt, h, w = gts.shape
    dy, dx, cost = offsets_within(tol)
    pad = math.floor(tol)
    grids, n2s = k.gt_index_grids(
        gts[None], np.array([n_gt]), np.array([[h, w]]), pad, dy[None], dx[None], np.array([len(dy)])
    )
    my, mx = (a.astype(np.int32) for a in np.nonzero(machine))
    big = _big(int(cost.max()), h * w)
    out = np.zeros((3, 1, 1), np.int64)
    k.level_counts(my, mx, grids[0], n2s[0], n_gt, dy, dx, cost, len(dy), pad, big, out, 0, 0)
    cnt_r, cnt_p = k.annotator_counts(my, mx, grids[0], n2s[0], np.arange(n_gt), dy, dx, cost, len(dy), pad, big)
    assert (out[0, 0, 0], out[1, 0, 0], out[2, 0, 0]) == (cnt_r, cnt_p, len(my))
