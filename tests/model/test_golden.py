"""Our engine against what the author's own code computed on the golden checkpoint (exact mode, CPU)."""

import json

import numpy as np
import pytest
from PIL import Image


@pytest.fixture(scope="module")
def golden(golden_dir, golden_checkpoint):
    from model import load_recognizer

    spec = json.loads((golden_dir / "expected.json").read_text())
    arrays = np.load(golden_dir / "expected.npz")
    images = [Image.open(golden_dir / name) for name in spec["images"]]
    rec = load_recognizer(golden_checkpoint, device="cpu", precision="exact")
    return rec, spec, arrays, images


def test_special_ids_come_from_the_tokenizer(golden):
    rec, spec, _, _ = golden
    tok = rec.tokenizer
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == tuple(
        spec["special_ids"][k] for k in ("pad", "bos", "eos", "unk")
    )


def test_teacher_forced_logits_match_within_1e4(golden):
    rec, _, arrays, images = golden
    logits = rec.logits(images, arrays["teacher_text_ids"]).numpy()
    assert logits.shape == arrays["teacher_logits"].shape
    assert np.abs(logits - arrays["teacher_logits"]).max() < 1e-4


def test_greedy_ids_identical_batched(golden):
    rec, spec, _, images = golden
    results = rec.read(images, max_new_tokens=spec["max_new_tokens"])
    assert [r.token_ids for r in results] == spec["greedy_token_ids"]


@pytest.mark.parametrize("index", range(4))
def test_greedy_ids_identical_one_crop_at_a_time(golden, index):
    rec, spec, _, images = golden
    (result,) = rec.read([images[index]], max_new_tokens=spec["max_new_tokens"])
    assert result.token_ids == spec["greedy_token_ids"][index]


def test_repetition_penalty_matches_upstream(golden):
    rec, spec, _, images = golden
    results = rec.read(images, max_new_tokens=spec["max_new_tokens"], repetition_penalty=1.3)
    assert [r.token_ids for r in results] == spec["greedy_token_ids_repetition_penalty_1.3"]


def test_timings_cover_every_stage(golden):
    rec, _, _, images = golden
    (result,) = rec.read(images[:1], max_new_tokens=4)
    assert set(result.timings) >= {"preprocess", "vision", "prefill", "decode", "total"}
    stages = sum(result.timings[k] for k in ("preprocess", "vision", "prefill", "decode"))
    assert result.timings["total"] == pytest.approx(stages, rel=1e-6)
