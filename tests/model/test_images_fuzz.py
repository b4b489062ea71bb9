"""A short fuzz of the image loader (hypothesis): small valid images of every allowed format, with
bytes flipped, inserted, cut or a header field rewritten. The loader must return an RGB image or
raise ImageError: never another exception, never a hang. HAYAI_FUZZ_EXAMPLES runs it longer."""

from __future__ import annotations

import io
import os
import struct

import pytest
from hostile_files import rle_bmp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from model.images import ImageError, open_image

pytestmark = pytest.mark.slow


def _seeds() -> list[bytes]:
    rgb = Image.new("RGB", (23, 17), (240, 240, 240))
    for x in range(23):
        rgb.putpixel((x, x % 17), (10, 20, 30))
    rgba = rgb.convert("RGBA")
    rgba.putalpha(128)
    out = []

    def save(image, fmt, **kwargs):
        buffer = io.BytesIO()
        image.save(buffer, fmt, **kwargs)
        out.append(buffer.getvalue())

    save(rgb, "PNG")
    save(rgba, "PNG")
    save(rgb.convert("P"), "PNG", transparency=3)
    save(Image.new("I;16", (9, 7), 30000), "PNG")
    save(rgb, "JPEG")
    save(rgb, "JPEG", progressive=True, exif=b"Exif\x00\x00MM\x00*\x00\x00\x00\x08\x00\x00")
    save(rgb.convert("CMYK"), "JPEG")
    save(rgb, "WEBP", lossless=True)
    save(rgba, "WEBP", quality=50)
    save(rgb, "BMP")
    save(rgb.convert("P"), "BMP")
    save(rgb.convert("P"), "GIF")
    frames = [rgb, Image.new("RGB", (23, 17), (0, 0, 255))]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    out.append(buffer.getvalue())
    buffer = io.BytesIO()
    frames[0].save(buffer, "PNG", save_all=True, append_images=frames[1:])  # APNG
    out.append(buffer.getvalue())
    save(rgb, "TIFF")
    save(rgb, "TIFF", compression="tiff_lzw")
    save(rgba, "TIFF", compression="tiff_deflate")
    save(Image.new("F", (5, 4), 0.5), "TIFF")
    save(Image.new("1", (30, 9), 1), "TIFF", compression="group4")
    out.append(rle_bmp(width=40, height=6, rows=6))
    return out


SEEDS = _seeds()


@st.composite
def mutated(draw):
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, 8))):
        action = draw(st.sampled_from(["flip", "insert", "delete", "field"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if action == "flip" and data:
            data[at] = draw(st.integers(0, 255))
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif action == "delete" and data:
            del data[at : at + draw(st.integers(1, 64))]
        elif action == "field" and len(data) >= at + 4:  # a size, count or offset gone wild
            value = draw(st.sampled_from([0, 1, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF]))
            data[at : at + 4] = struct.pack(draw(st.sampled_from([">I", "<I"])), value)
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


@settings(
    max_examples=int(os.environ.get("HAYAI_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
@given(mutated())
def test_the_loader_returns_rgb_or_image_error(data):
    try:
        image = open_image(data)
    except ImageError as e:
        message = str(e)
        assert message and "\n" not in message and " at 0x" not in message
        return
    assert image.mode == "RGB" and image.width >= 1 and image.height >= 1


def test_every_seed_opens():
    for data in SEEDS:
        assert open_image(data).mode == "RGB"
