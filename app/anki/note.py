"""What goes into a note: the markers a note-type field can be mapped to, and their content.

A `Mined` is everything known about one word at the moment the user mines it: the dictionary
entry (when there is one), the line it was read in, the crop, where and when. `fill()` turns it
into the text of each marker; `fields()` applies the user's field mapping.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from datetime import datetime

# marker -> what the settings page calls it. The order is the Hayai note type's field order.
MARKERS: dict[str, str] = {
    "word": "Word (headword)",
    "reading": "Reading",
    "word_furigana": "Word with furigana",
    "glossary": "Glossary (all senses)",
    "pos": "Part of speech",
    "sentence": "Sentence (word in bold)",
    "sentence_furigana": "Sentence with furigana",
    "pitch": "Pitch accent",
    "frequency": "Frequency",
    "image": "Picture (the crop)",
    "source": "Source",
    "time": "Time",
}
NONE = ""  # a field mapped to nothing stays empty

# The Hayai note type: one field per marker, named for people, in MARKERS' order.
HAYAI_NOTE_TYPE = "Hayai"
HAYAI_FIELDS: dict[str, str] = {
    "Word": "word",
    "Reading": "reading",
    "WordFurigana": "word_furigana",
    "Glossary": "glossary",
    "PartOfSpeech": "pos",
    "Sentence": "sentence",
    "SentenceFurigana": "sentence_furigana",
    "Pitch": "pitch",
    "Frequency": "frequency",
    "Picture": "image",
    "Source": "source",
    "Time": "time",
}
HAYAI_FRONT = '<div class="word">{{Word}}</div>\n<div class="sentence">{{Sentence}}</div>'
HAYAI_BACK = (
    "{{FrontSide}}\n<hr id=answer>\n"
    '<div class="reading">{{furigana:WordFurigana}}</div>\n'
    '<div class="pitch">{{Pitch}}</div>\n'
    '<div class="pos">{{PartOfSpeech}}</div>\n'
    '<div class="glossary">{{Glossary}}</div>\n'
    '<div class="sentence">{{furigana:SentenceFurigana}}</div>\n'
    '<div class="picture">{{Picture}}</div>\n'
    '<div class="meta">{{Frequency}} {{Source}} {{Time}}</div>'
)
HAYAI_CSS = """.card { font-family: "Noto Sans CJK JP", sans-serif; font-size: 20px; text-align: center;
  color: #1f2933; background: #fdfdfb; }
.word { font-size: 44px; margin: 12px 0; }
.sentence { font-size: 22px; margin: 8px 0; }
.sentence b { color: #c2410c; }
.reading { font-size: 28px; }
.pos, .meta { font-size: 13px; color: #6b7280; }
.glossary { text-align: left; display: inline-block; max-width: 36em; }
.picture img { max-width: 90%; max-height: 40vh; margin-top: 8px; }"""


@dataclass
class Mined:
    """One word to turn into a note (or a whole line: `word` empty, then the line is the word)."""

    word: str
    reading: str = ""
    senses: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (pos, glosses)
    pos: list[str] = field(default_factory=list)
    sentence: str = ""
    match: str = ""  # the form in the sentence (食べられなかった for 食べる); bolded there
    # (reading, downstep positions)
    pitch: list[tuple[str, list[int]]] = field(default_factory=list)
    frequencies: list[tuple[str, str]] = field(default_factory=list)  # (dictionary, display value)
    image_png: bytes | None = None
    source: str = ""
    time: datetime = field(default_factory=datetime.now)

    @classmethod
    def from_entry(cls, entry, sentence: str = "", **extra) -> Mined:
        """From a dictionary `Entry` (app/dictionary/models.py), with whatever it carries."""
        pitch = [
            (p.get("reading", ""), list(p.get("positions", [])))
            for p in (getattr(entry, "pitch", None) or [])
            if isinstance(p, dict)
        ]
        frequencies = [
            (f.get("dictionary", ""), str(f.get("display") or f.get("value", "")))
            for f in (getattr(entry, "frequencies", None) or [])
            if isinstance(f, dict)
        ]
        return cls(
            word=entry.headword,
            reading=entry.reading or "",
            senses=[(list(s.pos), list(s.glosses)) for s in entry.senses],
            pos=list(entry.pos),
            sentence=sentence,
            match=entry.match or entry.headword,
            pitch=pitch,
            frequencies=frequencies,
            **extra,
        )

    @property
    def image_filename(self) -> str:
        return f"hayai_{self.time:%Y%m%d_%H%M%S_%f}.png" if self.image_png else ""


def anki_furigana(text: str, pieces: list[tuple[str, str | None]]) -> str:
    """Anki's furigana syntax, `食[た]べる`, from (surface, reading or None) pieces."""
    out = []
    for surface, reading in pieces:
        if reading:
            # a space before each annotated piece, so Anki knows where the base text starts
            out.append(f" {html.escape(surface)}[{html.escape(reading)}]")
        else:
            out.append(html.escape(surface))
    return "".join(out).strip() if pieces else html.escape(text)


def bold_word(sentence: str, form: str) -> str:
    """The sentence, HTML-escaped, with the first occurrence of the mined form in <b>."""
    if form and form in sentence:
        i = sentence.index(form)
        return (
            html.escape(sentence[:i])
            + f"<b>{html.escape(form)}</b>"
            + html.escape(sentence[i + len(form) :])
        )
    return html.escape(sentence)


MAX_ENDING = 12  # the longest inflected ending sought after the stem (させられなかった is 8)


def form_in_sentence(mined: Mined) -> str:
    """The word as the sentence has it: the form the popup matched, the word as given, or an
    inflected form that the deinflector takes back to the word or its reading (食べた for 食べる);
    "" when the sentence does not hold it or the word is the whole line."""
    sentence = mined.sentence or ""
    if not mined.word.strip() or mined.word.strip() == sentence.strip():
        return ""  # a whole line mined: nothing stands out
    for form in (mined.match, mined.word):
        if form and form in sentence:
            return form
    from app.dictionary.deinflect import agrees, deinflect

    bases = {mined.word, mined.reading} - {""}
    pos = set(mined.pos)
    longest = max(len(b) for b in bases) + MAX_ENDING
    for start in range(len(sentence)):
        for end in range(min(len(sentence), start + longest), start, -1):
            if any(
                c.text in bases and (not pos or agrees(c, pos))
                for c in deinflect(sentence[start:end])
            ):
                return sentence[start:end]
    return ""


def pitch_html(reading: str, positions: list[int]) -> str:
    """The reading with the downstep marked as Yomitan users read it: 0 = 平板, n = after mora n."""
    morae = re.findall(r".[ゃゅょャュョぁぃぅぇぉァィゥェォ]?", reading)
    marks = []
    for position in positions:
        if position == 0:
            marks.append(f"{html.escape(reading)} [0] 平板")
        elif 0 < position <= len(morae):
            head = "".join(morae[:position])
            tail = "".join(morae[position:])
            marks.append(f"{html.escape(head)}ꜜ{html.escape(tail)} [{position}]")
        else:
            marks.append(f"{html.escape(reading)} [{position}]")
    return " / ".join(marks)


def fill(mined: Mined, furigana=None) -> dict[str, str]:
    """The text of every marker. `furigana(text) -> [(surface, reading|None)]` (the dictionary's
    own; passed in so this module stays free of the analyser's load); without it furigana fields fall
    back to the plain word and sentence."""
    from app.dictionary.furigana import align

    word_pieces: list[tuple[str, str | None]] = (
        align(mined.word, mined.reading) if mined.reading else [(mined.word, None)]
    )
    glossary = "".join(
        "<li>"
        + (f"<i>({html.escape(', '.join(pos))})</i> " if pos else "")
        + html.escape("; ".join(glosses))
        + "</li>"
        for pos, glosses in mined.senses
    )
    sentence = mined.sentence or ""
    return {
        "word": html.escape(mined.word),
        "reading": html.escape(mined.reading),
        "word_furigana": anki_furigana(mined.word, word_pieces),
        "glossary": f"<ol>{glossary}</ol>" if glossary else "",
        "pos": html.escape(", ".join(mined.pos)),
        "sentence": bold_word(sentence, form_in_sentence(mined)),  # a whole line: nothing bold
        "sentence_furigana": anki_furigana(sentence, furigana(sentence))
        if furigana and sentence
        else html.escape(sentence),
        "pitch": "<br>".join(
            pitch_html(reading or mined.reading, positions) for reading, positions in mined.pitch
        ),
        "frequency": "<br>".join(
            f"{html.escape(name)}: {html.escape(value)}" for name, value in mined.frequencies
        ),
        "image": f'<img src="{mined.image_filename}">' if mined.image_png else "",
        "source": html.escape(mined.source),
        "time": f"{mined.time:%Y-%m-%d %H:%M}",
    }


def fields(values: dict[str, str], mapping: dict[str, str]) -> dict[str, str]:
    """Each note-type field's content under `mapping` (field -> marker; unknown markers: empty)."""
    return {name: values.get(marker, "") for name, marker in mapping.items()}
