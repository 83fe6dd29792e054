"""The Triton kernels of the distance transform (what CUDA inputs take), run on the CPU by Triton's interpreter.

``TRITON_INTERPRET=1`` executes the same kernel source with numpy, so these tests check its arithmetic (packed keys,
int32 / int64 choice, tile masks, the envelope row pass that every image takes and the tiled one kept for a failing
envelope kernel, tie rule) bit for bit against scipy and the
tensor route on the inputs of ``test_distance.py``; the compiled kernels' speed is measured on a lent device
(``benchmarks/run_on_gpu.sh``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from hypothesis import given, settings

from segmetrics_torch.ops import backend, distance, use_backend
from segmetrics_torch.ops.distance import distance_transform_edt

from .test_distance import TIE_PATTERNS, _points, random_blobs, scipy_edt, small_masks

pytest.importorskip("triton")


def _force_triton_route(mp: pytest.MonkeyPatch) -> None:
    """CUDA tensors take the compiled kernel by themselves; CPU ones take the interpreted kernel once the dispatch
    (which asks for a CUDA device) is forced. Skip where neither can run."""
    if torch.cuda.is_available():
        return
    if os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("no CUDA device and TRITON_INTERPRET is not 1 (tests/conftest.py sets it before triton loads)")
    from segmetrics_torch.ops._kernels import edt_triton

    edt_triton.kernels.cache_clear()  # made again under the interpreter
    mp.setattr(distance, "_triton_enabled", lambda device: True)


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture
def interpreted(monkeypatch):
    """The Triton route: compiled on a CUDA device, interpreted on CPU tensors; records the row passes it ran."""
    _force_triton_route(monkeypatch)
    calls = []
    real = distance._edt_triton

    def counted(*args):
        calls.append(args[0].shape)
        return real(*args)

    monkeypatch.setattr(distance, "_edt_triton", counted)
    return calls


def _keys(h: int, w: int) -> tuple[int, int]:
    """``(big, bits)`` of an H x W image, as ``_edt_torch`` passes them to ``_edt_triton``."""
    return h * h + w * w, max(1, (w - 1).bit_length())


def assert_matches_scipy(mask: np.ndarray) -> None:
    batch = mask[None] if mask.ndim == 2 else mask
    dist, index = distance_transform_edt(torch.from_numpy(batch).to(DEVICE), backend="torch")
    dist, index = dist.cpu(), index.cpu()
    for i, image in enumerate(batch):
        ref_dist, ref_index = scipy_edt(image)
        np.testing.assert_array_equal(index[i].numpy(), ref_index, err_msg=f"indices of image {i}")
        np.testing.assert_array_equal(dist[i].numpy(), ref_dist, err_msg=f"distances of image {i}")


@pytest.mark.parametrize("name", list(TIE_PATTERNS))
def test_tie_heavy_patterns_match_scipy(interpreted, name):
    assert_matches_scipy(TIE_PATTERNS[name])
    assert interpreted, "the Triton route did not run"


@pytest.mark.parametrize(
    "mask",
    [
        pytest.param(_points(1, 1, (0, 0)), id="1x1"),
        pytest.param(_points(9, 13, (8, 12)), id="single-bottom-right"),
        pytest.param(np.ones((7, 5), dtype=bool), id="full"),
        pytest.param(np.random.default_rng(1).random((1, 157)) < 0.05, id="1xN-several-tiles"),
        pytest.param(np.random.default_rng(2).random((57, 1)) < 0.1, id="Nx1"),
        pytest.param(_points(1, 130, (0, 10), (0, 120)), id="1xN-tie-across-tiles"),
        pytest.param(np.stack([_points(12, 70, (3, 3)), np.zeros((12, 70), bool)]), id="empty-in-batch"),
    ],
)
def test_edge_shapes_match_scipy(interpreted, mask):
    assert_matches_scipy(mask)


def test_blobs_match_scipy(interpreted):
    rng = np.random.default_rng(7)
    assert_matches_scipy(np.stack([random_blobs(rng, 24, 100) for _ in range(2)]))


@settings(max_examples=25, deadline=None)
@given(mask=small_masks())
def test_random_small_masks_match_scipy(mask):
    # hypothesis does not mix with function-scoped fixtures: the interpreter and the dispatch are set up here
    with pytest.MonkeyPatch.context() as mp:
        _force_triton_route(mp)
        assert_matches_scipy(mask)


@pytest.mark.parametrize(("h", "w"), [(1, 600), (3, 848)])
def test_widest_int32_keys_match_scipy(interpreted, h, w):
    # near the widest rows whose packed keys fit in int32 (the kernel's type)
    rng = np.random.default_rng(w)
    mask = rng.random((h, w)) < 0.004
    mask[0, 0] = True
    assert_matches_scipy(mask)
    assert interpreted, "the Triton route did not run"


def test_keys_wider_than_int32_take_the_envelope_kernel(interpreted):
    # 1100 columns: the packed keys would need 33 bits; the envelope row pass (int64 arithmetic, O(W) per row) runs
    h, w = 2, 1100
    bits = (w - 1).bit_length()
    assert ((h * h + w * w + (w - 1) ** 2) << bits) >= 2**31
    mask = np.random.default_rng(3).random((h, w)) < 0.01
    mask[0, 0] = True
    assert_matches_scipy(mask)
    assert interpreted, "the Triton route did not run"
    got = distance._edt_triton(torch.from_numpy(mask[None]).to(DEVICE), *_keys(h, w))
    assert got is not None  # taken, not declined


def test_images_beyond_int32_distances_take_the_tensor_route(interpreted):
    # the envelope keeps squared distances in int32: an image whose H^2 + W^2 does not fit is declined
    mask = torch.from_numpy(_points(3, 5, (1, 1))[None]).to(DEVICE)
    assert distance._edt_triton(mask, 2**31, 3) is None


@pytest.fixture
def tiled(interpreted, monkeypatch):
    """The Triton route with the tiled row pass (what images whose keys fit in int32 take where the envelope kernel
    failed; the tests above run the automatic choice, the envelope)."""
    real = distance._edt_triton
    monkeypatch.setattr(distance, "_edt_triton", lambda mask, big, bits: real(mask, big, bits, "tiled"))
    return interpreted


@pytest.mark.parametrize("name", list(TIE_PATTERNS))
def test_tiled_tie_heavy_patterns_match_scipy(tiled, name):
    assert_matches_scipy(TIE_PATTERNS[name])
    assert tiled, "the Triton route did not run"


def test_tiled_edge_shapes_and_blobs_match_scipy(tiled):
    rng = np.random.default_rng(11)
    for mask in (
        _points(1, 1, (0, 0)),
        np.ones((7, 5), dtype=bool),
        _points(1, 130, (0, 10), (0, 120)),
        rng.random((31, 3)) < 0.1,
        np.stack([_points(12, 70, (3, 3)), np.zeros((12, 70), bool)]),
        np.stack([random_blobs(rng, 24, 60) for _ in range(2)]),
    ):
        assert_matches_scipy(mask)


@settings(max_examples=25, deadline=None)
@given(mask=small_masks())
def test_tiled_random_small_masks_match_scipy(mask):
    with pytest.MonkeyPatch.context() as mp:
        _force_triton_route(mp)
        real = distance._edt_triton
        mp.setattr(distance, "_edt_triton", lambda m, big, bits: real(m, big, bits, "tiled"))
        assert_matches_scipy(mask)


@pytest.mark.parametrize(
    ("h", "w"), [(1, 1), (2, 1), (40, 2), (33, 31), (7, 32), (65, 33), (31, 64), (12, 65), (9, 200)]
)
@pytest.mark.parametrize("row_pass", ["tiled", "envelope"])
def test_kernels_equal_the_tensor_route(interpreted, h, w, row_pass):
    # block edges of the kernels (32 columns, 32 x 64 tiles), with an empty image, a full one and a sparse one
    rng = np.random.default_rng(h * w)
    mask = torch.from_numpy(np.stack([rng.random((h, w)) < 0.05, np.zeros((h, w), bool), np.ones((h, w), bool)]))
    mask[0, h // 2, w // 2] = True
    got = distance._edt_triton(mask.to(DEVICE), *_keys(h, w), row_pass)
    assert got is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(distance, "_triton_enabled", lambda device: False)
        expected = distance._edt_torch(mask.to(DEVICE))
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])


def test_a_failing_kernel_warns_once_and_the_tensor_route_answers(monkeypatch):
    from segmetrics_torch.ops._kernels import edt_triton

    def broken():
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(edt_triton, "kernels", broken)
    monkeypatch.setattr(distance, "_TRITON_FAILED", False)
    monkeypatch.setattr(backend, "_triton_available", lambda: True)
    cuda_like = torch.device("cuda")
    assert distance._triton_enabled(cuda_like)
    mask = TIE_PATTERNS["lattice-3x3"]
    # the dispatch asks about the mask's device: force it for this CPU tensor, as on a CUDA one
    monkeypatch.setattr(distance, "_triton_enabled", lambda device: not distance._TRITON_FAILED)
    with pytest.warns(RuntimeWarning, match="Triton kernel of the distance transform failed.*no compiler here"):
        assert_matches_scipy(mask)
    assert distance._TRITON_FAILED
    monkeypatch.setattr(distance, "_triton_enabled", lambda device: not distance._TRITON_FAILED)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_matches_scipy(mask)  # no second attempt, no second warning


def test_the_switch_turns_it_off(monkeypatch):
    monkeypatch.setattr(backend, "_triton_available", lambda: True)
    monkeypatch.setattr(distance, "_TRITON_FAILED", False)
    assert distance._triton_enabled(torch.device("cuda"))
    assert not distance._triton_enabled(torch.device("cpu"))
    with use_backend("tensor"):  # the tensor route everywhere: no Triton either
        assert not distance._triton_enabled(torch.device("cuda"))
    assert distance._triton_enabled(torch.device("cuda"))
    monkeypatch.setattr(distance, "_TRITON_FAILED", True)  # failed to build once: the tensor route from then on
    assert not distance._triton_enabled(torch.device("cuda"))


def test_a_failing_envelope_pass_turns_off_only_itself(interpreted, monkeypatch):
    """The envelope kernel failing to build sends the wide images to the tensor route (one warning); the smaller
    images keep the tiled Triton kernels."""
    _counting_kernels(monkeypatch, fail_envelope=True)
    wide = np.random.default_rng(4).random((2, 1100)) < 0.01
    wide[0, 0] = True
    with pytest.warns(RuntimeWarning, match="envelope row pass .* failed.*no envelope here"):
        assert_matches_scipy(wide)
    assert distance._ENVELOPE_FAILED and not distance._TRITON_FAILED
    small = TIE_PATTERNS["lattice-3x3"]
    assert distance._edt_triton(torch.from_numpy(small[None]).to(DEVICE), *_keys(*small.shape)) is not None
    assert distance._edt_triton(torch.from_numpy(wide[None]).to(DEVICE), *_keys(*wide.shape)) is None


#: compiles the three kernels for an sm_90 device (Triton's bundled ptxas; no GPU needed)
_COMPILE = """
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from segmetrics_torch.ops._kernels import edt_triton

columns, rows, envelope = edt_triton.kernels()
common = {"h": "i32", "w": "i32", "scale": "i32", "big": "i32"}
cases = [
    (columns, {"mask_ptr": "*u8", "gy_ptr": "*i32", "packed_ptr": "*i32", **common, "BLOCK": "constexpr",
               "PACK": "constexpr"}, {"BLOCK": 32, "PACK": pack}) for pack in (True, False)
] + [
    (rows, {"packed_ptr": "*i32", "gy_ptr": "*i32", "dist_ptr": "*fp64", "index_ptr": "*i64", "w": "i32",
            "scale": "i32", "big": "i32", "top": "i32", "BLOCK_X": "constexpr", "BLOCK_C": "constexpr"},
     {"BLOCK_X": 32, "BLOCK_C": 64}),
    (envelope, {"g_ptr": "*i32", "gy_ptr": "*i32", "v_ptr": "*i32", "z_ptr": "*i32", "dist_ptr": "*fp64",
                "index_ptr": "*i64", "n_rows": "i32", "w": "i32", "big": "i32", "lowest": "i32",
                "BLOCK_R": "constexpr"}, {"BLOCK_R": 32}),
]
for fn, signature, constants in cases:
    constexprs = {(fn.arg_names.index(name),): value for name, value in constants.items()}
    kernel = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": 1})
    assert "cubin" in kernel.asm, fn
    print("compiled", fn.fn.__name__, constants)
"""


@pytest.mark.slow
def test_the_kernels_compile_for_a_cuda_device():
    """The interpreter runs a kernel as Python, so it accepts code Triton's compiler refuses (a helper that is not
    jitted, a Python int where a tensor is needed): each kernel is also compiled, down to a cubin for sm_90, in a
    process without TRITON_INTERPRET (tests/conftest.py sets it for this one)."""
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    environment["TRITON_DEFAULT_FP_FUSION"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", _COMPILE], env=environment, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("compiled") == 4, done.stdout


def _counting_kernels(monkeypatch, fail_envelope: bool = False) -> dict[str, int]:
    """Replaces the jitted kernels by wrappers that count the launches of each row pass (the envelope one raising
    with ``fail_envelope``)."""
    from segmetrics_torch.ops._kernels import edt_triton

    columns, rows, envelope = edt_triton.kernels()
    launches = {"tiled": 0, "envelope": 0}

    class Counted:
        def __init__(self, kernel, name):
            self.kernel, self.name = kernel, name

        def __getitem__(self, grid):
            launches[self.name] += 1
            if fail_envelope and self.name == "envelope":
                raise RuntimeError("no envelope here")
            return self.kernel[grid]

    monkeypatch.setattr(edt_triton, "kernels", lambda: (columns, Counted(rows, "tiled"), Counted(envelope, "envelope")))
    monkeypatch.setattr(distance, "_TRITON_FAILED", False)
    monkeypatch.setattr(distance, "_ENVELOPE_FAILED", False)
    return launches


def test_every_image_takes_the_envelope_row_pass(interpreted, monkeypatch):
    """The envelope row pass is the automatic choice at every size (on an H200 it took 0.25x-0.71x the tiled pass's
    time from 320x320 to 768x768), small images included."""
    launches = _counting_kernels(monkeypatch)
    assert_matches_scipy(TIE_PATTERNS["lattice-3x3"])
    assert launches == {"tiled": 0, "envelope": 1}


def test_a_failing_envelope_pass_leaves_small_images_on_the_tiled_pass(interpreted, monkeypatch):
    """Where the envelope kernel fails, an image whose keys fit in int32 gets the tiled Triton pass in the same call
    (one warning) and in every later one, without trying the envelope again."""
    launches = _counting_kernels(monkeypatch, fail_envelope=True)
    small = TIE_PATTERNS["lattice-3x3"]
    with pytest.warns(RuntimeWarning, match="envelope row pass .* failed.*no envelope here"):
        assert distance._edt_triton(torch.from_numpy(small[None]).to(DEVICE), *_keys(*small.shape)) is not None
    assert launches == {"tiled": 1, "envelope": 1}
    assert_matches_scipy(small)
    assert launches == {"tiled": 2, "envelope": 1}
