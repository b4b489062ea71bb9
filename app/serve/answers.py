"""What a reading becomes for its client: `result_of` (the crop's future, its failure as an
`ApiError`), and the chat completion (`Completion`), whole or as OpenAI's server-sent chunks
(`stream_chunks`: the role, each piece of text as it is decoded, the finish reason, the usage when
asked for, then `data: [DONE]`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass

from app.serve.batcher import BatcherClosed
from app.serve.errors import ApiError, closed, error_body
from app.serve.parsing import ChatRequest

log = logging.getLogger(__name__)


async def result_of(future):
    try:
        return await asyncio.wrap_future(future)
    except BatcherClosed as exc:
        raise closed(exc) from None
    except Exception as exc:  # the engine failed on this crop (out of memory, ...)
        raise ApiError(
            500, f"Reading failed: {type(exc).__name__}: {exc}", "engine_error"
        ) from None


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
    wanted: asyncio.Future | None = None
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
        if not future.done():
            log.info("a client went away mid-stream: its reading was dropped")
        future.cancel()  # nothing if it is done; else the client has gone
        for task in (done, wanted):
            if task is not None:
                forget(task)


def forget(task: asyncio.Future) -> None:
    """Cancel `task` and let it end unobserved: how it ends (cancelled, or a CancelledError as the
    outcome of a gather) is taken when it does, so asyncio does not log it as never retrieved."""
    task.cancel()
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


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
