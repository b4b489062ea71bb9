"""Request bytes → an RGB crop, with the server's size limits: the one place the server decodes images.

The decoding is the project's one safe loader (model/images.py), the same `hayai ocr` uses, so a
crop sent to the server reads exactly as the same file given to `hayai ocr`, only raster formats
are ever decoded, and the size is read from the header before any pixel is.
"""

from __future__ import annotations


class NotAnImage(ValueError):
    """The bytes are not an image we read (or a damaged one): 400."""


class ImageTooLarge(ValueError):
    """More pixels than the server (or the model) accepts: 413."""


def decode_image(data: bytes, max_pixels: int):
    from model import images

    try:
        width, height = images.probe(data)
        if width * height > max_pixels:
            raise ImageTooLarge(
                f"the image has {width}×{height} = {width * height:,} pixels; "
                f"this server accepts at most {max_pixels:,}"
            )
        return images.open_image(data)
    except images.ImageTooLarge as exc:
        raise ImageTooLarge(str(exc)) from None
    except images.ImageError as exc:
        raise NotAnImage(str(exc)) from None
