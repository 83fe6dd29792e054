"""The correspondence: a maximum matching of least total cost, checked against scipy's exact solvers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from segmetrics_torch.io import read_bsds_ground_truth, read_mat_array
from segmetrics_torch.ops.matching import correspond_pixels, max_dist_pixels, offsets_within
from segmetrics_torch.ops.morphology import thin
from segmetrics_torch.reference import boundary as ref
from tests.conftest import shared_path


def _cost_and_check(machine, target, m1, m2, max_px):
    """Validate a matching (one-to-one, mutual, within tolerance) and return (cardinality, total cost)."""
    w = machine.shape[1]
    m1, m2 = m1.numpy().ravel(), m2.numpy().ravel()
    on1, on2 = machine.ravel(), target.ravel()
    assert np.all(m1[~on1] == -1) and np.all(m2[~on2] == -1)
    idx = np.nonzero(m1 >= 0)[0]
    assert np.array_equal(np.sort(m1[idx]), np.unique(m1[idx]))  # one-to-one
    assert np.array_equal(m2[m1[idx]], idx)  # mutual
    assert on2[m1[idx]].all()
    dy = idx // w - m1[idx] // w
    dx = idx % w - m1[idx] % w
    d2 = dy * dy + dx * dx
    assert np.all(d2 <= max_px * max_px)
    return len(idx), int(np.rint(100 * np.sqrt(d2)).sum())


def _max_cardinality(machine, target, max_px):
    my, mx = np.nonzero(machine)
    gy, gx = np.nonzero(target)
    d2 = (my[:, None] - gy[None]) ** 2 + (mx[:, None] - gx[None]) ** 2
    graph = csr_matrix(d2 <= max_px * max_px)
    return int((maximum_bipartite_matching(graph, perm_type="column") >= 0).sum()) if graph.nnz else 0


@st.composite
def map_pairs(draw):
    # at least 3x3: the largest tolerance drawn (3.2 px) must lie within the image diagonal, beyond which it is an
    # error (a tolerance past the diagonal means nothing)
    h = draw(st.integers(3, 24))
    w = draw(st.integers(3, 24))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    a = rng.random((h, w)) < draw(st.floats(0.02, 0.6))
    b = rng.random((h, w)) < draw(st.floats(0.02, 0.6))
    return a, b, draw(st.sampled_from([1.0, 1.5, 2.0, 3.2, 0.05]))


@given(map_pairs())
def test_matching_is_maximum_and_of_least_cost(pair):
    machine, target, max_dist = pair
    h, w = machine.shape
    max_px = max_dist_pixels(max_dist, h, w)
    m1, m2 = correspond_pixels(torch.from_numpy(machine), torch.from_numpy(target), max_dist)
    size, cost = _cost_and_check(machine, target, m1, m2, max_px)
    assert size == _max_cardinality(machine, target, max_px)
    ref_m, ref_g, ref_cost = ref.correspond(machine, target, max_px)
    assert size == ref_m.sum() == ref_g.sum()
    assert cost == ref_cost


def test_matching_on_real_maps_and_deterministic():
    """gPb ucm2 of a BSDS test image at three thresholds vs each annotator: maximum cardinality (scipy), least cost
    (exact assignment per component), and bit-identical results on repeated runs."""
    base = shared_path("bsds_sample", "BSDS500")
    pb = read_mat_array(base / "ucm2" / "test" / "100039.mat", "ucm2")[2::2, 2::2]
    gts = read_bsds_ground_truth(base / "data" / "groundTruth" / "test" / "100039.mat").boundaries
    h, w = pb.shape
    max_px = max_dist_pixels(0.0075, h, w)
    for t in (0.03, 0.2, 0.6):
        machine = thin(torch.from_numpy(pb >= t)).numpy()
        for g in gts[:2]:
            m1, m2 = correspond_pixels(torch.from_numpy(machine), torch.from_numpy(g))
            size, cost = _cost_and_check(machine, g, m1, m2, max_px)
            assert size == _max_cardinality(machine, g, max_px)
            _, _, ref_cost = ref.correspond(machine, g, max_px)
            assert cost == ref_cost
            again = correspond_pixels(torch.from_numpy(machine), torch.from_numpy(g))
            assert torch.equal(again[0], m1) and torch.equal(again[1], m2)


def test_offsets_table():
    dy, dx, cost = offsets_within(max_dist_pixels(0.0075, 321, 481))  # 4.337 px, BSR's example
    d2 = dy.astype(int) ** 2 + dx.astype(int) ** 2
    # lattice points per squared distance 0,1,2,4,5,8,9,10,13,16,17,18: 1+4+4+4+8+4+4+8+8+4+8+4
    assert len(dy) == 61 and d2.max() == 18
    assert np.all(np.diff(d2) >= 0)
    assert cost[0] == 0 and cost[-1] == 424  # rint(100 * sqrt(18))


def test_correspond_pixels_rejects_bad_input():
    a = torch.zeros(4, 5, dtype=torch.bool)
    with pytest.raises(ValueError, match="same shape"):
        correspond_pixels(a, torch.zeros(5, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="machine"):
        correspond_pixels(a.float(), a)
    with pytest.raises(ValueError, match="max_dist"):
        correspond_pixels(a, a, max_dist=0)
