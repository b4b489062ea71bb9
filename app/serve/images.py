"""Request bytes → an RGB crop, with the server's size limits: the one place the server decodes images.

The decoding is the project's one safe loader (model/images.py), the same `hayai ocr` uses, so a
crop sent to the server reads exactly as the same file given to `hayai ocr`, only raster formats
are ever decoded, and the size is read from the header before any pixel is: `probe_image` first
(the API reserves the decoded size against the memory bound), then `decode_image`.
"""

from __future__ import annotations

from model.config import ImageCap

# While a crop is decoded it is held as stored (at most 4 bytes a pixel: RGBA, 32-bit gray) and as
# the RGB copy (3); once decoded, as RGB only.
DECODING_BYTES_PER_PIXEL = 4 + 3
RGB_BYTES_PER_PIXEL = 3


class NotAnImage(ValueError):
    """The bytes are not an image we read (or a damaged one): 400."""


class ImageTooLarge(ValueError):
    """More pixels than the server (or the model) accepts: 413."""


def probe_image(data: bytes, cap: ImageCap, max_pixels: int) -> tuple[int, int]:
    """(width, height) from the header, after every check made before decoding: the model's image
    cap (in the words of every command), then the operator's --max-image-pixels."""
    from model import images

    try:
        width, height = images.probe(data, cap)
    except images.ImageTooLarge as exc:
        raise ImageTooLarge(str(exc)) from None
    except images.ImageError as exc:
        raise NotAnImage(str(exc)) from None
    if width * height > max_pixels:
        raise ImageTooLarge(
            f"the image has {width}×{height} = {width * height:,} pixels; "
            f"this server accepts at most {max_pixels:,}"
        )
    return width, height


def decode_image(data: bytes, cap: ImageCap):
    """The RGB crop of bytes that `probe_image` accepted."""
    from model import images

    try:
        return images.open_image(data, cap)
    except images.ImageTooLarge as exc:
        raise ImageTooLarge(str(exc)) from None
    except images.ImageError as exc:
        raise NotAnImage(str(exc)) from None
