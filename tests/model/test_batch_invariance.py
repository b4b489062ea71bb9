"""Batch invariance (docs/model.md, "Batch invariance"): a crop's tokens are the same whether it is read
alone or in a batch of 2-64 beside crops of other sizes, at any position, on every path we ship."""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from model import fast, packed_linear
from model.recognizer import load_recognizer

# Each CPU recipe `auto` can pick (model/fast.py, `cpu_recipes`), forced here; exact everywhere.
RECIPES = {
    "exact": None,
    "avx2": {"vision": "fp16-packed", "prefill": "int8+fp16-packed", "decode": "int8+fp16-packed"},
    "bf16": {"vision": "bfloat16", "prefill": "int8+fp16-packed", "decode": "int8+fp16-packed"},
    "bf16-only": dict.fromkeys(fast.STAGES, "bfloat16"),
}
TOKENS = 24


def crop(seed: int, width: int, height: int) -> Image.Image:
    """Dark strokes on a light ground: tokens that differ from crop to crop, unlike noise."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (width, height), tuple(int(v) for v in rng.integers(180, 256, 3)))
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        x, y = int(rng.integers(0, width)), int(rng.integers(0, height))
        draw.text((x, y), "字abc", fill=tuple(int(v) for v in rng.integers(0, 90, 3)))
    return image


def load(checkpoint, recipe, monkeypatch=None, **options):
    if RECIPES[recipe] is None:
        return load_recognizer(checkpoint, device="cpu", precision="exact", **options)
    patch = pytest.MonkeyPatch() if monkeypatch is None else monkeypatch
    patch.setattr(fast, "cpu_recipes", lambda: RECIPES[recipe])
    try:
        return load_recognizer(checkpoint, device="cpu", precision="fast", **options)
    finally:
        if monkeypatch is None:
            patch.undo()


@pytest.fixture(scope="module", params=list(RECIPES))
def reader(request, tiny_v21):
    rec = load(tiny_v21, request.param)
    alone: dict = {}  # crop spec → its tokens read alone

    def read_alone(spec):
        if spec not in alone:
            alone[spec] = rec.read([crop(*spec)], TOKENS, suppress_ids=rec.tokenizer.stop_ids)[0]
        return alone[spec].token_ids

    return rec, read_alone


specs = st.tuples(
    st.integers(0, 10_000), st.integers(16, 700), st.integers(16, 400)
)  # (seed, width, height)


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.lists(specs, min_size=2, max_size=64), data=st.data())
def test_a_crop_reads_the_same_alone_and_in_any_batch(reader, batch, data):
    rec, read_alone = reader
    position = data.draw(st.integers(0, len(batch) - 1), label="position of the crop checked")
    results = rec.read([crop(*s) for s in batch], TOKENS, suppress_ids=rec.tokenizer.stop_ids)
    assert results[position].token_ids == read_alone(batch[position])
    assert results[0].token_ids == read_alone(batch[0])  # and another, at the front


def test_the_repro_of_the_issue_three_crops_together_and_alone(tiny_v21):
    """The issue's case: three crops of different sizes, 128 tokens, the default fast path."""
    rec = load_recognizer(tiny_v21, device="cpu", precision="fast")
    images = [crop(1, 200, 40), crop(2, 64, 64), crop(3, 300, 90)]
    together = [r.token_ids for r in rec.read(images, 128)]
    assert together == [rec.read([image], 128)[0].token_ids for image in images]


@pytest.mark.parametrize("recipe, calls", [("bf16", 3), ("avx2", 1)])
def test_a_bf16_tower_runs_crop_by_crop(tiny_v21, monkeypatch, recipe, calls):
    """oneDNN's AMX kernels give a row other bits by the call's row count (docs/model.md), so the
    bf16 tower is called once per crop with that crop's rows only; the other towers once a batch."""
    from model import packed_rows

    rec = load(tiny_v21, recipe, monkeypatch)
    seen = []
    tower = packed_rows.tower_packed

    def counting(*args):
        seen.append(args[3])  # the rows of each crop in the call
        return tower(*args)

    monkeypatch.setattr(packed_rows, "tower_packed", counting)
    rec.read([crop(1, 200, 40), crop(2, 64, 64), crop(3, 300, 90)], 4)
    assert len(seen) == calls and sum(len(rows) for rows in seen) == 3


def test_fp16_row_tile_makes_every_row_independent_of_the_call():
    """With the tile found on this CPU (padding M), a row's output is the same in a call of any size;
    without it fbgemm's leftover rows differ (M = 1, 2, 7, 14, ... on AVX2)."""
    assert packed_linear.fp16_row_tile() > 1
    generator = torch.Generator().manual_seed(3)
    linear = packed_linear.pack(torch.randn(200, 128, generator=generator), torch.float16)
    x = torch.randn(140, 128, generator=generator)
    alone = torch.cat([linear(row) for row in x.split(1)])
    for m in (1, 2, 3, 4, 5, 7, 8, 14, 31, 64, 121, 140):
        assert torch.equal(linear(x[:m]), alone[:m]), m


def test_fp16_rows_pads_exactly_the_calls_whose_rows_would_differ():
    """`fp16_rows` (measured on a small probe linear) pads a call where fbgemm's own result for some
    row differs from the row's result alone, and only there: on a linear of another shape, at every row
    count up to 130 and at the tower's and prefill's row counts for 1 and 8 crops."""
    generator = torch.Generator().manual_seed(5)
    linear = packed_linear.pack(torch.randn(200, 128, generator=generator), torch.float16)
    tile = packed_linear.fp16_row_tile()
    x = torch.randn(-(-2056 // tile) * tile, 128, generator=generator)
    raw = torch.ops.quantized.linear_dynamic_fp16
    alone = raw(x, linear._packed_params._packed_params)  # a multiple of the tile: as rows alone
    for m in [*range(1, 131), 256, 257, 2048, 2056]:
        same = torch.equal(raw(x[:m], linear._packed_params._packed_params), alone[:m])
        rows = packed_linear.fp16_rows(m)
        assert (rows == m) == same, m
        assert m <= rows <= m + tile, m
        assert torch.equal(linear(x[:m]), alone[:m]), m
    if "avx512f" not in fast.cpu_flags():  # AVX2: a decode step of 8 crops is 4 + 4 rows, no copy
        assert packed_linear.fp16_rows(8) == 8


def test_int8_linears_scale_each_row_alone():
    """A row beside a row 1000 times larger is rounded as it is alone (fbgemm's own dynamic linear
    quantises the whole input with one scale: there the small row is lost)."""
    generator = torch.Generator().manual_seed(4)
    weight = torch.randn(64, 96, generator=generator)
    linear = packed_linear.pack(weight, torch.qint8)
    small, large = (
        torch.randn(1, 96, generator=generator),
        1000 * torch.randn(1, 96, generator=generator),
    )
    assert torch.equal(linear(torch.cat([small, large]))[:1], linear(small))
    cosine = torch.nn.functional.cosine_similarity(linear(small), small @ weight.T)
    assert float(cosine) > 0.999


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ["exact", "avx2", "bf16"])
def test_real_size_random_weights_batch_invariant(recipe, monkeypatch):
    """The real-size model (random weights): int8, fp16 and bf16 kernels at their real shapes."""
    torch.manual_seed(0)
    rec = load(None, recipe, monkeypatch, random_weights=True)
    images = [crop(10, 320, 48), crop(11, 48, 320), crop(12, 120, 120)]
    options = dict(max_new_tokens=8, suppress_ids=rec.tokenizer.stop_ids)
    together = [r.token_ids for r in rec.read(images, **options)]
    assert together == [rec.read([image], **options)[0].token_ids for image in images]
    if recipe == "exact":  # MKL's float32 GEMM: the same tokens, not the same bits (docs/model.md)
        return
    # the fast recipes: the vision tokens bit for bit (random logits' near ties could hide a change)
    with torch.inference_mode():
        tokens, _, valid = rec._encode(images)
        for i, image in enumerate(images):
            alone, _, alone_valid = rec._encode([image])
            assert torch.equal(valid[i], alone_valid[0])
            assert torch.equal(tokens[i][valid[i]], alone[0][alone_valid[0]]), i
