"""Per-crop patch budgets (`Recognizer.read(budgets=...)`, docs/model.md "Batch invariance"): a crop
read in a batch beside crops of other budgets reads what it reads alone at its own budget, on exact
and on the AVX2 fast path, for v2.1 (whose padded slots the decoder sees up to the crop's budget)
and nova."""

import pytest
import torch

from model.preprocess import preprocess
from tests.model.test_batch_invariance import crop, load

TOKENS = 24
CROPS = [crop(1, 200, 40), crop(2, 64, 64), crop(3, 300, 90), crop(4, 30, 120), crop(5, 90, 30)]


@pytest.mark.parametrize("recipe", ["exact", "avx2"])
@pytest.mark.parametrize("variant", ["tiny_v21", "tiny_nova"])
def test_a_crop_reads_at_its_own_budget_in_a_batch_of_other_budgets(recipe, variant, request):
    rec = load(request.getfixturevalue(variant), recipe)
    options = dict(max_new_tokens=TOKENS, suppress_ids=rec.tokenizer.stop_ids)
    budgets = [24, rec.config.patch_budget, 100, 13, 60]
    together = rec.read(CROPS, budgets=budgets, **options)
    for image, budget, result in zip(CROPS, budgets, together):
        assert result.token_ids == rec.read([image], budgets=[budget], **options)[0].token_ids
    # the model's own budget is what a read without budgets uses
    assert together[1].token_ids == rec.read([CROPS[1]], **options)[0].token_ids
    # and a budget is each crop's own: v2.1's decoder sees exactly that many slots of it
    if variant == "tiny_v21":
        assert [r.vision_tokens for r in together] == budgets


def test_budgets_resize_each_image_for_its_own_and_pad_to_the_largest():
    batch = preprocess(CROPS[:3], 256, budgets=[24, 300, 100])
    assert batch.pixel_values.shape[1] == 256  # 300 is more than the model's 256: capped
    assert batch.budgets.tolist() == [24, 256, 100]
    patches = batch.pixel_attention_mask.sum(-1).tolist()
    assert patches[0] <= 24 and patches[2] <= 100 and patches[1] > 100
    alone = preprocess([CROPS[0]], 24)
    assert torch.equal(batch.pixel_values[0, :24], alone.pixel_values[0])
    assert not batch.pixel_values[0, 24:].any()
    with pytest.raises(ValueError):
        preprocess(CROPS[:2], 256, budgets=[10])
