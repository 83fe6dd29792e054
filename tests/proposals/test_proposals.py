"""Object proposals: the batched path against the numpy oracle (ties, empty masks, void), the label-map input,
chunking, summaries and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch import ProposalRecall
from segmetrics_torch.functional.boundary import morphological_boundary_f
from segmetrics_torch.functional.proposals import (
    MCG_PROPOSAL_COUNTS,
    best_boundary_f,
    best_overlaps,
    proposal_boundary_overlaps,
    proposal_boundary_summary,
    proposal_overlaps,
    proposal_summary,
)
from segmetrics_torch.reference import proposals as ref


@st.composite
def pools(draw):
    h, w = draw(st.integers(2, 9)), draw(st.integers(2, 9))
    p, k = draw(st.integers(1, 12)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    props = rng.random((p, h, w)) < rng.random()
    if p > 2:
        props[1] = props[0]  # a tie
        props[2] = False  # an empty proposal
    objs = rng.random((k, h, w)) < 0.4
    void = rng.random((h, w)) < 0.2 if draw(st.booleans()) else None
    return props, objs, void


@settings(max_examples=80)
@given(pools(), st.integers(1, 5))
def test_best_overlaps_equal_the_numpy_oracle(pool, chunk):
    props, objs, void = pool
    counts = [1, 2, 3, 5, 8, 100000]
    ov = proposal_overlaps(
        torch.from_numpy(props),
        torch.from_numpy(objs),
        void=None if void is None else torch.from_numpy(void),
        chunk_size=chunk,
    )
    got = best_overlaps(ov, counts)
    expected = ref.best_overlaps(props, objs, counts, void)
    for key in ("jaccard", "inter", "fp", "fn", "num_proposals"):
        np.testing.assert_allclose(got[key].numpy(), expected[key], rtol=0, atol=1e-15, err_msg=key)


@settings(max_examples=40)
@given(pools())
def test_label_map_and_list_inputs_equal_the_dense_stack(pool):
    props, objs, void = pool
    # non-overlapping proposals: a label map, proposal i = label i
    rng = np.random.default_rng(0)
    labels = rng.integers(0, len(props) + 1, objs.shape[1:])
    labels[0, 0] = len(props)  # P = the largest label
    dense = np.stack([labels == i for i in range(1, len(props) + 1)])
    v = None if void is None else torch.from_numpy(void)
    a = proposal_overlaps(torch.from_numpy(labels), torch.from_numpy(objs), void=v)
    b = proposal_overlaps(torch.from_numpy(dense), torch.from_numpy(objs), void=v)
    c = proposal_overlaps([torch.from_numpy(m) for m in dense], torch.from_numpy(objs), void=v, chunk_size=2)
    d = proposal_overlaps(torch.from_numpy(dense), torch.from_numpy(objs), void=v, chunk_size=3, backend="torch")
    for x, y, z, t in zip(a, b, c, d, strict=True):
        assert torch.equal(x, y) and torch.equal(y, z) and torch.equal(z, t)


def test_summary_equals_the_numpy_oracle():
    rng = np.random.default_rng(1)
    best = rng.random((5, 37))
    best[:, :4] = [0.5, 0.7, 0.85, 0.95]  # thresholds exactly: strict recall, >= for AR
    inter, fp, fn = (rng.integers(0, 50, (5, 37)) for _ in range(3))
    classes = rng.integers(0, 4, 37)
    counts = {"inter": torch.from_numpy(inter), "fp": torch.from_numpy(fp), "fn": torch.from_numpy(fn)}
    got = proposal_summary(torch.from_numpy(best), torch.ones(5, 3), classes=torch.from_numpy(classes), **counts)
    expected = ref.proposal_summary(best, classes, inter, fp, fn)
    for key, value in expected.items():
        np.testing.assert_allclose(got[key].numpy(), value, rtol=0, atol=1e-12, err_msg=key)


def test_default_counts_are_mcg_and_running_maximum_is_monotone():
    assert MCG_PROPOSAL_COUNTS[:3] == (10, 15, 20) and 1000 in MCG_PROPOSAL_COUNTS and 6000 in MCG_PROPOSAL_COUNTS
    rng = np.random.default_rng(2)
    props = torch.from_numpy(rng.random((300, 12, 14)) < 0.3)
    objs = torch.from_numpy(rng.random((3, 12, 14)) < 0.3)
    got = best_overlaps(proposal_overlaps(props, objs))
    assert bool((got["jaccard"][1:] >= got["jaccard"][:-1]).all())
    assert got["num_proposals"][-1] == 300


@pytest.mark.parametrize(
    ("proposals", "objects", "error", "match"),
    [
        (torch.zeros(3, 4, 4, dtype=torch.bool), torch.zeros(1, 4, 5, dtype=torch.bool), ValueError, "size"),
        (torch.full((3, 4, 4), 0.5), torch.zeros(1, 4, 4, dtype=torch.bool), ValueError, "boolean"),
        (torch.zeros(0, 4, 4, dtype=torch.bool), torch.zeros(1, 4, 4, dtype=torch.bool), ValueError, "empty pool"),
        ([], torch.zeros(1, 4, 4, dtype=torch.bool), ValueError, "empty pool"),
        (torch.zeros(3, 4, 4, dtype=torch.bool), torch.zeros(0, 4, 4, dtype=torch.bool), ValueError, "one object"),
        (torch.zeros(4, 4, dtype=torch.long), torch.zeros(1, 4, 4, dtype=torch.bool), ValueError, "at least one"),
        (torch.zeros(4, 4), torch.zeros(1, 4, 4, dtype=torch.bool), TypeError, "integer"),
    ],
)
def test_bad_input(proposals, objects, error, match):
    with pytest.raises(error, match=match):
        proposal_overlaps(proposals, objects)


def test_void_pixels_are_excluded_and_empty_objects_score_zero():
    obj = torch.zeros(1, 4, 4, dtype=torch.bool)
    obj[0, :2] = True
    prop = obj.clone()
    prop[0, 3, 3] = True  # a false positive, inside the void
    void = torch.zeros(4, 4, dtype=torch.bool)
    void[3, 3] = True
    assert float(proposal_overlaps(prop, obj, void=void).jaccard[0, 0]) == 1.0
    empty = proposal_overlaps(torch.zeros(2, 4, 4, dtype=torch.bool), torch.zeros(1, 4, 4, dtype=torch.bool))
    assert empty.jaccard.tolist() == [[0.0], [0.0]]


def test_metric_equals_the_oracle_summary_over_images():
    rng = np.random.default_rng(7)
    counts = [2, 5, 100000]
    images = []
    for p, k in ((7, 3), (4, 2), (9, 1)):
        props = rng.random((p, 10, 12)) < 0.35
        objs = rng.random((k, 10, 12)) < 0.35
        void = rng.random((10, 12)) < 0.1
        images.append((props, objs, void, rng.integers(0, 3, k)))
    metric = ProposalRecall(counts, num_classes=3)
    metric.update(*[torch.from_numpy(x) for x in images[0]])
    metric.update(
        [torch.from_numpy(im[0]) for im in images[1:]],
        [torch.from_numpy(im[1]) for im in images[1:]],
        [torch.from_numpy(im[2]) for im in images[1:]],
        [torch.from_numpy(im[3]) for im in images[1:]],
    )
    res = metric.compute()
    per = [ref.best_overlaps(props, objs, counts, void) for props, objs, void, _ in images]
    cat = {key: np.concatenate([b[key] for b in per], 1) for key in ("jaccard", "inter", "fp", "fn")}
    classes = np.concatenate([im[3] for im in images])
    expected = ref.proposal_summary(cat["jaccard"], classes, cat["inter"], cat["fp"], cat["fn"])
    for key, value in expected.items():
        np.testing.assert_allclose(res[key].numpy(), value, rtol=0, atol=1e-12, err_msg=key)
    np.testing.assert_allclose(res["num_proposals"].numpy(), np.mean([b["num_proposals"] for b in per], 0))
    with pytest.raises(ValueError, match="class ids"):
        metric.update(torch.from_numpy(images[0][0]), torch.from_numpy(images[0][1]), classes=torch.tensor([0, 1, 5]))


@settings(max_examples=60)
@given(pools(), st.integers(1, 5), st.sampled_from([1.0, 2.0, 2.5, 0.2]))
def test_best_boundary_f_equals_the_numpy_oracle(pool, chunk, bound_th):
    props, objs, void = pool
    counts = [1, 2, 3, 5, 8, 100000]
    v = None if void is None else torch.from_numpy(void)
    expected = ref.best_boundary_f(props, objs, counts, void, bound_th)
    for backend in ("numba", "torch"):
        bc = proposal_boundary_overlaps(
            torch.from_numpy(props),
            torch.from_numpy(objs),
            void=v,
            bound_th=bound_th,
            chunk_size=chunk,
            backend=backend,
        )
        got = best_boundary_f(bc, counts)
        for key in ("f", "precision", "recall", "num_proposals"):
            np.testing.assert_allclose(got[key].numpy(), expected[key], rtol=0, atol=1e-15, err_msg=key)


def _blobs(rng, n, h, w):
    """Discs and rectangles: masks with long smooth boundaries, as real proposals have."""
    yy, xx = np.mgrid[:h, :w]
    out = np.zeros((n, h, w), bool)
    for i in range(n):
        cy, cx, r = rng.integers(0, h), rng.integers(0, w), rng.integers(3, max(4, h // 2))
        out[i] = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r if i % 2 else (abs(yy - cy) <= r) & (abs(xx - cx) <= r // 2)
    return out


def test_boundary_f_of_every_pair_equals_morphological_boundary_f():
    """Without void, every (proposal, object) F equals the DAVIS f_boundary of the two masks, on a label-map pool,
    a dense pool and both backends, at the default 0.8 % of the diagonal (here 2 px)."""
    rng = np.random.default_rng(3)
    h, w = 61, 83
    objs = torch.from_numpy(_blobs(rng, 4, h, w))
    labels = torch.from_numpy(rng.integers(0, 6, (h // 4 + 1, w // 4 + 1))).repeat_interleave(4, 0)
    labels = labels.repeat_interleave(4, 1)[:h, :w].contiguous()
    dense = torch.stack([labels == i for i in range(1, int(labels.max()) + 1)])
    pool = torch.cat([dense, torch.from_numpy(_blobs(rng, 30, h, w))])
    expected = torch.stack(
        [morphological_boundary_f(pool, objs[k : k + 1].expand_as(pool))["f"] for k in range(len(objs))], 1
    )
    for backend in ("numba", "torch"):
        assert torch.equal(proposal_boundary_overlaps(pool, objs, backend=backend).f, expected)
    from_labels = proposal_boundary_overlaps(labels, objs, chunk_size=2)
    assert torch.equal(from_labels.f, expected[: len(dense)])


def test_boundary_summary_and_metric_equal_the_oracle():
    rng = np.random.default_rng(11)
    counts = [1, 3, 100000]
    images = []
    for p, k in ((6, 2), (3, 3), (8, 1)):
        props, objs = _blobs(rng, p, 20, 24), _blobs(rng, k, 20, 24)
        images.append((props, objs, rng.random((20, 24)) < 0.1, rng.integers(0, 2, k)))
    metric = ProposalRecall(counts, num_classes=2, boundary=True, bound_th=1.5)
    for props, objs, void, classes in images:
        metric.update(*(torch.from_numpy(x) for x in (props, objs, void, classes)))
    res = metric.compute()
    best = np.concatenate([ref.best_boundary_f(p, o, counts, v, 1.5)["f"] for p, o, v, _ in images], 1)
    classes = np.concatenate([im[3] for im in images])
    expected = ref.proposal_boundary_summary(best, classes)
    functional = proposal_boundary_summary(torch.from_numpy(best), torch.ones(3), classes=torch.from_numpy(classes))
    assert set(expected) <= set(res) and set(expected) == set(functional) - {"num_proposals"}
    for key, value in expected.items():
        np.testing.assert_allclose(res[key].numpy(), value, rtol=0, atol=1e-12, err_msg=key)
        np.testing.assert_allclose(functional[key].numpy(), value, rtol=0, atol=1e-12, err_msg=key)
    # the Jaccard curves are unchanged by the boundary option
    plain = ProposalRecall(counts, num_classes=2)
    for props, objs, void, classes in images:
        plain.update(*(torch.from_numpy(x) for x in (props, objs, void, classes)))
    for key, value in plain.compute().items():
        assert torch.equal(res[key], value), key


def test_boundary_bad_input():
    objs = torch.zeros(1, 4, 4, dtype=torch.bool)
    with pytest.raises(ValueError, match="bound_th"):
        proposal_boundary_overlaps(torch.zeros(2, 4, 4, dtype=torch.bool), objs, bound_th=0)
    with pytest.raises(ValueError, match="empty pool"):
        proposal_boundary_overlaps([], objs)
    with pytest.raises(ValueError, match="size"):
        proposal_boundary_overlaps(torch.zeros(2, 4, 5, dtype=torch.bool), objs)
    with pytest.raises(TypeError, match="boundary"):
        ProposalRecall([1], boundary="yes")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_the_tensor_path_counts_exactly_under_autocast(dtype: torch.dtype) -> None:
    """The tensor path (what CUDA takes) counts pixels with matrix products, which autocast (Lightning's
    ``bf16-mixed`` / ``16-mixed``) ran and returned in half precision: counts above 256 / 2048 were rounded
    (an intersection of 4,182 pixels read 4,192) and the recall changed. Found by an audit of every Metric under
    every precision."""
    from segmetrics_torch.functional.proposals import proposal_boundary_overlaps
    from segmetrics_torch.ops import use_backend

    objects = torch.zeros(2, 160, 160, dtype=torch.bool)
    objects[0, 2:70, 2:90] = True
    objects[1, 75:150, 10:120] = True
    proposals = torch.zeros(4, 160, 160, dtype=torch.bool)
    for i in range(4):
        proposals[i, 2 + 17 * i : 80 + 17 * i, 3 + 5 * i : 95 + 5 * i] = True
    with use_backend("tensor"):
        exact = proposal_overlaps(proposals, objects)
        boundary = proposal_boundary_overlaps(proposals, objects)
        metric, twin = ProposalRecall(counts=[1, 2, 4]), ProposalRecall(counts=[1, 2, 4])
        with torch.autocast("cpu", dtype=dtype):
            got = proposal_overlaps(proposals, objects)
            got_boundary = proposal_boundary_overlaps(proposals, objects)
            metric.update(proposals, objects)
        twin.update(proposals, objects)
    assert int(exact.inter.max()) > 2048  # counts that half precision cannot hold
    assert torch.equal(got.inter, exact.inter) and torch.equal(got.fp, exact.fp)
    assert all(torch.equal(a, b) for a, b in zip(got_boundary, boundary, strict=True))
    for key, value in twin.compute().items():
        assert torch.equal(torch.as_tensor(metric.compute()[key]), torch.as_tensor(value)), key
