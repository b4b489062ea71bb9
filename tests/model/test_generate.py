"""Decoding: cache vs teacher forcing, batch independence, stop rules, penalty, beam search."""

import pytest
import torch
from PIL import Image, ImageDraw

from model import generate


def crops():
    """Three crops of different shapes with some strokes on them."""
    out = []
    for i, size in enumerate([(200, 48), (40, 160), (90, 90)]):
        im = Image.new("RGB", size, "white")
        d = ImageDraw.Draw(im)
        for k in range(6):
            d.line([(k * 13 + i, 3), (k * 7, size[1] - 4)], fill=(30 * k, 0, 90), width=3)
        out.append(im)
    return out


# --- the real model ------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["v2.1", "nova"])
def test_cached_decoding_equals_teacher_forced_logits(variant, tiny_v21, tiny_nova):
    """GIVEN greedy tokens from the cached loop WHEN the same ids are teacher-forced THEN equal logits."""
    from model import load_recognizer

    rec = load_recognizer(
        tiny_v21 if variant == "v2.1" else tiny_nova, device="cpu", precision="exact"
    )
    images = crops()
    steps = 6
    results = rec.read(images, max_new_tokens=steps, suppress_ids=rec.tokenizer.stop_ids)
    ids = torch.tensor([[rec.tokenizer.bos_id] + r.token_ids for r in results])
    teacher = rec.logits(images, ids)  # (b, steps+1, V)
    # Re-run the cached loop and collect its logits at every step.
    with torch.inference_mode():
        batch = __import__("model.preprocess", fromlist=["preprocess"]).preprocess(
            images, rec.config.patch_budget
        )
        vision = rec.model.encode_images(
            batch.pixel_values, batch.pixel_attention_mask, batch.spatial_shapes
        )
        state = generate.DecodeState(rec.model, vision, ids[:, :1], extra_slots=steps)
        cached = [rec.model.logits(state.text_hidden[:, -1])]
        for s in range(1, steps + 1):
            cached.append(state.step(ids[:, s]))
    cached = torch.stack(cached, dim=1)
    assert torch.allclose(cached, teacher, atol=1e-4), (cached - teacher).abs().max()


def test_an_eager_cpu_step_reads_only_the_cache_slots_written_so_far(tiny_recognizer, monkeypatch):
    """The eager CPU decode step attends to the slots written so far (the cache has room for
    max_new_tokens), and gives the logits of a step over the whole cache."""
    import torch.nn.functional as F

    rec, images = tiny_recognizer, crops()
    batch = __import__("model.preprocess", fromlist=["preprocess"]).preprocess(
        images, rec.config.patch_budget
    )
    keys_read = []
    sdpa = F.scaled_dot_product_attention

    def spy(q, k, v, **kwargs):
        keys_read.append(k.shape[-2])
        return sdpa(q, k, v, **kwargs)

    def whole_cache_step(*args):  # not `decode_step` itself: the state then reads every slot
        return generate.decode_step(*args)

    logits = {}
    with torch.inference_mode():
        for name, step in (("written", None), ("whole", whole_cache_step)):
            vision = rec.model.encode_images(
                batch.pixel_values, batch.pixel_attention_mask, batch.spatial_shapes
            )
            bos = torch.full((len(images), 1), rec.tokenizer.bos_id)
            state = generate.DecodeState(rec.model, vision, bos, extra_slots=40, step=step)
            monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
            keys_read.clear()
            logits[name] = torch.stack([state.step(torch.full((3,), t)) for t in (5, 9, 17)], 1)
            monkeypatch.setattr(F, "scaled_dot_product_attention", sdpa)
            if name == "written":
                m = state.n_vision
                layers = len(rec.model.decoder.layers)
                assert keys_read == [m + 2] * layers + [m + 3] * layers + [m + 4] * layers
            else:
                assert set(keys_read) == {rec.model.kv_caches()[0].k.shape[2]}
    assert torch.allclose(logits["written"], logits["whole"], atol=1e-5, rtol=0)


def test_each_row_stops_at_its_own_token_limit(tiny_recognizer):
    """limits: a crop reads in a batch what it reads alone with max_new_tokens = its limit."""
    rec, images = tiny_recognizer, crops()
    options = dict(
        suppress_ids=rec.tokenizer.stop_ids
    )  # no end of text: every row runs to its limit
    limits = [3, 9, 1]
    together = rec.read(images, max_new_tokens=12, limits=limits, **options)
    assert [len(r.token_ids) for r in together] == limits
    for image, limit, result in zip(images, limits, together):
        assert result.token_ids == rec.read([image], max_new_tokens=limit, **options)[0].token_ids
    batches = rec.read_batches([images[:2], images[2:]], max_new_tokens=12, limits=[[3, 9], [1]])
    assert [r.token_ids for batch in batches for r in batch] == [r.token_ids for r in together]
    with pytest.raises(ValueError, match="limits"):
        rec.read(images, max_new_tokens=12, limits=[3, 9])


@pytest.mark.parametrize("variant", ["v2.1", "nova"])
def test_a_batch_equals_its_crops_one_by_one(variant, tiny_v21, tiny_nova):
    from model import load_recognizer

    rec = load_recognizer(
        tiny_v21 if variant == "v2.1" else tiny_nova, device="cpu", precision="exact"
    )
    images = crops()
    batched = rec.read(images, max_new_tokens=12, suppress_ids=rec.tokenizer.stop_ids)
    for image, b in zip(images, batched):
        (alone,) = rec.read([image], max_new_tokens=12, suppress_ids=rec.tokenizer.stop_ids)
        assert alone.token_ids == b.token_ids
    # And the logits agree too (nova: padded projector rows are masked, so batch composition is invisible).
    ids = torch.tensor([[rec.tokenizer.bos_id] + r.token_ids[:5] for r in batched])
    together = rec.logits(images, ids)
    for i, image in enumerate(images):
        assert torch.allclose(rec.logits([image], ids[i : i + 1])[0], together[i], atol=1e-4)


@pytest.mark.parametrize("ahead", [False, True])
def test_read_batches_gives_what_read_gives_batch_by_batch(tiny_recognizer, monkeypatch, ahead):
    rec, images = tiny_recognizer, crops()
    monkeypatch.setattr(rec, "prepare_ahead", ahead)
    batches = [
        images[:2],
        [],
        images[2:],
        "not an image",
    ]  # a list of characters: every one fails to open
    options = dict(max_new_tokens=8, suppress_ids=rec.tokenizer.stop_ids)
    outcomes = list(rec.read_batches(batches, **options))
    assert len(outcomes) == 4 and outcomes[1] == []
    for batch, outcome in zip(batches[::2], outcomes[::2]):
        assert [r.token_ids for r in outcome] == [r.token_ids for r in rec.read(batch, **options)]
        assert outcome[0].batch_size == len(batch) and outcome[0].timings["preprocess"] > 0
    assert isinstance(outcomes[3], TypeError)  # that batch's own error; the others were read
    with pytest.raises(ValueError, match="max_new_tokens"):
        rec.read_batches(
            batches, max_new_tokens=0
        )  # bad options fail at the call, before any batch


def test_read_batches_prepares_the_next_batch_while_one_is_read(tiny_recognizer, monkeypatch):
    """The overlap itself, without timing anything: the model's read of the first batch waits until the
    second batch's preparation has started, which can only happen if it runs alongside."""
    import threading

    rec, images = tiny_recognizer, crops()
    second_started = threading.Event()
    prepare, read_prepared = rec._prepare, rec._read_prepared

    def recording_prepare(batch, budgets=None):
        if batch[0] is images[2]:
            second_started.set()
        return prepare(batch, budgets)

    overlapped = []

    def waiting_read(prepared, *args, **kwargs):
        if len(prepared) == 2:  # the first batch
            overlapped.append(second_started.wait(30))
        return read_prepared(prepared, *args, **kwargs)

    monkeypatch.setattr(rec, "_prepare", recording_prepare)
    monkeypatch.setattr(rec, "_read_prepared", waiting_read)
    monkeypatch.setattr(rec, "prepare_ahead", True)  # what a GPU gets
    outcomes = list(rec.read_batches([images[:2], images[2:]], max_new_tokens=4))
    assert overlapped == [True], "the second batch was not prepared while the first one was read"
    assert [len(o) for o in outcomes] == [2, 1]


def test_nova_uses_a_quarter_of_the_patch_grid(tiny_nova):
    from model import load_recognizer
    from model.preprocess import preprocess

    rec = load_recognizer(tiny_nova, device="cpu", precision="exact")
    batch = preprocess(crops()[:2], rec.config.patch_budget)
    with torch.inference_mode():
        tokens, positions, valid = rec.model.encode_images(
            batch.pixel_values, batch.pixel_attention_mask, batch.spatial_shapes
        )
    half = (batch.spatial_shapes + 1) // 2
    assert valid.sum(1).tolist() == (half[:, 0] * half[:, 1]).tolist()
    assert tokens.shape[1] == int((half[:, 0] * half[:, 1]).max())


# --- scripted logits: the loop rules in isolation ------------------------------------------------


class ScriptedState:
    """Stands in for DecodeState: step() returns the next scripted logits row per batch row."""

    def __init__(self, script):  # script: per step, one logits row per current batch row (or beam)
        self.script, self.fed, self.s = (
            [torch.tensor(x, dtype=torch.float32) for x in script],
            [],
            0,
        )

    def first(self):
        return self.script[0]

    def step(self, token):
        self.fed.append(token.tolist())
        self.s += 1
        return self.script[self.s]

    def reorder(self, rows):
        pass  # the script is already written per beam


V, BOS, EOS, PAD = 6, 5, 4, 3


def one_hot(*ids):
    rows = torch.full((len(ids), V), -5.0)
    for r, i in enumerate(ids):
        rows[r, i] = 5.0
    return rows.tolist()


def test_finished_rows_are_fed_pad_and_the_loop_stops_when_all_finish():
    script = [one_hot(1, EOS), one_hot(2, 1), one_hot(PAD, 1), one_hot(1, 1), one_hot(1, 1)]
    state = ScriptedState(script)
    out = generate.greedy(state, state.first(), 10, BOS, (EOS, PAD))
    assert out.tolist() == [[1, 2, PAD], [EOS, PAD, PAD]]  # row 0 ends on pad, row 1 on eos
    assert state.fed == [[1, EOS], [2, PAD]]  # each row is fed its last output: eos once, then pad
    assert out.shape[1] == 3  # stopped before max_new_tokens


def test_a_lagged_stop_test_gives_the_same_ids_with_one_step_more():
    """What CUDA does by default (the all-finished flag is read one step late), here on CPU."""
    script = [one_hot(1, EOS), one_hot(2, 1), one_hot(PAD, 1), one_hot(1, 1), one_hot(1, 1)]
    state = ScriptedState(script)
    out = generate.greedy(state, state.first(), 10, BOS, (EOS, PAD), lag_stop=True)
    assert out.tolist() == [[1, 2, PAD], [EOS, PAD, PAD]]
    assert state.fed == [
        [1, EOS],
        [2, PAD],
        [PAD, PAD],
    ]  # one step past the end, its output dropped
    state = ScriptedState([one_hot(1)] * 8)  # no stop: bounded by max_new_tokens as before
    assert generate.greedy(state, state.first(), 5, BOS, (EOS, PAD), lag_stop=True).tolist() == [
        [1] * 5
    ]


def test_max_new_tokens_bounds_the_output():
    state = ScriptedState([one_hot(1)] * 8)
    assert generate.greedy(state, state.first(), 5, BOS, (EOS, PAD)).tolist() == [[1] * 5]


def test_repetition_penalty_rule():
    logits = torch.tensor([[2.0, -2.0, 1.0]])
    seen = torch.tensor([[True, True, False]])
    out = generate.apply_repetition_penalty(logits, seen, 2.0)
    assert out.tolist() == [[1.0, -4.0, 1.0]]
    assert generate.apply_repetition_penalty(logits, seen, 1.0) is logits


def test_repetition_penalty_changes_the_greedy_choice():
    # token 1 leads by a little at every step; with the penalty the second step must pick token 2
    row = [-9.0, 3.0, 2.5, -9.0, -9.0, -9.0]
    state = ScriptedState([[row]] * 3)
    assert generate.greedy(state, state.first(), 2, BOS, (EOS, PAD)).tolist() == [[1, 1]]
    state = ScriptedState([[row]] * 3)
    assert generate.greedy(
        state, state.first(), 2, BOS, (EOS, PAD), repetition_penalty=1.5
    ).tolist() == [[1, 2]]


def test_suppressed_ids_are_never_generated():
    state = ScriptedState([one_hot(EOS)] * 4)
    out = generate.greedy(state, state.first(), 3, BOS, (EOS, PAD), suppress_ids=(EOS, PAD))
    assert EOS not in out.tolist()[0] and len(out[0]) == 3


def logp_row(probs):
    return torch.log(torch.tensor(probs)).tolist()


def test_beam_search_returns_the_best_finished_hypothesis():
    """Greedy takes token 0 (p .5) then is stuck with a weak eos; beam search finds 1 → eos (.4 · .9)."""
    first = [logp_row([0.5, 0.4, 0.02, 0.02, 0.04, 0.02])]
    # step 1, per beam (beam 0 = token 0, beam 1 = token 1): after 0 eos is unlikely; after 1 it is likely
    step1 = [
        logp_row([0.3, 0.3, 0.2, 0.02, 0.16, 0.02]),
        logp_row([0.02, 0.02, 0.02, 0.02, 0.9, 0.02]),
    ]
    step2 = [logp_row([0.02, 0.02, 0.02, 0.02, 0.9, 0.02])] * 2
    script = [first, step1, step2, step2]
    state = ScriptedState(script)
    best = generate.beam_search(state, state.first(), 4, 2, BOS, (EOS, PAD), length_penalty=1.0)
    assert best == [[1]]
    greedy_state = ScriptedState([first, [step1[0]], [step2[0]], [step2[0]]])
    assert (
        generate.greedy(greedy_state, greedy_state.first(), 4, BOS, (EOS, PAD)).tolist()[0][0] == 0
    )


def test_beam_search_with_real_model_returns_a_sequence(tiny_recognizer):
    image = crops()[0]
    (beam,) = tiny_recognizer.read([image], max_new_tokens=6, num_beams=3)
    (greedy,) = tiny_recognizer.read([image], max_new_tokens=6)
    assert isinstance(beam.token_ids, list) and len(beam.token_ids) <= 6
    assert all(t not in tiny_recognizer.tokenizer.stop_ids for t in beam.token_ids)
    assert isinstance(greedy.text, str)
