"""The Starlette application of `hayai serve`: OpenAI's chat-completions format, a plain OCR route,
model list and health, every error as an OpenAI error object.

    POST /v1/chat/completions   one image (a base64 data: URL in the last user message) → its text
    POST /v1/ocr                multipart images → [{"image", "text", "token_ids", "ms"}, ...]
    GET  /v1/models             the one model served
    GET  /health                model, queue and batch statistics (no key needed)

The event loop only checks headers and waits: JSON is parsed and images decoded in Starlette's
thread pool, and the model runs in the batcher's one thread. Before anything is read a request must
name this server (`Host`, without an API key: DNS rebinding), carry its key, and say what its body is
(`Content-Type`); its body must arrive in time, and every byte it makes the server hold (the body as
it arrives, each image's decoded size from its header before decoding) is reserved against the
memory bound (app/serve/memory.py). Errors are answered as
`{"error": {"message", "type", "param", "code"}}` with the right status and never a traceback; an
unexpected failure is a 500 of that shape and the server keeps serving.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import ipaddress
import json
import logging
import time
import uuid
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from app.serve.batcher import Batcher, BatcherClosed, QueueFull
from app.serve.images import (
    DECODING_BYTES_PER_PIXEL,
    RGB_BYTES_PER_PIXEL,
    ImageTooLarge,
    NotAnImage,
    decode_image,
    probe_image,
)
from app.serve.memory import MemoryBudget, OverBudget, Reservation

log = logging.getLogger(__name__)

MAX_FILES = 64  # images in one POST /v1/ocr
FORM_SLACK = 64 * 1024  # a request's bytes beyond its images: JSON, multipart headers, text parts
# A chat request is one image and a few messages: its JSON has at most this many values (counted
# as commas and opening brackets, before parsing) nested at most this deep.
MAX_JSON_VALUES = 10_000
MAX_JSON_DEPTH = 32
# A JSON body is held three times over while it is read: the bytes, the parsed text, the image bytes.
JSON_HELD_PER_BYTE = 3
BODY_IDLE_S = 15.0  # a body that sends nothing this long is answered 408
BODY_TOTAL_S = 120.0  # ... and one that has not all arrived after this long
# An answer given before the whole body arrived waits until the rest is read and dropped (up to
# these bounds; beyond them the connection is closed after the answer).
DRAIN_MAX_BYTES = 64 * 1024 * 1024
DRAIN_S = 10.0
LOOPBACK_NAMES = ("localhost",)  # besides loopback addresses, what a keyless server answers to
BODY_RESERVATION = "hayai.body_reservation"  # the scope key of a request's body reservation


@dataclass(frozen=True)
class ServerConfig:
    model_id: str  # what /v1/models lists and every answer names, e.g. "hayai-v2.1"
    variant: str
    device: str
    precision: str
    max_new_tokens: int  # the default and the most a request may ask for
    api_key: str | None = None
    max_image_bytes: int = 20_000_000
    max_image_pixels: int = 25_000_000
    max_memory_bytes: int = 1_024_000_000  # --max-queue-mb: what requests may hold together
    # --allow-host: the Host names a keyless server answers besides loopback ones
    allow_hosts: tuple[str, ...] = ()
    created: int = 0  # when the model was loaded (Unix time), for /v1/models


class ApiError(Exception):
    """Answered as an OpenAI error object with `status`."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str,
        param: str | None = None,
        type: str | None = None,
    ):
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param
        self.type = type or {
            401: "authentication_error",
            403: "permission_error",
            413: "invalid_request_error",
            429: "rate_limit_error",
            503: "server_error",
            500: "server_error",
        }.get(status, "invalid_request_error")

    def response(self) -> JSONResponse:
        headers = {"Retry-After": "1"} if self.status in (429, 503) else {}
        return JSONResponse(
            error_body(self.message, self.type, self.param, self.code), self.status, headers
        )


def busy(exc: Exception) -> ApiError:
    return ApiError(503, f"The server is busy: {exc}. Try again shortly.", "queue_full")


def error_body(message: str, type: str, param: str | None, code: str | None) -> dict:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def create_app(  # noqa: C901 (#26: split it)
    batcher: Batcher, config: ServerConfig, budget: MemoryBudget | None = None
) -> Starlette:
    """The ASGI application around a started `batcher`; `budget` bounds what requests hold in
    memory (by default one of `config.max_memory_bytes`)."""
    budget = budget or MemoryBudget(config.max_memory_bytes)
    chat_limit = config.max_image_bytes * 4 // 3 + 4 + FORM_SLACK  # base64 is 4/3 of the bytes
    ocr_limit = MAX_FILES * (config.max_image_bytes + FORM_SLACK)

    def check_request(request: Request, limit: int, media_type: str) -> None:
        """Size first (a refused key must not make us read a huge body), then the key, then what
        the body is: a web page can POST text/plain or a form to any address without asking."""
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            raise ApiError(
                413,
                f"the request has {int(length):,} bytes; at most {limit:,} are accepted",
                "request_too_large",
            )
        check_key(request)
        given = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if given != media_type:
            raise ApiError(
                415,
                f"the body must be {media_type} (Content-Type: {given or 'none'})",
                "unsupported_media_type",
            )

    def check_key(request: Request) -> None:
        if config.api_key is None:
            return
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            given.strip().encode(), config.api_key.encode()
        ):
            raise ApiError(
                401,
                "Incorrect or missing API key: send `Authorization: Bearer KEY`.",
                "invalid_api_key",
            )

    async def image_from_bytes(data: bytes, param: str, held: list[Reservation]):
        """The decoded crop; its decoded size is reserved (and appended to `held`) before decoding."""
        if len(data) > config.max_image_bytes:
            raise ApiError(
                413,
                f"the image has {len(data):,} bytes; this server accepts at most {config.max_image_bytes:,}",
                "image_too_large",
                param,
            )
        try:
            width, height = probe_image(data, config.max_image_pixels)
            try:
                reservation = budget.reserve(
                    width * height * DECODING_BYTES_PER_PIXEL,
                    f"decoding a {width}×{height} image",
                )
            except OverBudget as exc:
                raise busy(exc) from None
            held.append(reservation)
            image = await run_in_threadpool(decode_image, data)
        except ImageTooLarge as exc:
            raise ApiError(413, str(exc), "image_too_large", param) from None
        except NotAnImage as exc:
            raise ApiError(400, str(exc), "invalid_image", param) from None
        reservation.shrink_to(image.width * image.height * RGB_BYTES_PER_PIXEL)
        return image

    def enqueue(images: list, max_new_tokens: int, held: list[Reservation]):
        """Queue the crops; each one's reservation is released once it is read, has failed, or its
        client went away (the future cancelled)."""
        try:
            futures = batcher.submit_many(images, max_new_tokens)
        except QueueFull as exc:
            raise busy(exc) from None
        except BatcherClosed as exc:
            raise ApiError(503, f"The server is shutting down: {exc}.", "shutting_down") from None
        for future, reservation in zip(futures, held):
            future.add_done_callback(lambda _, r=reservation: r.release())
        return futures

    async def result_of(future):
        try:
            return await asyncio.wrap_future(future)
        except BatcherClosed as exc:
            raise ApiError(503, f"The server is shutting down: {exc}.", "shutting_down") from None
        except Exception as exc:  # the engine failed on this batch (out of memory, ...)
            raise ApiError(
                500, f"Reading failed: {type(exc).__name__}: {exc}", "engine_error"
            ) from None

    async def results_while_connected(futures, request: Request) -> list:
        """The futures' results, or, when the client goes away first, the futures cancelled (their
        crops are not read and their reservations come back) and a 503 nobody reads."""
        waiting = asyncio.ensure_future(asyncio.gather(*(result_of(f) for f in futures)))
        gone = asyncio.ensure_future(disconnected(request))
        try:
            await asyncio.wait({waiting, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if not waiting.done():
            waiting.cancel()
            for future in futures:
                future.cancel()
            raise ApiError(503, "the client went away", "client_gone")
        return waiting.result()

    # --- routes ----------------------------------------------------------------------------------

    async def chat_completions(request: Request):
        check_request(request, chat_limit, "application/json")
        raw = await read_body(request)
        chat = await run_in_threadpool(chat_request, raw, config.max_new_tokens)
        del raw
        held: list[Reservation] = []
        try:
            image = await image_from_bytes(chat.data, chat.param, held)
            request.scope[BODY_RESERVATION].release()  # the body and its copies are let go
            chat.data = b""
            (future,) = enqueue([image], chat.max_new_tokens, held)
        except BaseException:
            for reservation in held:
                reservation.release()
            raise
        del image  # the batcher holds the crop until it is read
        max_new_tokens = chat.max_new_tokens
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if chat.stream:
            include_usage = chat.include_usage
            chunks = stream_chunks(future, completion_id, created, max_new_tokens, include_usage)
            return StreamingResponse(
                chunks, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
            )
        (result,) = await results_while_connected([future], request)
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": config.model_id,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": result.text},
                        "logprobs": None,
                        "finish_reason": finish_reason(result, max_new_tokens),
                    }
                ],
                "usage": usage(result),
            }
        )

    async def stream_chunks(future, completion_id, created, max_new_tokens, include_usage):
        """OpenAI's chunk format: the role, the text (in one piece: a batch is decoded together), the
        finish reason, the usage when asked for, then `data: [DONE]`."""

        def chunk(delta: dict, finish: str | None = None, **extra) -> str:
            body = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": config.model_id,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
                **extra,
            }
            return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

        yield chunk({"role": "assistant", "content": ""})
        try:
            result = await result_of(future)
        except ApiError as exc:  # the status is sent already: the error goes in the stream
            yield f"data: {json.dumps(error_body(exc.message, exc.type, exc.param, exc.code))}\n\n"
        else:
            yield chunk({"content": result.text})
            yield chunk({}, finish_reason(result, max_new_tokens))
            if include_usage:
                body = json.loads(chunk({})[6:])
                body["choices"], body["usage"] = [], usage(result)
                yield f"data: {json.dumps(body)}\n\n"
        yield "data: [DONE]\n\n"

    async def ocr(request: Request):
        check_request(request, ocr_limit, "multipart/form-data")
        try:
            form = await request.form(max_files=MAX_FILES, max_fields=MAX_FILES)
        except HTTPException as exc:  # Starlette's answer to a broken multipart body, or 413
            if exc.status_code == 413:
                raise
            raise ApiError(
                400,
                f"expected a multipart/form-data body with image files ({exc.detail})",
                "invalid_form",
            ) from None
        images, names, held = [], [], []
        try:
            uploads = [
                (key, value) for key, value in form.multi_items() if isinstance(value, UploadFile)
            ]
            if not uploads:
                raise ApiError(
                    400, "no image file in the form: send each image as a file part", "no_image"
                )
            for key, upload in uploads:
                data = await upload.read(config.max_image_bytes + 1)
                images.append(await image_from_bytes(data, key, held))
                del data
                names.append(upload.filename or key)
                pixels = sum(im.width * im.height for im in images)
                if (
                    pixels > config.max_image_pixels
                ):  # the limit holds for a request's images together
                    raise ApiError(
                        413,
                        f"the images of this request have {pixels:,} pixels together; "
                        f"this server accepts at most {config.max_image_pixels:,} per request",
                        "image_too_large",
                        key,
                    )
            futures = enqueue(images, config.max_new_tokens, held)
        except BaseException:
            for reservation in held:
                reservation.release()
            raise
        finally:
            await form.close()
            request.scope[BODY_RESERVATION].release()  # the spooled parts are gone
        del images  # the batcher holds the crops until they are read
        results = await results_while_connected(futures, request)
        return JSONResponse(
            [
                {
                    "image": name,
                    "text": r.text,
                    "token_ids": list(r.token_ids),
                    "ms": round(r.ms, 2),
                }
                for name, r in zip(names, results)
            ]
        )

    async def models(request: Request):
        check_key(request)
        return JSONResponse({"object": "list", "data": [model_card()]})

    async def model(request: Request):
        check_key(request)
        if request.path_params["model"] != config.model_id:
            raise ApiError(
                404,
                f"no model {request.path_params['model']!r}; this server has {config.model_id!r}",
                "model_not_found",
                "model",
            )
        return JSONResponse(model_card())

    def model_card() -> dict:
        return {
            "id": config.model_id,
            "object": "model",
            "created": config.created,
            "owned_by": "hayai",
        }

    async def health(request: Request):
        return JSONResponse(
            {
                "status": "ok",
                "model": config.model_id,
                "variant": config.variant,
                "device": config.device,
                "precision": config.precision,
                "max_new_tokens": config.max_new_tokens,
                "max_batch": batcher.max_batch,
                "max_wait_ms": batcher.max_wait_ms,
                "stats": batcher.stats(),
            }
        )

    # --- errors ----------------------------------------------------------------------------------

    async def on_api_error(request: Request, exc: ApiError):
        return exc.response()

    async def on_http_error(request: Request, exc: HTTPException):
        codes = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}
        message = {
            404: f"no route {request.url.path}",
            405: f"{request.method} is not allowed on {request.url.path}",
        }
        return ApiError(
            exc.status_code,
            message.get(exc.status_code, str(exc.detail)),
            codes.get(exc.status_code, "http_error"),
        ).response()

    async def on_unexpected(request: Request, exc: Exception):
        log.error(
            "unexpected error on %s %s: %s: %s",
            request.method,
            request.url.path,
            type(exc).__name__,
            exc,
        )
        return ApiError(500, f"internal error: {type(exc).__name__}", "internal_error").response()

    routes = [
        Route(
            "/v1/chat/completions",
            chat_completions,
            methods=["POST"],
            middleware=[
                Middleware(
                    BodyGuard, limit=chat_limit, budget=budget, held_per_byte=JSON_HELD_PER_BYTE
                )
            ],
        ),
        Route(
            "/v1/ocr",
            ocr,
            methods=["POST"],
            middleware=[Middleware(BodyGuard, limit=ocr_limit, budget=budget)],
        ),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/models/{model:path}", model, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    keyless = [] if config.api_key else [Middleware(HostCheck, allow_hosts=config.allow_hosts)]
    return Starlette(
        routes=routes,
        middleware=keyless,
        exception_handlers={
            ApiError: on_api_error,
            HTTPException: on_http_error,
            Exception: on_unexpected,
        },
    )


# --- request parsing -----------------------------------------------------------------------------


class BodyGuard:
    """A request's body as it arrives (also without a Content-Length): 413 once it exceeds `limit`,
    408 when it stalls for BODY_IDLE_S or has not all arrived after BODY_TOTAL_S, and every byte
    received (times `held_per_byte`: what reading it will hold) reserved in `budget` until the
    request ends or the route releases it (scope[BODY_RESERVATION]); 503 when that does not fit.
    The errors are raised inside the route, so its handler writes the answer; an answer given
    before the body has all arrived first drains the rest (see `drained`), except a 408's, which
    closes the connection."""

    def __init__(self, app, limit: int, budget: MemoryBudget, held_per_byte: int = 1):
        self.app, self.limit, self.budget, self.held_per_byte = app, limit, budget, held_per_byte

    async def __call__(self, scope, receive, send):  # noqa: C901 (#26: split it)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BODY_TOTAL_S
        received, complete = 0, False
        reservation = scope[BODY_RESERVATION] = self.budget.reserve(0)

        async def guarded():
            nonlocal received, complete
            if complete:  # after the body only a disconnect can come: no deadline on waiting for it
                return await receive()
            wait = min(BODY_IDLE_S, deadline - loop.time())
            try:
                message = await asyncio.wait_for(receive(), max(wait, 0.0))
            except TimeoutError:
                raise ApiError(
                    408,
                    f"the request body did not arrive in time (nothing for {BODY_IDLE_S:g} s, "
                    f"or not all of it within {BODY_TOTAL_S:g} s)",
                    "request_timeout",
                ) from None
            if message["type"] != "http.request":
                return message
            received += len(message.get("body", b""))
            complete = not message.get("more_body", False)
            if received > self.limit:
                raise ApiError(
                    413, f"the request has more than {self.limit:,} bytes", "request_too_large"
                )
            try:
                reservation.grow_to(received * self.held_per_byte, "the request's body")
            except OverBudget as exc:
                raise busy(exc) from None
            return message

        async def drained() -> bool:
            """Reads and drops the rest of the body: an HTTP client sends all of it before it reads
            the answer, so closing on it mid-body gives it a broken pipe instead of the answer.
            False when the rest is over DRAIN_MAX_BYTES or has not all come within DRAIN_S."""
            nonlocal received, complete
            declared = dict(scope["headers"]).get(b"content-length", b"")
            if declared.isdigit() and int(declared) > DRAIN_MAX_BYTES:
                return False
            end = loop.time() + DRAIN_S
            while not complete:
                if received > DRAIN_MAX_BYTES:
                    return False
                try:
                    message = await asyncio.wait_for(receive(), max(end - loop.time(), 0.0))
                except TimeoutError:
                    return False
                if message["type"] != "http.request":  # the client has gone
                    return False
                received += len(message.get("body", b""))  # counted, never kept nor reserved
                complete = not message.get("more_body", False)
            return True

        async def answer(message):
            if message["type"] == "http.response.start" and not complete:
                if message["status"] == 408 or not await drained():
                    headers = [h for h in message.get("headers", []) if h[0] != b"connection"]
                    message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        try:
            await self.app(scope, guarded, answer)
        finally:
            reservation.release()


class HostCheck:
    """Without an API key, only requests naming this computer (`Host: localhost`, a loopback
    address, or an --allow-host name) are answered; any other name is 403. A web page whose own
    name an attacker pointed at 127.0.0.1 (DNS rebinding) sends that name, and gets nothing."""

    def __init__(self, app, allow_hosts: tuple[str, ...] = ()):
        self.app = app
        self.allowed = {h.strip().lower().rstrip(".") for h in allow_hosts}

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host")
            if host is not None and not self.allows(host.decode("latin-1")):
                name = host_name(host.decode("latin-1"))
                error = ApiError(
                    403,
                    f"this server answers requests for this computer, not for {name!r} "
                    "(start it with --allow-host NAME, or with an API key)",
                    "invalid_host",
                )
                await error.response()(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def allows(self, host: str) -> bool:
        name = host_name(host)
        if name in LOOPBACK_NAMES or name in self.allowed:
            return True
        try:
            return ipaddress.ip_address(name).is_loopback
        except ValueError:
            return False


def host_name(host: str) -> str:
    """The name in a Host header, without port, brackets, trailing dot; lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        name = host[1 : host.find("]")] if "]" in host else ""
    else:
        name = host.rpartition(":")[0] if ":" in host else host
    return name.rstrip(".")


async def disconnected(request: Request) -> None:
    """Returns once the client has gone (after the body, only a disconnect can arrive)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


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


def finish_reason(result, max_new_tokens: int) -> str:
    """ "length" when the text used every token it was allowed (it may go on), else "stop"."""
    return "length" if len(result.token_ids) >= max_new_tokens else "stop"


def usage(result) -> dict:
    prompt, completion = int(getattr(result, "vision_tokens", 0)), len(result.token_ids)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
