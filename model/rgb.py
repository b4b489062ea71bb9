"""Decoded pixels → the RGB image the model reads (`to_rgb`; `as_rgb` for a reader that only reads
them). The loader (model/images.py) converts every image it opens here, and preprocessing
(model/preprocess.py) every image it is given. No torch and no Qt here.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from PIL import Image, ImageOps

_STRIP_ROWS = 256  # conversions of large images run strip by strip to bound the extra memory


def to_rgb(image, *, owned: bool = False) -> Image.Image:
    """Any image Pillow opens (or an HxW / HxWx3 / HxWx4 uint8 array) → an RGB image.

    Transparency is composited on white (text on a transparent background stays readable), the EXIF
    orientation is applied, animated images give their first frame, 16-bit and 32-bit gray are scaled
    to 8 bits, float ("F") images in [0, 1] are scaled by 255 (otherwise clipped to [0, 255]).
    The result never shares pixels with the input, so the input's file may be closed afterwards,
    unless `owned`: the caller gives the image away (the loader's own decode), so it is transformed
    without a first copy.
    """
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
