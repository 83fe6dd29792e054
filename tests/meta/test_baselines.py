"""Baselines of the meta-measures: random hierarchy, generic and noise maps, pairing, size matching, perturbation."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import ndimage

from segmetrics_torch.meta import (
    centered_circle_map,
    centered_gaussian_map,
    gaussian_noise_maps,
    grid_oversegmentation,
    match_size,
    perturb_ground_truth,
    quadtree_partition,
    random_hierarchy_partition,
    random_hierarchy_ucm,
    switch_pairing,
)
from segmetrics_torch.ops.hierarchy import gridbmap2seg, region_count_thresholds


def test_grid_oversegmentation_is_the_finest_quadtree_level():
    # 32 x 32 cells cut where SEISM's quadtree cuts: identical to the quadtree with all its regions
    for h, w in ((321, 481), (40, 70)):
        grid = grid_oversegmentation(h, w)
        assert int(grid.max()) + 1 == 1024
        assert torch.equal(grid, quadtree_partition(h, w, 10_000, portrait=False))


def _superpixels(h: int, w: int, n: int, seed: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    seeds = rng.uniform([0, 0], [h, w], size=(n, 2))
    yy, xx = np.mgrid[:h, :w]
    d = (yy[..., None] - seeds[:, 0]) ** 2 + (xx[..., None] - seeds[:, 1]) ** 2
    return torch.from_numpy(d.argmin(-1))


@pytest.mark.parametrize("seed", [0, 7])
def test_random_hierarchy_merges_two_neighbours_per_level(seed):
    over = _superpixels(30, 41, 60, seed)
    ucm = random_hierarchy_ucm(over, seed=seed)
    atoms = gridbmap2seg(ucm > 0)
    r = int(atoms.max()) + 1
    # the leaves are the 4-connected pieces of the labels (scipy's labelling, counted per label)
    expected = sum(ndimage.label((over == v).numpy())[1] for v in torch.unique(over).tolist())
    assert r == expected
    prev = atoms
    for n in range(r - 1, 0, -1):
        part = random_hierarchy_partition(over, n, seed=seed)
        assert int(part.max()) + 1 == n  # exactly one merge per level
        # nested: every finer region lies in one coarser region
        pairs = torch.unique(torch.stack([prev.flatten(), part.flatten()]), dim=1)
        assert pairs.shape[1] == int(prev.max()) + 1
        # the merged regions are neighbours: the coarser region that gained is 4-connected
        for lab in torch.unique(part).tolist():
            assert ndimage.label((part == lab).numpy())[1] == 1
        # SEISM's (4-connected, corners closed) and BSR's (8-connected) readings agree: an ultrametric map
        th = region_count_thresholds(ucm, [n])[0]
        assert torch.equal(gridbmap2seg(ucm > th), gridbmap2seg(ucm > th, rule="bsr"))
        prev = part


def test_random_hierarchy_is_seeded():
    over = grid_oversegmentation(50, 60, cells=8)
    a = random_hierarchy_ucm(over, seed=3)
    assert torch.equal(a, random_hierarchy_ucm(over, seed=3))
    assert not torch.equal(a, random_hierarchy_ucm(over, seed=4))
    assert torch.unique(a).numel() == 64  # 0 and the 63 merge levels k / 63
    assert float(a.max()) == 1.0
    one_region = random_hierarchy_ucm(torch.zeros(5, 6, dtype=torch.long))
    assert torch.equal(one_region, torch.zeros(11, 13, dtype=torch.float64))


def test_random_hierarchy_bad_input():
    with pytest.raises(ValueError, match="seed"):
        random_hierarchy_ucm(torch.zeros(4, 4, dtype=torch.long), seed=-1)
    with pytest.raises(ValueError, match="num_regions"):
        random_hierarchy_partition(torch.zeros(4, 4, dtype=torch.long), 0)
    with pytest.raises(ValueError, match="cells"):
        grid_oversegmentation(10, 10, cells=0)


def test_centered_gaussian_map():
    g = centered_gaussian_map(21, 41, sigma=0.25)
    assert g.shape == (21, 41) and float(g[10, 20]) == 1.0 and float(g.max()) == 1.0
    assert torch.allclose(g, g.flip(0)) and torch.allclose(g, g.flip(1))
    # one standard deviation (0.25 * side) from the centre: exp(-1/2); 21 * 0.25 = 5.25 rows
    assert float(centered_gaussian_map(9, 5, sigma=0.5)[0, 2]) == pytest.approx(np.exp(-0.5 * (4 / 4.5) ** 2))
    with pytest.raises(ValueError, match="sigma"):
        centered_gaussian_map(5, 5, sigma=0)


def test_centered_circle_map():
    c = centered_circle_map(11, 11, radius=2 / 11)  # radius 2 px around (5, 5): 13 pixels
    assert c.dtype == torch.bool and int(c.sum()) == 13 and bool(c[5, 5]) and bool(c[5, 7]) and not c[6, 7]


def test_gaussian_noise_maps():
    a = gaussian_noise_maps(3, 40, 50, seed=5)
    assert a.shape == (3, 40, 50) and a.dtype == torch.float64
    assert float(a.min()) >= 0 and float(a.max()) <= 1
    assert torch.equal(a, gaussian_noise_maps(3, 40, 50, seed=5))
    assert not torch.equal(a, gaussian_noise_maps(3, 40, 50, seed=6))
    assert abs(float(a.mean()) - 0.5) < 0.01
    with pytest.raises(ValueError, match="std"):
        gaussian_noise_maps(1, 4, 4, std=0)


def test_switch_pairing_is_a_seeded_derangement():
    for seed in range(5):
        p = switch_pairing(7, seed=seed)
        assert sorted(p.tolist()) == list(range(7)) and all(p[i] != i for i in range(7))
        assert torch.equal(p, switch_pairing(7, seed=seed))
    assert switch_pairing(2).tolist() == [1, 0]
    with pytest.raises(ValueError, match="num"):
        switch_pairing(1)


def test_match_size():
    x = torch.arange(12).view(3, 4)
    assert match_size(x, (3, 4)) is x
    # landscape onto portrait: clockwise (imrotate(x, -90)); portrait onto landscape: counter-clockwise
    # (imrotate(x, 90), SEISM's rule), the inverse, so that a pair and its reverse stand in one relative orientation
    assert torch.equal(match_size(x, (4, 3)), torch.from_numpy(np.rot90(x.numpy(), -1).copy()))
    assert torch.equal(match_size(x.T, (3, 4)), torch.from_numpy(np.rot90(x.T.numpy()).copy()))
    assert torch.equal(match_size(match_size(x, (4, 3)), (3, 4)), x)
    up = match_size(x, (6, 8))
    assert torch.equal(up, x.repeat_interleave(2, 0).repeat_interleave(2, 1))
    assert torch.equal(match_size(up, (3, 4)), x)


def test_perturb_ground_truth():
    g = torch.zeros(1, 15, 15, dtype=torch.bool)
    g[0, 7, 7] = True
    assert int(perturb_ground_truth(g, radius=2).sum()) == 13  # the disk u^2 + v^2 <= 4
    sq = torch.zeros(12, 12, dtype=torch.uint8)
    sq[3:9, 3:9] = 255
    eroded = perturb_ground_truth(sq, operation="erode", radius=1)
    assert torch.equal(eroded, torch.from_numpy(ndimage.binary_erosion(sq.numpy() > 128)))
    border = torch.ones(6, 6, dtype=torch.bool)
    assert bool(perturb_ground_truth(border, operation="erode", radius=2).all())  # the border does not erode
    with pytest.raises(ValueError, match="operation"):
        perturb_ground_truth(g, operation="open")
    with pytest.raises(ValueError, match="radius"):
        perturb_ground_truth(g, radius=0)
