"""Request bytes → an RGB crop, with the server's size limits: the one place the server decodes images.

The decoding itself is what `hayai ocr` does to a file (`app.engine_cli.open_image`): Pillow opens the
bytes and `model.preprocess.to_rgb` makes the RGB crop, so a crop sent to the server reads exactly
as the same file given to `hayai ocr`. Pillow reads the size from the header before it decodes any
pixel, so an oversized image is refused before it costs memory.
"""

from __future__ import annotations

import io


class NotAnImage(ValueError):
    """The bytes are not an image Pillow can read (or a damaged one)."""


class ImageTooLarge(ValueError):
    """More pixels than the server accepts."""


def decode_image(data: bytes, max_pixels: int):
    from PIL import Image

    from model.preprocess import to_rgb

    try:
        with Image.open(io.BytesIO(data)) as im:
            width, height = im.size
            if width * height > max_pixels:
                raise ImageTooLarge(
                    f"the image has {width}×{height} = {width * height:,} pixels; "
                    f"this server accepts at most {max_pixels:,}"
                )
            return to_rgb(im)
    except ImageTooLarge:
        raise
    except Image.DecompressionBombError as exc:
        raise ImageTooLarge(str(exc)) from None
    except Image.UnidentifiedImageError:
        raise NotAnImage("not an image (no image format recognised in the bytes)") from None
    except Exception as exc:  # truncated, damaged, an unsupported mode, ...
        raise NotAnImage(f"not a readable image ({type(exc).__name__}: {exc})") from None
