"""Continuous batching (model/continuous.py): crops that join a running decode at any step, beside
rows of other sizes, lengths and token limits, get exactly the tokens `Recognizer.read` gives each
alone, on exact and on the CPU fast paths, AVX2 and bf16 tower (and nova, whose crops have
different numbers of vision tokens); a row leaves the step it is done, and its streamed pieces add
up to its text."""

import pytest
from test_batch_invariance import crop, load

from model.continuous import ContinuousDecoder, Row

LIMITS = [24, 10, 24, 5, 24, 17, 24]


def images():
    return [crop(i, 40 + 30 * i, 30 + 9 * i) for i in range(len(LIMITS))]


def run_schedule(rec, crops, limits):
    """Crop 0 alone for three steps, then 1-2 join, one step later 3-5, and 6 once others have left;
    → (rows by index, the streamed pieces joined, the most rows decoding at once)."""
    decoder = ContinuousDecoder(rec)
    done, pieces, most = {}, {}, 0

    def collect(rows):
        for row in rows:
            pieces[row.key] = pieces.get(row.key, "") + row.new_text()
            if row.done:
                done[row.key] = row
                assert row not in decoder.rows  # it left at once

    def join(indices):
        collect(decoder.join([crops[i] for i in indices], [limits[i] for i in indices], indices))

    join([0])
    for _ in range(3):
        collect(decoder.step())
    join([1, 2])
    collect(decoder.step())
    join([3, 4, 5])
    most = decoder.active
    while len(done) < 2:
        collect(decoder.step())
    join([6])
    while decoder.active:
        collect(decoder.step())
    return done, pieces, most


@pytest.mark.parametrize("recipe", ["exact", "avx2", "bf16"])
def test_rows_joining_mid_decode_read_as_each_crop_alone(tiny_v21, recipe):
    rec = load(tiny_v21, recipe)
    crops = images()
    done, pieces, most = run_schedule(rec, crops, LIMITS)
    assert most == 6  # the rows really decoded together
    for i, (image, limit) in enumerate(zip(crops, LIMITS)):
        (alone,) = rec.read([image], max_new_tokens=limit)
        assert done[i].token_ids == alone.token_ids, i
        assert done[i].text == alone.text == pieces[i]
        assert done[i].vision_tokens == alone.vision_tokens > 0
        assert done[i].finish_reason == ("length" if len(alone.token_ids) == limit else "stop")
        assert done[i].ms > 0
    assert any(len(done[i].token_ids) == LIMITS[i] for i in done)  # some ran to their limit


def test_nova_rows_with_different_vision_lengths_read_as_alone(tiny_nova):
    rec = load(tiny_nova, "exact")
    crops = images()
    done, pieces, _ = run_schedule(rec, crops, LIMITS)
    assert len({done[i].vision_tokens for i in done}) > 1  # crops of different token counts
    for i, (image, limit) in enumerate(zip(crops, LIMITS)):
        (alone,) = rec.read([image], max_new_tokens=limit)
        assert done[i].token_ids == alone.token_ids and pieces[i] == alone.text, i


class FakeTokenizer:
    stop_ids = (2, 0)

    def __init__(self, texts):
        self.texts = texts  # len(ids) → what decode gives

    def decode(self, ids):
        return self.texts[len(ids)]


def test_streamed_text_holds_back_what_may_still_change():
    """A character still missing bytes, and text after the last space (the clean-up may drop that
    space), are sent only once certain; the pieces always add up to the final text."""
    texts = ["", "ab", "ab\ufffd", "ab字 ", "ab字 .", "ab字."]
    row = Row(None, max_new_tokens=5, vision_tokens=4, tokenizer=FakeTokenizer(texts))
    pieces = []
    for token in range(10, 15):
        row._take(token)
        pieces.append(row.new_text())
    assert pieces == ["ab", "", "字", "", "."] and row.finish_reason == "length"
    assert "".join(pieces) == row.text == "ab字."
    row = Row(None, max_new_tokens=5, vision_tokens=4, tokenizer=FakeTokenizer(texts))
    row._take(10)
    row._take(2)  # eos: done, and eos is no token of the text
    assert row.finish_reason == "stop" and row.token_ids == [10] and row.new_text() == "ab"


@pytest.mark.parametrize("recipe", ["exact", "bf16"])
def test_a_crop_joining_eight_rows_has_its_first_token_from_its_prefill(tiny_v21, recipe):
    """While eight rows are being decoded, a ninth crop's prefill alone gives its first token (the
    running rows neither step nor end for it), then nine rows decode together, and every crop's
    tokens are those it reads alone (exact, and the bf16-tower recipe of a CPU with native bf16)."""
    rec = load(tiny_v21, recipe)
    crops = [crop(i, 40 + 23 * i, 30 + 4 * i) for i in range(9)]
    limit = 12
    decoder = ContinuousDecoder(rec)
    rows = decoder.join(crops[:8], [limit] * 8, list(range(8)))
    for _ in range(2):
        decoder.step()
    tokens_before = [len(row.token_ids) for row in rows]
    assert decoder.active == 8 and tokens_before == [3] * 8  # none ended: all still decoding
    (ninth,) = decoder.join([crops[8]], [limit], [8])
    assert len(ninth.token_ids) == 1 and not ninth.done  # its first token, from its prefill
    assert [len(row.token_ids) for row in rows] == tokens_before and decoder.active == 9
    assert len(decoder.step()) == 9  # then all nine are decoded together
    while decoder.active:
        decoder.step()
    for row, image in zip([*rows, ninth], crops):
        (alone,) = rec.read([image], max_new_tokens=limit)
        assert row.token_ids == alone.token_ids and row.text == alone.text, row.key
