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


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _data_kinds(node: dict) -> set[str]:
    data = node.get("data")
    if not isinstance(data, dict):
        return set()
    return {str(v) for v in data.values()} | {str(k) for k in data}


def _ruby_text(node) -> str:
    """The rt parts of a ruby element, as plain text."""
    if isinstance(node, list):
        return "".join(_ruby_text(n) for n in node)
    if isinstance(node, dict) and node.get("tag") == "rt":
        return to_text(node.get("content"))
    return ""


def to_html(node, muted: str = "#9ca3af") -> str:
    """Rich text for one glossary item or structured-content node."""
    if node is None:
        return ""
    if isinstance(node, str):
        return _e(node).replace("\n", "<br>")
    if isinstance(node, (int, float)):
        return _e(str(node))
    if isinstance(node, list):
        return "".join(to_html(n, muted) for n in node)
    if not isinstance(node, dict):
        return ""
    kind = node.get("type")
    if kind == "text":
        return to_html(node.get("text"), muted)
    if kind == "image":
        return f'<span style="color:{muted};">[image]</span>'
    if kind == "structured-content":
        return to_html(node.get("content"), muted)
    tag = str(node.get("tag", "span"))
    inner = to_html(node.get("content"), muted)
    kinds = _data_kinds(node)
    if tag == "br":
        return "<br>"
    if tag == "img":
        title = node.get("title") or node.get("alt") or "image"
        return f'<span style="color:{muted};">[{_e(str(title))}]</span>'
    if tag in ("rt", "rp"):
        return ""
    if tag == "ruby":
        base = to_html([n for n in _as_list(node.get("content")) if not _is_tag(n, "rt", "rp")])
        reading = _ruby_text(node.get("content"))
        return f'{base}<span style="color:{muted}; font-size:8pt;">（{_e(reading)}）</span>'
    if tag in ("ul", "ol"):
        return f'<{tag} style="margin-top:0px; margin-bottom:0px;">{inner}</{tag}>'
    if tag == "li":
        return f"<li>{inner}</li>"
    if tag in ("table", "thead", "tbody", "tfoot"):
        return (
            f'<table cellspacing="0" cellpadding="2">{inner}</table>' if tag == "table" else inner
        )
    if tag in ("tr",):
        return f"<tr>{inner}</tr>"
    if tag in ("td", "th"):
        return f"<{tag}>{inner}</{tag}>"
    if tag == "summary":
        return f"<b>{inner}</b><br>"
    style = ""
    if any("example" in k for k in kinds):
        style = "margin-left:10px; font-style:italic;"
    elif any(("note" in k or "info" in k or "xref" in k) for k in kinds):
        style = f"color:{muted};"
    elif any("tag" in k for k in kinds):
        style = f"color:{muted}; font-size:8pt;"
    if tag in ("div", "p", "details"):
        return f'<div style="{style}">{inner}</div>' if style else f"<div>{inner}</div>"
    if tag == "a":
        return f"<u>{inner}</u>"
    return f'<span style="{style}">{inner}</span>' if style else inner


def _as_list(node) -> list:
    return node if isinstance(node, list) else [node]


def _is_tag(node, *tags: str) -> bool:
    return isinstance(node, dict) and node.get("tag") in tags


def to_text(node) -> str:
    """Plain text for one glossary item: blocks and list items on their own lines, ruby as 漢字（かな）."""
    parts: list[str] = []
    _text(node, parts)
    lines = [" ".join(line.split()) for line in "".join(parts).split("\n")]
    return "\n".join(line for line in lines if line)


def _text(node, out: list[str]) -> None:
    if node is None:
        return
    if isinstance(node, str):
        out.append(node)
        return
    if isinstance(node, (int, float)):
        out.append(str(node))
        return
    if isinstance(node, list):
        for n in node:
            _text(n, out)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "text":
        _text(node.get("text"), out)
        return
    if kind == "image":
        return
    if kind == "structured-content":
        _text(node.get("content"), out)
        return
    tag = node.get("tag")
    if tag == "br":
        out.append("\n")
        return
    if tag in _SKIP:
        return
    if tag == "ruby":
        _text([n for n in _as_list(node.get("content")) if not _is_tag(n, "rt", "rp")], out)
        reading = _ruby_text(node.get("content"))
        if reading:
            out.append(f"（{reading}）")
        return
    block = tag in _BLOCK
    if block:
        out.append("\n")
    if tag == "li":
        out.append("• ")
    _text(node.get("content"), out)
    if tag in ("td", "th"):
        out.append(" ")
    if block:
        out.append("\n")


def is_plain(item) -> bool:
    """True for a glossary item that is just text (no structure worth rendering as rich text)."""
    return isinstance(item, str) or (isinstance(item, dict) and item.get("type") == "text")
