"""The Starlette application of `hayai serve`: OpenAI's chat-completions format, a plain OCR route,
model list and health, every error as an OpenAI error object.

    POST /v1/chat/completions   one image (a base64 data: URL in the last user message) → its text
    POST /v1/ocr                multipart images → [{"image", "text", "token_ids", "ms"}, ...]
    GET  /v1/models             the one model served
    GET  /health                model, queue and batch statistics (no key needed)

The event loop only parses, decodes (in Starlette's thread pool) and waits: the model runs in the
batcher's one thread. Errors are answered as `{"error": {"message", "type", "param", "code"}}` with
the right status and never a traceback; an unexpected failure is a 500 of that shape and the server
keeps serving.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
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
from app.serve.images import ImageTooLarge, NotAnImage, decode_image

log = logging.getLogger(__name__)

MAX_FILES = 64  # images in one POST /v1/ocr
FORM_SLACK = 64 * 1024  # a request's bytes beyond its images: JSON, multipart headers, text parts


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
            413: "invalid_request_error",
            429: "rate_limit_error",
            503: "server_error",
            500: "server_error",
        }.get(status, "invalid_request_error")

    def response(self) -> JSONResponse:
        headers = {"Retry-After": "1"} if self.status in (429, 503) else None
        return JSONResponse(
            error_body(self.message, self.type, self.param, self.code), self.status, headers
        )


def error_body(message: str, type: str, param: str | None, code: str | None) -> dict:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def create_app(batcher: Batcher, config: ServerConfig) -> Starlette:
    """The ASGI application around a started `batcher`."""
    chat_limit = config.max_image_bytes * 4 // 3 + 4 + FORM_SLACK  # base64 is 4/3 of the bytes
    ocr_limit = MAX_FILES * (config.max_image_bytes + FORM_SLACK)

    def check_request(request: Request, limit: int) -> None:
        """Size first (a refused key must not make us read a huge body), then the key."""
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            raise ApiError(
                413,
                f"the request has {int(length):,} bytes; at most {limit:,} are accepted",
                "request_too_large",
            )
        check_key(request)

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

    async def image_from_bytes(data: bytes, param: str):
        if len(data) > config.max_image_bytes:
            raise ApiError(
                413,
                f"the image has {len(data):,} bytes; this server accepts at most {config.max_image_bytes:,}",
                "image_too_large",
                param,
            )
        try:
            return await run_in_threadpool(decode_image, data, config.max_image_pixels)
        except ImageTooLarge as exc:
            raise ApiError(413, str(exc), "image_too_large", param) from None
        except NotAnImage as exc:
            raise ApiError(400, str(exc), "invalid_image", param) from None

    def enqueue(images: list, max_new_tokens: int):
        try:
            return batcher.submit_many(images, max_new_tokens)
        except QueueFull as exc:
            raise ApiError(
                503, f"The server is busy: {exc}. Try again shortly.", "queue_full"
            ) from None
        except BatcherClosed as exc:
            raise ApiError(503, f"The server is shutting down: {exc}.", "shutting_down") from None

    async def result_of(future):
        try:
            return await asyncio.wrap_future(future)
        except BatcherClosed as exc:
            raise ApiError(503, f"The server is shutting down: {exc}.", "shutting_down") from None
        except Exception as exc:  # the engine failed on this batch (out of memory, ...)
            raise ApiError(
                500, f"Reading failed: {type(exc).__name__}: {exc}", "engine_error"
            ) from None

    # --- routes ----------------------------------------------------------------------------------

    async def chat_completions(request: Request):
        check_request(request, chat_limit)
        body = await json_body(request)
        if body.get("n") not in (None, 1):
            raise ApiError(
                400, "n must be 1: each request reads one image once", "invalid_value", "n"
            )
        stream = body.get("stream") or False
        if not isinstance(stream, bool):
            raise ApiError(400, "stream must be true or false", "invalid_type", "stream")
        options = body.get("stream_options") or {}
        if not isinstance(options, dict):
            raise ApiError(
                400, "stream_options must be an object", "invalid_type", "stream_options"
            )
        max_new_tokens = requested_tokens(body, config.max_new_tokens)
        data, param = image_data(body.get("messages"))
        image = await image_from_bytes(data, param)
        (future,) = enqueue([image], max_new_tokens)
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if stream:
            include_usage = bool(options.get("include_usage"))
            chunks = stream_chunks(future, completion_id, created, max_new_tokens, include_usage)
            return StreamingResponse(
                chunks, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
            )
        result = await result_of(future)
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
        check_request(request, ocr_limit)
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
        try:
            uploads = [
                (key, value) for key, value in form.multi_items() if isinstance(value, UploadFile)
            ]
            if not uploads:
                raise ApiError(
                    400, "no image file in the form: send each image as a file part", "no_image"
                )
            images, names = [], []
            for key, upload in uploads:
                data = await upload.read(config.max_image_bytes + 1)
                images.append(await image_from_bytes(data, key))
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
        finally:
            await form.close()
        futures = enqueue(images, config.max_new_tokens)
        results = [await result_of(f) for f in futures]
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
            middleware=[Middleware(BodyLimit, limit=chat_limit)],
        ),
        Route(
            "/v1/ocr", ocr, methods=["POST"], middleware=[Middleware(BodyLimit, limit=ocr_limit)]
        ),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/models/{model:path}", model, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={
            ApiError: on_api_error,
            HTTPException: on_http_error,
            Exception: on_unexpected,
        },
    )


# --- request parsing -----------------------------------------------------------------------------


class BodyLimit:
    """Counts a request's body as it arrives (also without a Content-Length) and answers 413 as an
    error object once it exceeds `limit`: the error is raised inside the route, so its handler
    writes the answer."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        received = 0

        async def limited():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise ApiError(
                        413, f"the request has more than {self.limit:,} bytes", "request_too_large"
                    )
            return message

        await self.app(scope, limited, send)


async def json_body(request: Request) -> dict:
    raw = await request.body()
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiError(400, f"the body is not valid JSON ({exc})", "invalid_json") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object", "invalid_json")
    return body


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
