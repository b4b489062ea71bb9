"""The engine on a Hayai server (`hayai serve`, docs/server.md), over HTTP with httpx.

`warmup()` asks the server who it is (GET /v1/models checks the key, GET /health names the model and
device); `read()` sends each crop as a PNG to POST /v1/ocr and returns the server's text, token ids
and model time. Both run in the OCR worker's thread. Every failure is a `ServerError` whose message
says what went wrong in words and whose `hint` says what to do; the app stays usable and tries
the server again on the next read.
"""

from __future__ import annotations

import io
import json
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.engines.base import Traits

if TYPE_CHECKING:
    import httpx
    from PIL.Image import Image

    from app.settings import Settings

INSTALL_HINT = "install hayai-desktop (httpx is one of its dependencies)"
TIMEOUT_S = 120.0  # a busy CPU server may queue a crop behind a few batches
SETTINGS_HINT = (
    "Check the server's address and key in Settings → Engine, and that the server is running."
)


class ServerError(RuntimeError):
    """A server that cannot be used right now; `hint` says what to do."""

    retry_load = True  # the worker tries again on the next read: the server may be back

    def __init__(self, message: str, hint: str = SETTINGS_HINT) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass
class ServerResult:
    text: str
    token_ids: list[int]
    # the server's model time: {"total": ms}
    timings: dict[str, float] = field(default_factory=dict)


TRAITS = Traits(remote=True, settings_keys=frozenset({"engine/server_url", "engine/server_key"}))


def is_compatible() -> bool:
    return True


def is_available() -> bool:
    return True


def options(settings: Settings) -> dict:
    """`load`'s keyword arguments from the Settings."""
    return {"url": settings.get("engine/server_url"), "key": settings.get("engine/server_key")}


def settings_problem(values: dict) -> str:
    """Why the server address in `values` cannot be used (with what to do), or ""."""
    try:
        base_url(str(values.get("engine/server_url", "")))
    except ServerError as exc:
        return f"{exc} {exc.hint}"
    return ""


def load(url: str = "", key: str = "", **_ignored: object) -> ServerRecognizer:
    return ServerRecognizer(url, key)


def base_url(url: str) -> str:
    """The server's root URL from what the user typed (`host:port`, `http://host:port/v1/`, ...)."""
    url = url.strip()
    if not url:
        raise ServerError(
            "No server address is set.",
            "Enter the address of a Hayai server in Settings → Engine, e.g. http://192.168.1.20:8000.",
        )
    if "://" not in url:
        url = "http://" + url
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServerError(
            f"{url!r} is not a server address.",
            "Enter it as http://HOST:PORT in Settings → Engine, e.g. http://192.168.1.20:8000.",
        )
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


class ServerRecognizer:
    def __init__(self, url: str, key: str = "", timeout_s: float = TIMEOUT_S) -> None:
        self.base = base_url(url)
        self.key = key.strip()
        self.timeout_s = timeout_s
        netloc = urllib.parse.urlsplit(self.base).netloc
        self.traits = TRAITS
        self.reads_batches = False  # a batch's crops go as requests at once, batched by the server
        self.device = f"server {netloc}"  # until warmup() asks the server
        self.variant = ""
        self.precision = ""
        self.model_dir = None
        # an httpx.Client, made at the first call (its connection is kept)
        self._client: httpx.Client | None = None

    def __repr__(self) -> str:
        return f"ServerRecognizer({self.base})"

    def warmup(self) -> None:
        self._call("GET", "/v1/models")  # the key is checked here, not at the first capture
        health = self._call("GET", "/health")
        netloc = urllib.parse.urlsplit(self.base).netloc
        self.device = f"{health.get('device', '?')} @ {netloc}"
        self.variant = str(health.get("variant", ""))
        self.precision = str(health.get("precision", ""))

    def read(
        self, images: list[Image], max_new_tokens: int = 128, num_beams: int = 1
    ) -> list[ServerResult]:
        """Each image read by the server (its --max-new-tokens and beams apply)."""
        results = []
        for image in images:
            png = io.BytesIO()
            image.save(png, "PNG")
            files = {"image": ("crop.png", png.getvalue(), "image/png")}
            (answer,) = self._call("POST", "/v1/ocr", files=files)
            results.append(
                ServerResult(
                    answer["text"], list(answer["token_ids"]), {"total": float(answer["ms"])}
                )
            )
        return results

    def _call(self, method: str, path: str, files: dict | None = None):
        # httpx takes ~0.3 s to import: here, in the worker thread, never on the GUI thread
        import httpx

        if self._client is None:
            headers = {"Accept": "application/json"}
            if self.key:
                headers["Authorization"] = f"Bearer {self.key}"
            self._client = httpx.Client(headers=headers, timeout=self.timeout_s)
        where = f"The Hayai server at {self.base}"
        try:
            response = self._client.request(method, self.base + path, files=files)
        except httpx.TimeoutException:
            raise ServerError(f"{where} did not answer within {self.timeout_s:.0f} s.") from None
        except (httpx.TransportError, OSError) as exc:  # refused, reset, a name not found, ...
            raise ServerError(f"{where} cannot be reached ({_reason(exc)}).") from None
        if response.status_code >= 400:
            message = _error_message(response)
            if response.status_code == 401:
                raise ServerError(
                    f"{where} refused the key ({message}).",
                    "Enter the server's API key in Settings → Engine.",
                ) from None
            if response.status_code in (429, 503):
                raise ServerError(f"{where} is busy: {message}", "Try again in a moment.") from None
            raise ServerError(f"{where} answered {response.status_code}: {message}") from None
        try:
            return json.loads(response.content)
        except ValueError:
            raise ServerError(f"{where} does not answer like a Hayai server.") from None


def _reason(exc: BaseException) -> str:
    """The operating system's words for a failed connection ("Connection refused"), else the error's."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        cause = cause.__cause__ or cause.__context__
    return str(exc) or type(exc).__name__


def _error_message(response) -> str:
    """The message of an OpenAI-style error object, or the HTTP reason."""
    try:
        return str(json.loads(response.content)["error"]["message"])
    except Exception:
        return response.reason_phrase
