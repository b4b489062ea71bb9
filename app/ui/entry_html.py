"""The dictionary popup's HTML: a lookup's entries as Qt rich text (the subset Qt's text documents
support: tables, spans, lists), built as one string so that one document lays it out (far cheaper
than a tree of labels per entry). Outside text (headwords, glosses, dictionary titles) is
always escaped, quotes too (a reading sits in an <img src>): docs/security.md. The popup widget
(app/ui/dictionary_popup.py) shows it and draws the pitch graphs that `pitch_url` names."""

from __future__ import annotations

from app.dictionary.pitch import morae, pattern
from app.ui import theme
from app.ui.anki_action import ADDED, ADDING, CHECKING, FAILED, IN_DECK, NEW
from app.ui.rich_text import escape, tooltip

POS_NAMES = {  # the few tags worth spelling out; the rest stay JMdict codes
    "n": "noun",
    "v1": "ichidan verb",
    "vt": "transitive",
    "vi": "intransitive",
    "adj-i": "i-adjective",
    "adj-na": "na-adjective",
    "adv": "adverb",
    "exp": "expression",
    "vs": "suru verb",
    "vs-i": "suru verb",
    "vs-s": "suru verb",
    "vk": "kuru verb",
    "adj-no": "no-adjective",
    "prt": "particle",
    "int": "interjection",
    "v5k-s": "godan verb (iku)",
    "aux-v": "auxiliary verb",
    "ctr": "counter",
    "suf": "suffix",
    "pref": "prefix",
    "pn": "pronoun",
    "conj": "conjunction",
    "adj-ix": "i-adjective (ii)",
    "n-suf": "noun suffix",
}


def pos_label(code: str) -> str:
    if code in POS_NAMES:
        return POS_NAMES[code]
    if code.startswith("v5") and len(code) >= 3:
        return f"godan verb ({code[2:]})"
    return code


_e = escape  # outside text in the popup's HTML: quotes too (a reading sits in an <img src>)


PITCH_COLOUR = "#f472b6"  # Yomitan-style pitch lines
FREQUENCY_COLOUR = "#365314"


def pitch_url(reading: str, position: int) -> str:
    """The document resource name of a pitch graph (the popup draws it: `pitch_graph`)."""
    return f"pitch:{position}:{reading}"


def pitch_html(reading: str, position: int, cjk_family: str) -> str:
    """Yomitan's two notations side by side: a small pitch graph (dots high or low, one per mora
    and a hollow one for the particle) and the reading with a line over its high morae and ꜜ at
    the downstep, then the position: たべꜜる [2]; heiban keeps the line to the end, [0]."""
    parts = morae(reading)
    highs = pattern(len(parts), position)
    out = []
    for i, mora in enumerate(parts):
        style = "text-decoration: overline;" if highs[i] else ""
        out.append(f'<span style="{style}">{_e(mora)}</span>' if style else _e(mora))
        if position and i + 1 == position:
            out.append(f'<span style="color:{PITCH_COLOUR}; font-weight:700;">ꜜ</span>')
    return (
        f'<img src="{_e(pitch_url(reading, position))}" style="vertical-align:middle;">&nbsp;'
        f"<span style=\"font-family:'{cjk_family}'; font-size:12pt; color:{theme.TEXT};\">"
        f"{''.join(out)}</span>"
        f'<span style="color:{PITCH_COLOUR}; font-size:9pt;"> [{position}]</span>'
    )


def frequencies_html(frequencies: list[dict]) -> str:
    """One badge per frequency record: the dictionary's name and its value."""
    return "&nbsp; ".join(
        f'<span style="background-color:{FREQUENCY_COLOUR}; color:{theme.TEXT}; font-size:8pt;">'
        f"&nbsp;{_e(f['dictionary'])}&nbsp;</span>"
        f'<span style="background-color:{theme.BORDER}; color:{theme.TEXT}; font-size:8pt;">'
        f"&nbsp;{_e(str(f['display']))}&nbsp;</span>"
        for f in frequencies
    )


def imported_kanji_html(kanji) -> str:
    """What imported kanji dictionaries add to a kanji: their meanings (when KANJIDIC2's differ)
    and kanji frequency badges."""
    out = []
    for d in kanji.dictionaries:
        if d["meanings"] and d["meanings"] != kanji.meanings:
            out.append(
                f'<br><span style="color:{theme.MUTED}; font-size:8pt;">{_e(d["dictionary"])}</span> '
                f'<span style="color:{theme.TEXT};">{_e(", ".join(d["meanings"][:6]))}</span>'
            )
    if kanji.frequencies:
        out.append(f"<br>{frequencies_html(kanji.frequencies)}")
    return "".join(out)


def entry_html(
    index: int, entry, shown_kanji: set[str], cjk_family: str, anki_state=None, anki_down=""
) -> str:
    """One entry as Qt rich text (see above): the popup's unit per entry (head with its dictionary, copy and + Anki links, frequencies, pitch,
    chain, senses, kanji); `copy:{index}` and `anki:{index}` links act on `result.entries[index]`;
    `anki_state` (app/ui/anki_action.WordState) sets the Anki link and shows its error;
    `anki_down`, while AnkiConnect does not answer, says why the link is unavailable."""
    kanji = [k for k in (entry.kanji or []) if k.char not in shown_kanji]
    shown_kanji.update(k.char for k in kanji)  # each kanji once in the popup
    return "".join(
        [
            _title_html(index, entry, cjk_family, anki_state, anki_down),
            _anki_error_html(anki_state),
            _line(frequencies_html(entry.frequencies), "3px") if entry.frequencies else "",
            "".join(_pitch_line(pitch, cjk_family) for pitch in entry.pitch),
            "".join(_ipa_line(record) for record in entry.ipa),
            _chain_html(entry),
            _other_readings_html(entry),
            _senses_html(entry.senses),
            _kanji_html(kanji, cjk_family) if kanji else "",
        ]
    )


def _line(html: str, top: str = "2px", style: str = "") -> str:
    """One paragraph under the entry's head."""
    return f'<p style="margin:{top} 0 0 0;{style}">{html}</p>'


def _muted_small(text: str) -> str:
    return f'<span style="color:{theme.MUTED}; font-size:8pt;">{_e(text)}</span>'


def _headword_html(entry, cjk_family: str) -> str:
    """The headword, its reading when it differs, and CC-CEDICT's other script."""
    head = (
        f"<span style=\"font-family:'{cjk_family}'; font-size:21pt; color:{theme.TEXT};\">"
        f"{_e(entry.headword)}</span>"
    )
    if entry.reading and entry.reading != entry.headword:
        head += (
            f"&nbsp;&nbsp;<span style=\"font-family:'{cjk_family}'; font-size:13pt; "
            f'color:{theme.ACCENT};">{_e(entry.reading)}</span>'
        )
    if entry.source == "cedict" and entry.traditional and entry.traditional != entry.headword:
        other = entry.traditional if entry.headword == entry.simplified else entry.simplified
        head += f'&nbsp;&nbsp;<span style="font-size:13pt; color:{theme.MUTED};">{_e(other)}</span>'
    return head


SOURCE_NAMES = {"jmdict": "", "jmnedict": "name", "cedict": "CC-CEDICT"}  # beside the head


def _title_html(index: int, entry, cjk_family: str, anki_state, anki_down: str) -> str:
    """The head on the left; the entry's dictionary and its copy and + Anki links on the right."""
    source = entry.dictionary or SOURCE_NAMES.get(entry.source, entry.source)
    return (
        '<table width="100%" cellspacing="0" cellpadding="0"><tr>'
        f'<td valign="bottom">{_headword_html(entry, cjk_family)}</td>'
        f'<td align="right" valign="middle">{_muted_small(source)}'
        f'&nbsp;&nbsp;<a href="copy:{index}" style="color:{theme.ACCENT}; text-decoration:none;">copy</a>'
        f"{anki_link_html(index, anki_state, anki_down)}</td>"
        "</tr></table>"
    )


def _anki_error_html(anki_state) -> str:
    if anki_state is None or anki_state.state != FAILED:
        return ""
    return _line(_e(anki_state.message), style=f" color:{theme.DANGER};")


def _pitch_line(pitch: dict, cjk_family: str) -> str:
    """One dictionary's accents of one reading."""
    accents = "&nbsp;&nbsp;".join(
        pitch_html(pitch["reading"], n, cjk_family) for n in pitch["positions"]
    )
    return _line(f"{accents}&nbsp;&nbsp;{_muted_small(pitch['dictionary'])}", "3px")


def _ipa_line(record: dict) -> str:
    return _line(
        f"/{_e(' · '.join(record['transcriptions']))}/&nbsp;&nbsp;{_muted_small(record['dictionary'])}",
        style=f" color:{theme.TEXT};",
    )


def _chain_html(entry) -> str:
    """The deinflection: 食べた ← 食べる: past."""
    if not entry.deinflection:
        return ""
    chain = " · ".join(_e(s) for s in entry.deinflection)
    return _line(f"{_e(entry.match)} ← {_e(entry.headword)}: {chain}", style=" color:#fbbf24;")


def _other_readings_html(entry) -> str:
    others = [r for r in entry.readings if r != entry.reading]
    if not others:
        return ""
    return _line(f"also read {_e('、'.join(others))}", style=f" color:{theme.MUTED};")


def _senses_html(senses) -> str:
    """The numbered senses: POS tags (only where they change), glosses or rich text, notes."""
    items = []
    last_pos: list[str] = []
    for sense in senses:
        tags = ""
        if sense.pos and sense.pos != last_pos:  # repeat POS tags only when they change
            tags = " ".join(_badge(pos_label(p)) for p in sense.pos) + " "
            last_pos = sense.pos
        notes = (
            f' <span style="color:{theme.MUTED};">({_e(", ".join(sense.notes))})</span>'
            if sense.notes
            else ""
        )
        text = sense.html if sense.html else _e("; ".join(sense.glosses))
        items.append(f'<li style="margin-bottom:2px;">{tags}{text}{notes}</li>')
    if not items:
        return ""
    return (
        '<ol style="margin-top:4px; margin-bottom:0px; margin-left:-14px;">'
        + "".join(items)
        + "</ol>"
    )


def _badge(text: str) -> str:
    return (
        f'<span style="background-color:{theme.BORDER}; color:{theme.TEXT};">'
        f"&nbsp;{_e(text)}&nbsp;</span>"
    )


def _kanji_html(kanji, cjk_family: str) -> str:
    """The kanji panel: per kanji its meanings, on and kun readings, facts and imported additions."""
    rows = "".join(_kanji_row(k, cjk_family) for k in kanji)
    return (
        f'<table cellspacing="0" cellpadding="2" style="margin-top:6px; '
        f'background-color:{theme.SURFACE};">{rows}</table>'
    )


def _kanji_row(k, cjk_family: str) -> str:
    facts = [
        f"{k.strokes} strokes" if k.strokes else "",
        f"grade {k.grade}" if k.grade else "",
        f"JLPT {k.jlpt} (old scale)" if k.jlpt else "",
    ]
    readings = [
        f'<span style="color:{theme.MUTED};">{label}</span> {_e("、".join(values))}'
        for label, values in (("on", k.on), ("kun", k.kun))
        if values
    ]
    return (
        f'<tr><td valign="top" style="padding-right:10px;"><span style="font-family:\'{cjk_family}\'; '
        f'font-size:24pt; color:{theme.TEXT};">{_e(k.char)}</span></td>'
        f'<td valign="top"><span style="color:{theme.TEXT};">{_e(", ".join(k.meanings[:6]))}</span><br>'
        f"<span style=\"font-family:'{cjk_family}';\">{'&nbsp;&nbsp;'.join(readings)}</span><br>"
        f'<span style="color:{theme.MUTED}; font-size:8pt;">{_e(" · ".join(f for f in facts if f))}'
        f"</span>{imported_kanji_html(k)}</td></tr>"
    )


# The "+ Anki" link by state (app/ui/anki_action.py): its words and whether it looks active.
ANKI_LINKS = {
    NEW: ("+ Anki", True),
    CHECKING: ("+ Anki", False),
    ADDING: ("adding…", False),
    ADDED: ("✓ in deck", True),
    IN_DECK: ("in deck", True),
    FAILED: ("+ Anki", True),
}


def anki_link_html(index: int, state, down: str = "") -> str:
    """The link by state; while AnkiConnect does not answer (`down` says so), "+ Anki" greyed,
    no link, and `down` as its tooltip (plain text: it names the address)."""
    if state is None:
        return ""
    if down and state.state not in (ADDED, IN_DECK):
        return (
            f'&nbsp;&nbsp;<span title="{_e(tooltip(down))}" style="color:{theme.MUTED};">'
            f"{_e(ANKI_LINKS[NEW][0])}</span>"
        )
    label, active = ANKI_LINKS.get(state.state, ANKI_LINKS[NEW])
    colour = theme.ACCENT if active else theme.MUTED
    if state.state in (ADDED, IN_DECK):
        colour = theme.SUCCESS
    return (
        f'&nbsp;&nbsp;<a href="anki:{index}" style="color:{colour}; text-decoration:none;">'
        f"{_e(label)}</a>"
    )


def result_html(result, cjk_family: str, anki_states=None, anki_down: str = "") -> str:
    shown_kanji: set[str] = set()
    rule = f'<hr style="background-color:{theme.BORDER}; height:1px; border:none;">'
    states = anki_states or [None] * len(result.entries)
    return rule.join(
        entry_html(i, e, shown_kanji, cjk_family, states[i], anki_down)
        for i, e in enumerate(result.entries)
    )


def message_html(text: str) -> str:
    """A message in place of entries ("No entries.", "Preparing the dictionary…")."""
    return f'<p style="color:{theme.MUTED};">{_e(text)}</p>'


READ_SIDE = 60  # characters of the read text shown on each side of the word


def read_html(text: str, start: int, length: int, cjk_family: str) -> str:
    """The text read under the pointer (Hover to read) with the looked-up word marked, so the
    user sees what was read; long texts are cut to READ_SIDE characters around the word."""
    a, b = max(0, start - READ_SIDE), min(len(text), start + length + READ_SIDE)
    before = ("…" if a else "") + text[a:start]
    after = text[start + length : b] + ("…" if b < len(text) else "")
    word = f'<span style="background-color:{theme.HIGHLIGHT};">{_e(text[start : start + length])}</span>'
    return (
        f"<p style=\"margin:0 0 6px 0; font-family:'{cjk_family}'; font-size:11pt; "
        f'color:{theme.MUTED};">{_e(before)}{word}{_e(after)}</p>'
    )
