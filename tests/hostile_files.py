"""Hostile and broken inputs for the image loader, written at test time (nothing large is committed).

`write_hostile(folder)` → {name: path}. Each one is small on disk; the costly ones only *declare*
a huge size or hide a slow path, which is what the loader must refuse before decoding.
"""

from __future__ import annotations

import io
import os
import socket
import struct
import tempfile
import zlib
from pathlib import Path

from PIL import Image

EPS_MARKER = "hayai-eps-payload-ran"  # the file the PostScript payload writes when Ghostscript runs


def eps_payload(marker: Path) -> bytes:
    """A real EPS file: Ghostscript (even with -dSAFER, 10.00) writes `marker` and prints a line."""
    return (
        b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 16 16\n"
        + f"({marker}) (w) file dup (owned) writestring closefile\n".encode()
        + b"(ghostscript was here) print flush\n"
        b"newpath 0 0 moveto 16 16 lineto stroke\nshowpage\n"
    )


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_header_only(width: int, height: int, color_type: int = 6) -> bytes:
    """A PNG that declares width×height (8-bit RGBA by default) with a few bytes of pixel data."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", idat)
        + png_chunk(b"IEND", b"")
    )


def png_bomb(width: int, height: int) -> bytes:
    """A real RGBA PNG of width×height zeros: ~1000× smaller on disk than in memory."""
    row = b"\x00" * (width * 4 + 1)
    z = zlib.compressobj(9)
    body = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", body)
        + png_chunk(b"IEND", b"")
    )


def rle_bmp(width: int = 600_000, height: int = 55, rows: int = 49) -> bytes:
    """An 8-bit RLE BMP of 261 bytes (30 megapixels declared, under the pixel cap): each "one pixel,
    end of line" pair makes Pillow's pure-Python RLE decoder pad the row one byte at a time, so a
    few hundred bytes cost seconds of CPU."""
    palette = b"\x00\x00\x00\x00\xff\xff\xff\x00"
    data = b"\x01\x01\x00\x00" * rows + b"\x00\x01"
    offset = 14 + 40 + len(palette)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 8, 1, len(data), 2835, 2835, 2, 0)
    header = struct.pack("<2sIHHI", b"BM", offset + len(data), 0, 0, offset)
    return header + info + palette + data


def jpeg_declaring(jpeg: bytes, width: int, height: int) -> bytes:
    """A real JPEG whose frame header (SOF0) is patched to declare width×height."""
    at = jpeg.index(b"\xff\xc0") + 5  # marker, length (2), precision (1), then height, width
    return jpeg[:at] + struct.pack(">HH", height, width) + jpeg[at + 4 :]


def encoded(image: Image.Image, fmt: str, **kwargs) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **kwargs)
    return buffer.getvalue()


def write_hostile(folder: Path, marker: Path | None = None) -> dict[str, Path]:
    """Every hostile case as a file in `folder` (all named like images) → {case: path}."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = marker or folder / EPS_MARKER
    good = Image.new("RGB", (64, 32), (250, 250, 250))
    png = encoded(good, "PNG")
    files: dict[str, bytes] = {
        "eps-named-png.png": eps_payload(marker),
        "pdf-named-jpg.jpg": b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n",
        "empty.png": b"",
        "text.png": b"just some text, not an image\n" * 4,
        "truncated.png": png[: len(png) // 2],
        "bad-magic-only.png": b"\x89PNG\r\n\x1a\n not really",
        "png-13000-rgba.png": png_header_only(13_000, 13_000),
        "png-wide.png": png_header_only(2**31 - 1, 1),
        "png-zero-size.png": png_header_only(0, 10),
        "rle-261.bmp": rle_bmp(),
        "jpeg-65000.jpg": jpeg_declaring(encoded(good, "JPEG"), 65_000, 65_000),
        "tiff-no-size.tif": b"II*\x00\x08\x00\x00\x00\x01\x00\x03\x01\x03\x00\x01\x00\x00\x00\x01\x00"
        b"\x00\x00\x00\x00\x00\x00",
        "gif-broken-frames.gif": encoded(good, "GIF")[:-1] + b"\x21\xf9\x04\x00" + b"\x2c" * 3,
    }
    paths = {}
    for name, data in files.items():
        (folder / name).write_bytes(data)
        paths[name] = folder / name
    big = folder / "sparse-3gb.png"  # no blocks on disk: a 3 GB non-image
    with open(big, "wb") as f:
        f.truncate(3 * 2**30)
    paths[big.name] = big
    fifo = folder / "fifo.png"
    os.mkfifo(fifo)
    paths[fifo.name] = fifo
    zero = folder / "dev-zero.png"
    zero.symlink_to("/dev/zero")
    paths[zero.name] = zero
    sock = folder / "socket.png"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(sock))
    except OSError:  # the path is longer than a socket address may be: bind short, link to it
        short = Path(tempfile.mkdtemp(prefix="hs-")) / "s"
        server.bind(str(short))
        sock.symlink_to(short)
    server.close()  # the socket file stays
    paths[sock.name] = sock
    (folder / "folder.png").mkdir()
    paths["folder.png"] = folder / "folder.png"
    return paths
