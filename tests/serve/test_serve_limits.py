"""What `hayai serve` refuses before it reads or holds anything (app/serve/guards.py, parsing.py,
api.py, connections.py, memory.py): memory reserved before decoding and released after (503 when it would not fit), JSON
caps (400, never a RecursionError), Content-Type (415), Host names without a key (403, DNS
rebinding), slow bodies (408), early answers (sent after the rest of the body is drained) and late headers (the connection closed), repeated errors logged once.
In-process servers with a stand-in recognizer held at a gate: nothing here is timed."""

from __future__ import annotations

import http.client
import io
import json
import logging
import socket
import sys
import threading
import time
from urllib.parse import urlsplit

import pytest
from PIL import Image
from serve_support import GatedRecognizer, crop, png_url, serving

from app.serve import api, connections, guards
from app.serve.api import ServerConfig, create_app
from app.serve.batcher import Batcher, Schedule
from app.serve.connections import RepeatFilter
from app.serve.memory import MemoryBudget, OverBudget

KEY = "k-123"


@pytest.fixture
def gated():
    rec = GatedRecognizer()
    batcher = Batcher(rec, Schedule(max_batch=1, max_wait_ms=0)).start()
    yield rec, batcher
    rec.gate.set()
    batcher.close()


def config(**options) -> ServerConfig:
    return ServerConfig("hayai-v2.1", "v2.1", "cpu", "exact", max_new_tokens=8, **options)


def chat_body(url: str, **extra) -> bytes:
    message = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
    return json.dumps({"model": "m", "messages": [message], **extra}).encode()


def request(base, method, path, body=b"", headers=None, timeout=60):
    """(status, headers, decoded JSON or text) over a connection of its own."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request(method, path, body, headers or {})
        response = conn.getresponse()
        raw = response.read().decode()
        try:
            data = json.loads(raw)
        except ValueError:
            data = raw
        return response.status, dict(response.headers), data
    finally:
        conn.close()


def post_json(base, body: bytes, content_type="application/json", **headers):
    return request(
        base, "POST", "/v1/chat/completions", body, {"Content-Type": content_type, **headers}
    )


def wait_for(condition, timeout_s=20.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# --- memory ----------------------------------------------------------------------------------------


def test_the_budget_refuses_what_does_not_fit_beside_others_and_serves_one_large_alone():
    budget = MemoryBudget(10_000_000, trim_when_idle=False)
    alone = budget.reserve(25_000_000)  # nothing else held: one request larger than the bound
    with pytest.raises(OverBudget):
        budget.reserve(1)
    alone.release()
    alone.release()  # releasing twice is harmless
    first = budget.reserve(6_000_000)
    second = budget.reserve(4_000_000)
    with pytest.raises(OverBudget, match="MB"):
        second.grow_to(4_000_001)
    second.shrink_to(1_000_000)
    assert budget.used == 7_000_000
    first.release()
    second.release()
    assert budget.used == 0


def test_decoded_sizes_are_reserved_before_decoding_and_released_when_read(gated, monkeypatch):
    rec, batcher = gated
    decoded = []
    real_decode = api.decode_image
    monkeypatch.setattr(api, "decode_image", lambda *a: decoded.append(1) or real_decode(*a))
    budget = MemoryBudget(10_100_000, trim_when_idle=False)  # 3 + 7 and a small body
    big = chat_body(png_url(Image.new("RGB", (1000, 1000), "white")))  # 3 MB as RGB, 7 decoding
    rec.gate.clear()
    with serving(create_app(batcher, config(), budget)) as url:
        answers = []
        first = threading.Thread(target=lambda: answers.append(post_json(url, big)))
        first.start()
        assert rec.reading.wait(20)  # the first crop is being read (held at the gate)
        assert budget.used == 3_000_000
        second = threading.Thread(target=lambda: answers.append(post_json(url, big)))
        second.start()
        wait_for(lambda: batcher.stats()["waiting"] == 1)
        assert budget.used == 6_000_000
        status, headers, error = post_json(url, big)  # 6 MB held + 7 decoding > 10 MB
        assert status == 503 and headers["retry-after"] == "1"
        assert error["error"]["code"] == "queue_full" and "MB" in error["error"]["message"]
        assert len(decoded) == 2  # refused from the header: never decoded
        # a body that would not fit is refused as it arrives (three times its size is held)
        padded = chat_body(png_url(crop(10)), user="x" * 1_500_000)
        status, _, error = post_json(url, padded)
        assert (status, error["error"]["code"]) == (503, "queue_full")
        # a damaged image after its header: its reservation comes back
        broken = Image.new("RGB", (300, 300), "white")
        out = io.BytesIO()
        broken.save(out, "PNG")
        status, _, error = post_json(url, chat_body(png_url_bytes(out.getvalue()[:60])))
        assert (status, error["error"]["code"]) == (400, "invalid_image")
        wait_for(lambda: budget.used == 6_000_000)  # its body's share comes back after the answer
        rec.gate.set()
        first.join(30)
        second.join(30)
        assert [a[0] for a in answers] == [200, 200]
        wait_for(lambda: budget.used == 0)


def test_a_client_gone_releases_its_reservation(gated):
    rec, batcher = gated
    budget = MemoryBudget(100_000_000, trim_when_idle=False)
    rec.gate.clear()
    with serving(create_app(batcher, config(), budget)) as url:
        held = threading.Thread(target=lambda: post_json(url, chat_body(png_url(crop(30)))))
        held.start()
        assert rec.reading.wait(20)
        body = chat_body(png_url(Image.new("RGB", (500, 500), "white")))
        parts = urlsplit(url)
        with socket.create_connection((parts.hostname, parts.port)) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            wait_for(lambda: batcher.stats()["waiting"] == 1)
            assert budget.used == 30 * 20 * 3 + 500 * 500 * 3
        # the client went away while its crop waited: the future is cancelled, the bytes released
        wait_for(lambda: budget.used == 30 * 20 * 3)
        rec.gate.set()
        held.join(30)
        wait_for(lambda: budget.used == 0)


def png_url_bytes(data: bytes) -> str:
    import base64

    return "data:image/png;base64," + base64.b64encode(data).decode()


def test_a_crop_is_let_go_once_read(gated):
    import weakref

    rec, batcher = gated
    image = crop(40)
    ref = weakref.ref(image)
    batcher.submit(image, 8).result(20)
    del image
    assert ref() is None  # not kept until the next batch comes


# --- JSON, Content-Type, Host ----------------------------------------------------------------------


def test_deep_or_huge_json_is_400_invalid_json_never_500(gated):
    _, batcher = gated
    with serving(create_app(batcher, config())) as url:
        for body in (
            b'{"messages": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",  # RecursionError before
            b'{"messages": ' + b"[" * 40 + b"]" * 40 + b"}",
            b'{"messages": [' + b",".join([b"{}"] * 20_000) + b"]}",
        ):
            status, _, error = post_json(url, body)
            assert (status, error["error"]["code"]) == (400, "invalid_json"), body[:40]
        status, _, answer = post_json(url, chat_body(png_url(crop(20))))
        assert status == 200 and answer["choices"][0]["message"]["content"] == "20x20"


def test_bodies_must_say_what_they_are_415(gated):
    _, batcher = gated
    good = chat_body(png_url(crop(20)))
    with serving(create_app(batcher, config())) as url:
        for content_type in ("text/plain", "application/x-www-form-urlencoded", ""):
            status, _, error = post_json(url, good, content_type)
            assert (status, error["error"]["code"]) == (415, "unsupported_media_type")
        assert post_json(url, good, "Application/JSON; charset=utf-8")[0] == 200
        for content_type in ("application/json", "application/x-www-form-urlencoded"):
            status, _, error = request(
                url, "POST", "/v1/ocr", b"a=1", {"Content-Type": content_type}
            )
            assert (status, error["error"]["code"]) == (415, "unsupported_media_type")


def test_without_a_key_only_this_computers_names_are_answered(gated):
    _, batcher = gated
    good = chat_body(png_url(crop(20)))
    with serving(create_app(batcher, config(allow_hosts=("reader.lan",)))) as url:
        port = urlsplit(url).port
        # DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 sends its name
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "10.0.0.5"):
            for method, path, body in (
                ("POST", "/v1/chat/completions", good),
                ("GET", "/v1/models", b""),
                ("GET", "/health", b""),
            ):
                headers = {"Host": host, "Content-Type": "application/json"}
                status, _, error = request(url, method, path, body, headers)
                assert (status, error["error"]["code"]) == (403, "invalid_host"), (host, path)
        for host in (
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            "LOCALHOST.",
            f"[::1]:{port}",
            "127.0.0.2",
            "reader.lan:8000",
        ):
            status, _, _ = post_json(url, good, Host=host)
            assert status == 200, host
    with serving(create_app(batcher, config(api_key=KEY))) as url:  # the key is the guard then
        status, _, _ = post_json(url, good, Host="evil.example", Authorization=f"Bearer {KEY}")
        assert status == 200


# --- slow clients and logs ------------------------------------------------------------------------


def test_a_stalled_body_is_408_and_releases_its_bytes(gated, monkeypatch):
    _, batcher = gated
    monkeypatch.setattr(guards, "BODY_IDLE_S", 0.5)
    budget = MemoryBudget(100_000_000, trim_when_idle=False)
    with serving(create_app(batcher, config(), budget)) as url:
        parts = urlsplit(url)
        for path, content_type in (
            ("/v1/chat/completions", "application/json"),
            ("/v1/ocr", "multipart/form-data; boundary=b"),
        ):
            with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
                sock.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
                    "Content-Length: 100000\r\n\r\n".encode()
                    + b'--b\r\nContent-Disposition: form-data; name="f"; filename="x.png"\r\n\r\n'
                    + b"x" * 5000
                )
                wait_for(lambda: budget.used > 0)
                answer = receive_all(sock)
            assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
            assert b"request_timeout" in answer
            wait_for(lambda: budget.used == 0)


def receive_all(sock) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_connections_that_never_finish_their_headers_are_closed(gated, monkeypatch):
    _, batcher = gated
    monkeypatch.setattr(connections, "HEADER_TIMEOUT_S", 0.5)
    with serving(create_app(batcher, config())) as url:
        parts = urlsplit(url)
        silent = socket.create_connection((parts.hostname, parts.port), timeout=30)
        slow = socket.create_connection((parts.hostname, parts.port), timeout=30)
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        assert receive_all(silent) == b"" and receive_all(slow) == b""  # closed by the server
        silent.close()
        slow.close()
        assert request(url, "GET", "/health")[0] == 200  # a timely request is served


def test_repeated_errors_are_logged_once_with_a_count():
    now = [0.0]
    repeats = RepeatFilter(window_s=60, clock=lambda: now[0])
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(repeats)
    logger = logging.getLogger("test.repeats")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)

    def out_of_files():
        try:
            raise OSError(24, "Too many open files")
        except OSError:
            logger.error("socket.accept() out of system resource", exc_info=sys.exc_info())

    try:
        for _ in range(1000):
            out_of_files()
        logger.error("another error")
        logger.info("an access line")
        logger.info("an access line")
        now[0] = 61.0
        out_of_files()
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert text.count("out of system resource") == 2 and text.count("Traceback") == 2
    assert "repeated 999 more times in 60 s" in text
    assert text.count("an access line") == 2 and "another error" in text


def test_uvicorn_serves_at_most_what_the_file_limit_allows(monkeypatch):
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda _: (256, 4096))
    options = connections.uvicorn_options()
    assert options["limit_concurrency"] == 256 - connections.SPARE_FILES
    assert options["http"] is connections.TimelyH11Protocol
    assert options["timeout_keep_alive"] == connections.KEEP_ALIVE_S


# --- early answers ---------------------------------------------------------------------------------


class PeakBudget(MemoryBudget):
    peak = 0

    def _take(self, nbytes, holding, what):
        super()._take(nbytes, holding, what)
        self.peak = max(self.peak, self.used)


def read_answer(sock) -> tuple[bytes, bytes]:
    """(head, body) of one Content-Length answer on `sock`, leaving the connection open."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += sock.recv(65536)
    return head, body


def test_an_early_413_reads_the_rest_of_the_body_first_and_keeps_the_connection(gated):
    """Clients send the whole body before reading the answer: a 413 decided from Content-Length
    (or mid-body, without one) is sent after the rest is read and dropped, never held, so the
    client gets the answer, not a broken pipe, and its connection can carry the next request."""
    _, batcher = gated
    budget = PeakBudget(100_000_000, trim_when_idle=False)
    big = b"x" * 16_000_000  # well over the 200 kB limit and over what the sockets buffer
    with serving(create_app(batcher, config(max_image_bytes=100_000), budget)) as url:
        parts = urlsplit(url)
        declared = f"Content-Length: {len(big)}\r\n\r\n".encode()
        chunked = b"Transfer-Encoding: chunked\r\n\r\n" + b"".join(
            b"%x\r\n%s\r\n" % (len(part), part)
            for part in (big[i : i + 1_000_000] for i in range(0, len(big), 1_000_000))
        )
        for framing in (declared + big, chunked + b"0\r\n\r\n"):
            # urllib sends `Connection: close`: then the server closes after its answer
            for connection in (b"", b"Connection: close\r\n"):
                with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
                    sock.sendall(
                        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        b"Content-Type: application/json\r\n" + connection + framing
                    )
                    head, body = read_answer(sock)
                    assert head.startswith(b"HTTP/1.1 413"), head
                    assert json.loads(body)["error"]["code"] == "request_too_large"
                    if not connection:  # the connection carries the next request
                        assert b"connection: close" not in head.lower()
                        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                        head, _ = read_answer(sock)
                        assert head.startswith(b"HTTP/1.1 200"), head
        assert budget.peak < 1_000_000  # the drained megabytes were never reserved
        wait_for(lambda: budget.used == 0)


def test_an_absurd_content_length_is_answered_and_closed(gated):
    _, batcher = gated
    with serving(create_app(batcher, config())) as url:
        parts = urlsplit(url)
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\n"
                + f"Content-Length: {guards.DRAIN_MAX_BYTES + 1}\r\n\r\n".encode()
                + b"x" * 1000
            )
            answer = receive_all(sock)  # the server closes: nothing of the rest is waited for
        assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
        assert b"connection: close" in answer.lower()
        assert b"request_too_large" in answer
