"""The one way to open an image from a user's file or bytes: raster formats only, bounded memory and time.

Every place that decodes an image it did not draw itself goes through `open_image` (`hayai ocr`,
`hayai bench --image`, the app's history thumbnails); `expand_inputs` turns the folders given to a
command into their image files. What it guarantees (docs/security.md):

- formats: PNG, JPEG, WebP, BMP, GIF and TIFF, told by content, never by the name. Nothing that runs
  an external program is ever tried (Pillow's EPS plugin would start Ghostscript on a PostScript
  file named `.png`; importing this module also switches Ghostscript off for all of Pillow);
- only regular files, opened without blocking (a FIFO, device or socket is refused at once) and at
  most `MAX_FILE_BYTES` read;
- the declared size is checked before any pixel is decoded: more than `max_pixels(budget)` pixels
  is refused with the numbers, as is an RLE-compressed BMP over `MAX_RLE_BMP_PIXELS` (Pillow decodes
  those in pure Python, a few seconds for a few hundred bytes of file);
- a JPEG much larger than the model's input is decoded at a reduced scale (libjpeg's DCT scaling);
- any failure is an `ImageError` with one plain sentence.

No torch and no Qt here: the app's GUI thread uses it for thumbnails.
"""

from __future__ import annotations

import io
import math
import os
import re
import stat
import sys
import warnings
from pathlib import Path
from typing import cast

import numpy as np
from PIL import EpsImagePlugin, Image, ImageFile, ImageOps

# Ghostscript is never started by Pillow in this process, whatever else calls Image.open.
EpsImagePlugin.gs_binary = False

FORMATS = ("PNG", "JPEG", "WEBP", "BMP", "GIF", "TIFF")  # Pillow's names; the only ones tried
FORMAT_NAMES = "PNG, JPEG, WebP, BMP, GIF, TIFF"
# The names a folder's images have: a folder given as input is read as these files (the content
# still decides the format).
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff"}
# an uncompressed 8K RGBA TIFF still fits; a screenshot PNG is ~1-25 MB
MAX_FILE_BYTES = 128 * 2**20
PATCH_SIZE = 16
MAX_PATCH_BUDGET = 512  # the largest budget of a released variant (nova)
# Shrunk more than this per side, a 16-px glyph becomes one pixel: the model could not read it.
MAX_SHRINK = 16
MAX_RLE_BMP_PIXELS = 2_000_000  # Pillow's BMP RLE decoder runs in Python (~0.1 s per megapixel)
_STRIP_ROWS = 256  # conversions of large images run strip by strip to bound the extra memory


class ImageError(ValueError):
    """The input cannot be read as an image; the message is one plain sentence."""


class ImageTooLarge(ImageError):
    """The input is (or declares) more bytes or pixels than are read (a server answers 413)."""


def max_pixels(max_patches: int = MAX_PATCH_BUDGET, patch_size: int = PATCH_SIZE) -> int:
    """The most pixels an input may declare: the model's budget of patches, each shrunk at most
    MAX_SHRINK times per side (512 patches of 16×16 px → 33.5 megapixels, an 8K screen)."""
    return max_patches * (patch_size * MAX_SHRINK) ** 2


# --- reading bytes --------------------------------------------------------------------------------

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _size_text(n: int) -> str:
    return f"{n / 2**20:,.1f} MB" if n < 2**30 else f"{n / 2**30:,.1f} GB"


def _too_big(n: int) -> ImageError:
    return ImageTooLarge(
        f"the file is {_size_text(n)}; images larger than {_size_text(MAX_FILE_BYTES)} are not read"
    )


def read_bytes(path: str | os.PathLike) -> bytes:
    """A regular file's bytes (at most MAX_FILE_BYTES); `-` reads standard input. Never blocks on a
    FIFO or device: the file is opened non-blocking and checked before anything is read."""
    if str(path) == "-":
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise _too_big(len(data))
        return data
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise ImageError(f"this is {_kind(mode)}, not an image file")
        flags = (
            os.O_RDONLY
            | getattr(os, "O_NONBLOCK", 0)
            | getattr(os, "O_BINARY", 0)
            | getattr(os, "O_CLOEXEC", 0)
        )
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ImageError("no such file") from None
    except PermissionError:
        raise ImageError("permission denied") from None
    except OSError as e:
        raise ImageError(f"cannot open the file ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())  # the file opened, which may differ from the one stat'ed
        if not stat.S_ISREG(st.st_mode):
            raise ImageError(f"this is {_kind(st.st_mode)}, not an image file")
        if st.st_size > MAX_FILE_BYTES:
            raise _too_big(st.st_size)
        try:
            data = f.read(MAX_FILE_BYTES + 1)
        except OSError as e:
            raise ImageError(f"cannot read the file ({e.strerror or e})") from None
    if len(data) > MAX_FILE_BYTES:  # grew while we read, or a /proc-like file
        raise _too_big(len(data))
    return data


def expand_inputs(names: list[str]) -> list[str]:
    """Folders become their image files (sorted by name); files and `-` stay as given. A FIFO or
    device with an image suffix stays in the list: the loader refuses it at once, with a message."""
    out = []
    for name in names:
        p = Path(name)
        if name != "-" and p.is_dir():
            out += [str(f) for f in sorted(p.iterdir()) if f.suffix.lower() in IMAGE_SUFFIXES]
        else:
            out.append(name)
    return out


# --- opening --------------------------------------------------------------------------------------


def _detail(e: BaseException) -> str:
    """Pillow's message without object reprs such as `<_io.BytesIO object at 0x7f…>`."""
    text = re.sub(r"\s*<[^<>]* at 0x[0-9a-fA-F]+>", "", str(e)).strip(" :")
    return text or type(e).__name__


def _damaged(fmt: str, e: BaseException) -> ImageError:
    if isinstance(e, MemoryError):
        return ImageError(f"not enough memory to decode this {fmt} image")
    return ImageError(f"the {fmt} image is damaged or truncated ({_detail(e)})")


_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF8", "GIF"),
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)


def _signature(data: bytes) -> str:
    """The allowed format whose magic bytes start `data` ("" for none)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    return next((name for magic, name in _SIGNATURES if data.startswith(magic)), "")


def _identify(data: bytes, buffer: io.BytesIO | None = None) -> ImageFile.ImageFile:
    """The lazily opened image (header read, no pixels decoded), from an allowed format only."""
    if not data:
        raise ImageError("the file is empty")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # our own size check below replaces Pillow's warnings
            return Image.open(buffer or io.BytesIO(data), formats=FORMATS)
    except Image.DecompressionBombError:  # Pillow's own hard limit, far above ours
        assert Image.MAX_IMAGE_PIXELS is not None  # Pillow raises this only while a limit is set
        raise ImageError(
            f"the {(_signature(data) + ' ') if _signature(data) else ''}image declares more than {2 * Image.MAX_IMAGE_PIXELS / 1e6:,.0f} "
            f"megapixels; the model can use at most {max_pixels() / 1e6:.1f} megapixels"
        ) from None
    except Image.UnidentifiedImageError:
        fmt = _signature(data)
        if fmt:
            raise ImageError(f"the {fmt} image is damaged: its header cannot be read") from None
        raise ImageError(f"not a supported image format (supported: {FORMAT_NAMES})") from None
    except Exception as e:  # a header that confuses a plugin: struct.error, IndexError, ...
        raise ImageError(f"not a readable image: its header is damaged ({_detail(e)})") from None


def _format_name(image) -> str:
    return {"WEBP": "WebP"}.get(image.format, image.format or "image")


def _check_size(image, max_patches: int) -> None:
    width, height = image.size
    fmt = _format_name(image)
    if width < 1 or height < 1:
        raise ImageError(f"the {fmt} image declares no pixels ({width}×{height})")
    limit = max_pixels(max_patches)
    if width * height > limit:
        raise ImageTooLarge(
            f"the {fmt} image declares {width}×{height} pixels ({width * height / 1e6:,.1f} megapixels); "
            f"the model can use at most {limit / 1e6:.1f} megapixels ({max_patches} patches of "
            f"{PATCH_SIZE}×{PATCH_SIZE} px, shrunk at most {MAX_SHRINK}× per side): shrink or crop it first"
        )
    tile = getattr(image, "tile", None) or []
    if tile and tile[0][0] == "bmp_rle" and width * height > MAX_RLE_BMP_PIXELS:
        raise ImageTooLarge(
            f"the RLE-compressed BMP declares {width}×{height} pixels; such BMPs are read up to "
            f"{MAX_RLE_BMP_PIXELS / 1e6:.0f} megapixels (save it as PNG instead)"
        )


def probe(data: bytes, max_patches: int = MAX_PATCH_BUDGET) -> tuple[int, int]:
    """(width, height) as declared, after every check `open_image` makes before decoding."""
    with _identify(data) as image:
        _check_size(image, max_patches)
        return image.size


def open_image(source, max_patches: int = MAX_PATCH_BUDGET):
    """A path, `-` (stdin) or bytes → an RGB PIL image (the first frame, EXIF orientation applied).

    `max_patches` is the budget of the model that will read it (bounds the pixels accepted and the
    JPEG reduction). Raises ImageError, and nothing else, for any input it cannot read.
    """
    data = bytes(source) if isinstance(source, (bytes, bytearray)) else read_bytes(source)
    buffer = io.BytesIO(data)
    image = _identify(data, buffer)
    try:
        _check_size(image, max_patches)
        fmt = _format_name(image)
        if image.format == "JPEG":
            _reduce_jpeg(image, max_patches)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                image.load()
        except Exception as e:  # OSError "truncated", SyntaxError, ValueError, IndexError, ...
            raise _damaged(fmt, e) from None
        buffer.close()  # the file's bytes are not needed once decoded: free them before converting
        del data, source
        try:
            rgb = _rgb(image, owned=True)
        except Exception as e:
            raise _damaged(fmt, e) from None
    except BaseException:
        image.close()
        raise
    if rgb is not image:
        image.close()
    return rgb


def _reduce_jpeg(image, max_patches: int) -> None:
    """Decode at 1/2, 1/4 or 1/8 scale while that still leaves twice the model's input size."""
    height, width = image.height, image.width
    th, tw = target_size(height, width, PATCH_SIZE, max_patches)
    if width >= 4 * tw and height >= 4 * th:
        image.draft(image.mode, (2 * tw, 2 * th))


def target_size(
    height: int, width: int, patch_size: int = PATCH_SIZE, max_num_patches: int = 256
) -> tuple[int, int]:
    """The resized (height, width): multiples of patch_size, at most max_num_patches patches.

    The same binary search on the scale as transformers (`get_image_size_for_max_num_patches`),
    floating-point steps included, so the sizes agree exactly: small crops are upscaled to fill the
    budget, extreme aspect ratios end with fewer patches (every side is at least one patch).
    """
    if height < 1 or width < 1:
        raise ValueError(f"image has no pixels: {width}x{height}")
    if max_num_patches < 1:
        raise ValueError(f"max_num_patches must be at least 1, got {max_num_patches}")

    def scaled(scale: float, size: int) -> int:
        return int(max(patch_size, math.ceil(size * scale / patch_size) * patch_size))

    eps = 1e-5
    scale_min, scale_max = eps / 10, 100.0
    while (scale_max - scale_min) >= eps:
        scale = (scale_min + scale_max) / 2
        num_patches = (scaled(scale, height) / patch_size) * (scaled(scale, width) / patch_size)
        if num_patches <= max_num_patches:
            scale_min = scale
        else:
            scale_max = scale
    return scaled(scale_min, height), scaled(scale_min, width)


# --- pixels → RGB ---------------------------------------------------------------------------------


def to_rgb(image) -> Image.Image:
    """Any image Pillow opens (or an HxW / HxWx3 / HxWx4 uint8 array) → an RGB image.

    Transparency is composited on white (text on a transparent background stays readable), the EXIF
    orientation is applied, animated images give their first frame, 16-bit and 32-bit gray are scaled
    to 8 bits, float ("F") images in [0, 1] are scaled by 255 (otherwise clipped to [0, 255]).
    The result never shares pixels with the input, so the input's file may be closed afterwards.
    """
    return _rgb(image, owned=False)


def as_rgb(image) -> Image.Image:
    """For a reader that only reads the pixels: an RGB image at frame 0 without an EXIF turn is
    used as it is (no copy of a large crop); anything else goes through to_rgb."""
    if (
        isinstance(image, Image.Image)
        and image.mode == "RGB"
        and image.tell() == 0
        and image.getexif().get(0x0112, 1) == 1
    ):
        return image
    return to_rgb(image)


def _rgb(image, owned: bool) -> Image.Image:
    """to_rgb; `owned`: the caller gives the image away, so it is transformed without a first copy."""
    if isinstance(image, np.ndarray):
        image = _from_array(image)
    if not isinstance(image, Image.Image):
        raise TypeError(f"expected a PIL image or a numpy array, got {type(image).__name__}")
    if (
        image.tell() != 0
    ):  # animated GIF/PNG/WebP moved on: back to the first frame (no frame count)
        image.seek(0)
    try:
        if owned:
            ImageOps.exif_transpose(image, in_place=True)
        else:
            # a new, loaded image: the caller may close its file
            image = ImageOps.exif_transpose(image)
    except Exception:  # a broken EXIF block must not stop the OCR; keep the pixels as stored
        if not owned:
            image = image.copy()
    mode = image.mode
    if mode.startswith("I") or mode == "F":
        image = _gray_to_8bit(image)
        mode = image.mode
    if (
        "A" in image.getbands()
        or "a" in image.getbands()
        or image.info.get("transparency") is not None
    ):
        return _on_white(image)
    if mode == "RGB":
        return image
    try:
        return image.convert("RGB")
    except ValueError as e:
        raise ValueError(f"cannot convert an image in mode {mode!r} to RGB: {e}") from None


def _on_white(image: Image.Image) -> Image.Image:
    """Composite on white, strip by strip: the same pixels as one alpha_composite of the whole image,
    without three more full-size RGBA copies of a large one."""
    out = Image.new("RGB", image.size)
    for top in range(0, image.height, _STRIP_ROWS):
        strip = image.crop((0, top, image.width, min(image.height, top + _STRIP_ROWS)))
        rgba = strip.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        out.paste(Image.alpha_composite(background, rgba).convert("RGB"), (0, top))
    return out


def _from_array(array: np.ndarray) -> Image.Image:
    if (
        array.dtype != np.uint8
        or array.ndim not in (2, 3)
        or (array.ndim == 3 and array.shape[2] not in (1, 3, 4))
    ):
        raise ValueError(
            f"expected a uint8 array of shape (H, W), (H, W, 3) or (H, W, 4), got {array.dtype} {array.shape}"
        )
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    return Image.fromarray(np.ascontiguousarray(array))


def _gray_to_8bit(image: Image.Image) -> Image.Image:
    """16-bit ("I;16*"), 32-bit ("I") and float ("F") gray → "L" (Pillow's convert would clip to 255).
    Strip by strip, so a large image never has a full copy as an array, let alone as float64."""
    # One band: (min, max); Pillow's stubs also type the per-band tuples of a multi-band image.
    low, high = cast("tuple[float, float]", image.getextrema())
    if image.mode == "F":
        scale = 255.0 if low >= 0.0 and high <= 1.0 else 1.0  # NaN compares False: 1.0
    elif image.mode.startswith("I;16") or high > 255:
        scale = 255.0 / 65535.0  # a 16-bit range; PNG's 16-bit gray opens as "I" or "I;16"
    else:
        scale = 1.0  # an "I" image that already holds 8-bit values
    eight_bit = np.empty((image.height, image.width), dtype=np.uint8)
    for top in range(0, image.height, _STRIP_ROWS):
        bottom = min(image.height, top + _STRIP_ROWS)
        rows = np.asarray(image.crop((0, top, image.width, bottom))).astype(np.float64)
        eight_bit[top:bottom] = np.clip(np.rint(np.nan_to_num(rows) * scale), 0, 255)
    return Image.fromarray(eight_bit, mode="L")
