"""The fast DAVIS mask decoder (ops.davis.decode_png_ids) against Pillow, the reference's reader: every PNG filter
type, palette and gray images, multi-chunk image data, and every file it does not decode left to Pillow."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from PIL import Image

from segmetrics_torch.functional.video import read_davis_mask
from segmetrics_torch.ops import davis as ops_davis
from segmetrics_torch.ops.davis import decode_png_ids

pytest.importorskip("zlib_ng", reason="the fast decoder needs zlib-ng (without it every file goes to Pillow)")


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def encode_png(pixels: np.ndarray, filters: list[int], *, colour: int = 3, idat_parts: int = 1) -> bytes:
    """An 8-bit PNG of `pixels` with the given filter type per row (RFC 2083 6.), written here, plainly."""
    h, w = pixels.shape
    raw = bytearray()
    prior = [0] * w
    for y in range(h):
        row = [int(v) for v in pixels[y]]
        f = filters[y]
        raw.append(f)
        for x in range(w):
            a = row[x - 1] if x else 0
            b = prior[x]
            c = prior[x - 1] if x else 0
            predictor = (0, a, b, (a + b) // 2, _paeth(a, b, c))[f]
            raw.append((row[x] - predictor) & 255)
        prior = row
    data = zlib.compress(bytes(raw), 9)
    cuts = np.linspace(0, len(data), idat_parts + 1).astype(int)
    png = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0))
    if colour == 3:
        png += _chunk(b"PLTE", bytes(range(256)) * 3)
    for i in range(idat_parts):
        png += _chunk(b"IDAT", data[cuts[i] : cuts[i + 1]])
    return png + _chunk(b"IEND", b"")


def _pillow(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 90),
    st.integers(0, 2**31 - 1),
    st.sampled_from([0, 3]),
    st.integers(1, 3),
)
def test_every_filter_type_decodes_as_pillow(h, w, seed, colour, parts):
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (h, w)).astype(np.uint8)
    pixels[: h // 2] = rng.integers(0, 4, (h // 2, w))  # long runs, as in masks
    filters = rng.integers(0, 5, h).tolist()
    data = encode_png(pixels, filters, colour=colour, idat_parts=parts)
    got = decode_png_ids(data)
    assert got is not None
    np.testing.assert_array_equal(got, _pillow(data))
    np.testing.assert_array_equal(got, pixels)


def test_pillow_written_masks_and_the_out_slot(tmp_path):
    labels = np.zeros((30, 70), np.uint8)
    labels[5:20, 10:50] = 1
    labels[12:28, 40:69] = 2
    labels[0, :] = 255
    image = Image.fromarray(labels, mode="P")
    image.putpalette([0, 0, 0, 128, 0, 0, 0, 128, 0] + [255, 255, 255] * 253)
    image.save(tmp_path / "a.png")
    slot = np.full((30, 70), 7, np.uint8)
    got = read_davis_mask(tmp_path / "a.png", slot)
    assert got is slot
    np.testing.assert_array_equal(slot, labels)
    Image.fromarray(labels, mode="L").save(tmp_path / "gray.png")
    np.testing.assert_array_equal(read_davis_mask(tmp_path / "gray.png"), labels)
    other = np.zeros((10, 10), np.uint8)  # another size: a new array, the slot untouched
    assert read_davis_mask(tmp_path / "a.png", other).shape == (30, 70) and not other.any()


def _variants(data: bytes) -> dict[str, bytes]:
    """Files the fast path must leave to Pillow (each still a PNG Pillow may decode or refuse)."""
    ihdr_end = 8 + 25
    bad_crc = bytearray(data)
    bad_crc[ihdr_end - 1] ^= 1
    return {
        "truncated": data[: len(data) - 20],
        "bad IHDR CRC": bytes(bad_crc),
        "no IEND": data[:-12],
        "interlaced": data[:28] + b"\x01" + data[29:],
        "16-bit": data[:24] + b"\x10" + data[25:],
        "RGB": data[:25] + b"\x02" + data[26:],
        "unknown critical chunk": data[:ihdr_end] + _chunk(b"ABCD", b"x") + data[ihdr_end:],
        "not a PNG": b"GIF89a" + data[6:],
        # from a review: files whose chunks Pillow reads and refuses (or reads otherwise), with valid CRCs
        "second IHDR": data[:ihdr_end] + data[8:ihdr_end] + data[ihdr_end:],
        "second IHDR of RGB": data[:ihdr_end] + _chunk(b"IHDR", data[16:25] + b"\x02" + data[26:29]) + data[ihdr_end:],
        "short IHDR": data[:8] + _chunk(b"IHDR", data[16:28]) + data[ihdr_end:],
        "empty sRGB": data[:ihdr_end] + _chunk(b"sRGB", b"") + data[ihdr_end:],
        "short pHYs": data[:ihdr_end] + _chunk(b"pHYs", b"\0" * 8) + data[ihdr_end:],
        "short gAMA": data[:ihdr_end] + _chunk(b"gAMA", b"\0" * 3) + data[ihdr_end:],
        "short cHRM": data[:ihdr_end] + _chunk(b"cHRM", b"\0" * 31) + data[ihdr_end:],
        "zTXt of method 1": data[:-12] + _chunk(b"zTXt", b"k\0\x01" + zlib.compress(b"v")) + data[-12:],
        "iCCP of method 1": data[:ihdr_end] + _chunk(b"iCCP", b"p\0\x01" + zlib.compress(b"v")) + data[ihdr_end:],
    }


def test_everything_else_is_left_to_pillow():
    pixels = np.arange(12 * 20, dtype=np.uint8).reshape(12, 20)
    data = encode_png(pixels, [0, 1, 2, 3, 4] * 2 + [0, 1])
    assert decode_png_ids(data) is not None
    for name, variant in _variants(data).items():
        assert decode_png_ids(variant) is None, name
    raw = b"".join(bytes([5 if y == 0 else 0]) + pixels[y].tobytes() for y in range(12))
    data5 = data[: 8 + 25] + _chunk(b"PLTE", bytes(range(256)) * 3) + _chunk(b"IDAT", zlib.compress(raw))
    data5 += _chunk(b"IEND", b"")
    assert decode_png_ids(data5) is None  # filter type 5: Pillow's to report
    assert decode_png_ids(data, max_pixels=239) is None and decode_png_ids(data, max_pixels=240) is not None


def _outcome(path) -> tuple:
    try:
        return ("ok", read_davis_mask(path).tolist())
    except ValueError as error:
        return ("error", str(error))


def test_reader_gives_pillows_answer_on_every_file(tmp_path, monkeypatch):
    # with and without the fast path: the same array or the same error, whatever the file
    pixels = np.arange(6 * 9, dtype=np.uint8).reshape(6, 9)
    data = encode_png(pixels, [4, 3, 2, 1, 0, 4])
    files = {"plain": data, **_variants(data)}
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(tmp_path / "rgb.png")
    files["rgb"] = (tmp_path / "rgb.png").read_bytes()
    for name, content in files.items():
        (tmp_path / f"{name}.png").write_bytes(content)
    fast = {name: _outcome(tmp_path / f"{name}.png") for name in files}
    monkeypatch.setattr(ops_davis, "_INFLATE", None)  # no zlib-ng: every file through Pillow
    assert decode_png_ids(data) is None
    slow = {name: _outcome(tmp_path / f"{name}.png") for name in files}
    assert fast == slow
    assert fast["plain"] == ("ok", pixels.tolist())
    assert fast["rgb"][0] == "error" and "mode 'RGB'" in fast["rgb"][1]
    assert fast["not a PNG"][0] == "error"


def test_a_gray_image_s_short_transparency_and_a_read_only_out_slot():
    pixels = np.arange(4 * 5, dtype=np.uint8).reshape(4, 5)
    data = encode_png(pixels, [0, 1, 2, 3], colour=0)
    short = data[: 8 + 25] + _chunk(b"tRNS", b"\0") + data[8 + 25 :]
    assert decode_png_ids(short) is None  # Pillow refuses it
    frozen = np.zeros((4, 5), np.uint8)
    frozen.flags.writeable = False
    got = decode_png_ids(data, frozen)
    assert got is not None and got is not frozen and got.tolist() == pixels.tolist()
