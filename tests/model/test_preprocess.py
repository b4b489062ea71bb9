"""Our NaFlex preprocessing against transformers' SigLIP2 PIL processor, the golden arrays, odd images."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from model.preprocess import Batch, preprocess, target_size, to_rgb


def random_rgb(height: int, width: int, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))


def text_like(height: int, width: int) -> Image.Image:
    """Smooth content with hard edges, closer to a real crop than noise (resampling matters more)."""
    y, x = np.mgrid[0:height, 0:width]
    r = (x * 255 // max(width - 1, 1)).astype(np.uint8)
    g = (y * 255 // max(height - 1, 1)).astype(np.uint8)
    b = (((x // 5 + y // 7) % 2) * 255).astype(np.uint8)
    return Image.fromarray(np.stack([r, g, b], axis=-1))


@pytest.fixture(scope="module")
def reference():
    siglip2 = pytest.importorskip("transformers.models.siglip2.image_processing_pil_siglip2")
    processor = siglip2.Siglip2ImageProcessorPil()

    def run(images, max_num_patches):
        return processor(images=images, max_num_patches=max_num_patches, return_tensors="np")

    return run


SHAPES = [  # (height, width): tiny, strips both ways, upscaled small crops, squares, large
    (1, 1),
    (2, 3),
    (17, 31),
    (31, 17),
    (8, 20000),
    (20000, 8),
    (48, 640),
    (640, 48),
    (37, 5),
    (300, 7),
    (90, 90),
    (1000, 1000),
    (123, 457),
    (1080, 1920),
]


@pytest.mark.parametrize("max_num_patches", [256, 512])
@pytest.mark.parametrize("height,width", SHAPES)
def test_matches_transformers_pil_processor(reference, height, width, max_num_patches):
    # GIVEN an RGB crop of an awkward shape
    image = (
        random_rgb(height, width, seed=height * 7 + width)
        if height * width < 500_000
        else text_like(height, width)
    )
    # WHEN both processors read it
    ours = preprocess([image], max_num_patches=max_num_patches)
    theirs = reference([image], max_num_patches)
    # THEN shapes, masks and spatial shapes are equal and the pixels agree (in practice bit for bit)
    assert ours.pixel_values.shape == (1, max_num_patches, 768)
    np.testing.assert_array_equal(ours.spatial_shapes.numpy(), theirs["spatial_shapes"])
    np.testing.assert_array_equal(ours.pixel_attention_mask.numpy(), theirs["pixel_attention_mask"])
    assert np.abs(ours.pixel_values.numpy() - theirs["pixel_values"]).max() <= 1e-7


def test_batch_of_mixed_shapes_matches_transformers(reference):
    images = [text_like(48, 200), random_rgb(210, 50, 1), random_rgb(5, 5, 2), text_like(30, 640)]
    ours = preprocess(images, max_num_patches=256)
    theirs = reference(images, 256)
    np.testing.assert_array_equal(ours.spatial_shapes.numpy(), theirs["spatial_shapes"])
    np.testing.assert_array_equal(ours.pixel_attention_mask.numpy(), theirs["pixel_attention_mask"])
    assert np.abs(ours.pixel_values.numpy() - theirs["pixel_values"]).max() <= 1e-7


def test_golden_crops(golden_dir):
    # GIVEN the crops transformers' processor turned into expected.npz (golden_dir: tests/conftest.py)
    expected = np.load(golden_dir / "expected.npz")
    images = [Image.open(p) for p in sorted(golden_dir.glob("golden*.png"))]
    assert len(images) == 4
    batch = preprocess(images, max_num_patches=256)
    np.testing.assert_array_equal(batch.spatial_shapes.numpy(), expected["spatial_shapes"])
    np.testing.assert_array_equal(
        batch.pixel_attention_mask.numpy(), expected["pixel_attention_mask"]
    )
    assert np.abs(batch.pixel_values.numpy() - expected["pixel_values"]).max() <= 1e-5


def test_output_types_and_padding():
    batch = preprocess([random_rgb(48, 640)], max_num_patches=256)
    assert isinstance(batch, Batch) and len(batch) == 1
    assert batch.pixel_values.dtype == torch.float32
    assert batch.pixel_attention_mask.dtype == torch.int32
    assert batch.spatial_shapes.dtype == torch.int64
    assert batch.spatial_shapes.tolist() == [
        [4, 54]
    ]  # 216 patches: an extreme aspect ratio uses fewer than N
    assert int(batch.pixel_attention_mask.sum()) == 216
    assert torch.all(batch.pixel_values[0, 216:] == 0)  # padding rows are zeros
    values = batch.pixel_values[0, :216]
    assert values.min() >= -1 and values.max() <= 1


@pytest.mark.parametrize(
    "height,width,n,expected",
    [
        (17, 31, 256, (192, 336)),
        (48, 640, 256, (64, 864)),
        (1, 1, 256, (112, 112)),
        (8, 20000, 256, (16, 4096)),
        (20000, 8, 512, (8192, 16)),
        (90, 90, 256, (256, 256)),
        (1000, 1000, 512, (352, 352)),
    ],
)
def test_target_size(height, width, n, expected):
    th, tw = target_size(height, width, max_num_patches=n)
    assert (th, tw) == expected
    assert th % 16 == 0 and tw % 16 == 0 and (th // 16) * (tw // 16) <= n


def test_target_size_rejects_empty():
    with pytest.raises(ValueError, match="no pixels"):
        target_size(0, 10)


# ---- odd inputs: any image Pillow opens gives a sensible RGB crop ------------------------------------


def reopen(image: Image.Image, fmt: str, **save_args) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **save_args)
    buffer.seek(0)
    return Image.open(buffer)


def test_rgba_composited_on_white():
    pixels = np.zeros((4, 4, 4), dtype=np.uint8)
    pixels[..., 0] = 200  # red-ish, fully transparent except one pixel
    pixels[0, 0, 3] = 255
    rgb = np.asarray(to_rgb(Image.fromarray(pixels, "RGBA")))
    assert rgb[0, 0].tolist() == [200, 0, 0]
    assert rgb[1, 1].tolist() == [255, 255, 255]


def test_half_transparent_black_text_becomes_gray_on_white():
    pixels = np.zeros((2, 2, 2), dtype=np.uint8)
    pixels[..., 1] = 128  # black at 50% alpha
    rgb = np.asarray(to_rgb(Image.fromarray(pixels, "LA")))
    assert np.all(np.abs(rgb.astype(int) - 127) <= 1)


def test_palette_with_transparency_on_white():
    image = Image.new("P", (3, 3), 0)
    image.putpalette([0, 0, 0, 10, 20, 30] + [0] * (254 * 3))
    image.putpixel((1, 1), 1)
    image.info["transparency"] = 0
    rgb = np.asarray(to_rgb(reopen(image, "PNG")))
    assert rgb[0, 0].tolist() == [255, 255, 255]
    assert rgb[1, 1].tolist() == [10, 20, 30]


def test_palette_without_transparency():
    image = Image.new("P", (3, 3), 1)
    image.putpalette([0, 0, 0, 10, 20, 30] + [0] * (254 * 3))
    assert np.asarray(to_rgb(image))[2, 2].tolist() == [10, 20, 30]


def test_transparency_rule_agrees_with_transformers():
    image_transforms = pytest.importorskip("transformers.image_transforms")
    rng = np.random.default_rng(3)
    for mode, channels in (("RGBA", 4), ("LA", 2)):
        image = Image.fromarray(rng.integers(0, 256, (9, 7, channels), dtype=np.uint8), mode)
        theirs = image_transforms.convert_to_rgb(image, return_numpy=True)
        np.testing.assert_array_equal(np.asarray(to_rgb(image)), theirs)


@pytest.mark.parametrize("mode", ["I;16", "I"])
def test_16_bit_gray_is_scaled_not_clipped(mode):
    ramp = np.linspace(0, 65535, 16).astype(np.uint16).reshape(4, 4)
    image = Image.fromarray(ramp)  # uint16 → "I;16"
    assert image.mode == "I;16"
    if mode == "I":
        image = reopen(image, "PNG")  # PNG's 16-bit gray opens as "I" or "I;16" depending on Pillow
        image = image.convert("I") if image.mode != "I" else image
    rgb = np.asarray(to_rgb(image))
    assert rgb.shape == (4, 4, 3)
    assert rgb[0, 0].tolist() == [0, 0, 0] and rgb[3, 3].tolist() == [255, 255, 255]
    assert (
        100 < rgb[1, 3, 0] < 160
    )  # the middle of the ramp stays mid-gray (Pillow's convert gives 255)


def test_float_image():
    values = np.array([[0.0, 0.5], [1.0, 0.25]], dtype=np.float32)
    rgb = np.asarray(to_rgb(Image.fromarray(values)))
    assert rgb[:, :, 0].tolist() == [[0, 128], [255, 64]]


def test_cmyk_and_bilevel():
    cmyk = Image.new("CMYK", (5, 5), (0, 0, 0, 0))  # no ink = white
    assert np.asarray(to_rgb(cmyk))[0, 0].tolist() == [255, 255, 255]
    bilevel = Image.new("1", (5, 5), 0)
    assert np.asarray(to_rgb(bilevel))[0, 0].tolist() == [0, 0, 0]


def test_exif_orientation_applied():
    image = Image.new("RGB", (40, 10), (255, 0, 0))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise when shown
    jpeg = reopen(image, "JPEG", exif=exif.tobytes())
    assert jpeg.size == (40, 10)
    assert to_rgb(jpeg).size == (10, 40)


def test_animated_image_gives_first_frame():
    frames = [Image.new("RGB", (6, 6), (255, 0, 0)), Image.new("RGB", (6, 6), (0, 0, 255))]
    buffer = io.BytesIO()
    frames[0].save(
        buffer, format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0
    )
    animated = Image.open(io.BytesIO(buffer.getvalue()))
    animated.seek(1)  # positioned on the blue frame
    red, green, blue = np.asarray(to_rgb(animated))[0, 0].tolist()
    assert red > 200 and blue < 50


def test_numpy_input():
    array = np.full((20, 30, 3), 255, dtype=np.uint8)
    batch = preprocess([array])
    assert batch.pixel_values[0, 0, 0].item() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="uint8"):
        preprocess([np.zeros((4, 4, 3), dtype=np.float32)])


@pytest.mark.parametrize(
    "image",
    [
        Image.new("RGB", (1, 1), (0, 0, 0)),
        Image.new("L", (20000, 8), 128),
        Image.new("LA", (8, 20000), (0, 10)),
        Image.new("RGBA", (3, 700), (0, 0, 0, 0)),
        Image.new("I;16", (33, 9), 40000),
        Image.new("CMYK", (64, 2), (255, 0, 0, 0)),
    ],
    ids=["1x1", "L-20000x8", "LA-8x20000", "RGBA-transparent", "I16", "CMYK"],
)
def test_odd_images_do_not_crash(image):
    batch = preprocess([image], max_num_patches=512)
    assert batch.pixel_values.shape == (1, 512, 768)
    hp, wp = batch.spatial_shapes[0].tolist()
    assert 1 <= hp * wp <= 512 and int(batch.pixel_attention_mask.sum()) == hp * wp


def test_bad_input_messages():
    with pytest.raises(ValueError, match="at least one image"):
        preprocess([])
    with pytest.raises(TypeError, match="PIL image"):
        preprocess(["not an image"])


def test_result_survives_closing_the_file(golden_dir):
    # GIVEN an image read inside a `with` block (as `hayai ocr` does) WHEN the file is closed
    with Image.open(golden_dir / "golden0_48x200.png") as opened:
        rgb = to_rgb(opened)
    # THEN the RGB copy is still usable
    assert rgb is not opened
    assert preprocess([rgb]).spatial_shapes.tolist() == [[32, 8]]


def test_uint8_patches_normalised_later_are_identical():
    """The accelerator route (uint8 patches moved, then `normalized`) gives exactly the host's values."""
    from model.preprocess import normalized

    images = [Image.new("RGB", (120, 30), (10, 200, 90)), Image.new("RGB", (33, 77), (255, 0, 128))]
    host = preprocess(images, max_num_patches=256)
    later = normalized(preprocess(images, max_num_patches=256, normalize=False))
    assert later.pixel_values.dtype == torch.float32
    assert torch.equal(host.pixel_values, later.pixel_values)
    assert torch.equal(host.pixel_attention_mask, later.pixel_attention_mask)
