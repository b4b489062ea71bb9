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
import functools
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


@dataclass
class Server:
    """What the routes share: the batcher, the configuration, the memory budget, the size limits."""

    batcher: Batcher
    config: ServerConfig
    budget: MemoryBudget

    @property
    def chat_limit(self) -> int:  # one image, base64 (4/3 of its bytes), and the rest of the JSON
        return self.config.max_image_bytes * 4 // 3 + 4 + FORM_SLACK

    @property
    def ocr_limit(self) -> int:
        return MAX_FILES * (self.config.max_image_bytes + FORM_SLACK)


def create_app(
    batcher: Batcher, config: ServerConfig, budget: MemoryBudget | None = None
) -> Starlette:
    """The ASGI application around a started `batcher`; `budget` bounds what requests hold in
    memory (by default one of `config.max_memory_bytes`)."""
    server = Server(batcher, config, budget or MemoryBudget(config.max_memory_bytes))
    routes = [
        Route(
            "/v1/chat/completions",
            chat_completions,
            methods=["POST"],
            middleware=[
                Middleware(
                    BodyGuard,
                    limit=server.chat_limit,
                    budget=server.budget,
                    held_per_byte=JSON_HELD_PER_BYTE,
                )
            ],
        ),
        Route(
            "/v1/ocr",
            ocr,
            methods=["POST"],
            middleware=[Middleware(BodyGuard, limit=server.ocr_limit, budget=server.budget)],
        ),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/models/{model:path}", model, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    keyless = [] if config.api_key else [Middleware(HostCheck, allow_hosts=config.allow_hosts)]
    app = Starlette(
        routes=routes,
        middleware=keyless,
        exception_handlers=dict.fromkeys((ApiError, HTTPException, Exception), on_error),
    )
    app.state.server = server
    return app


def server_of(request: Request) -> Server:
    return request.app.state.server


# --- checks, images, the queue ---------------------------------------------------------------------


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
    api_key = server_of(request).config.api_key
    if api_key is None:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), api_key.encode()
    ):
        raise ApiError(
            401,
            "Incorrect or missing API key: send `Authorization: Bearer KEY`.",
            "invalid_api_key",
        )


async def image_from_bytes(server: Server, data: bytes, param: str, held: list[Reservation]):
    """The decoded crop; its decoded size is reserved (and appended to `held`) before decoding."""
    config = server.config
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
            reservation = server.budget.reserve(
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


def enqueue(
    server: Server, images: list, max_new_tokens: int, held: list[Reservation], on_text=None
):
    """Queue the crops; each one's reservation is released once it is read, has failed, or its
    client went away (the future cancelled)."""
    try:
        futures = server.batcher.submit_many(images, max_new_tokens, on_text)
    except QueueFull as exc:
        raise busy(exc) from None
    except BatcherClosed as exc:
        raise ApiError(503, f"The server is shutting down: {exc}.", "shutting_down") from None
    for future, reservation in zip(futures, held):
        future.add_done_callback(functools.partial(release_when_done, reservation))
    return futures


def release_when_done(reservation: Reservation, future) -> None:
    reservation.release()


async def result_of(future):
    try:
        return await asyncio.wrap_future(future)
    except BatcherClosed as exc:
        raise ApiError(503, f"The server is shutting down: {exc}.", "shutting_down") from None
    except Exception as exc:  # the engine failed on this crop (out of memory, ...)
        raise ApiError(
            500, f"Reading failed: {type(exc).__name__}: {exc}", "engine_error"
        ) from None


async def results_while_connected(futures, request: Request) -> list:
    """The futures' results, or, when the client goes away first, the futures cancelled (their
    crops are not read, or leave the decode, and their reservations come back) and a 503 nobody
    reads."""
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


# --- routes --------------------------------------------------------------------------------------


async def chat_completions(request: Request):
    server = server_of(request)
    check_request(request, server.chat_limit, "application/json")
    raw = await read_body(request)
    chat = await run_in_threadpool(chat_request, raw, server.config.max_new_tokens)
    del raw
    pieces: asyncio.Queue[str] = asyncio.Queue()  # the text as it is decoded (streaming)
    loop = asyncio.get_running_loop()

    def on_text(piece: str) -> None:  # called on the model thread
        loop.call_soon_threadsafe(pieces.put_nowait, piece)

    held: list[Reservation] = []
    try:
        image = await image_from_bytes(server, chat.data, chat.param, held)
        request.scope[BODY_RESERVATION].release()  # the body and its copies are let go
        chat.data = b""
        streamed = on_text if chat.stream else None
        (future,) = enqueue(server, [image], chat.max_new_tokens, held, streamed)
    except BaseException:
        for reservation in held:
            reservation.release()
        raise
    del image  # the batcher holds the crop until it is read
    completion = Completion(
        f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), server.config.model_id, chat
    )
    if chat.stream:
        return StreamingResponse(
            stream_chunks(future, pieces, completion),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    (result,) = await results_while_connected([future], request)
    return JSONResponse(completion.answer(result))


@dataclass
class Completion:
    """One chat completion's answer, whole or as chunks (OpenAI's `chat.completion[.chunk]`)."""

    id: str
    created: int
    model: str
    chat: ChatRequest

    def answer(self, result) -> dict:
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": result.text},
                    "logprobs": None,
                    "finish_reason": finish_reason(result, self.chat.max_new_tokens),
                }
            ],
            "usage": usage(result),
        }

    def chunk(self, delta: dict | None, finish: str | None = None, **extra) -> str:
        """One server-sent event; delta None: a chunk without choices (the usage chunk)."""
        choices = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        body = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [] if delta is None else choices,
            **extra,
        }
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


async def stream_chunks(future, pieces: asyncio.Queue, completion: Completion):
    """OpenAI's chunk format: the role, then each piece of text as it is decoded, the finish
    reason, the usage when asked for, then `data: [DONE]`. A client that goes away cancels this
    generator, and with it the reading (its crop leaves the decode at the next step)."""
    yield completion.chunk({"role": "assistant", "content": ""})
    done = asyncio.ensure_future(result_of(future))
    sent = ""
    try:
        while not done.done() or not pieces.empty():
            if pieces.empty():
                wanted = asyncio.ensure_future(pieces.get())
                await asyncio.wait({wanted, done}, return_when=asyncio.FIRST_COMPLETED)
                if not wanted.done():
                    wanted.cancel()
                    continue
                piece = wanted.result()
            else:
                piece = pieces.get_nowait()
            sent += piece
            yield completion.chunk({"content": piece})
        try:
            result = done.result()
        except ApiError as exc:  # the status is sent already: the error goes in the stream
            yield f"data: {json.dumps(error_body(exc.message, exc.type, exc.param, exc.code))}\n\n"
        else:
            if result.text.startswith(sent) and len(result.text) > len(sent):
                yield completion.chunk({"content": result.text[len(sent) :]})  # read whole
            yield completion.chunk({}, finish_reason(result, completion.chat.max_new_tokens))
            if completion.chat.include_usage:
                yield completion.chunk(None, usage=usage(result))
        yield "data: [DONE]\n\n"
    finally:
        future.cancel()  # nothing if it is done; else the client has gone
        done.cancel()


async def ocr(request: Request):
    server = server_of(request)
    config = server.config
    check_request(request, server.ocr_limit, "multipart/form-data")
    form = await read_form(request)
    names: list[str] = []
    held: list[Reservation] = []
    try:
        images = await form_images(server, form, names, held)
        futures = enqueue(server, images, config.max_new_tokens, held)
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


async def read_form(request: Request):
    try:
        return await request.form(max_files=MAX_FILES, max_fields=MAX_FILES)
    except HTTPException as exc:  # Starlette's answer to a broken multipart body, or 413
        if exc.status_code == 413:
            raise
        raise ApiError(
            400,
            f"expected a multipart/form-data body with image files ({exc.detail})",
            "invalid_form",
        ) from None


async def form_images(server: Server, form, names: list[str], held: list[Reservation]) -> list:
    """The form's image files decoded, in order (their names appended to `names`)."""
    config = server.config
    uploads = [(key, value) for key, value in form.multi_items() if isinstance(value, UploadFile)]
    if not uploads:
        raise ApiError(400, "no image file in the form: send each image as a file part", "no_image")
    images: list = []
    for key, upload in uploads:
        data = await upload.read(config.max_image_bytes + 1)
        images.append(await image_from_bytes(server, data, key, held))
        del data
        names.append(upload.filename or key)
        pixels = sum(im.width * im.height for im in images)
        if pixels > config.max_image_pixels:  # the limit holds for a request's images together
            raise ApiError(
                413,
                f"the images of this request have {pixels:,} pixels together; "
                f"this server accepts at most {config.max_image_pixels:,} per request",
                "image_too_large",
                key,
            )
    return images


async def models(request: Request):
    check_key(request)
    return JSONResponse({"object": "list", "data": [model_card(server_of(request).config)]})


async def model(request: Request):
    check_key(request)
    config = server_of(request).config
    if request.path_params["model"] != config.model_id:
        raise ApiError(
            404,
            f"no model {request.path_params['model']!r}; this server has {config.model_id!r}",
            "model_not_found",
            "model",
        )
    return JSONResponse(model_card(config))


def model_card(config: ServerConfig) -> dict:
    return {
        "id": config.model_id,
        "object": "model",
        "created": config.created,
        "owned_by": "hayai",
    }


async def health(request: Request):
    server = server_of(request)
    config, batcher = server.config, server.batcher
    return JSONResponse(
        {
            "status": "ok",
            "model": config.model_id,
            "variant": config.variant,
            "device": config.device,
            "precision": config.precision,
            "max_new_tokens": config.max_new_tokens,
            "max_batch": batcher.max_batch,
            "max_rows": batcher.max_rows,
            "prefill_per_step": batcher.prefill_per_step,
            "max_wait_ms": batcher.max_wait_ms,
            "continuous": batcher.continuous,
            "stats": batcher.stats(),
        }
    )


# --- errors ----------------------------------------------------------------------------------------


async def on_error(request: Request, exc: Exception):
    """Every error as an OpenAI error object: ours as raised, Starlette's (404, 405, 413) in our
    words, anything else a 500 that names only the exception's type."""
    if isinstance(exc, ApiError):
        return exc.response()
    if isinstance(exc, HTTPException):
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
    log.error(
        "unexpected error on %s %s: %s: %s",
        request.method,
        request.url.path,
        type(exc).__name__,
        exc,
    )
    return ApiError(500, f"internal error: {type(exc).__name__}", "internal_error").response()


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

    async def __call__(self, scope, receive, send):
        body = _Body(self, scope, receive, send)
        try:
            await self.app(scope, body.receive, body.send)
        finally:
            body.reservation.release()


class _Body:
    """One request's body as BodyGuard lets it through: `receive` for the route, `send` for its answer."""

    def __init__(self, guard: BodyGuard, scope, receive, send):
        self.guard, self.scope, self._receive, self._send = guard, scope, receive, send
        self.loop = asyncio.get_running_loop()
        self.deadline = self.loop.time() + BODY_TOTAL_S
        self.received, self.complete = 0, False
        self.reservation = scope[BODY_RESERVATION] = guard.budget.reserve(0)

    async def receive(self):
        if (
            self.complete
        ):  # after the body only a disconnect can come: no deadline on waiting for it
            return await self._receive()
        wait = min(BODY_IDLE_S, self.deadline - self.loop.time())
        try:
            message = await asyncio.wait_for(self._receive(), max(wait, 0.0))
        except TimeoutError:
            raise ApiError(
                408,
                f"the request body did not arrive in time (nothing for {BODY_IDLE_S:g} s, "
                f"or not all of it within {BODY_TOTAL_S:g} s)",
                "request_timeout",
            ) from None
        if message["type"] != "http.request":
            return message
        self.count(message)
        if self.received > self.guard.limit:
            raise ApiError(
                413, f"the request has more than {self.guard.limit:,} bytes", "request_too_large"
            )
        try:
            self.reservation.grow_to(self.received * self.guard.held_per_byte, "the request's body")
        except OverBudget as exc:
            raise busy(exc) from None
        return message

    def count(self, message) -> None:
        self.received += len(message.get("body", b""))
        self.complete = not message.get("more_body", False)

    async def drained(self) -> bool:
        """Reads and drops the rest of the body: an HTTP client sends all of it before it reads
        the answer, so closing on it mid-body gives it a broken pipe instead of the answer.
        False when the rest is over DRAIN_MAX_BYTES or has not all come within DRAIN_S."""
        declared = dict(self.scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > DRAIN_MAX_BYTES:
            return False
        end = self.loop.time() + DRAIN_S
        while not self.complete:
            if self.received > DRAIN_MAX_BYTES:
                return False
            try:
                message = await asyncio.wait_for(self._receive(), max(end - self.loop.time(), 0.0))
            except TimeoutError:
                return False
            if message["type"] != "http.request":  # the client has gone
                return False
            self.count(message)  # counted, never kept nor reserved
        return True

    async def send(self, message):
        if message["type"] == "http.response.start" and not self.complete:
            if message["status"] == 408 or not await self.drained():
                headers = [h for h in message.get("headers", []) if h[0] != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
        await self._send(message)


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
