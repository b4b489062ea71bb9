"""A chat-completions request body → what `hayai serve` reads of it (`chat_request`, run in the
thread pool): a JSON object of bounded size and depth (`parse_json`, values counted on the bytes
before parsing), `n`, `stream`, `stream_options`, the token limit, and the one image of the last
user message as bytes (a base64 `data:` URL; remote URLs are refused, text parts ignored). Every
problem is a 400 `ApiError` naming the parameter.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from starlette.requests import Request

from app.serve.errors import ApiError

# A chat request is one image and a few messages: its JSON has at most this many values (counted
# as commas and opening brackets, before parsing) nested at most this deep.
MAX_JSON_VALUES = 10_000
MAX_JSON_DEPTH = 32


async def read_body(request: Request) -> bytes:
    """The body, read without Starlette keeping a copy for the rest of the request."""
    chunks = [chunk async for chunk in request.stream()]
    return b"".join(chunks)


def parse_json(raw: bytes) -> dict:
    """A JSON object with at most MAX_JSON_VALUES values nested at most MAX_JSON_DEPTH deep, or 400
    `invalid_json`; the values are counted on the bytes, before anything is parsed."""
    values = raw.count(b",") + raw.count(b"[") + raw.count(b"{")
    if values > MAX_JSON_VALUES:
        raise ApiError(
            400,
            f"the body has more than {MAX_JSON_VALUES:,} JSON values; a request holds one image",
            "invalid_json",
        )
    try:
        body = json.loads(raw)
    except RecursionError:
        body = None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiError(400, f"the body is not valid JSON ({exc})", "invalid_json") from None
    if body is None or json_depth(body) > MAX_JSON_DEPTH:
        raise ApiError(
            400, f"the JSON is nested more than {MAX_JSON_DEPTH} levels deep", "invalid_json"
        )
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object", "invalid_json")
    return body


def json_depth(value) -> int:
    """How deep lists and objects nest in `value` (without recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, (list, dict)):
            deepest = max(deepest, depth)
            todo.extend(
                (v, depth + 1) for v in (value.values() if isinstance(value, dict) else value)
            )
    return deepest


@dataclass
class ChatRequest:
    data: bytes  # the image file's bytes
    param: str  # where they were, e.g. messages[1].content[1].image_url
    max_new_tokens: int
    stream: bool
    include_usage: bool


def chat_request(raw: bytes, max_new_tokens: int) -> ChatRequest:
    """A chat-completions body → what the server reads of it (in the thread pool: parsing and
    base64 of a large body would stall the event loop)."""
    body = parse_json(raw)
    del raw
    if body.get("n") not in (None, 1):
        raise ApiError(400, "n must be 1: each request reads one image once", "invalid_value", "n")
    stream = body.get("stream") or False
    if not isinstance(stream, bool):
        raise ApiError(400, "stream must be true or false", "invalid_type", "stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise ApiError(400, "stream_options must be an object", "invalid_type", "stream_options")
    tokens = requested_tokens(body, max_new_tokens)
    data, param = image_data(body.get("messages"))
    return ChatRequest(data, param, tokens, stream, bool(options.get("include_usage")))


def requested_tokens(body: dict, cap: int) -> int:
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= cap:
            raise ApiError(
                400,
                f"{name} must be a whole number from 1 to {cap} (this server's --max-new-tokens)",
                "invalid_value",
                name,
            )
        return value
    return cap


def image_data(messages) -> tuple[bytes, str]:
    """The image bytes in the last user message, and the parameter path that named them.

    Text parts are ignored: the model reads the image and takes no instructions."""
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages must be a non-empty list", "invalid_value", "messages")
    users = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        raise ApiError(
            400, "no user message: the image goes in the last user message", "no_image", "messages"
        )
    index = users[-1]
    content = messages[index].get("content")
    parts = content if isinstance(content, list) else []
    images = [
        (i, part)
        for i, part in enumerate(parts)
        if isinstance(part, dict) and part.get("type") in ("image_url", "input_image")
    ]
    param = f"messages[{index}].content"
    if not images:
        raise ApiError(
            400,
            "the last user message has no image: send it as a content part "
            '{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}',
            "no_image",
            param,
        )
    if len(images) > 1:
        raise ApiError(
            400,
            "one image per request: send each crop as its own request (they are batched)",
            "too_many_images",
            param,
        )
    i, part = images[0]
    param = f"{param}[{i}].image_url"
    url = part.get("image_url")
    if isinstance(url, dict):
        url = url.get("url")
    if not isinstance(url, str):
        raise ApiError(400, "image_url must carry a url string", "invalid_value", param)
    if not url.startswith("data:"):
        raise ApiError(
            400,
            "only data: URLs are read (data:image/png;base64,...); this server fetches nothing",
            "unsupported_url",
            param,
        )
    header, comma, payload = url.partition(",")
    if not comma or not header.endswith(";base64") or not header[5:].startswith("image/"):
        raise ApiError(400, "expected a data:image/...;base64, URL", "invalid_image_url", param)
    try:
        return base64.b64decode(payload, validate=True), param
    except (binascii.Error, ValueError) as exc:
        raise ApiError(
            400, f"the data: URL is not valid base64 ({exc})", "invalid_base64", param
        ) from None
