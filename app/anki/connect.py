"""A small AnkiConnect client: `{"action", "version": 6, "params", "key"}` in, `{"result", "error"}` out.

AnkiConnect is an add-on that runs an HTTP server inside Anki (default http://127.0.0.1:8765).
Every failure becomes an `AnkiError` whose message is one sentence a user can act on.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8765"
API_VERSION = 6  # the AnkiConnect API version we speak; older add-ons lack the actions we use
TIMEOUT_S = 5.0


class AnkiError(RuntimeError):
    """Something Anki or AnkiConnect refused or could not do; str() is for the user."""


class AnkiUnreachable(AnkiError):
    """Nothing answers at the address: Anki is closed or AnkiConnect is not installed."""


class AnkiKeyRefused(AnkiError):
    """AnkiConnect answers but wants a key (or another key): it is there, Hayai may not use it."""


class AnkiUnsupported(AnkiError):
    """This AnkiConnect does not know the action (an older add-on)."""


class AnkiConnect:
    def __init__(self, url: str = DEFAULT_URL, key: str = "", timeout_s: float = TIMEOUT_S):
        self.url = (url or DEFAULT_URL).rstrip("/")
        self.key = key or ""
        self.timeout_s = timeout_s

    def invoke(self, action: str, **params):
        """Run one action; its `result`, or AnkiError with AnkiConnect's own error in words."""
        request = {"action": action, "version": API_VERSION, "params": params}
        if self.key:
            request["key"] = self.key
        body = json.dumps(request).encode()
        http = urllib.request.Request(
            self.url, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(http, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise AnkiError(
                f"Something answers at {self.url}, but not as AnkiConnect does (HTTP {exc.code})."
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise AnkiUnreachable(
                f"Anki is not running, or the AnkiConnect add-on is not installed: nothing answers "
                f"at {self.url}."
            ) from exc
        try:
            reply = json.loads(raw)
        except ValueError:
            raise AnkiError(
                f"Something answers at {self.url}, but it is not AnkiConnect."
            ) from None
        if not isinstance(reply, dict) or "error" not in reply or "result" not in reply:
            raise AnkiError(
                f"The add-on at {self.url} answers in an older format: update AnkiConnect "
                "(Anki → Tools → Add-ons → Check for Updates)."
            )
        error = reply["error"]
        if error:
            raise _error(action, str(error), sent_key=bool(self.key))
        return reply["result"]

    def version(self) -> int:
        return int(self.invoke("version"))


def _error(action: str, error: str, sent_key: bool) -> AnkiError:
    """AnkiConnect's error strings, in words that say what to do."""
    if "valid api key must be provided" in error:
        # AnkiConnect says the same for a missing key and a wrong one; we know which we sent
        if sent_key:
            return AnkiKeyRefused(
                "AnkiConnect refused the API key: it is not the one in AnkiConnect's settings. "
                "Correct it in Hayai's Anki settings."
            )
        return AnkiKeyRefused(
            "AnkiConnect asks for an API key: enter the key from its settings in Hayai's Anki "
            "settings."
        )
    if error == "unsupported action":
        return AnkiUnsupported(
            f"This AnkiConnect does not know “{action}”: it is too old. Update it "
            "(Anki → Tools → Add-ons → Check for Updates)."
        )
    if "collection is not available" in error:
        return AnkiError("Anki is open but no profile is loaded: open your profile in Anki.")
    return AnkiError(f"Anki refused: {error}")
