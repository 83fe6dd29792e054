"""The DAVIS protocol on small hand-checkable cases, each value derived from davis2017-evaluation's code (the steps
named in each test: ``metrics.db_eval_iou`` / ``f_measure``, ``utils.db_statistics``, ``evaluation._evaluate_*``),
and the fast path against the numpy port of that code (``segmetrics_torch.reference.video``) on random sequences."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from segmetrics_torch.functional.video import (
    DavisSequence,
    davis_decay_edges,
    davis_j_and_f,
    davis_sequence,
    davis_statistics,
)
from segmetrics_torch.reference import video as ref


def frames(*maps):
    return torch.from_numpy(np.stack(maps).astype(np.uint8))


def square(h=12, w=12, y=2, x=2, size=4, value=1, into=None):
    out = np.zeros((h, w), np.uint8) if into is None else into.copy()
    out[y : y + size, x : x + size] = value
    return out


# --- J: the void rules of the two tasks (metrics.db_eval_iou; evaluation passes None / all_void_masks) -------------


def test_j_counts_void_as_background_in_the_semi_supervised_task_and_leaves_it_out_in_the_unsupervised():
    gt = square()  # rows 2..5, cols 2..5: 16 pixels
    gt[2:6, 6] = 255  # a void column right of it
    pred = square(x=3)  # cols 3..6: 12 on the object, 4 on the void
    # semi-supervised: void is background, the 4 void pixels are false positives: 12 / (16 + 4)
    semi = davis_j_and_f(frames(pred), frames(gt), void=False)["j"]
    assert semi.item() == 12 / 20
    # unsupervised: void pixels are out of every count: 12 / 16
    unsup = davis_j_and_f(frames(pred), frames(gt), void=True, pairs="all")["j"]
    assert unsup.shape == (1, 1, 1) and unsup.item() == 12 / 16
    # the numpy port agrees
    assert ref.db_eval_iou(gt[None] == 1, pred[None] == 1)[0] == 12 / 20
    assert ref.db_eval_iou(gt[None] == 1, pred[None] == 1, gt[None] == 255)[0] == 12 / 16


# --- F: DAVIS' empty cases (metrics.f_measure) -------------------------------------------------------------------


def test_f_empty_cases_and_a_perfect_frame():
    gt = square()
    empty = np.zeros_like(gt)
    out = davis_j_and_f(frames(empty, gt, empty, gt), frames(gt, empty, empty, gt), num_objects=1)
    # no predicted boundary, a GT one: P = 1, R = 0 -> F = 0; the reverse: P = 0, R = 1 -> F = 0; neither: F = 1
    assert out["f"].tolist() == [[0.0, 0.0, 1.0, 1.0]]
    # J: empty prediction of a present object 0; a prediction of an absent one 0; both empty 1 (union 0)
    assert out["j"].tolist() == [[0.0, 0.0, 1.0, 1.0]]


def test_f_within_and_beyond_the_tolerance():
    # 12x12 frame: radius ceil(0.008 * sqrt(288)) = 1 pixel
    gt = square(size=6)
    near = square(size=6, x=3)  # one column off: every boundary pixel within 1 pixel of the other's
    far = square(size=6, x=5)  # three columns off: only the top and bottom rows' overlapping part match
    out = davis_j_and_f(frames(near, far), frames(gt, gt))["f"][0]
    assert out[0].item() == 1.0
    f = [ref.f_measure(far == 1, gt == 1)]
    assert out[1].item() == f[0] and 0 < f[0] < 1


# --- objects: the first frame's largest id, an id missing in between, vanishing objects ---------------------------


def test_objects_come_from_the_first_frame_and_a_missing_id_is_an_empty_object():
    first = square(value=1, into=square(x=7, value=3))  # ids 1 and 3: K = 3, object 2 never annotated
    later = square(value=1, into=square(x=7, value=4))  # id 4 appears later: no object
    gt = frames(first, later, later)
    rows = davis_sequence(gt.clone(), gt, task="unsupervised")
    assert [r.object_id for r in rows] == [1, 2, 3]
    # object 2: empty in the GT and (matched to) an empty proposal in every frame: J = F = 1 (union 0; no boundary)
    assert rows[1].j.tolist() == [1.0, 1.0, 1.0] and rows[1].f.tolist() == [1.0, 1.0, 1.0]
    # object 3 vanishes after frame 0 (id 4 is no object) while the result keeps id 3 in frame 0 only: J = 1, 1, 1
    assert rows[2].j.tolist() == [1.0, 1.0, 1.0]


def test_vanishing_object_scored_frame_by_frame():
    obj = square()
    empty = np.zeros_like(obj)
    gt = frames(obj, obj, empty, empty, obj)
    pred = frames(obj, obj, empty, obj, empty)
    row = davis_sequence(pred, gt)[0]  # semi-supervised: frames 1..3 evaluated
    # frame 1 perfect; frame 2 both empty: J = F = 1; frame 3 predicted while absent: J = 0, F = 0 (P = 0, R = 1)
    assert row.j.tolist() == [1.0, 1.0, 0.0] and row.f.tolist() == [1.0, 1.0, 0.0]


# --- the semi-supervised rules: first / last frame left out, padding, more objects is an error ---------------------


def test_semi_supervised_leaves_out_the_first_and_last_frame_and_pads_missing_objects():
    two = square(value=1, into=square(x=7, value=2))
    only_one = square(value=1)
    gt = frames(two, two, two, two)
    pred = frames(np.zeros_like(two), only_one, only_one, np.zeros_like(two))  # first / last frames are garbage
    rows = davis_sequence(pred, gt)
    assert [r.name for r in rows] == ["sequence_1", "sequence_2"]
    assert rows[0].j.tolist() == [1.0, 1.0]  # frames 1 and 2 only
    assert rows[1].j.tolist() == [0.0, 0.0]  # padded with an empty mask: J = 0, F = 0
    assert rows[1].f.tolist() == [0.0, 0.0]


def test_semi_supervised_more_objects_than_the_ground_truth_is_an_error_naming_sequence_and_frame():
    gt = frames(square(), square(), square(), square())
    pred = gt.clone()
    pred[2, 0, 0] = 2
    with pytest.raises(ValueError, match=r"sequence 'cows', frame 2: the result has object id 2 .* 1 object"):
        davis_sequence(pred, gt, name="cows")
    pred[2, 0, 0] = 0
    pred[0, 0, 0] = 7  # the first frame is not evaluated: the reference never reads it
    assert davis_sequence(pred, gt)[0].j.tolist() == [1.0, 1.0]


# --- the unsupervised rules: Hungarian matching, proposal order, padding, the proposal limit -----------------------


def test_unsupervised_swapped_ids_are_matched_and_listed_in_proposal_order():
    left = square(x=1)
    gt = frames(np.maximum(left, square(x=7, value=2)))
    # proposal 1 is the right object with a column missing (J = 12/16), proposal 2 the left one exactly
    prop = np.zeros_like(left)
    prop[2:6, 7:10] = 1
    prop[left == 1] = 2
    rows = davis_sequence(frames(prop), gt, task="unsupervised")
    assert [(r.index, r.proposal_id, r.object_id) for r in rows] == [(1, 1, 2), (2, 2, 1)]
    assert rows[0].j.tolist() == [12 / 16] and rows[1].j.tolist() == [1.0]
    # the numpy port of _evaluate_unsupervised lists the same pairs in the same order
    j, _, r, c = ref.evaluate_unsupervised(
        np.stack([gt.numpy() == 1, gt.numpy() == 2]),
        np.stack([prop[None] == 1, prop[None] == 2]),
        np.zeros((1, 12, 12), bool),
    )
    assert r.tolist() == [0, 1] and c.tolist() == [1, 0] and j[:, 0].tolist() == [12 / 16, 1.0]


def test_unsupervised_more_objects_than_proposals_pads_with_empty_proposals():
    gt = frames(square(x=0, value=1, into=square(x=4, value=2, into=square(x=8, value=3))))
    prop = frames(square(x=4, value=1))  # one proposal, exactly object 2
    rows = davis_sequence(prop, gt, task="unsupervised")
    assert len(rows) == 3 and rows[0].object_id == 2 and rows[0].j.tolist() == [1.0]
    assert sorted(r.object_id for r in rows[1:]) == [1, 3]
    assert [r.j.item() for r in rows[1:]] == [0.0, 0.0] and [r.f.item() for r in rows[1:]] == [0.0, 0.0]


def test_unsupervised_twenty_proposals_pass_and_twenty_one_fail():
    gt = frames(square(size=3), square(size=3))
    labels = np.zeros((2, 12, 12), np.uint8)
    labels.reshape(2, -1)[:, :20] = np.arange(1, 21)  # ids 1..20 in the first row and a half
    rows = davis_sequence(torch.from_numpy(labels), gt, task="unsupervised")
    assert len(rows) == 1
    labels[1, 11, 11] = 21
    with pytest.raises(ValueError, match=r"sequence 'x', frame 1: proposal id 21 exceeds .* 20 proposals"):
        davis_sequence(torch.from_numpy(labels), gt, task="unsupervised", name="x")


def test_unsupervised_void_mask_is_passed():
    gt = square()
    gt[2:6, 6] = 255
    pred = square(x=3)
    rows = davis_sequence(frames(pred), frames(gt), task="unsupervised")
    assert rows[0].j.item() == 12 / 16  # void out of the union (see the J test)


# --- statistics: Recall, Decay and the reference's uint8 bin edges (utils.db_statistics) ---------------------------


def test_recall_and_decay_by_hand():
    x = torch.tensor([[0.6, 0.4, 0.51, 0.5]], dtype=torch.float64)
    s = davis_statistics(x)
    # recall: frames > 0.5 (0.5 itself is not): 2 of 4; edges round(linspace(1, 4, 5) + 1e-10) - 1 = 0 1 2 2 3:
    # bins x[0:2] and x[2:4]: decay = 0.5 - 0.505
    assert s["recall"].item() == 0.5
    assert s["decay"].item() == pytest.approx(0.5 - 0.505, abs=1e-15)
    assert s["mean"].item() == pytest.approx(0.5025, abs=1e-15)
    assert ref.db_statistics(x[0].numpy()) == (s["mean"].item(), s["recall"].item(), s["decay"].item())


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 50, 79, 104, 255, 256, 257, 300, 1021, 2000])
def test_decay_edges_are_the_references_uint8_edges(n):
    # the reference's own expression, evaluated here with numpy: np.round(np.linspace(1, n, 5) + 1e-10) - 1 as uint8
    ids = np.round(np.linspace(1, n, 5) + 1e-10) - 1
    assert davis_decay_edges(n) == ids.astype(np.int64).astype(np.uint8).tolist()
    assert davis_decay_edges(n, "corrected") == ids.astype(np.int64).tolist()


def test_more_than_256_frames_wrap_the_decay_bins_with_a_warning_and_corrected_is_offered():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.random((2, 300)))
    with pytest.warns(UserWarning, match="300 evaluated frames.*wrapped"):
        wrapped = davis_statistics(x)
    # edges 0 75 150 224 43: the last bin x[224:44] is empty, the reference's Decay NaN
    assert math.isnan(wrapped["decay"][0].item())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed = davis_statistics(x, decay_edges="corrected")
    want = x[:, 0:76].mean(1) - x[:, 224:300].mean(1)
    torch.testing.assert_close(fixed["decay"], want, rtol=0, atol=1e-15)
    for i in range(2):
        assert np.isnan(ref.db_statistics(x[i].numpy())[2])
        assert ref.db_statistics(x[i].numpy(), wrap=False)[2] == pytest.approx(want[i].item(), abs=1e-15)


def test_wrapped_edges_reproduce_the_references_other_frames():
    # 342 frames: the edges 0 85 171 255 341 wrap to 0 85 171 0 85: the "last quarter" is x[0:86], the first quarter
    # itself, so the reference's Decay is 0 whatever the values; the corrected one is the true difference
    assert davis_decay_edges(342) == [0, 85, 171, 0, 85]
    x = torch.zeros(1, 342, dtype=torch.float64)
    x[0, :86] = 1
    with pytest.warns(UserWarning):
        s = davis_statistics(x)
    assert s["decay"].item() == 0.0 == ref.db_statistics(x[0].numpy())[2]
    assert davis_statistics(x, decay_edges="corrected")["decay"].item() == 1.0
    # 1021 frames: 0 255 254 253 252: the last bin x[253:253] is empty, the reference's Decay NaN
    y = torch.ones(1, 1021, dtype=torch.float64)
    with pytest.warns(UserWarning):
        assert math.isnan(davis_statistics(y)["decay"].item())
    assert math.isnan(ref.db_statistics(y[0].numpy())[2])


def test_a_sequence_without_evaluated_frames_is_an_error():
    gt = frames(square(), square())
    with pytest.raises(ValueError, match="sequence 'short': no evaluated frame"):
        davis_sequence(gt.clone(), gt, name="short")


# --- random sequences: the fast path against the numpy port, both tasks, void, vanishing objects, empty frames -----


def _reference_rows(pred, gt, task):
    masks = gt.numpy().astype(np.float64)
    void = masks == 255
    masks[void] = 0
    k = int(masks[0].max())
    gt_oh = np.stack([masks == i for i in range(1, k + 1)])
    if task == "semi-supervised":
        gt_oh, res = gt_oh[:, 1:-1], pred.numpy()[1:-1]
    else:
        res = pred.numpy()
    p = int(res.max())
    res_oh = np.stack([res == i for i in range(1, p + 1)]) if p else np.zeros((0, *res.shape), bool)
    if task == "semi-supervised":
        j, f = ref.evaluate_semisupervised(gt_oh, res_oh)
    else:
        j, f, _, _ = ref.evaluate_unsupervised(gt_oh, res_oh, void)
    return j, f


@pytest.mark.parametrize("task", ["semi-supervised", "unsupervised"])
@pytest.mark.parametrize("seed", range(6))
def test_fast_path_equals_the_numpy_port(task, seed):
    from tests.video.layout import moving_objects, perturb

    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 5))
    gt = moving_objects(
        rng,
        int(rng.integers(3, 12)),
        int(rng.integers(16, 48)),
        int(rng.integers(16, 48)),
        k,
        void=seed % 2 == 0,
        vanish=True,
        empty_frames=seed % 3 == 0,
    )
    n_res = k if task == "semi-supervised" else int(rng.integers(1, 8))
    res = perturb(rng, gt, max_id=n_res)
    if task == "semi-supervised":
        res = np.minimum(res, int(np.where(gt[0] == 255, 0, gt[0]).max()))
    pred_t, gt_t = torch.from_numpy(res), torch.from_numpy(gt)
    rows = davis_sequence(pred_t, gt_t, task=task)
    j, f = _reference_rows(pred_t, gt_t, task)
    assert len(rows) == j.shape[0]
    for i, row in enumerate(rows):
        np.testing.assert_allclose(row.j.numpy(), j[i], rtol=0, atol=1e-15)
        np.testing.assert_allclose(row.f.numpy(), f[i], rtol=0, atol=1e-15)
        for name, values in (("j", j[i]), ("f", f[i])):
            m, r, d = ref.db_statistics(values)
            assert row.stats[f"{name}_mean"] == pytest.approx(m, abs=1e-12)
            assert row.stats[f"{name}_recall"] == pytest.approx(r, abs=1e-12)
            assert row.stats[f"{name}_decay"] == pytest.approx(d, abs=1e-12, nan_ok=True)


def test_chunks_give_the_whole_sequences_result():
    from tests.video.layout import moving_objects, perturb

    rng = np.random.default_rng(5)
    gt = torch.from_numpy(moving_objects(rng, 40, 24, 30, 3, void=True, vanish=True))
    pred = torch.from_numpy(perturb(rng, gt.numpy(), max_id=6))
    whole = davis_sequence(pred, gt, task="unsupervised")
    seq = DavisSequence("sequence", 3, task="unsupervised")
    for start in range(0, 40, 7):
        seq.add(pred[start : start + 7], gt[start : start + 7])
    parts = seq.finish()
    assert [(r.object_id, r.proposal_id) for r in parts] == [(r.object_id, r.proposal_id) for r in whole]
    for a, b in zip(parts, whole, strict=True):
        assert torch.equal(a.j, b.j) and torch.equal(a.f, b.f) and a.stats == b.stats
