"""Every error of `hayai serve` as an OpenAI error object, `{"error": {"message", "type", "param",
"code"}}`, with the right status and never a traceback: `ApiError` (raised by the routes and the
guards) and `on_error`, the application's handler for it, for Starlette's own errors (404, 405,
413) and for anything unexpected (a 500 that names only the exception's type).
"""

from __future__ import annotations

import logging

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

log = logging.getLogger(__name__)


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


def closed(exc) -> ApiError:
    """A batcher that takes no more crops (`BatcherClosed`: shutting down, or its model thread has
    stopped), as its code says."""
    return ApiError(503, sentence(str(exc)), exc.code)


def sentence(text: str) -> str:
    """ "the server is shutting down" → "The server is shutting down." """
    return f"{text[:1].upper()}{text[1:]}."


def error_body(message: str, type: str, param: str | None, code: str | None) -> dict:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


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
