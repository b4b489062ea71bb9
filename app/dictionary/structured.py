"""Yomitan glossary items -> formatted text: Qt rich text for the popup, plain text for JSON/CLI.

A glossary item is a string, `{"type": "text", "text": …}`, `{"type": "image", …}` or
`{"type": "structured-content", "content": NODE}`, where NODE is a string, a list of nodes or an
element `{"tag": …, "content": NODE, "data": {…}, "style": {…}, …}` with HTML-like tags (div, span,
ul/ol/li, table rows, ruby, details/summary, a, img, br). We render a safe subset: text is always
escaped, links and images never load anything, unknown tags keep only their content.
"""

from __future__ import annotations

import html

_BLOCK = {"div", "p", "details", "summary", "ul", "ol", "li", "table", "tr"}
_SKIP = {"rp", "img", "rt"}  # rt is folded into its ruby as （reading）
# How deeply lists and objects of a glossary item are rendered; deeper ones are shown as "…".
# Real dictionaries nest under 20 levels.
MAX_DEPTH = 128


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _data_kinds(node: dict) -> set[str]:
    data = node.get("data")
    if not isinstance(data, dict):
        return set()
    return {str(v) for v in data.values()} | {str(k) for k in data}


def _ruby_text(node, depth: int) -> str:
    """The rt parts of a ruby element (at `depth`), as plain text."""
    parts, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict) and item.get("tag") == "rt":
            text: list[str] = []
            _text(item.get("content"), text, depth + 2)  # a ruby in an rt: deeper each time
            parts.append(_lines("".join(text)))
    return "".join(parts)


class _Markup(str):
    """Markup of our own on the work stack (an element's closing tags), never escaped."""


# Both walks below keep a stack of their own instead of recursing: a glossary nested a thousand
# levels deep costs a thousand turns of a loop, never a RecursionError. A list or object deeper
# than MAX_DEPTH (counted from the glossary item) is shown as "…".


def to_html(node, muted: str = "#9ca3af") -> str:
    """Rich text for one glossary item or structured-content node."""
    out: list[str] = []
    stack: list = [(node, 1)]
    while stack:
        item = stack.pop()
        if isinstance(item, _Markup):
            out.append(item)
            continue
        node, depth = item
        if isinstance(node, str):
            out.append(_e(node).replace("\n", "<br>"))
            continue
        if isinstance(node, (int, float)):
            out.append(_e(str(node)))
            continue
        if not isinstance(node, (list, dict)):
            continue
        if depth > MAX_DEPTH:
            out.append("…")
            continue
        if isinstance(node, list):
            stack.extend((n, depth + 1) for n in reversed(node))
            continue
        kind = node.get("type")
        if kind == "text":
            stack.append((node.get("text"), depth + 1))
            continue
        if kind == "image":
            out.append(f'<span style="color:{muted};">[image]</span>')
            continue
        if kind == "structured-content":
            stack.append((node.get("content"), depth + 1))
            continue
        tag = str(node.get("tag", "span"))
        content = node.get("content")
        if tag == "br":
            out.append("<br>")
        elif tag == "img":
            title = node.get("title") or node.get("alt") or "image"
            out.append(f'<span style="color:{muted};">[{_e(str(title))}]</span>')
        elif tag == "ruby":
            reading = _e(_ruby_text(content, depth))
            stack.append(
                _Markup(f'<span style="color:{muted}; font-size:8pt;">（{reading}）</span>')
            )
            stack.append(([n for n in _as_list(content) if not _is_tag(n, "rt", "rp")], depth + 1))
        elif tag not in ("rt", "rp"):
            opening, closing = _element(tag, _data_kinds(node), muted)
            out.append(opening)
            stack.append(_Markup(closing))
            stack.append((content, depth + 1))
    return "".join(out)


def _element(tag: str, kinds: set[str], muted: str) -> tuple[str, str]:
    """The rich text before and after one element's content."""
    if tag in ("ul", "ol"):
        return f'<{tag} style="margin-top:0px; margin-bottom:0px;">', f"</{tag}>"
    if tag in ("li", "tr", "td", "th"):
        return f"<{tag}>", f"</{tag}>"
    if tag == "table":
        return '<table cellspacing="0" cellpadding="2">', "</table>"
    if tag in ("thead", "tbody", "tfoot"):
        return "", ""
    if tag == "summary":
        return "<b>", "</b><br>"
    style = ""
    if any("example" in k for k in kinds):
        style = "margin-left:10px; font-style:italic;"
    elif any(("note" in k or "info" in k or "xref" in k) for k in kinds):
        style = f"color:{muted};"
    elif any("tag" in k for k in kinds):
        style = f"color:{muted}; font-size:8pt;"
    if tag in ("div", "p", "details"):
        return (f'<div style="{style}">' if style else "<div>"), "</div>"
    if tag == "a":
        return "<u>", "</u>"
    return (f'<span style="{style}">', "</span>") if style else ("", "")


def _as_list(node) -> list:
    return node if isinstance(node, list) else [node]


def _is_tag(node, *tags: str) -> bool:
    return isinstance(node, dict) and node.get("tag") in tags


def to_text(node) -> str:
    """Plain text for one glossary item: blocks and list items on their own lines, ruby as 漢字（かな）."""
    parts: list[str] = []
    _text(node, parts, 1)
    return _lines("".join(parts))


def _lines(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def _text(node, out: list[str], depth: int) -> None:
    stack: list = [(node, depth)]  # the separators we add ride along as text
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            out.append(node)
            continue
        if isinstance(node, (int, float)):
            out.append(str(node))
            continue
        if not isinstance(node, (list, dict)):
            continue
        if depth > MAX_DEPTH:
            out.append("…")
            continue
        if isinstance(node, list):
            stack.extend((n, depth + 1) for n in reversed(node))
            continue
        kind = node.get("type")
        if kind == "text":
            stack.append((node.get("text"), depth + 1))
            continue
        if kind == "structured-content":
            stack.append((node.get("content"), depth + 1))
            continue
        if kind == "image":
            continue
        tag = node.get("tag")
        content = node.get("content")
        if tag == "br":
            out.append("\n")
        elif tag == "ruby":
            reading = _ruby_text(content, depth)
            if reading:
                stack.append((f"（{reading}）", 0))
            stack.append(([n for n in _as_list(content) if not _is_tag(n, "rt", "rp")], depth + 1))
        elif tag not in _SKIP:
            block = tag in _BLOCK
            after = (" " if tag in ("td", "th") else "") + ("\n" if block else "")
            stack.append((after, 0))
            stack.append((content, depth + 1))
            out.append(("\n" if block else "") + ("• " if tag == "li" else ""))


def is_plain(item) -> bool:
    """True for a glossary item that is just text (no structure worth rendering as rich text)."""
    return isinstance(item, str) or (isinstance(item, dict) and item.get("type") == "text")
