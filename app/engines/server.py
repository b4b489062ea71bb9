"""The engine on a Hayai server (`hayai serve`, docs/server.md), over plain HTTP from the standard library.

`warmup()` asks the server who it is (GET /v1/models checks the key, GET /health names the model and
device); `read()` sends each crop as a PNG to POST /v1/ocr and returns the server's text, token ids
and model time. Both run in the OCR worker's thread. Every failure is a `ServerError` whose message
says what went wrong in words and whose `hint` says what to do; the app stays usable and tries
the server again on the next read.
"""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field

from app.engines.base import Traits

INSTALL_HINT = "nothing to install: the standard library speaks HTTP"
TIMEOUT_S = 120.0  # a busy CPU server may queue a crop behind a few batches
SETTINGS_HINT = (
    "Check the server's address and key in Settings → Engine, and that the server is running."
)


class ServerError(RuntimeError):
    """A server that cannot be used right now; `hint` says what to do."""

    retry_load = True  # the worker tries again on the next read: the server may be back

    def __init__(self, message: str, hint: str = SETTINGS_HINT):
        super().__init__(message)
        self.hint = hint


@dataclass
class ServerResult:
    text: str
    token_ids: list[int]
    timings: dict[str, float] = field(
        default_factory=dict
    )  # the server's model time: {"total": ms}


TRAITS = Traits(remote=True, settings_keys=frozenset({"engine/server_url", "engine/server_key"}))


def is_compatible() -> bool:
    return True


def is_available() -> bool:
    return True


def options(settings) -> dict:
    """`load`'s keyword arguments from the Settings."""
    return {"url": settings.get("engine/server_url"), "key": settings.get("engine/server_key")}


def settings_problem(values: dict) -> str:
    """Why the server address in `values` cannot be used (with what to do), or ""."""
    try:
        base_url(str(values.get("engine/server_url", "")))
    except ServerError as exc:
        return f"{exc} {exc.hint}"
    return ""


def load(url: str = "", key: str = "", **_ignored) -> ServerRecognizer:
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
    def __init__(self, url: str, key: str = "", timeout_s: float = TIMEOUT_S):
        self.base = base_url(url)
        self.key = key.strip()
        self.timeout_s = timeout_s
        netloc = urllib.parse.urlsplit(self.base).netloc
        self.traits = TRAITS
        self.device = f"server {netloc}"  # until warmup() asks the server
        self.variant = ""
        self.precision = ""
        self.model_dir = None

    def __repr__(self) -> str:
        return f"ServerRecognizer({self.base})"

    def warmup(self) -> None:
        self._call("GET", "/v1/models")  # the key is checked here, not at the first capture
        health = self._call("GET", "/health")
        netloc = urllib.parse.urlsplit(self.base).netloc
        self.device = f"{health.get('device', '?')} @ {netloc}"
        self.variant = str(health.get("variant", ""))
        self.precision = str(health.get("precision", ""))

    def read(self, images, max_new_tokens: int = 128, num_beams: int = 1) -> list[ServerResult]:
        """Each image read by the server (its --max-new-tokens and beams apply)."""
        results = []
        for image in images:
            png = io.BytesIO()
            image.save(png, "PNG")
            boundary = uuid.uuid4().hex
            body = b"".join(
                (
                    f'--{boundary}\r\nContent-Disposition: form-data; name="image"; filename="crop.png"\r\n'
                    "Content-Type: image/png\r\n\r\n".encode(),
                    png.getvalue(),
                    f"\r\n--{boundary}--\r\n".encode(),
                )
            )
            (answer,) = self._call(
                "POST", "/v1/ocr", body, f"multipart/form-data; boundary={boundary}"
            )
            results.append(
                ServerResult(
                    answer["text"], list(answer["token_ids"]), {"total": float(answer["ms"])}
                )
            )
        return results

    def _call(self, method: str, path: str, body: bytes | None = None, content_type: str = ""):
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.base + path, body, headers, method=method)
        where = f"The Hayai server at {self.base}"
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            message = _error_message(exc)
            if exc.code == 401:
                raise ServerError(
                    f"{where} refused the key ({message}).",
                    "Enter the server's API key in Settings → Engine.",
                ) from None
            if exc.code in (429, 503):
                raise ServerError(f"{where} is busy: {message}", "Try again in a moment.") from None
            raise ServerError(f"{where} answered {exc.code}: {message}") from None
        except TimeoutError:
            raise ServerError(f"{where} did not answer within {self.timeout_s:.0f} s.") from None
        except urllib.error.URLError as exc:
            reason = getattr(exc.reason, "strerror", None) or exc.reason  # "Connection refused"
            raise ServerError(f"{where} cannot be reached ({reason}).") from None
        except OSError as exc:  # connection reset, ...
            raise ServerError(f"{where} cannot be reached ({exc}).") from None
        try:
            return json.loads(raw)
        except ValueError:
            raise ServerError(f"{where} does not answer like a Hayai server.") from None


def _error_message(exc: urllib.error.HTTPError) -> str:
    """The message of an OpenAI-style error object, or the HTTP reason."""
    try:
        return str(json.loads(exc.read())["error"]["message"])
    except Exception:
        return str(exc.reason)
