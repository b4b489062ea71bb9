"""The one way to open an image from a user's file or bytes: raster formats only, bounded memory and time.

Every place that decodes an image it did not draw itself goes through `open_image` (`hayai ocr`,
`hayai bench --image`, the app's history thumbnails); `expand_inputs` turns the folders given to a
command into their image files, and `shown_name` names a file as valid text. What it guarantees
(docs/security.md):

- formats: PNG, JPEG, WebP, BMP, GIF and TIFF, told by content, never by the name. Nothing that runs
  an external program is ever tried (Pillow's EPS plugin would start Ghostscript on a PostScript
  file named `.png`; importing this module also switches Ghostscript off for all of Pillow);
- only regular files, opened without blocking (a FIFO, device or socket is refused at once) and at
  most `MAX_FILE_BYTES` read;
- the declared size is checked before any pixel is decoded: more than the model's `ImageCap`
  (model/config.py) is refused with the numbers, in the same words for every command
  (`check_pixels`), as is an RLE-compressed BMP over `MAX_RLE_BMP_PIXELS` (Pillow decodes those in
  pure Python, a few seconds for a few hundred bytes of file);
- a JPEG much larger than the model's input is decoded at a reduced scale (libjpeg's DCT scaling);
- any failure is an `ImageError` with one plain sentence.

No torch and no Qt here: the app's GUI thread uses it for thumbnails.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import stat
import sys
import warnings

from PIL import EpsImagePlugin, Image, ImageFile

from model.config import ImageCap
from model.rgb import to_rgb

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
LARGEST_CAP = ImageCap()  # the largest released model's: for an image no one model reads
MAX_RLE_BMP_PIXELS = 2_000_000  # Pillow's BMP RLE decoder runs in Python (~0.1 s per megapixel)


class ImageError(ValueError):
    """The input cannot be read as an image; the message is one plain sentence."""


class ImageTooLarge(ImageError):
    """The input is (or declares) more bytes or pixels than are read (a server answers 413)."""


def check_pixels(width: int, height: int, cap: ImageCap, what: str = "the image") -> None:
    """ImageTooLarge, in the one sentence every command and the app say, when `what` (the PNG
    image, the clipboard image) declares more pixels than the model's cap."""
    if width * height > cap.pixels:
        raise ImageTooLarge(
            f"{what} declares {width}×{height} pixels ({width * height / 1e6:,.1f} megapixels); "
            f"the model can use at most {cap}: shrink or crop it first"
        )


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


def natural_key(name: str) -> tuple:
    """Natural order, as mokuro (natsort) orders a volume's pages: runs of digits compare as
    numbers (2 before 10), the rest character by character; names equal so (01 and 1) by their text."""
    parts = re.split(r"(\d+)", name)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), name


def expand_inputs(names: list[str], skipped: list[tuple[str, str]] | None = None) -> list[str]:
    """Folders become their image files, those of their subfolders too, in natural order of their
    path inside the folder (mokuro's order of a volume's pages: ch1/2.jpg, ch1/10.jpg, ch2/1.jpg);
    files and `-` stay as given. Each other thing found in a folder goes to `skipped` with why it is
    left out. A link to a folder is not followed, as mokuro does not. A FIFO or device with an image
    suffix stays in the list: the loader refuses it at once, with a message."""
    out = []
    for name in names:
        if name != "-" and os.path.isdir(name):
            found, left_out = _folder_images(name)
            out += sorted(found, key=lambda f: natural_key(os.path.relpath(f, name)))
            if skipped is not None:
                skipped += sorted(left_out, key=lambda s: natural_key(os.path.relpath(s[0], name)))
        else:
            out.append(name)
    return out


def shown_name(path: str) -> str:
    """A file's name as valid text, for what we write and print (UTF-8): each part of the path
    that is not UTF-8 (Python keeps its bytes as surrogates) read as Shift-JIS (cp932), what a zip
    made on a Japanese Windows unpacks to on Linux, where that gives printable text; otherwise
    each byte that is not UTF-8 as U+FFFD. The file itself is opened by its own name."""

    def part(name: str) -> str:
        raw = os.fsencode(name)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
        with contextlib.suppress(UnicodeDecodeError):
            text = raw.decode("cp932")
            if text.isprintable():  # not its private-use or control characters
                return text
        return raw.decode("utf-8", "replace")

    return "/".join(part(name) for name in path.split("/"))


def _folder_images(folder: str) -> tuple[list[str], list[tuple[str, str]]]:
    found, skipped, folders = [], [], [folder]
    while folders:  # not recursion: a deep tree of folders is no error
        path = folders.pop()
        try:
            with os.scandir(path) as entries:
                listed = list(entries)
        except OSError as e:
            skipped.append((path, f"the folder cannot be opened ({e.strerror or e})"))
            continue
        for entry in listed:
            suffix = os.path.splitext(entry.name)[1].lower()
            if _is_dir(entry, follow=False):
                folders.append(entry.path)
            elif suffix in IMAGE_SUFFIXES:
                found.append(entry.path)
            elif _is_dir(entry, follow=True):
                skipped.append((entry.path, "a link to a folder, not followed"))
            else:
                skipped.append(
                    (
                        entry.path,
                        f"not an image by its name ({suffix or 'no suffix'}; "
                        f"the images read are {FORMAT_NAMES})",
                    )
                )
    return found, skipped


def _is_dir(entry: os.DirEntry, follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


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


def _identify(data: bytes, cap: ImageCap, buffer: io.BytesIO | None = None) -> ImageFile.ImageFile:
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
            f"megapixels; the model can use at most {cap}"
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


def _check_size(image, cap: ImageCap) -> None:
    width, height = image.size
    fmt = _format_name(image)
    if width < 1 or height < 1:
        raise ImageError(f"the {fmt} image declares no pixels ({width}×{height})")
    check_pixels(width, height, cap, f"the {fmt} image")
    tile = getattr(image, "tile", None) or []
    if tile and tile[0][0] == "bmp_rle" and width * height > MAX_RLE_BMP_PIXELS:
        raise ImageTooLarge(
            f"the RLE-compressed BMP declares {width}×{height} pixels; such BMPs are read up to "
            f"{MAX_RLE_BMP_PIXELS / 1e6:.0f} megapixels (save it as PNG instead)"
        )


def probe(data: bytes, cap: ImageCap = LARGEST_CAP) -> tuple[int, int]:
    """(width, height) as declared, after every check `open_image` makes before decoding."""
    with _identify(data, cap) as image:
        _check_size(image, cap)
        return image.size


def open_image(source, cap: ImageCap = LARGEST_CAP, *, decode_patches: int | None = None):
    """A path, `-` (stdin) or bytes → an RGB PIL image (the first frame, EXIF orientation applied).

    `cap` is the image cap of the model that will read it. A JPEG much larger than `decode_patches`
    patches (default: the model's budget; a whole page, whose crops are read, keeps more) is decoded
    at a reduced scale. Raises ImageError, and nothing else, for any input it cannot read.
    """
    data = bytes(source) if isinstance(source, (bytes, bytearray)) else read_bytes(source)
    buffer = io.BytesIO(data)
    image = _identify(data, cap, buffer)
    try:
        _check_size(image, cap)
        fmt = _format_name(image)
        if image.format == "JPEG":
            _reduce_jpeg(image, decode_patches or cap.budget, cap.patch_size)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                image.load()
        except Exception as e:  # OSError "truncated", SyntaxError, ValueError, IndexError, ...
            raise _damaged(fmt, e) from None
        buffer.close()  # the file's bytes are not needed once decoded: free them before converting
        del data, source
        try:
            rgb = to_rgb(image, owned=True)
        except Exception as e:
            raise _damaged(fmt, e) from None
    except BaseException:
        image.close()
        raise
    if rgb is not image:
        image.close()
    return rgb


def _reduce_jpeg(image, max_patches: int, patch_size: int) -> None:
    """Decode at 1/2, 1/4 or 1/8 scale while that still leaves twice the model's input size."""
    height, width = image.height, image.width
    th, tw = target_size(height, width, patch_size, max_patches)
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
