"""`hayai serve` outlives its clients and its own failures (issue #39): a client that leaves while
others are read lets them finish; an exception in the model thread's loop fails only the crops it
touched (a 500 error object), is logged with its traceback, and the loop goes on; `/health` says
503, and why, when the model thread has stopped or is stuck with crops waiting; a client of the
server (app/engines/server.py, `hayai page`) gets a clear error from a server that fails or drops,
never a hang."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from concurrent.futures import CancelledError

import httpx
import pytest
from serve_support import GatedRecognizer, crop, png_url, serving
from test_serve_batcher import drawn

from app.serve import batcher as batcher_module
from app.serve.api import ServerConfig, create_app
from app.serve.batcher import Batcher, ModelStopped, Schedule
from app.serve.model_thread import ModelThread
from model.continuous import ContinuousDecoder, Row

CONFIG = ServerConfig("hayai-v2.1", "v2.1", "cpu", "exact", max_new_tokens=16)


def chat(image, stream: bool = False, max_tokens: int | None = None) -> dict:
    body: dict = {
        "model": "hayai-v2.1",
        "stream": stream,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": png_url(image)}}],
            }
        ],
    }
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body


def test_a_row_that_is_not_the_last_leaving_lets_the_others_finish(tiny_recognizer):
    """Three crops are decoded together when the first one's client goes away: its row leaves and
    the last row moves into its place (before the fix that copy raised outside inference mode and
    ended the model thread's loop: every other crop waited for ever). The other two read as alone,
    and a later crop is read."""
    limit = 16
    images = [drawn(i) for i in range(3)]
    alone = [tiny_recognizer.read([im], max_new_tokens=limit)[0] for im in images]
    thread, gate = ModelThread(), threading.Event()
    thread.submit(gate.wait, 60)  # the batcher's loop starts once the three wait: one prefill
    schedule = Schedule(max_batch=3, max_wait_ms=0, continuous=True)
    batcher = Batcher(tiny_recognizer, schedule, thread=thread).start()
    held, go = threading.Event(), threading.Event()

    def hold(piece):  # the model thread waits here, in the middle of the three rows' decode
        if not held.is_set():
            held.set()
            assert go.wait(60)

    try:
        futures = [batcher.submit(images[0], limit, on_text=hold)]
        futures += [batcher.submit(im, limit) for im in images[1:]]
        gate.set()
        assert held.wait(60)
        assert batcher.stats()["in_flight"] == 3 and not any(f.done() for f in futures)
        futures[0].cancel()  # row 0 of three: its client went away
        go.set()
        with pytest.raises(CancelledError):
            futures[0].result(60)
        others = [f.result(60) for f in futures[1:]]
        later = batcher.submit(images[0], limit).result(60)
        stats = batcher.stats()
    finally:
        gate.set()
        go.set()
        batcher.close()
        thread.stop()
    assert [r.token_ids for r in others] == [a.token_ids for a in alone[1:]]
    assert later.token_ids == alone[0].token_ids
    assert stats["cancelled"] == 1 and stats["failed"] == 0 and stats["served"] == 3


def fail_once_in_a_step(monkeypatch, where: str) -> RuntimeError:
    """An exception the first time a decode step runs (`step`), or while the first step's text is
    handed out (`deliver`: the two rows' first tokens were handed out at their prefill)."""
    fault = RuntimeError("injected fault")
    if where == "step":
        real_step = ContinuousDecoder.step
        faults = [fault]

        def step(self):
            if faults:
                raise faults.pop()
            return real_step(self)

        monkeypatch.setattr(ContinuousDecoder, "step", step)
    else:
        real_new_text = Row.new_text
        calls = []

        def new_text(self):
            calls.append(1)
            if len(calls) == 3:
                raise fault
            return real_new_text(self)

        monkeypatch.setattr(Row, "new_text", new_text)
    return fault


@pytest.mark.parametrize("where", ["step", "deliver"])
def test_an_exception_in_a_step_fails_only_its_rows_and_the_loop_goes_on(
    tiny_recognizer, monkeypatch, caplog, where
):
    """Three chat requests wait while the model thread is held; two rows fit (max_rows 2). The first
    step fails: those two get a 500 error object, the third is read, and so is a later one; the
    failure is logged once, with its traceback."""
    fault = fail_once_in_a_step(monkeypatch, where)
    thread = ModelThread()
    gate = threading.Event()
    thread.submit(gate.wait, 60)  # the batcher's loop starts once the three wait
    schedule = Schedule(max_batch=2, max_rows=2, max_wait_ms=0, continuous=True)
    batcher = Batcher(tiny_recognizer, schedule, thread=thread).start()
    try:
        with serving(create_app(batcher, CONFIG)) as url:

            async def scenario():
                async with httpx.AsyncClient(base_url=url, timeout=120) as client:
                    asks = []
                    for i in range(3):  # queued in this order
                        asks.append(
                            asyncio.ensure_future(
                                client.post("/v1/chat/completions", json=chat(drawn(i)))
                            )
                        )
                        while batcher.stats()["waiting"] < i + 1:
                            await asyncio.sleep(0.01)
                    gate.set()
                    answers = await asyncio.gather(*asks)
                    later = await client.post("/v1/chat/completions", json=chat(drawn(5)))
                    health = await client.get("/health")
                    return answers, later, health

            answers, later, health = asyncio.run(scenario())
    finally:
        gate.set()
        batcher.close()
        thread.stop()
    assert [a.status_code for a in answers] == [500, 500, 200]
    for failed in answers[:2]:
        assert failed.json() == {
            "error": {
                "message": "Reading failed: RuntimeError: injected fault",
                "type": "server_error",
                "param": None,
                "code": "engine_error",
            }
        }
    assert answers[2].json()["choices"][0]["message"]["content"]
    assert later.status_code == 200 and health.status_code == 200
    assert health.json()["stats"]["failed"] == 2 and health.json()["stats"]["served"] == 2
    logged = [r for r in caplog.records if r.name == "app.serve.batcher"]
    assert [r.levelno for r in logged] == [logging.ERROR]
    assert logged[0].exc_info and logged[0].exc_info[1] is fault
    assert logged[0].exc_info[2] is not None  # the traceback, where it was raised


class Fatal(BaseException):
    """What the loop does not contain (a BaseException): it ends."""


def test_health_is_503_with_the_reason_while_the_model_thread_is_stuck_or_stopped(
    monkeypatch, caplog
):
    rec = GatedRecognizer()
    batcher = Batcher(rec, Schedule(max_batch=2, max_wait_ms=0)).start()
    try:
        with serving(create_app(batcher, CONFIG)) as url:

            def health() -> tuple[int, dict]:
                answer = httpx.get(url + "/health", timeout=30)
                return answer.status_code, answer.json()

            assert health()[0] == 200  # nothing waits
            rec.gate.clear()
            held = batcher.submit(crop(30), 8)
            assert rec.reading.wait(30)
            status, body = health()
            assert status == 200 and body["status"] == "ok"  # reading, not stuck
            assert body["stats"]["in_flight"] == 1
            # WHEN the read takes longer than a turn ever should THEN /health says so
            monkeypatch.setattr(batcher_module, "STALL_S", 0.2)
            for _ in range(200):
                status, body = health()
                if status == 503:
                    break
                threading.Event().wait(0.05)
            assert status == 503 and body["status"] == "unavailable"
            assert body["error"]["code"] == "model_unavailable"
            assert body["error"]["message"].startswith(
                "The model thread has not finished a turn for "
            )
            assert body["error"]["message"].endswith("(being read: 1, queued: 0).")
            rec.gate.set()
            assert held.result(30).text == "30x20"
            assert health()[0] == 200  # read: nothing waits
            # WHEN the loop ends by an exception it cannot contain THEN the crop fails, it is
            # logged, /health says why and later crops are refused (never a hang)
            rec.fail_next = [Fatal("lost")]
            with pytest.raises(ModelStopped):
                batcher.submit(crop(31), 8).result(30)
            status, body = health()
            assert status == 503 and body["error"]["code"] == "model_unavailable"
            assert body["error"]["message"] == (
                "The model thread has stopped (Fatal: lost); restart hayai serve."
            )
            refused = httpx.post(url + "/v1/chat/completions", json=chat(crop(32)), timeout=30)
            assert refused.status_code == 503
            assert refused.json()["error"]["message"] == body["error"]["message"]
    finally:
        rec.gate.set()
        batcher.close()
    critical = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert len(critical) == 1 and isinstance(critical[0].exc_info[1], Fatal)


@pytest.mark.slow
def test_clients_that_leave_mid_read_do_not_stop_a_real_server(
    tiny_v21, tmp_path, start_hayai_server
):
    """A real `hayai serve`: one non-streaming and one streaming client leave while they and two
    others are being decoded (their rows come first: others move into their places). The two others
    are answered, a later request too, and the log says one line per client that left, with no
    traceback."""
    server = start_hayai_server(tiny_v21, "--max-new-tokens", "2000", log_dir=tmp_path)
    try:

        async def in_flight(client, n):
            for _ in range(2000):
                stats = (await client.get("/health")).json()["stats"]
                if stats["in_flight"] >= n:
                    return stats
                await asyncio.sleep(0.01)
            raise AssertionError(f"never {n} crops in flight: {stats}")

        async def scenario():
            async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
                body = chat(drawn(0), max_tokens=2000)
                leaving = [asyncio.ensure_future(client.post("/v1/chat/completions", json=body))]
                await in_flight(client, 1)
                streamed = asyncio.Event()

                async def stream():
                    body = chat(drawn(1), stream=True, max_tokens=2000)
                    async with client.stream("POST", "/v1/chat/completions", json=body) as answer:
                        async for line in answer.aiter_lines():
                            if '"content": "' in line and '"content": ""' not in line:
                                streamed.set()  # its text is being decoded

                leaving.append(asyncio.ensure_future(stream()))
                await streamed.wait()
                staying = [
                    asyncio.ensure_future(
                        client.post("/v1/chat/completions", json=chat(drawn(i), max_tokens=300))
                    )
                    for i in (2, 3)
                ]
                await in_flight(client, 4)
                for task in leaving:  # their connections close
                    task.cancel()
                answers = await asyncio.gather(*staying)
                later = await client.post("/v1/chat/completions", json=chat(drawn(4)))
                health = await client.get("/health")
                return answers, later, health

        answers, later, health = asyncio.run(scenario())
    finally:
        server.stop()
    log = server.log.read_text()
    assert [a.status_code for a in answers] == [200, 200], log[-3000:]
    assert later.status_code == 200 and health.status_code == 200
    assert health.json()["stats"]["cancelled"] >= 1 and health.json()["stats"]["failed"] == 0
    for bad in ("Traceback", "Task was destroyed", "CancelledError", "never retrieved"):
        assert bad not in log, log[-3000:]
    assert 1 <= log.count("a client went away") <= 2, log[-3000:]


# --- a client of the server: the app's engine, `hayai page` ---------------------------------------


def test_a_server_that_fails_or_drops_is_a_clear_error_for_its_clients(
    tiny_recognizer, monkeypatch
):
    """The server engine (the app, `hayai page --server`) against a server whose decode fails (500)
    and one that closes the connection without answering: a ServerError in words, at once."""
    from app.engines.server import ServerError, ServerRecognizer
    from app.page.read import read_crops

    fail_once_in_a_step(monkeypatch, "step")
    schedule = Schedule(max_batch=2, max_wait_ms=0, continuous=True)
    batcher = Batcher(tiny_recognizer, schedule).start()
    try:
        with serving(create_app(batcher, CONFIG)) as url:
            rec = ServerRecognizer(url, timeout_s=60)
            with pytest.raises(ServerError) as failed:
                read_crops(rec, [drawn(1)], batch_size=2, max_new_tokens=8)
            assert str(failed.value) == (
                f"The Hayai server at {url} answered 500: Reading failed: RuntimeError: injected fault"
            )
            (result,) = read_crops(rec, [drawn(1)], batch_size=2, max_new_tokens=8)
            assert result.text == tiny_recognizer.read([drawn(1)], max_new_tokens=16)[0].text
    finally:
        batcher.close()

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def drop():  # reads the request, then closes without a word
        connection, _ = listener.accept()
        connection.recv(65536)
        connection.close()

    dropper = threading.Thread(target=drop, daemon=True)
    dropper.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        with pytest.raises(ServerError) as dropped:
            ServerRecognizer(url, timeout_s=60).read([drawn(1)])
    finally:
        listener.close()
    assert str(dropped.value).startswith(f"The Hayai server at {url} ")
    assert "Server disconnected without sending a response" in str(dropped.value)
    assert "Traceback" not in str(dropped.value)
