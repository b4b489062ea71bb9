"""SigLIP2 NaFlex preprocessing, our own implementation (PIL + numpy, no transformers at run time).

It reproduces transformers 5.x's `Siglip2ImageProcessorPil` (docs/model.md, "Preprocessing") bit for bit on RGB
input: the same binary search for the target size, PIL's BILINEAR resize, the same rescale
(float64 * 1/255 → float32) and normalize ((x - 0.5) / 0.5 in float32) — done here through a
256-entry lookup table computed with exactly those operations — and the same patch order
(row-major patches, each flattened as (row-in-patch, col-in-patch, channel)).

`to_rgb` is where we differ on purpose: transformers would clip 16-bit gray to white and keeps
animated frames as they are; we scale 16-bit gray to 8 bits, apply EXIF orientation and take the
first frame, so any image Pillow opens gives a sensible RGB crop.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image, ImageOps

PATCH_SIZE = 16
IMAGE_MEAN = 0.5
IMAGE_STD = 0.5
RESCALE_FACTOR = 1 / 255


def _normalize_table() -> np.ndarray:
    """uint8 value → normalized float32, with transformers' exact arithmetic and dtypes."""
    rescaled = (np.arange(256, dtype=np.uint8).astype(np.float64) * RESCALE_FACTOR).astype(
        np.float32
    )
    return (rescaled - np.float32(IMAGE_MEAN)) / np.float32(IMAGE_STD)


_NORMALIZED = _normalize_table()  # (256,) float32


@dataclass
class Batch:
    """What the vision tower takes: `N` = max_num_patches, `d` = 3·patch_size²."""

    pixel_values: torch.Tensor  # (b, N, d) float32, zero rows after each image's patches
    pixel_attention_mask: torch.Tensor  # (b, N) int32, 1 = a real patch
    spatial_shapes: torch.Tensor  # (b, 2) int64, (patches high, patches wide)

    def __len__(self) -> int:
        return self.pixel_values.shape[0]

    def to(self, device) -> Batch:
        return Batch(
            self.pixel_values.to(device),
            self.pixel_attention_mask.to(device),
            self.spatial_shapes.to(device),
        )


def to_rgb(image) -> Image.Image:
    """Any image Pillow opens (or an HxW / HxWx3 / HxWx4 uint8 array) → an RGB image.

    Transparency is composited on white (text on a transparent background stays readable), the EXIF
    orientation is applied, animated images give their first frame, 16-bit and 32-bit gray are scaled
    to 8 bits, float ("F") images in [0, 1] are scaled by 255 (otherwise clipped to [0, 255]).
    The result never shares pixels with the input, so the input's file may be closed afterwards.
    """
    if isinstance(image, np.ndarray):
        image = _from_array(image)
    if not isinstance(image, Image.Image):
        raise TypeError(f"expected a PIL image or a numpy array, got {type(image).__name__}")
    if getattr(image, "n_frames", 1) > 1:
        image.seek(0)  # animated GIF/PNG/WebP: read the first frame
    try:
        image = ImageOps.exif_transpose(image)  # a new, loaded image: the caller may close its file
    except Exception:  # a broken EXIF block must not stop the OCR; keep the pixels as stored
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
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    if mode == "RGB":
        return image
    try:
        return image.convert("RGB")
    except ValueError as e:
        raise ValueError(f"cannot convert an image in mode {mode!r} to RGB: {e}") from None


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
    """16-bit ("I;16*"), 32-bit ("I") and float ("F") gray → "L" (Pillow's convert would clip to 255)."""
    values = np.asarray(image).astype(np.float64)
    if image.mode == "F":
        scale = 255.0 if values.size and values.min() >= 0.0 and values.max() <= 1.0 else 1.0
    elif image.mode.startswith("I;16") or (values.size and values.max() > 255):
        scale = 255.0 / 65535.0  # a 16-bit range; PNG's 16-bit gray opens as "I" or "I;16"
    else:
        scale = 1.0  # an "I" image that already holds 8-bit values
    eight_bit = np.clip(np.rint(values * scale), 0, 255).astype(np.uint8)
    return Image.fromarray(eight_bit, mode="L")


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


def patchify(
    image: Image.Image, max_num_patches: int = 256, patch_size: int = PATCH_SIZE
) -> tuple[np.ndarray, tuple[int, int]]:
    """One RGB image → its patches as uint8, (hp·wp, p·p·3), before normalization."""
    th, tw = target_size(image.height, image.width, patch_size, max_num_patches)
    pixels = np.asarray(image.resize((tw, th), Image.BILINEAR))  # (th, tw, 3) uint8
    hp, wp = th // patch_size, tw // patch_size
    patches = pixels.reshape(hp, patch_size, wp, patch_size, 3)  # (hp, py, wp, px, c)
    patches = patches.transpose(0, 2, 1, 3, 4)  # (hp, wp, py, px, c)
    return patches.reshape(hp * wp, patch_size * patch_size * 3), (hp, wp)


def preprocess(
    images, max_num_patches: int = 256, patch_size: int = PATCH_SIZE, normalize: bool = True
) -> Batch:
    """A list of images → a `Batch` padded to exactly max_num_patches patches per image.

    normalize=False leaves `pixel_values` as uint8 (4× smaller to move to a GPU); `normalized()` then
    finishes the job on the device with the same table, so the result is identical.
    """
    if isinstance(images, (Image.Image, np.ndarray)):
        images = [images]
    images = list(images)
    if not images:
        raise ValueError("preprocess needs at least one image")
    dim = 3 * patch_size * patch_size

    def one(image):
        return patchify(to_rgb(image), max_num_patches, patch_size)

    # Pillow releases the GIL while it converts and resizes, so a batch spreads over the cores.
    if len(images) > 1:
        with ThreadPoolExecutor(min(len(images), os.cpu_count() or 1, 16)) as pool:
            patched = list(pool.map(one, images))
    else:
        patched = [one(images[0])]
    pixel_values = np.zeros((len(images), max_num_patches, dim), dtype=np.uint8)
    mask = np.zeros((len(images), max_num_patches), dtype=np.int32)
    shapes = np.zeros((len(images), 2), dtype=np.int64)
    for i, (patches, (hp, wp)) in enumerate(patched):
        n = hp * wp
        pixel_values[i, :n] = patches
        mask[i, :n] = 1
        shapes[i] = (hp, wp)
    batch = Batch(torch.from_numpy(pixel_values), torch.from_numpy(mask), torch.from_numpy(shapes))
    return normalized(batch) if normalize else batch


def normalized(batch: Batch) -> Batch:
    """uint8 patches → float32 in [-1, 1] (rescale + normalize through the exact table); padding stays 0."""
    if batch.pixel_values.dtype != torch.uint8:
        return batch
    table = torch.from_numpy(_NORMALIZED).to(batch.pixel_values.device)
    values = table[batch.pixel_values.long()] * batch.pixel_attention_mask[..., None]
    return Batch(values, batch.pixel_attention_mask, batch.spatial_shapes)


__all__ = ["Batch", "normalized", "preprocess", "target_size", "to_rgb", "patchify"]
