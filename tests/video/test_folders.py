"""DAVIS folders: parity with vos-benchmark (PyPI 0.1.0) where it implements the protocol, the reference's two CSVs
(columns, row order, ``%.3f``) against the numpy port of davis2017-evaluation and by hand, bounded memory."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from segmetrics_torch.functional.video import (
    DavisSequence,
    davis_global_csv,
    davis_per_sequence_csv,
    davis_sequence,
    evaluate_davis,
)
from segmetrics_torch.reference import video as ref
from tests.video.layout import moving_objects, perturb, reference_folder, save_mask, write_davis


def _every_frame_objects(rng, frames, h, w, k):
    """Objects present in every frame, no void (what vos-benchmark evaluates like the reference)."""
    gt = moving_objects(rng, frames, h, w, k)
    for t in range(frames):
        for obj in range(1, k + 1):
            if not (gt[t] == obj).any():  # an object hidden by a later one: give it a pixel of its own
                gt[t, obj - 1, 0] = obj
    return gt


def test_per_object_j_and_f_means_equal_vos_benchmark(tmp_path):
    pytest.importorskip("cv2")
    vos = pytest.importorskip("vos_benchmark.benchmark")
    rng = np.random.default_rng(0)
    seqs = {}
    for i in range(4):
        k = int(rng.integers(1, 4))
        gt = _every_frame_objects(
            rng, int(rng.integers(4, 12)), int(rng.integers(30, 70)), int(rng.integers(30, 90)), k
        )
        res = np.minimum(perturb(rng, gt, max_id=k), k).astype(np.uint8)
        seqs[f"seq{i}"] = (gt, res)
    write_davis(tmp_path / "DAVIS", tmp_path / "res", seqs)
    ours = evaluate_davis(tmp_path / "DAVIS", tmp_path / "res")
    evaluator = vos.VideoEvaluator(str(tmp_path / "DAVIS" / "Annotations" / "480p"), str(tmp_path / "res"))
    compared = 0
    for name in seqs:
        _, iou, boundary_f = evaluator(name)  # percent
        rows = [o for o in ours.objects if o.sequence == name]
        assert sorted(iou) == [o.object_id for o in rows]
        for o in rows:
            assert abs(o.stats["j_mean"] * 100 - iou[o.object_id]) <= 1e-9
            assert abs(o.stats["f_mean"] * 100 - boundary_f[o.object_id]) <= 1e-9
            compared += 1
    assert compared >= 4


@pytest.mark.parametrize("task", ["semi-supervised", "unsupervised"])
def test_csvs_equal_the_numpy_port_of_the_reference(tmp_path, task):
    rng = np.random.default_rng(1 if task == "unsupervised" else 2)
    seqs = {}
    for i, name in enumerate(["bike-packing", "blackswan", "b,quoted", "dogs-jump"]):
        k = int(rng.integers(1, 4))
        gt = moving_objects(
            rng, int(rng.integers(3, 10)), 24 + 4 * i, 40, k, void=i % 2 == 0, vanish=True, empty_frames=i == 3
        )
        gt[0, 0, 0] = k  # the first frame names every object
        res = perturb(rng, gt, max_id=k if task == "semi-supervised" else 6)
        seqs[name] = (gt, res)
    write_davis(tmp_path / "DAVIS", tmp_path / "res", seqs, task=task)
    ours = evaluate_davis(tmp_path / "DAVIS", tmp_path / "res", task=task, chunk_frames=3)
    want = reference_folder(tmp_path / "DAVIS", tmp_path / "res", task=task)
    assert davis_global_csv(ours) == ref.global_csv(want)
    assert davis_per_sequence_csv(ours) == ref.per_sequence_csv(want)
    got = np.array(
        [[o.stats[k] for k in ("j_mean", "j_recall", "j_decay", "f_mean", "f_recall", "f_decay")] for o in ours.objects]
    )
    exp = np.array([want["J"]["M"], want["J"]["R"], want["J"]["D"], want["F"]["M"], want["F"]["R"], want["F"]["D"]]).T
    np.testing.assert_allclose(got, exp, rtol=0, atol=1e-12)


def test_csv_text_by_hand(tmp_path):
    obj = np.zeros((12, 12), np.uint8)
    obj[2:6, 2:6] = 1
    two = obj.copy()
    two[2:6, 7:11] = 2
    empty = np.zeros_like(obj)
    # "zebra" (listed first): object 1 perfect in the 2 evaluated frames; object 2 missed in one of them
    zebra_gt = np.stack([two, two, two, two])
    zebra_res = np.stack([empty, two, obj, empty])
    # "ant": one object, predicted in neither evaluated frame
    ant_gt = np.stack([obj, obj, obj, obj])
    ant_res = np.stack([obj, empty, empty, obj])
    write_davis(tmp_path / "D", tmp_path / "R", {"zebra": (zebra_gt, zebra_res), "ant": (ant_gt, ant_res)})
    res = evaluate_davis(tmp_path / "D", tmp_path / "R")
    # per object (J mean, F mean): zebra_1 (1, 1), zebra_2 (0.5, 0.5), ant_1 (0, 0) -- the set file's order
    assert davis_per_sequence_csv(res) == (
        "Sequence,J-Mean,F-Mean\nzebra_1,1.000,1.000\nzebra_2,0.500,0.500\nant_1,0.000,0.000\n"
    )
    # recall: 1, 0.5, 0 -> 0.5; decay (2 frames: edges 0 0 1 1 1, bins x[0:1] and x[1:2]): 0, 1 - 0 = 1, 0 -> 1/3
    assert davis_global_csv(res) == (
        "J&F-Mean,J-Mean,J-Recall,J-Decay,F-Mean,F-Recall,F-Decay\n0.500,0.500,0.500,0.333,0.500,0.500,0.333\n"
    )
    assert [o.object_id for o in res.objects] == [1, 2, 1]
    assert res.global_results()["J-Mean"] == 0.5


def test_a_long_sequence_streams_in_chunks_and_warns_about_wrapped_edges(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    gt = np.zeros((302, 8, 10), np.uint8)
    gt[:, 2:6, 2:6] = 1
    res = gt.copy()
    res[150:, 2:6, 2:4] = 0  # half the object lost in the second half: a decay
    write_davis(tmp_path / "D", tmp_path / "R", {"long": (gt, res)})
    seen: list[int] = []
    add = DavisSequence.add

    def spy(self, preds, target, frame_names=None):
        seen.append(preds.shape[0])
        return add(self, preds, target, frame_names)

    monkeypatch.setattr(DavisSequence, "add", spy)
    with pytest.warns(UserWarning, match=r"more than 256 evaluated frames.*long \(300 frames"):
        wrapped = evaluate_davis(tmp_path / "D", tmp_path / "R", chunk_frames=64)
    assert max(seen) <= 64 and sum(seen) == 300
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed = evaluate_davis(tmp_path / "D", tmp_path / "R", chunk_frames=64, decay_edges="corrected")
    want = reference_folder(tmp_path / "D", tmp_path / "R")
    assert np.isnan(wrapped.objects[0].stats["j_decay"]) and np.isnan(want["J"]["D"][0])
    assert fixed.objects[0].stats["j_decay"] == pytest.approx(1 - 0.5, abs=1e-12)
    assert davis_global_csv(wrapped) == ref.global_csv(want)  # the NaN decay: an empty field, as pandas writes it
    assert ",," in davis_global_csv(wrapped)
    del rng


def test_device_and_backends_agree(tmp_path, device):
    rng = np.random.default_rng(4)
    gt = moving_objects(rng, 6, 30, 40, 3, void=True)
    write_davis(tmp_path / "D", tmp_path / "R", {"s": (gt, perturb(rng, gt, max_id=5))}, task="unsupervised")
    base = evaluate_davis(tmp_path / "D", tmp_path / "R", task="unsupervised")
    for kwargs in ({"device": device}, {"backend": "torch"}):
        other = evaluate_davis(tmp_path / "D", tmp_path / "R", task="unsupervised", **kwargs)
        assert davis_per_sequence_csv(other) == davis_per_sequence_csv(base)
        for a, b in zip(base.objects, other.objects, strict=True):
            assert torch.equal(a.j, b.j.cpu()) and torch.equal(a.f, b.f.cpu())


# --- bad input: clear errors naming the sequence and the frame ----------------------------------------------------


@pytest.fixture
def folder(tmp_path):
    obj = np.zeros((12, 16), np.uint8)
    obj[2:6, 2:6] = 1
    gt = np.stack([obj] * 4)
    write_davis(tmp_path / "D", tmp_path / "R", {"bear": (gt, gt.copy())})
    return tmp_path / "D", tmp_path / "R"


def test_bad_ids_above_the_ground_truths(folder):
    root, res = folder
    bad = np.zeros((12, 16), np.uint8)
    bad[0, 0] = 3
    save_mask(res / "bear" / "00002.png", bad)
    with pytest.raises(ValueError, match=r"sequence 'bear', frame 00002: the result has object id 3 .* 1 object"):
        evaluate_davis(root, res)


def test_missing_frame(folder):
    root, res = folder
    (res / "bear" / "00001.png").unlink()
    with pytest.raises(ValueError, match=r"sequence 'bear', frame 00001 \(result\): .*00001.png is missing"):
        evaluate_davis(root, res)


def test_frame_of_another_size(folder):
    root, res = folder
    save_mask(res / "bear" / "00002.png", np.zeros((12, 17), np.uint8))
    with pytest.raises(ValueError, match=r"sequence 'bear', frame 00002 \(result\): .* 17x12 but .* 16x12"):
        evaluate_davis(root, res)


def test_rgb_png(folder):
    from PIL import Image

    root, res = folder
    Image.fromarray(np.zeros((12, 16, 3), np.uint8)).save(res / "bear" / "00001.png")
    with pytest.raises(ValueError, match=r"sequence 'bear', frame 00001 \(result\): .*mode 'RGB'"):
        evaluate_davis(root, res)


def test_more_than_twenty_proposals(tmp_path):
    obj = np.zeros((12, 16), np.uint8)
    obj[2:6, 2:6] = 1
    props = np.zeros((3, 12, 16), np.uint8)
    props[2].reshape(-1)[:21] = np.arange(1, 22)
    write_davis(tmp_path / "D", tmp_path / "R", {"goat": (np.stack([obj] * 3), props)}, task="unsupervised")
    with pytest.raises(ValueError, match=r"sequence 'goat', frame 00002: proposal id 21 exceeds .* 20 proposals"):
        evaluate_davis(tmp_path / "D", tmp_path / "R", task="unsupervised")


def test_missing_lists_and_folders(tmp_path, folder):
    root, res = folder
    with pytest.raises(FileNotFoundError, match="test-dev"):
        evaluate_davis(root, res, subset="test-dev")
    with pytest.raises(FileNotFoundError, match=r"nowhere: the DAVIS root folder does not exist"):
        evaluate_davis(tmp_path / "nowhere", res)
    with pytest.raises(FileNotFoundError, match="sequence 'wolf'"):
        evaluate_davis(root, res, sequences=["wolf"])
    with pytest.raises(ValueError, match="`task`"):
        evaluate_davis(root, res, task="interactive")
    with pytest.raises(ValueError, match="`chunk_frames`"):
        evaluate_davis(root, res, chunk_frames=0)
    assert sorted(p.name for p in Path(res, "bear").iterdir()) == [f"{t:05d}.png" for t in range(4)]  # nothing written


def test_the_readers_are_declared():
    from segmetrics_torch.readers import READERS

    declared = {name: r for name, r in READERS.items() if name.startswith("segmetrics_torch.functional.video.")}
    mask = declared["segmetrics_torch.functional.video.davis.read_davis_mask"]
    assert mask.extensions == (".png",) and mask.from_folders
    sets = declared["segmetrics_torch.functional.video.davis.davis_sequences"]
    assert sets.extensions == (".txt",) and not sets.from_folders


@pytest.mark.slow
def test_a_2000_frame_sequence_in_bounded_memory(tmp_path):
    import tracemalloc

    t, h, w = 2000, 96, 128
    gt = np.zeros((t, h, w), np.uint8)
    for i in range(t):
        gt[i, 10:30, 5 + i % 20 : 25 + i % 20] = 1
        gt[i, 35:45, 40:60] = 2
    res = np.roll(gt, 1, axis=2)
    write_davis(tmp_path / "D", tmp_path / "R", {"long": (gt, res)}, task="unsupervised")
    whole = 2 * gt.nbytes  # the ground truth's and the result's frames: 49 MB
    tiny = torch.zeros(3, 4, 4, dtype=torch.uint8)
    tiny[:, 1:3, 1:3] = 1
    davis_sequence(tiny.clone(), tiny, task="unsupervised")  # the kernel loaded before tracing (numba's cache)
    tracemalloc.start()
    try:
        with pytest.warns(UserWarning, match="2000 frames"):  # the reference's wrapped Decay edges
            out = evaluate_davis(tmp_path / "D", tmp_path / "R", task="unsupervised", chunk_frames=32)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < whole / 4, peak  # a few chunks of frames and the per-frame values, never the whole sequence
    assert [o.object_id for o in out.objects] == [1, 2] and all(o.j.numel() == t for o in out.objects)
