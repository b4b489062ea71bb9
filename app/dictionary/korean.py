"""Korean lookups through lemmas: kiwipiepy (the `korean` extra) splits the word under the mouse
into morphemes, and a verb or adjective stem becomes its dictionary form (먹었다 -> 먹다,
공부하고 -> 공부하다). Only used when an imported dictionary has Korean terms; the analyser
(~1.5 s, ~300 MB) loads on the first Korean lookup, or in `Dictionary.prepare()` when such a
dictionary is enabled."""

from __future__ import annotations

import threading

from app.dictionary.text import MAX_MATCH, is_hangul

_PREDICATE = {"VV", "VA", "VX", "VCP", "VCN", "XSV", "XSA"}  # (kiwi adds -I/-R to irregular ones)
_lock = threading.Lock()
_kiwi = None


class KoreanUnavailable(RuntimeError):
    """kiwipiepy is not installed."""


def analyser():
    global _kiwi
    with _lock:
        if _kiwi is None:
            try:
                from kiwipiepy import Kiwi
            except ImportError as exc:
                raise KoreanUnavailable(
                    "Korean lookups need the Korean analyser: pip install 'hayai-desktop[korean]' "
                    "(kiwipiepy)"
                ) from exc
            _kiwi = Kiwi()
        return _kiwi


def word_at(text: str, start: int) -> str:
    """The run of hangul (and digits) from `start`, at most MAX_MATCH long: the eojeol the mouse is
    on, from there."""
    end, stop = start, min(len(text), start + MAX_MATCH)
    while end < stop and (is_hangul(text[end]) or text[end].isdigit()):
        end += 1
    return text[start:end]


def keys_at(text: str, start: int) -> dict[str, int]:
    """Dictionary keys to try -> characters of `text` (from `start`) each one covers, longest first:
    the surface prefixes (학교에 -> 학교에, 학교, 학) and the lemmas of the analyser's tokens."""
    word = word_at(text, start)
    if not word:
        return {}
    keys: dict[str, int] = {}
    for n in range(len(word), 0, -1):
        keys.setdefault(word[:n], n)
    tokens = analyser().tokenize(word)
    for i, token in enumerate(tokens):
        tag = token.tag.split("-")[0]
        if tag in _PREDICATE:
            lemma = _predicate_lemma(tokens, i, tag)
            if lemma is not None:
                key, end = lemma[0], min(lemma[1], len(word))
                if keys.get(key, 0) < end:
                    keys[key] = end
        elif i == 0:
            keys.setdefault(token.form, min(token.start + token.len, len(word)))
    return dict(sorted(keys.items(), key=lambda kv: -kv[1]))


def _predicate_lemma(tokens: list, i: int, tag: str) -> tuple[str, int] | None:
    """(stem + 다, where its endings end) of the verb or adjective token `i`: the word's first
    token, or a 하 suffix with the noun before it (공부 + 하 -> 공부하다); None for a predicate later
    in the word (not what the mouse is on)."""
    token = tokens[i]
    if tag in ("XSV", "XSA") and i > 0:
        stem = tokens[i - 1].form + token.form
    elif i > 0:
        return None
    else:
        stem = token.form
    end = token.start + token.len  # the lemma covers the stem and its endings (었, 어요, 고)
    for later in tokens[i + 1 :]:
        if not later.tag.startswith("E"):
            break
        end = later.start + later.len
    return stem + "다", end
