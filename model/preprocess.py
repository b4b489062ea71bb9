"""SigLIP2 NaFlex preprocessing, our own implementation (PIL + numpy, no transformers at run time).

It reproduces transformers 5.x's `Siglip2ImageProcessorPil` (docs/model.md, "Preprocessing") bit for bit on RGB
input: the same binary search for the target size, PIL's BILINEAR resize, the same rescale
(float64 * 1/255 → float32) and normalize ((x - 0.5) / 0.5 in float32) — done here through a
256-entry lookup table computed with exactly those operations — and the same patch order
(row-major patches, each flattened as (row-in-patch, col-in-patch, channel)).

`to_rgb` (in model/rgb.py, which the safe image loader also uses) is where we differ on purpose:
transformers would clip 16-bit gray to white and keeps animated frames as they are; we scale
16-bit gray to 8 bits, apply EXIF orientation and take the first frame, so any image Pillow opens
gives a sensible RGB crop.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image

from model.images import PATCH_SIZE, target_size
from model.rgb import as_rgb, to_rgb

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
    # (b,) int64, each image's own budget where images of one batch have their own (v2.1 reads its
    # padded slots up to it, and the batch's slots past it are hidden); None: all have N
    budgets: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.pixel_values.shape[0]

    def to(self, device) -> Batch:
        return Batch(
            self.pixel_values.to(device),
            self.pixel_attention_mask.to(device),
            self.spatial_shapes.to(device),
            None if self.budgets is None else self.budgets.to(device),
        )


def patchify(
    image: Image.Image, max_num_patches: int = 256, patch_size: int = PATCH_SIZE
) -> tuple[np.ndarray, tuple[int, int]]:
    """One RGB image → its patches as uint8, (hp·wp, p·p·3), before normalization."""
    th, tw = target_size(image.height, image.width, patch_size, max_num_patches)
    pixels = np.asarray(image.resize((tw, th), Image.Resampling.BILINEAR))  # (th, tw, 3) uint8
    hp, wp = th // patch_size, tw // patch_size
    patches = pixels.reshape(hp, patch_size, wp, patch_size, 3)  # (hp, py, wp, px, c)
    patches = patches.transpose(0, 2, 1, 3, 4)  # (hp, wp, py, px, c)
    return patches.reshape(hp * wp, patch_size * patch_size * 3), (hp, wp)


def preprocess(
    images,
    max_num_patches: int = 256,
    patch_size: int = PATCH_SIZE,
    normalize: bool = True,
    budgets=None,
) -> Batch:
    """A list of images → a `Batch` padded to exactly max_num_patches patches per image.

    budgets: each image's own patch budget instead (at most max_num_patches): each is resized for
    its own, and the batch is padded to the largest (`Batch.budgets` says which slots are whose).

    normalize=False leaves `pixel_values` as uint8 (4× smaller to move to a GPU); `normalized()` then
    finishes the job on the device with the same table, so the result is identical.
    """
    if isinstance(images, (Image.Image, np.ndarray)):
        images = [images]
    images = list(images)
    if not images:
        raise ValueError("preprocess needs at least one image")
    dim = 3 * patch_size * patch_size
    own = None
    if budgets is not None:
        own = [min(int(n), max_num_patches) for n in budgets]
        if len(own) != len(images) or min(own) < 1:
            raise ValueError("budgets: one budget of at least 1 patch per image")
        max_num_patches = max(own)

    def one(image, budget=max_num_patches):
        return patchify(as_rgb(image), budget, patch_size)  # only read: no copy

    # Pillow releases the GIL while it converts and resizes, so a batch spreads over the cores.
    if len(images) > 1:
        with ThreadPoolExecutor(min(len(images), os.cpu_count() or 1, 16)) as pool:
            patched = list(pool.map(one, images, own or [max_num_patches] * len(images)))
    else:
        patched = [one(images[0], own[0] if own else max_num_patches)]
    pixel_values = np.zeros((len(images), max_num_patches, dim), dtype=np.uint8)
    mask = np.zeros((len(images), max_num_patches), dtype=np.int32)
    shapes = np.zeros((len(images), 2), dtype=np.int64)
    for i, (patches, (hp, wp)) in enumerate(patched):
        n = hp * wp
        pixel_values[i, :n] = patches
        mask[i, :n] = 1
        shapes[i] = (hp, wp)
    batch = Batch(
        torch.from_numpy(pixel_values),
        torch.from_numpy(mask),
        torch.from_numpy(shapes),
        None if own is None else torch.tensor(own),
    )
    return normalized(batch) if normalize else batch


def normalized(batch: Batch) -> Batch:
    """uint8 patches → float32 in [-1, 1] (rescale + normalize through the exact table); padding stays 0."""
    if batch.pixel_values.dtype != torch.uint8:
        return batch
    table = torch.from_numpy(_NORMALIZED).to(batch.pixel_values.device)
    values = table[batch.pixel_values.long()] * batch.pixel_attention_mask[..., None]
    return Batch(values, batch.pixel_attention_mask, batch.spatial_shapes, batch.budgets)


__all__ = ["Batch", "normalized", "preprocess", "target_size", "to_rgb", "patchify"]
