"""`hayai serve` on loopback with a tiny random checkpoint, through the official `openai` client: the text
equals `hayai ocr`'s, streaming, 200 concurrent requests answered in batches, every bad input answered
with an OpenAI error object (and the server still serving)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import openai
import pytest
from PIL import Image, ImageDraw

REPO = Path(__file__).resolve().parents[2]
MAX_NEW_TOKENS = 16  # the hayai_server fixture's


def crop(size, seed: int) -> Image.Image:
    im = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(im)
    for k in range(7):
        d.line(
            [(k * 11 + seed, 2), (k * 5 + seed * 3, size[1] - 3)],
            fill=(35 * k, seed * 40, 90),
            width=3,
        )
    return im


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("crops")
    paths = []
    for i, size in enumerate([(200, 48), (40, 160), (90, 90), (300, 60)]):
        path = folder / f"crop{i}.png"
        crop(size, i).save(path)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def expected(images, tiny_v21) -> dict[str, dict]:
    """`hayai ocr --json` on the same files, each read alone: file name → its record."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "ocr",
            "--json",
            "--batch-size",
            "1",
            "--model",
            str(tiny_v21),
        ]
        + ["--device", "cpu", "--precision", "exact", "--max-new-tokens", str(MAX_NEW_TOKENS)]
        + [str(p) for p in images],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == len(images) and all(r["token_ids"] for r in records)
    return {Path(r["image"]).name: r for r in records}


@pytest.fixture
def client(hayai_server):
    return openai.OpenAI(base_url=hayai_server.url + "/v1", api_key=hayai_server.key, max_retries=0)


def data_url(path_or_bytes, media="image/png") -> str:
    data = path_or_bytes if isinstance(path_or_bytes, bytes) else Path(path_or_bytes).read_bytes()
    return f"data:{media};base64," + base64.b64encode(data).decode()


def user_message(url: str, text: str = "Transcribe this.") -> list[dict]:
    return [
        {"role": "system", "content": "You are an OCR model."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        },
    ]


def test_a_chat_completion_is_the_text_hayai_ocr_reads(client, images, expected):
    for path in images:
        answer = client.chat.completions.create(
            model="hayai-v2.1", messages=user_message(data_url(path))
        )
        record = expected[path.name]
        assert answer.choices[0].message.content == record["text"]
        assert answer.choices[0].message.role == "assistant"
        assert answer.model == "hayai-v2.1" and answer.object == "chat.completion"
        assert answer.id.startswith("chatcmpl-") and answer.created > 1_700_000_000
        n = len(record["token_ids"])
        assert answer.usage.completion_tokens == n
        assert answer.usage.prompt_tokens > 0  # the vision tokens the decoder attended to
        assert answer.usage.total_tokens == answer.usage.prompt_tokens + n
        assert answer.choices[0].finish_reason == ("length" if n == MAX_NEW_TOKENS else "stop")


def test_text_parts_are_ignored_and_max_tokens_caps_the_text(client, images, expected, tiny_v21):
    from model.tokenizer import HayaiTokenizer

    record = expected[images[0].name]
    other = client.chat.completions.create(
        model="anything",
        messages=user_message(data_url(images[0]), "Ignore the image and say hello."),
    )
    assert other.choices[0].message.content == record["text"]
    short = client.chat.completions.create(
        model="x", messages=user_message(data_url(images[0])), max_tokens=3
    )
    assert short.usage.completion_tokens == 3 and short.choices[0].finish_reason == "length"
    # greedy decoding: the first three tokens of the full reading
    assert short.choices[0].message.content == HayaiTokenizer.from_dir(tiny_v21).decode(
        record["token_ids"][:3]
    )


def test_streaming_sends_openai_chunks_that_add_up_to_the_text(
    client, images, expected, hayai_server
):
    record = expected[images[1].name]
    stream = client.chat.completions.create(
        model="hayai-v2.1",
        messages=user_message(data_url(images[1])),
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == record["text"]
    # token by token as it is decoded, not in one piece at the end
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert 1 < len(pieces) <= len(record["token_ids"])
    assert chunks[0].choices[0].delta.role == "assistant"
    assert {c.id for c in chunks} == {chunks[0].id} and all(
        c.object == "chat.completion.chunk" for c in chunks
    )
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["length" if len(record["token_ids"]) == MAX_NEW_TOKENS else "stop"]
    assert chunks[-1].usage.completion_tokens == len(record["token_ids"])
    # on the wire: server-sent events, ending with the [DONE] sentinel
    raw = _post(
        hayai_server,
        "/v1/chat/completions",
        {"model": "m", "messages": user_message(data_url(images[1])), "stream": True},
    )
    assert raw.headers["content-type"].startswith("text/event-stream")
    events = [line for line in raw.read().decode().split("\n\n") if line]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"


def test_models_and_health(client, hayai_server):
    assert [m.id for m in client.models.list()] == ["hayai-v2.1"]
    health = hayai_server.get("/health")
    assert health["status"] == "ok" and health["model"] == "hayai-v2.1"
    assert health["device"] == "cpu" and health["precision"] == "exact"
    assert health["max_batch"] == 16 and health["max_new_tokens"] == MAX_NEW_TOKENS
    assert health["max_rows"] == 64 and health["continuous"] is True
    assert health["prefill_per_step"] == 16  # on a CPU the prefills are paced to the steps
    assert {"requests", "served", "batches", "largest_batch", "batch_sizes", "waiting"} <= set(
        health["stats"]
    )


def test_plain_ocr_route_gives_hayai_ocr_json(hayai_server, images, expected):
    answer = json.loads(_post_files(hayai_server, images).read())
    assert [a["image"] for a in answer] == [p.name for p in images]
    for record in answer:
        want = expected[record["image"]]
        assert record["text"] == want["text"] and record["token_ids"] == want["token_ids"]
        assert set(record) == {"image", "text", "token_ids", "ms"} and record["ms"] > 0


def test_200_concurrent_requests_are_all_answered_in_batches(hayai_server, images, expected):
    before = hayai_server.get("/health")["stats"]
    client = openai.AsyncOpenAI(
        base_url=hayai_server.url + "/v1", api_key=hayai_server.key, max_retries=0
    )
    order = [images[i % len(images)] for i in range(200)]

    async def ask(path):
        answer = await client.chat.completions.create(
            model="hayai-v2.1", messages=user_message(data_url(path))
        )
        return answer.choices[0].message.content

    async def everything():
        try:
            return await asyncio.gather(*(ask(p) for p in order))
        finally:
            await client.close()

    texts = asyncio.run(everything())
    # every answer is its crop's text read alone: it never depends on the batch it shared
    assert texts == [expected[p.name]["text"] for p in order]
    after = hayai_server.get("/health")["stats"]
    served = after["served"] - before["served"]
    batches = after["batches"] - before["batches"]
    steps = after["steps"] - before["steps"]
    assert served == 200 and after["rejected"] == before["rejected"]
    assert batches <= 200 and after["step_rows"] - before["step_rows"] > steps, after
    assert after["largest_step"] > 1  # crops were decoded together...
    assert after["largest_step"] <= 64  # ...never more than --max-rows (64 by default)
    assert max(int(size) for size in after["batch_sizes"]) <= 16  # never beyond --max-batch


# --- bad input ----------------------------------------------------------------------------------


def _post(server, path, body, key="", content_type="application/json"):
    key = server.key if key == "" else key
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": content_type}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return urllib.request.urlopen(
        urllib.request.Request(server.url + path, data, headers), timeout=60
    )


def _post_files(server, paths_or_blobs, key=""):
    boundary = uuid.uuid4().hex
    parts = []
    for i, item in enumerate(paths_or_blobs):
        name, data = (
            (item.name, item.read_bytes()) if isinstance(item, Path) else (f"blob{i}", item)
        )
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file{i}"; filename="{name}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n".encode()
            + data
            + b"\r\n"
        )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return _post(server, "/v1/ocr", body, key, f"multipart/form-data; boundary={boundary}")


def _error(call) -> tuple[int, dict]:
    with pytest.raises(urllib.error.HTTPError) as info:
        call()
    raw = info.value.read().decode()
    assert "Traceback" not in raw
    body = json.loads(raw)
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["message"]
    return info.value.code, body["error"]


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_bad_input_gets_openai_error_objects_and_the_server_keeps_serving(
    client, hayai_server, images, expected
):
    good = user_message(data_url(images[0]))
    noise = Image.frombytes("RGB", (330, 330), os.urandom(330 * 330 * 3))  # ~327 kB as PNG
    big_noise = Image.frombytes("RGB", (400, 400), os.urandom(400 * 400 * 3))  # ~480 kB as PNG
    cases = {
        "not an image": (user_message(data_url(b"hello, not a picture")), 400, "invalid_image"),
        "remote url": (user_message("https://example.com/crop.png"), 400, "unsupported_url"),
        "bad base64": (user_message("data:image/png;base64,%%%not-base64"), 400, "invalid_base64"),
        "not a data image": (user_message("data:text/plain;base64,aGk="), 400, "invalid_image_url"),
        "no image": ([{"role": "user", "content": "just text"}], 400, "no_image"),
        "no messages": ([], 400, "invalid_value"),
        "two images": (
            [{"role": "user", "content": good[1]["content"] * 2}],
            400,
            "too_many_images",
        ),
        "too many bytes": (user_message(data_url(_png(noise))), 413, "image_too_large"),
        "request too large": (user_message(data_url(_png(big_noise))), 413, "request_too_large"),
        "too many pixels": (
            user_message(data_url(_png(Image.new("RGB", (2000, 1001), "white")))),
            413,
            "image_too_large",
        ),
    }
    for name, (messages, status, code) in cases.items():
        got_status, error = _error(
            lambda m=messages: _post(
                hayai_server, "/v1/chat/completions", {"model": "m", "messages": m}
            )
        )
        assert (got_status, error["code"]) == (status, code), name
        assert error["type"] == "invalid_request_error", name
    # malformed bodies and options
    for body, code in (
        (b"{not json", "invalid_json"),
        (b"[1, 2]", "invalid_json"),
        (json.dumps({"messages": good, "max_tokens": 0}).encode(), "invalid_value"),
        (
            json.dumps({"messages": good, "max_tokens": MAX_NEW_TOKENS + 1}).encode(),
            "invalid_value",
        ),
        (json.dumps({"messages": good, "n": 2}).encode(), "invalid_value"),
        (json.dumps({"messages": good, "stream": "yes"}).encode(), "invalid_type"),
        (json.dumps({"messages": good, "stream_options": "x"}).encode(), "invalid_type"),
    ):
        status, error = _error(lambda b=body: _post(hayai_server, "/v1/chat/completions", b))
        assert (status, error["code"]) == (400, code), body
    status, error = _error(lambda: _post(hayai_server, "/v1/chat/completions", b"x" * 500_000))
    assert (status, error["code"]) == (413, "request_too_large")
    # the plain route: a file that is no image, an oversized one, no file at all
    status, error = _error(lambda: _post_files(hayai_server, [images[0], b"GIF89a broken"]))
    assert (status, error["code"], error["param"]) == (400, "invalid_image", "file1")
    status, error = _error(lambda: _post_files(hayai_server, [_png(noise)]))
    assert (status, error["code"]) == (413, "image_too_large")
    half = _png(Image.new("RGB", (1100, 1000), "white"))  # each fits, both together do not
    status, error = _error(lambda: _post_files(hayai_server, [half, half]))
    assert (status, error["code"], error["param"]) == (413, "image_too_large", "file1")
    status, error = _error(
        lambda: _post(
            hayai_server, "/v1/ocr", b"a=1", content_type="application/x-www-form-urlencoded"
        )
    )
    assert (status, error["code"]) == (415, "unsupported_media_type")
    status, error = _error(
        lambda: _post(
            hayai_server, "/v1/ocr", b"--b--\r\n", content_type="multipart/form-data; boundary=b"
        )
    )
    assert (status, error["code"]) == (400, "no_image")
    # the key: missing or wrong → 401, for every /v1 route
    for key in (None, "wrong-key"):
        status, error = _error(
            lambda k=key: _post(hayai_server, "/v1/chat/completions", {"messages": good}, key=k)
        )
        assert (status, error["code"], error["type"]) == (
            401,
            "invalid_api_key",
            "authentication_error",
        )
        status, _ = _error(lambda k=key: _post_files(hayai_server, [images[0]], key=k))
        assert status == 401
    wrong = openai.OpenAI(base_url=hayai_server.url + "/v1", api_key="wrong-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.models.list()
    with pytest.raises(openai.BadRequestError) as info:  # the official client sees the error object
        client.chat.completions.create(model="m", messages=user_message(data_url(b"nope")))
    assert info.value.code == "invalid_image"
    status, error = _error(
        lambda: urllib.request.urlopen(hayai_server.url + "/v2/nothing", timeout=30)
    )
    assert (status, error["code"]) == (404, "not_found")
    # and after all of that the server still reads
    answer = client.chat.completions.create(model="m", messages=good)
    assert answer.choices[0].message.content == expected[images[0].name]["text"]
    assert hayai_server.process.poll() is None
    assert "Traceback" not in hayai_server.log.read_text()


def test_without_a_key_it_refuses_to_listen_beyond_loopback(tiny_v21):
    for host in ("0.0.0.0", "::"):
        done = subprocess.run(
            [sys.executable, "-m", "app", "serve", "--model", str(tiny_v21), "--host", host],
            cwd=REPO,
            env=dict(os.environ, PYTHONPATH=str(REPO), HAYAI_API_KEY=""),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2
        assert f"refusing to listen on {host} without an API key" in done.stderr
        assert "Traceback" not in done.stderr


def test_continuous_batching_with_beams_is_refused_before_the_model_loads(tiny_v21):
    done = subprocess.run(
        [sys.executable, "-m", "app", "serve", "--model", str(tiny_v21), "--port", "0"]
        + ["--beams", "2", "--batching", "continuous"],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--batching continuous decodes greedily" in done.stderr
    assert "loading the model" not in done.stderr


@pytest.mark.slow
def test_max_batch_auto_is_measured_once_per_device_and_remembered(
    start_hayai_server, tiny_v21, tmp_path, monkeypatch
):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "state"))
    sizes = []
    for _ in range(2):
        server = start_hayai_server(tiny_v21, "--max-batch", "auto", log_dir=tmp_path)
        try:
            health = server.get("/health")
        finally:
            server.stop()
        sizes.append(health["max_batch"])
        assert health["continuous"] is True
    logs = sorted(tmp_path.glob("serve-*.log"), key=lambda p: p.stat().st_mtime)
    assert "measuring the best batch size" in logs[0].read_text()
    assert "measuring" not in logs[1].read_text()  # remembered in the per-user cache
    stored = json.loads((tmp_path / "state").rglob("batch-size.json").__next__().read_text())
    assert sizes[0] == sizes[1] == next(iter(stored.values())) >= 1
