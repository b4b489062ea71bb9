"""The batcher: concurrent crops grouped up to max_batch in ONE model thread, never across token limits;
a full queue refuses (503 over HTTP, as an error object), a failed batch fails only its own crops,
and a crop's text does not depend on its batch (the real tiny checkpoint)."""

from __future__ import annotations

import asyncio
from concurrent.futures import CancelledError, wait

import openai
import pytest
from PIL import Image
from serve_support import GatedRecognizer, crop, png_url, serving

from app.serve.api import ServerConfig, create_app
from app.serve.batcher import Batcher, QueueFull, Schedule


@pytest.fixture
def gated():
    rec = GatedRecognizer()
    batchers = []

    def make(**options):
        b = Batcher(rec, Schedule(**options)).start()
        batchers.append(b)
        return b

    yield rec, make
    rec.gate.set()
    for b in batchers:
        b.close()


def test_the_model_is_read_on_the_thread_it_was_loaded_on():
    """torch's CPU threads belong to the thread that first ran a parallel op: `hayai serve` loads
    the model on its model thread and hands that thread to the batcher (app/serve/model_thread.py)."""
    import threading

    from app.serve.model_thread import ModelThread

    thread = ModelThread()
    rec = thread.call(lambda: (GatedRecognizer(), threading.get_ident())[0])
    loaded_on = thread.call(threading.get_ident)
    read_on = []
    read = rec.read
    rec.read = lambda images, *a, **k: (
        read_on.append(threading.get_ident()),
        read(images, *a, **k),
    )[1]
    # the thread hands an exception back to the caller, and goes on
    with pytest.raises(ZeroDivisionError):
        thread.call(lambda: 1 / 0)
    batcher = Batcher(rec, Schedule(max_batch=2, max_wait_ms=0), thread=thread).start()
    try:
        assert batcher.submit(crop(10), 16).result(30).text == "10x20"
        assert read_on == [loaded_on]
    finally:
        batcher.close()
    # closed, the batcher's loop has ended and the thread takes work again (it is the caller's)
    assert thread.call(lambda: "after") == "after"
    thread.stop()


def test_crops_waiting_together_are_read_together_up_to_max_batch(gated):
    rec, make = gated
    batcher = make(max_batch=4, max_wait_ms=0)
    rec.gate.clear()
    first = batcher.submit(crop(10), 16)
    assert rec.reading.wait(10)  # the model is busy with the first crop...
    rest = [batcher.submit(crop(11 + i), 16) for i in range(10)]  # ...while ten more arrive
    assert batcher.stats()["waiting"] == 10 and batcher.stats()["in_flight"] == 1
    rec.gate.set()
    wait([first, *rest], timeout=30)
    assert [f.result().text for f in rest] == [f"{11 + i}x20" for i in range(10)]
    assert [len(b) for b in rec.batches] == [1, 4, 4, 2]  # in arrival order, at most four at a time
    stats = batcher.stats()
    assert stats["batch_sizes"] == {"1": 1, "2": 1, "4": 2} and stats["largest_batch"] == 4
    assert stats["served"] == 11 and stats["batches"] == 4
    assert rec.threads == {"hayai-model"}  # one model thread, whoever submitted


def test_fixed_batches_are_never_paced(gated):
    """A pace for the prefills (what `hayai serve` gives on a CPU) applies to continuous batching
    only: whole batches (--batching fixed, --beams) are still read up to max_batch together."""
    rec, make = gated
    batcher = make(max_batch=4, max_wait_ms=60_000, prefill_per_step=16)
    assert batcher.schedule.prefill_per_step is None
    futures = [batcher.submit(crop(40 + i), 16) for i in range(4)]
    wait(futures, timeout=30)
    assert [len(b) for b in rec.batches] == [4]


def test_a_crop_waits_for_company_at_most_max_wait_ms(gated):
    rec, make = gated
    batcher = make(max_batch=8, max_wait_ms=0)
    assert batcher.submit(crop(12), 16).result(10).text == "12x20"  # alone: read without waiting
    batcher = make(max_batch=3, max_wait_ms=60_000)
    futures = [batcher.submit(crop(20 + i), 16) for i in range(3)]  # a full batch need not wait
    assert [f.result(30).text for f in futures] == ["20x20", "21x20", "22x20"]
    assert rec.batches[-1] == [(20, 20), (21, 20), (22, 20)]


def test_crops_with_different_token_limits_never_share_a_batch(gated):
    rec, make = gated
    batcher = make(max_batch=8, max_wait_ms=0)
    rec.gate.clear()
    blocker = batcher.submit(crop(5), 16)
    assert rec.reading.wait(10)
    mixed = [batcher.submit(crop(30 + i), 16 if i % 2 else 4) for i in range(6)]
    rec.gate.set()
    wait([blocker, *mixed], timeout=30)
    assert rec.batches[1:] == [[(30, 20), (32, 20), (34, 20)], [(31, 20), (33, 20), (35, 20)]]
    assert [len(f.result().token_ids) for f in mixed] == [4, 16, 4, 16, 4, 16]


def test_a_full_queue_refuses_all_or_nothing(gated):
    rec, make = gated
    batcher = make(max_batch=2, max_wait_ms=0, max_queue=3)
    rec.gate.clear()
    running = batcher.submit(crop(1), 8)
    assert rec.reading.wait(10)
    waiting = batcher.submit_many([crop(2), crop(3)], 8)
    with pytest.raises(QueueFull):
        batcher.submit_many([crop(4), crop(5)], 8)  # two do not fit beside two: neither is queued
    waiting.append(batcher.submit(crop(6), 8))  # one still does
    assert batcher.stats()["rejected"] == 2 and batcher.stats()["waiting"] == 3
    rec.gate.set()
    assert [f.result(30).text for f in [running, *waiting]] == ["1x20", "2x20", "3x20", "6x20"]


def test_a_failed_batch_fails_its_own_crops_and_the_next_batch_reads(gated):
    rec, make = gated
    batcher = make(max_batch=4, max_wait_ms=0)
    rec.fail_next = [RuntimeError("out of memory")]
    with pytest.raises(RuntimeError, match="out of memory"):
        batcher.submit(crop(7), 8).result(10)
    assert batcher.submit(crop(8), 8).result(10).text == "8x20"
    assert batcher.stats()["failed"] == 1 and batcher.stats()["served"] == 1


def test_a_crop_reads_the_same_in_any_batch(tiny_recognizer):
    """The real engine through the batcher: four different crops read as one batch give exactly what
    each gives alone."""
    from PIL import ImageDraw

    images = []
    for i, size in enumerate([(200, 48), (40, 160), (90, 90), (64, 30)]):
        im = Image.new("RGB", size, "white")
        ImageDraw.Draw(im).line(
            [(i * 7, 2), (size[0] - 3, size[1] - 2)], fill=(0, 40 * i, 90), width=3
        )
        images.append(im)
    batcher = Batcher(tiny_recognizer, Schedule(max_batch=4, max_wait_ms=60_000)).start()
    try:
        futures = [batcher.submit(im, 10) for im in images]
        together = [f.result(120) for f in futures]
        assert batcher.stats()["batch_sizes"] == {"4": 1}  # they really were read as one batch
    finally:
        batcher.close()
    for image, result in zip(images, together):
        (alone,) = tiny_recognizer.read([image], max_new_tokens=10)
        assert result.token_ids == alone.token_ids and result.text == alone.text
        assert result.vision_tokens == alone.vision_tokens > 0


# --- over HTTP -----------------------------------------------------------------------------------


def test_a_full_queue_is_a_503_error_object_and_the_server_keeps_serving(gated):
    rec, make = gated
    batcher = make(max_batch=1, max_wait_ms=0, max_queue=2)
    config = ServerConfig("hayai-v2.1", "v2.1", "cpu", "exact", max_new_tokens=8)
    rec.gate.clear()
    with serving(create_app(batcher, config)) as url:
        client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="none", max_retries=0)

        def ask(width):
            messages = [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": png_url(crop(width))}}],
                }
            ]
            return client.chat.completions.create(model="hayai-v2.1", messages=messages)

        async def scenario():
            first = asyncio.ensure_future(ask(40))  # read now (and held at the gate)
            while not rec.reading.is_set():
                await asyncio.sleep(0.01)
            queued = [asyncio.ensure_future(ask(41)), asyncio.ensure_future(ask(42))]
            while batcher.stats()["waiting"] < 2:
                await asyncio.sleep(0.01)
            with pytest.raises(openai.InternalServerError) as info:  # the queue holds two
                await ask(43)
            error = info.value
            # the event loop answered while the model thread was busy: it never runs the model
            health = await client.get("/../health", cast_to=object)
            rec.gate.set()
            answers = await asyncio.gather(first, *queued)
            after = await ask(44)
            await client.close()
            return error, health, answers, after

        error, health, answers, after = asyncio.run(scenario())
    assert error.status_code == 503 and error.response.headers["retry-after"] == "1"
    assert error.body == {
        "message": error.body["message"],
        "type": "server_error",
        "param": None,
        "code": "queue_full",
    }
    assert health["stats"]["in_flight"] == 1 and health["stats"]["waiting"] == 2
    assert [a.choices[0].message.content for a in answers] == ["40x20", "41x20", "42x20"]
    assert after.choices[0].message.content == "44x20"  # and it goes on serving
    assert batcher.stats()["rejected"] == 1


# --- continuous batching (the real tiny checkpoint) ----------------------------------------------


def test_a_crop_joins_the_running_decode_and_streams_before_it_ends(tiny_recognizer):
    """While the first crop is being decoded (held inside its first streamed piece), a second is
    submitted: it joins the running decode rather than waiting, both stream their text piece by
    piece, and each reads exactly as alone."""
    import threading

    from PIL import ImageDraw

    images = []
    for i, size in enumerate([(200, 48), (90, 90)]):
        im = Image.new("RGB", size, "white")
        ImageDraw.Draw(im).line([(i * 9, 2), (size[0] - 3, size[1] - 2)], fill=(0, 80, 90), width=3)
        images.append(im)
    alone = [tiny_recognizer.read([im], max_new_tokens=12)[0] for im in images]
    assert all(len(a.token_ids) > 2 for a in alone)
    batcher = Batcher(
        tiny_recognizer, Schedule(max_batch=4, max_wait_ms=0, continuous=True)
    ).start()
    held, go = threading.Event(), threading.Event()
    pieces: list[list[str]] = [[], []]

    def first_piece(piece):
        pieces[0].append(piece)
        if len(pieces[0]) == 1:
            held.set()  # the model thread waits here, in the middle of the first crop's decode
            assert go.wait(60)

    try:
        first = batcher.submit(images[0], 12, on_text=first_piece)
        assert held.wait(60)
        assert not first.done() and batcher.stats()["in_flight"] == 1
        second = batcher.submit(images[1], 12, on_text=pieces[1].append)
        go.set()
        results = [first.result(120), second.result(120)]
        stats = batcher.stats()
    finally:
        go.set()
        batcher.close()
    assert stats["joined_running"] == 1 and stats["served"] == 2
    assert stats["batch_sizes"] == {"1": 2}  # two prefills, one decode
    assert stats["step_rows"] > stats["steps"]  # some steps decoded both crops
    for result, want, streamed in zip(results, alone, pieces):
        assert result.token_ids == want.token_ids and result.text == want.text
        assert "".join(streamed) == want.text and len(streamed) > 1


def test_a_cancelled_crop_leaves_the_decode_at_the_next_step(tiny_recognizer):
    import threading

    batcher = Batcher(
        tiny_recognizer, Schedule(max_batch=4, max_wait_ms=0, continuous=True)
    ).start()
    held, go = threading.Event(), threading.Event()

    def hold(piece):
        held.set()
        assert go.wait(60)

    try:
        image = Image.new("RGB", (200, 48), "white")
        future = batcher.submit(image, 64, on_text=hold)
        assert held.wait(60)
        future.cancel()  # the client went away while its crop was being decoded
        go.set()
        with pytest.raises(CancelledError):
            future.result(60)
        for _ in range(100):
            if batcher.stats()["in_flight"] == 0:
                break
            threading.Event().wait(0.05)
        stats = batcher.stats()
    finally:
        go.set()
        batcher.close()
    assert stats["cancelled"] == 1 and stats["in_flight"] == 0 and stats["served"] == 0


def drawn(i: int) -> Image.Image:
    """A crop of lines that differs with `i` (the tiny checkpoint reads each to its token limit)."""
    from PIL import ImageDraw

    size = (60 + 17 * i, 30 + 7 * (i % 5))
    im = Image.new("RGB", size, "white")
    ImageDraw.Draw(im).line(
        [(i * 5 % size[0], 2), (size[0] - 3, size[1] - 2)], fill=(20 * i % 256, 60, 90), width=3
    )
    return im


def test_a_crop_arriving_while_eight_decode_starts_before_any_of_them_ends(tiny_recognizer):
    """Eight crops are being decoded (prefilled together: max_batch 8) when a ninth arrives: it is
    prefilled at the next step and streams its first text before any of the eight has ended (with
    more rows than the prefill batch, it does not wait for a row to free), and every crop reads as
    it reads alone."""
    import threading

    limit = 16
    images = [drawn(i) for i in range(9)]
    alone = [tiny_recognizer.read([im], max_new_tokens=limit)[0] for im in images]
    assert all(len(a.token_ids) == limit for a in alone)  # the eight still decode many steps
    batcher = Batcher(
        tiny_recognizer, Schedule(max_batch=8, max_wait_ms=60_000, continuous=True)
    ).start()
    assert batcher.schedule.max_rows > 8
    held, go = threading.Event(), threading.Event()
    events: list[tuple[str, int]] = []  # in the model thread's order

    def on_text(i):
        def piece(text):
            events.append(("piece", i))
            if i == 0 and not held.is_set():
                held.set()  # the model thread waits here, in the middle of the eight's decode
                assert go.wait(60)

        return piece

    def ended(i):
        return lambda future: events.append(("done", i))

    try:
        eight = [batcher.submit(im, limit, on_text=on_text(i)) for i, im in enumerate(images[:8])]
        for i, future in enumerate(eight):
            future.add_done_callback(ended(i))
        assert held.wait(60)
        assert batcher.stats()["in_flight"] == 8 and not any(f.done() for f in eight)
        ninth = batcher.submit(images[8], limit, on_text=on_text(8))
        go.set()
        results = [f.result(120) for f in [*eight, ninth]]
        stats = batcher.stats()
    finally:
        go.set()
        batcher.close()
    first_of_ninth = events.index(("piece", 8))
    first_end = min(i for i, (what, _) in enumerate(events) if what == "done")
    assert first_of_ninth < first_end  # its text began while all eight were still decoding
    assert stats["joined_running"] == 1 and stats["largest_step"] == 9
    assert stats["batch_sizes"] == {"1": 1, "8": 1}
    for result, want in zip(results, alone):
        assert result.token_ids == want.token_ids and result.text == want.text


def test_the_rows_decoded_together_stay_within_max_rows(tiny_recognizer):
    """Five crops with room for two rows: the others wait in the queue for a row, each reads as
    alone, and no step decodes more than two."""
    images = [drawn(i) for i in range(5)]
    alone = [tiny_recognizer.read([im], max_new_tokens=6)[0] for im in images]
    batcher = Batcher(
        tiny_recognizer, Schedule(max_batch=4, max_rows=2, max_wait_ms=60_000, continuous=True)
    ).start()
    try:
        futures = [batcher.submit(im, 6) for im in images]
        results = [f.result(120) for f in futures]
        stats = batcher.stats()
    finally:
        batcher.close()
    assert stats["largest_step"] == 2 and stats["largest_batch"] <= 2
    assert [r.token_ids for r in results] == [a.token_ids for a in alone]


@pytest.mark.parametrize(
    ("decoding", "step_ms", "crop_ms", "prefilled", "expected"),
    [
        (0, 50.0, 200.0, False, 1),  # nothing decoding: the first crop alone, at once
        (0, 50.0, 200.0, True, 1),  # ... even right after a prefill
        (8, 10.0, 200.0, False, 1),  # a short step (few rows): one crop between two steps
        (8, 10.0, 200.0, True, 0),  # ... and not on the step right after one
        (40, 30.0, 200.0, False, 2),  # 16 × 30 ms of prefill = two crops of 200 ms
        (40, 30.0, 200.0, True, 2),  # (more than one fits: no step between them is skipped)
        (64, 50.0, 200.0, True, 4),  # 16 × 50 ms = four crops
        (64, 500.0, 200.0, False, 4),  # never more than max_batch
        (8, 10.0, 0.0, False, 1),  # no prefill measured yet: one
    ],
)
def test_paced_prefills_take_about_sixteen_steps_worth_of_crops(
    decoding, step_ms, crop_ms, prefilled, expected
):
    """With prefill_per_step (the CPU), the crops prefilled between two decode steps are the ones
    whose prefills take about that many times as long as the last step, from 1 to max_batch, and
    where one is all that fits, one every other step (the rows then end two steps apart, and
    their clients' next requests do not wait for each other's prefills); on the timings the model
    thread measured (set here, nothing is timed)."""
    batcher = Batcher(
        GatedRecognizer(), Schedule(max_batch=4, continuous=True, prefill_per_step=16)
    )
    batcher._step_s, batcher._crop_s = step_ms / 1000, crop_ms / 1000
    batcher._prefilled = prefilled
    assert batcher._prefill_count(decoding) == expected
    unpaced = Batcher(GatedRecognizer(), Schedule(max_batch=4, continuous=True))
    unpaced._step_s, unpaced._crop_s = step_ms / 1000, crop_ms / 1000
    assert unpaced._prefill_count(decoding) == 4  # without a pace: all waiting, up to max_batch


def test_paced_prefills_give_each_crop_its_first_token_alone(tiny_recognizer):
    """Paced with a pace that always makes one crop (a step short beside a prefill, as over a few
    rows on a CPU), crops that arrive together are prefilled one by one, the first at once without
    waiting for company, the others two decode steps apart while rows are being decoded, and each
    reads as alone."""
    images = [drawn(i) for i in range(4)]
    alone = [tiny_recognizer.read([im], max_new_tokens=8)[0] for im in images]
    batcher = Batcher(
        tiny_recognizer,
        Schedule(max_batch=4, max_wait_ms=60_000, continuous=True, prefill_per_step=1e-9),
    )
    events: list[tuple[str, int]] = []
    join, step = batcher._join, batcher._step

    def prefill(jobs):  # with the rows being decoded as it starts
        events.append(("prefill", batcher._decoder.active))
        return join(jobs)

    def decode_step(decoder):
        events.append(("step", 0))
        return step(decoder)

    batcher._join, batcher._step = prefill, decode_step
    batcher.start()
    try:
        futures = [batcher.submit(im, 8) for im in images]
        results = [f.result(120) for f in futures]
        stats = batcher.stats()
    finally:
        batcher.close()
    assert stats["batch_sizes"] == {"1": 4}  # never waited 60 s for company, never together
    assert [r.token_ids for r in results] == [a.token_ids for a in alone]
    prefills = [i for i, (what, _) in enumerate(events) if what == "prefill"]
    for before, at in zip(prefills, prefills[1:]):
        if events[at][1]:  # joining rows being decoded: two steps since the last prefill
            assert at - before >= 3, events
