"""The shared (partition, ground truth) pair path of the partition meta-measures gives the per-pair path's values.

``PartitionPairs`` prepares every map once and evaluates many pairs from the shared maps; SIHD, and SABD / SISD inside
``shared_computations()``, use it instead of one ``partition_measures`` call per batch of pairs. These tests compare
the two paths value for value (bit for bit), on inputs that exercise what the sharing relies on: maps used in several
pairs, pairs scored in both directions (Fb's single-annotator matchings are solved once for both), different label
maps with the same boundaries, several annotators, two image sizes (rotated maps), labels that are not 0..K-1.
"""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch.functional.partition import partition_measures
from segmetrics_torch.functional.partition.pairs import PartitionPairs
from segmetrics_torch.meta import (
    as_measure,
    match_size,
    metameasures as mm,
    quadtree_partitions,
    quadtree_ucm,
    sabd,
    shared_computations,
    sihd,
    sisd,
)
from segmetrics_torch.ops import matching
from segmetrics_torch.ops.contingency import contingency_tables, pair_tables, relabel
from segmetrics_torch.ops.hierarchy import gridbmap2seg

MEASURES = ["fb", "fop", "voi", "ssc", "vd", "dhd", "bce", "bgm", "pri", "sc", "fr", "sdhd", "nvoi", "gce", "lce"]


def _blobs(gen: torch.Generator, n: int, h: int, w: int, regions: int) -> torch.Tensor:
    """(n, h, w) label maps of a few blocky regions (coarse random labels upsampled), so that boundaries are long
    and the matchings non-trivial; labels are shifted to arbitrary values."""
    coarse = torch.randint(0, regions, (n, (h + 3) // 4, (w + 3) // 4), generator=gen)
    maps = coarse.repeat_interleave(4, 1).repeat_interleave(4, 2)[:, :h, :w]
    return maps * 7 - 3


def _assert_same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0, equal_nan=True, msg=k)


@pytest.fixture(scope="module")
def human():
    """Human-like annotations of 4 images, one of them portrait (BSDS's two sizes), 2-3 annotators each."""
    gen = torch.Generator().manual_seed(7)
    sizes = [(24, 36), (24, 36), (36, 24), (24, 36)]
    items = [_blobs(gen, 2 + i % 2, h, w, 5) for i, (h, w) in enumerate(sizes)]
    items[1][1] = items[0][0]  # the same map in two images: pairs whose reverse is also scored
    items[3][0] = items[0][1] + 100  # other labels, the same boundaries
    return items


def test_pair_values_equal_per_pair_partition_measures(human):
    pairs = PartitionPairs()
    targets = [pairs.add_target(g) for g in human]  # every annotator of an image
    singles = {(i, a): pairs.add_target(g[a][None]) for i, g in enumerate(human) for a in range(g.shape[0])}
    parts, index, preds, gts = {}, [], [], []
    for i, g in enumerate(human):
        for j, other in enumerate(human):
            for b in range(other.shape[0]):
                x = match_size(other[b], tuple(g.shape[-2:]))
                key = (j, b, tuple(g.shape[-2:]))
                if key not in parts:
                    parts[key] = pairs.add_partition(x)
                for t, target in [(targets[i], g)] + [(singles[(i, a)], g[a][None]) for a in range(g.shape[0])]:
                    index.append((parts[key], t))
                    preds.append(x)
                    gts.append(target)
    shared = pairs.evaluate(index, measures=MEASURES)
    plain: dict[str, list[torch.Tensor]] = {}
    for p, g in zip(preds, gts, strict=True):
        for k, v in partition_measures(p[None], g[None], measures=MEASURES).items():
            plain.setdefault(k, []).append(v)
    _assert_same(shared, {k: torch.cat(v) for k, v in plain.items()})


def test_fb_solves_each_distinct_matching_once(human, monkeypatch):
    """Both directions of a pair and repeated boundary maps are one matching problem: fewer tasks, same counts."""
    tasks = []
    original = matching.pair_correspondence_counts

    def spy(machine, annotators, pair_machine, *args):
        tasks.append(len(pair_machine))
        return original(machine, annotators, pair_machine, *args)

    monkeypatch.setattr("segmetrics_torch.functional.partition.pairs.pair_correspondence_counts", spy)
    maps = human[0]  # 2 annotations of one size, and the same boundaries under other labels
    pairs = PartitionPairs()
    p = [pairs.add_partition(x) for x in (maps[0], maps[1], maps[1] + 5)]
    t = [pairs.add_target(x[None]) for x in (maps[0], maps[1])]
    index = [(p[0], t[1]), (p[1], t[0]), (p[2], t[0]), (p[0], t[0])]
    out = pairs.evaluate(index, measures=["fb"])
    assert tasks == [2]  # (0 vs 1) for the first three pairs, (0 vs 0)
    for k, (pi, ti) in enumerate(index):
        x = [maps[0], maps[1], maps[1] + 5][p.index(pi)]
        ref = partition_measures(x[None], [maps[0], maps[1]][t.index(ti)][None, None], measures=["fb"])
        for key in ("fb", "fb_cnt_r", "fb_cnt_p", "fb_sum_p", "fb_sum_r"):
            assert out[key][k] == ref[key][0], (k, key)


def test_sihd_pairs_named_measures_equal_the_per_pair_path(human):
    names = ["fb", "voi", "pri", "fop", "bgm", "sdhd"]
    same, different = mm._human_pairs(human, None, 0, True)
    pairs = same + different
    shared = mm._human_pair_measures(human, pairs, names)  # named measures: maps prepared once
    for name in names:
        # any other measure: one partition_measures call per batch of pairs
        plain = mm._measure_human_pairs(as_measure(name), human, pairs, batch_size=5)
        torch.testing.assert_close(shared[name], plain[name], rtol=0, atol=0)


def test_sihd_named_measures_equal_a_measure_object():
    gen = torch.Generator().manual_seed(0)
    base = [quadtree_partitions(32, 32, [n])[0] for n in (4, 7, 10, 13)]
    annotations = torch.stack([torch.stack([b] * 3) for b in base])
    annotations = torch.where(torch.rand(annotations.shape, generator=gen) < 0.05, 0, annotations)
    for name in ("pri", "voi", "fb"):
        shared, plain = sihd([name], annotations)[name], sihd(as_measure(name), annotations, batch_size=7)
        torch.testing.assert_close(shared.same, plain.same, rtol=0, atol=0)
        torch.testing.assert_close(shared.different, plain.different, rtol=0, atol=0)
        assert (shared.rate, shared.threshold) == (plain.rate, plain.threshold)


def test_sabd_sisd_shared_pairs_equal_plain_and_evaluate_each_pair_once(human, monkeypatch):
    gts = [g for g in human]
    gen = torch.Generator().manual_seed(3)
    soa = [_blobs(gen, 1, *g.shape[-2:], 6)[0] for g in gts]
    base = [_blobs(gen, 1, *g.shape[-2:], 2)[0] for g in gts]
    measures = ["fb", "voi", "pri", "fop", "sc", "sdhd"]

    def rates():
        return {m: (sabd(m, soa, base, gts), sisd(m, soa, gts)) for m in measures}

    plain = rates()
    evaluated = []
    original = PartitionPairs.evaluate

    def spy(self, pairs, measures=None):
        evaluated.append(len(pairs))
        return original(self, pairs, measures)

    monkeypatch.setattr(PartitionPairs, "evaluate", spy)
    with shared_computations():
        shared = rates()
    for m in measures:
        for a, b in zip(plain[m], shared[m], strict=True):
            assert (a.rate, a.count, a.total, a.ties) == (b.rate, b.count, b.total, b.ties)
            torch.testing.assert_close(a.values, b.values, rtol=0, atol=0)
    # per group (tables, Fb): 4 soa + 4 baseline pairs and 12 swapped pairs, each evaluated once for all measures
    assert sum(evaluated) == 2 * (4 + 4 + 12)


def test_indexed_contingency_tables_equal_the_gathered_maps():
    gen = torch.Generator().manual_seed(1)
    maps, regions = relabel(torch.randint(0, 9, (5, 60), generator=gen))
    anns, a_regions = relabel(torch.randint(0, 4, (3, 60), generator=gen))
    p_index, a_index = torch.tensor([2, 0, 2, 4]), torch.tensor([1, 1, 0, 2, 0])
    t_part, t_ann = pair_tables(torch.tensor([0, 1, 2, 3]), torch.tensor([0, 1, 1, 2, 3]))
    for backend in ("numba", "torch"):
        shared = contingency_tables(
            maps,
            regions,
            anns,
            a_regions,
            t_part,
            t_ann,
            partition_index=p_index,
            annotation_index=a_index,
            backend=backend,
        )
        plain = contingency_tables(
            maps[p_index], regions[p_index], anns[a_index], a_regions[a_index], t_part, t_ann, backend=backend
        )
        for a, b in zip(shared, plain, strict=True):
            assert torch.equal(a, b)
    with pytest.raises(ValueError, match="partition_index"):
        contingency_tables(maps, regions, anns, a_regions, t_part, t_ann, partition_index=torch.tensor([0, 1, 5, 2]))


@pytest.mark.parametrize(("height", "width", "portrait"), [(321, 481, True), (481, 321, True), (40, 70, False)])
def test_quadtree_levels_from_one_sweep_equal_each_level(height, width, portrait):
    levels = [2, 3, 8, 50, 400, 800, 5000]
    stack = quadtree_partitions(height, width, levels, portrait=portrait)
    rotate = portrait and height < width
    grid = quadtree_ucm(width, height) if rotate else quadtree_ucm(height, width)
    values = torch.unique(grid)
    for k, n in enumerate(levels):
        threshold = float(values[values.numel() - n]) if n <= values.numel() else 0.0
        seg = gridbmap2seg(grid > threshold)  # SEISM's griducm2seg, level by level
        assert torch.equal(stack[k], torch.rot90(seg, 1, (0, 1)) if rotate else seg), n


def test_partition_groups_cover_every_measure():
    from segmetrics_torch.functional.partition.tables import MEASURES as ALL

    grouped = [m for g in mm._PARTITION_GROUPS for m in mm._group_measures(g)]
    assert sorted(grouped) == sorted(ALL)


def test_an_input_changed_in_place_is_a_new_input() -> None:
    """A buffer reused for several methods' maps inside shared_computations(): recognised by memory alone, the
    second method got the first one's cached scores."""
    from segmetrics_torch.meta import generic_map_test, shared_computations

    g = torch.zeros(2, 16, 16, dtype=torch.bool)
    g[:, 4:12, 4:12] = True
    preds = {"a": g.double() * 0.9}
    with shared_computations():
        first = generic_map_test("mae", preds, g).values[:, 0].clone()
        preds["a"].zero_()
        second = generic_map_test("mae", preds, g).values[:, 0]
    assert torch.equal(second, generic_map_test("mae", preds, g).values[:, 0]) and not torch.equal(first, second)
