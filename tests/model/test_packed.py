"""Packed rows (docs/model.md, "Packed rows"): on the CPU the tower and the prefill run over each
crop's own rows, packed one after another, instead of the batch padded to its largest crop. The
result is the padded computation's (the same network, other float rounding), a crop reads the same
alone and in any batch, and the decode reads the cache the packed prefill wrote."""

import pytest
import torch

from model import hayai, packed_rows
from model.recognizer import load_recognizer
from tests.model.test_batch_invariance import crop, load

TOKENS = 24
CROPS = [crop(1, 200, 40), crop(2, 64, 64), crop(3, 300, 90), crop(4, 30, 120), crop(5, 90, 30)]


def _reads(rec, packed: bool, budgets):
    rec.model.packed = packed
    try:
        options = dict(max_new_tokens=TOKENS, suppress_ids=rec.tokenizer.stop_ids)
        together = rec.read(CROPS, budgets=budgets, **options)
        ids = torch.tensor([[rec.tokenizer.bos_id] + r.token_ids[:6] for r in together])
        return [r.token_ids for r in together], rec.logits(CROPS, ids)
    finally:
        rec.model.packed = True


@pytest.mark.parametrize("variant", ["tiny_v21", "tiny_nova"])
@pytest.mark.parametrize("with_budgets", [False, True])
def test_packed_rows_compute_what_the_padded_batch_computes(variant, with_budgets, request):
    rec = load_recognizer(request.getfixturevalue(variant), device="cpu", precision="exact")
    assert rec.model.packed  # the CPU packs
    budgets = [24, rec.config.patch_budget, 100, 13, 60] if with_budgets else None
    padded_ids, padded_logits = _reads(rec, False, budgets)
    packed_ids, packed_logits = _reads(rec, True, budgets)
    assert packed_ids == padded_ids
    # teacher-forced logits (the tower, the projector, the prefill over 7 text tokens): the same
    # values up to float rounding
    assert torch.allclose(packed_logits, padded_logits, atol=1e-5, rtol=0)


@pytest.mark.parametrize("recipe", ["exact", "avx2", "bf16"])
def test_a_crop_reads_the_same_alone_and_packed_beside_others(recipe, tiny_v21):
    rec = load(tiny_v21, recipe)
    options = dict(max_new_tokens=TOKENS, suppress_ids=rec.tokenizer.stop_ids)
    budgets = [24, 256, 100, 6, 60]  # 6 patches: fewer rows than PACKED_MIN_ROWS alone
    together = rec.read(CROPS, budgets=budgets, **options)
    for image, budget, result in zip(CROPS, budgets, together):
        assert result.token_ids == rec.read([image], budgets=[budget], **options)[0].token_ids
    # packed in another order, the first crop with other neighbours
    reordered = rec.read(CROPS[::-1], budgets=budgets[::-1], **options)
    assert [r.token_ids for r in reordered[::-1]] == [r.token_ids for r in together]


def test_pack_rows_pads_a_short_call_with_zero_rows():
    parts = [torch.ones(3, 4), torch.full((2, 4), 2.0)]
    rows = packed_rows.pack_rows(parts)
    assert rows.shape == (packed_rows.PACKED_MIN_ROWS, 4)
    assert torch.equal(rows[:5], torch.cat(parts)) and not rows[5:].any()
    many = [torch.ones(packed_rows.PACKED_MIN_ROWS, 4), torch.ones(1, 4)]
    assert packed_rows.pack_rows(many).shape == (packed_rows.PACKED_MIN_ROWS + 1, 4)


def test_block_causal_mask_is_the_models_mask_over_one_crops_rows():
    n_vision, length = 5, 8
    mask = packed_rows.block_causal(n_vision, length)
    valid = torch.ones(1, length, dtype=torch.bool)
    reference = hayai.HayaiModel.attention_mask(None, torch.arange(length), n_vision, valid)
    assert torch.equal(mask, reference[0, 0])


def test_the_packed_prefill_refuses_vision_slots_that_are_not_a_prefix(tiny_v21):
    rec = load_recognizer(tiny_v21, device="cpu", precision="exact")
    d = rec.config.d_model
    valid = torch.tensor([[True, False, True]])
    rec.model.setup_caches(1, 8)
    with pytest.raises(ValueError, match="first"):
        rec.model.prefill_packed(
            torch.zeros(1, 3, d),
            torch.zeros(1, 3, 2, dtype=torch.long),
            valid,
            torch.zeros(1, 1, d),
            torch.zeros(1, 1, 2, dtype=torch.long),
        )
