"""The Starlette application of `hayai serve` and its routes: OpenAI's chat-completions format, a
plain OCR route, model list and health.

    POST /v1/chat/completions   one image (a base64 data: URL in the last user message) → its text
    POST /v1/ocr                multipart images → [{"image", "text", "token_ids", "ms"}, ...]
    GET  /v1/models             the one model served
    GET  /health                model, queue and batch statistics (no key needed)

The event loop only checks headers and waits: JSON is parsed and images decoded in Starlette's
thread pool, and the model runs in the batcher's one thread. Here: the application (`create_app`),
the routes, and what they do with images and the queue (each image's decoded size reserved from
its header before decoding, the crops queued, the answers awaited while the client is connected).
Beside it, by responsibility: `state` (the configuration and what the routes share), `guards`
(what a request must be before its body is read or held: Host, size, key, Content-Type, the body
arriving in time and within the memory bound), `parsing` (a chat request's body → what is read of
it), `answers` (a reading → the chat completion, whole or as server-sent chunks) and `errors`
(every error as an OpenAI error object, never a traceback; an unexpected failure is a 500 of that
shape and the server keeps serving).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from app.serve.answers import Completion, forget, result_of, stream_chunks
from app.serve.batcher import Batcher, BatcherClosed, ModelStopped, QueueFull
from app.serve.errors import ApiError, busy, closed, error_body, on_error, sentence
from app.serve.guards import BODY_RESERVATION, BodyGuard, HostCheck, check_key, check_request
from app.serve.images import (
    DECODING_BYTES_PER_PIXEL,
    RGB_BYTES_PER_PIXEL,
    ImageTooLarge,
    NotAnImage,
    decode_image,
    probe_image,
)
from app.serve.memory import MemoryBudget, OverBudget, Reservation
from app.serve.parsing import chat_request, read_body
from app.serve.state import MAX_FILES, Server, ServerConfig, server_of

log = logging.getLogger(__name__)

# A JSON body is held three times over while it is read: the bytes, the parsed text, the image bytes.
JSON_HELD_PER_BYTE = 3


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
        width, height = probe_image(data, config.image_cap, config.max_image_pixels)
        try:
            reservation = server.budget.reserve(
                width * height * DECODING_BYTES_PER_PIXEL,
                f"decoding a {width}×{height} image",
            )
        except OverBudget as exc:
            raise busy(exc) from None
        held.append(reservation)
        image = await run_in_threadpool(decode_image, data, config.image_cap)
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
        raise closed(exc) from None
    for future, reservation in zip(futures, held):
        future.add_done_callback(functools.partial(release_when_done, reservation))
    return futures


def release_when_done(reservation: Reservation, future) -> None:
    reservation.release()


async def results_while_connected(futures, request: Request) -> list:
    """The futures' results, or, when the client goes away first, the futures cancelled (their
    crops are not read, or leave the decode, and their reservations come back), one line logged
    and a 503 nobody reads."""
    waiting: asyncio.Future = asyncio.gather(*(result_of(f) for f in futures))
    gone = asyncio.ensure_future(disconnected(request))
    try:
        await asyncio.wait({waiting, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        left = not waiting.done()
        if left:  # the client has gone (or this request was cancelled)
            for future in futures:
                future.cancel()
            forget(waiting)
    if left:
        log.info("a client went away before its answer: its reading was dropped")
        raise ApiError(503, "the client went away", "client_gone")
    return waiting.result()


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
    """200 with the model, settings and counters; 503 with an error object saying why when the
    model thread has stopped or is stuck with crops waiting (Batcher.problem)."""
    server = server_of(request)
    config, batcher = server.config, server.batcher
    problem = batcher.problem()
    status = {"status": "ok" if problem is None else "unavailable"}
    if problem is not None:  # in the words a client shows (app/engines/server.py)
        status.update(error_body(sentence(problem), "server_error", None, ModelStopped.code))
    return JSONResponse(
        {
            **status,
            "model": config.model_id,
            "variant": config.variant,
            "device": config.device,
            "precision": config.precision,
            "max_new_tokens": config.max_new_tokens,
            "max_batch": batcher.schedule.max_batch,
            "max_rows": batcher.schedule.max_rows,
            "prefill_per_step": batcher.schedule.prefill_per_step,
            "max_wait_ms": batcher.schedule.max_wait_ms,
            "continuous": batcher.schedule.continuous,
            "stats": batcher.stats(),
        },
        200 if problem is None else 503,
    )


async def disconnected(request: Request) -> None:
    """Returns once the client has gone (after the body, only a disconnect can arrive)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
