"""The one image loader (model/images.py) against hostile and broken inputs (tests/hostile_files.py).

Each case is refused before any pixel is decoded, with one plain sentence; allowed formats open.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hostile_files import eps_payload, png_bomb, png_header_only, rle_bmp, write_hostile
from PIL import EpsImagePlugin, Image

from model import images
from model.config import ImageCap
from model.images import ImageError, open_image, probe, read_bytes
from model.rgb import to_rgb

REPO = Path(__file__).resolve().parents[2]

# case → words its message must hold
EXPECTED = {
    "eps-named-png.png": "not a supported image format",
    "pdf-named-jpg.jpg": "not a supported image format",
    "empty.png": "empty",
    "text.png": "not a supported image format",
    "truncated.png": "PNG image is damaged or truncated",
    "bad-magic-only.png": "PNG image is damaged",
    "png-13000-rgba.png": "13000×13000",
    "png-wide.png": "the PNG image declares more than 179 megapixels",
    "png-zero-size.png": "PNG image is damaged",
    "rle-261.bmp": "RLE-compressed BMP",
    "jpeg-65000.jpg": "the JPEG image declares more than 179 megapixels",
    "tiff-no-size.tif": "TIFF image is damaged",
    "sparse-3gb.png": "3.0 GB",
    "fifo.png": "named pipe",
    "dev-zero.png": "device",
    "socket.png": "socket",
    "folder.png": "folder",
}


@pytest.fixture
def hostile(tmp_path):
    return write_hostile(tmp_path / "hostile", marker=tmp_path / "eps-ran")


def test_every_hostile_file_is_refused_with_one_plain_sentence(hostile):
    assert set(EXPECTED) <= set(hostile)
    for name, words in EXPECTED.items():
        with pytest.raises(ImageError) as caught:
            open_image(hostile[name])
        message = str(caught.value)
        assert words in message, (name, message)
        assert " at 0x" not in message and "\n" not in message, (name, message)


def test_a_gif_with_a_broken_second_frame_gives_its_first_frame(hostile):
    rgb = open_image(hostile["gif-broken-frames.gif"])  # no frame counting, so no IndexError
    assert rgb.mode == "RGB" and rgb.size == (64, 32)


def test_ghostscript_is_off_and_eps_never_reaches_it(tmp_path):
    marker = tmp_path / "eps-ran"
    with pytest.raises(ImageError, match="not a supported image format"):
        open_image(eps_payload(marker))
    assert EpsImagePlugin.gs_binary is False  # even a plain Image.open elsewhere cannot start it
    assert not marker.exists()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "BMP", "GIF", "TIFF"])
def test_each_allowed_format_opens_by_content_whatever_its_name(tmp_path, fmt):
    image = Image.new("RGB", (40, 24), (200, 30, 30))
    path = tmp_path / "named-wrong.xyz"
    image.save(path, fmt)
    rgb = open_image(path)
    assert rgb.mode == "RGB" and rgb.size == (40, 24)
    assert probe(path.read_bytes()) == (40, 24)
    from model.preprocess import preprocess  # the model reads what the loader returns

    assert int(preprocess([rgb]).pixel_attention_mask.sum()) > 0


def test_the_pixel_cap_follows_the_patch_budget():
    data = png_header_only(5000, 4000)  # 20 MP: over v2.1's cap, under nova's
    with pytest.raises(ImageError, match=r"5000×4000 .* at most 16\.8 megapixels"):
        probe(data, ImageCap(256))
    assert probe(data, ImageCap(512)) == (5000, 4000)


def test_a_png_bomb_is_refused_from_its_header(tmp_path):
    bomb = png_bomb(9000, 9000)  # 324 MB of RGBA in a file of a few hundred kB
    assert len(bomb) < 1_000_000
    with pytest.raises(ImageError, match="9000×9000"):
        open_image(bomb, ImageCap(256))


def test_the_261_byte_rle_bmp_is_refused_without_decoding():
    data = rle_bmp()
    assert len(data) < 300
    with Image.open(io.BytesIO(data)) as raw:  # what Pillow would decode: 30 MP in pure Python
        assert raw.size == (600_000, 55) and raw.tile[0][0] == "bmp_rle"
    with pytest.raises(ImageError, match="RLE-compressed BMP"):
        open_image(data)


def test_a_large_jpeg_is_decoded_at_a_reduced_scale():
    big = Image.new("RGB", (4096, 2048), (255, 255, 255))
    buffer = io.BytesIO()
    big.save(buffer, "JPEG")
    th, tw = images.target_size(2048, 4096, 16, 256)
    rgb = open_image(buffer.getvalue(), ImageCap(256))
    assert rgb.width < 4096 and rgb.width >= 2 * tw and rgb.height >= 2 * th


def test_reading_is_bounded_and_never_blocks(tmp_path, monkeypatch):
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)  # nobody writes: a blocking open would hang here
    with pytest.raises(ImageError, match="named pipe"):
        read_bytes(fifo)
    monkeypatch.setattr(images, "MAX_FILE_BYTES", 1000)
    big = tmp_path / "big.png"
    big.write_bytes(b"\0" * 1001)
    with pytest.raises(ImageError, match="larger than"):
        read_bytes(big)
    with pytest.raises(ImageError, match="no such file"):
        read_bytes(tmp_path / "missing.png")


def test_compositing_strip_by_strip_equals_one_composite():
    rng = np.random.default_rng(0)
    rgba = Image.fromarray(rng.integers(0, 256, (700, 90, 4), dtype=np.uint8), "RGBA")
    whole = Image.alpha_composite(Image.new("RGBA", rgba.size, (255,) * 4), rgba).convert("RGB")
    np.testing.assert_array_equal(np.asarray(to_rgb(rgba)), np.asarray(whole))
    gray16 = Image.fromarray(rng.integers(0, 65536, (600, 50), dtype=np.uint16))
    expected = np.clip(np.rint(np.asarray(gray16).astype(np.float64) * 255 / 65535), 0, 255)
    np.testing.assert_array_equal(np.asarray(to_rgb(gray16).convert("L")), expected)


def test_loading_the_loader_leaves_torch_and_qt_out():
    code = "import sys, model.images; print(any(m in sys.modules for m in ('torch', 'PySide6')))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
