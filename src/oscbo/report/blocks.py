"""The report's building blocks: what a section is made of, as plain dicts the template draws.

A section is ``{"id", "title", "blocks"}``; a block is one of ``text``, ``facts``, ``list``,
``table``, ``figure`` and ``pre``. Every value is text: the template escapes it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

Section = dict[str, Any]


def section(id: str, title: str, blocks: list[dict[str, Any]]) -> Section:
    return {"id": id, "title": title, "blocks": blocks}


def text(content: str, kind: str = "") -> dict[str, Any]:
    """A paragraph; ``kind`` is a CSS class of the template (``lead``: the verdict)."""
    return {"kind": "text", "text": content, "class": kind}


def facts(items: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A definition list of ``(name, value)`` pairs."""
    return {"kind": "facts", "items": [(name, str(value)) for name, value in items]}


def bullets(items: Iterable[str]) -> dict[str, Any]:
    return {"kind": "list", "items": [str(item) for item in items]}


def cell(
    content: Any, strong: bool = False, tone: str = "", href: str = "", more: str = "", id: str = ""
) -> dict[str, Any]:
    """A table cell; ``tone`` is a CSS class of the template that colours it (e.g. ``held``); a
    newline in ``content`` breaks the line; ``href``: the cell is a link there; ``more``: text folded
    under ``content``, which a click shows; ``id``: a link's target."""
    return {"text": str(content), "strong": bool(strong), "tone": tone, "href": href, "more": more, "id": id}


def table(
    columns: list[str], rows: list[list[dict[str, Any]] | dict[str, Any]], caption: str = "", kind: str = ""
) -> dict[str, Any]:
    """A table; each row is a list of :func:`cell` dicts, one per column, or one :func:`cell` that heads
    the rows after it across every column (a group); ``kind``: a CSS class."""
    return {"kind": "table", "columns": columns, "rows": rows, "caption": caption, "class": kind}


def pre(content: str) -> dict[str, Any]:
    return {"kind": "pre", "text": content}


def heading(id: str, content: str) -> dict[str, Any]:
    """A sub-section's heading, with an id to link to."""
    return {"kind": "heading", "id": id, "text": content}


def details(summary: str, blocks: list[dict[str, Any]], id: str = "", open: bool = False) -> dict[str, Any]:
    """Blocks folded under a one-line ``summary`` (a click shows them; ``open``: shown at first)."""
    return {"kind": "details", "summary": summary, "blocks": blocks, "id": id, "open": open}


def links(before: str, items: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """A line of links, ``(label, href)``, after the words ``before``."""
    return {"kind": "links", "before": before, "links": list(items)}


def link(text_: str, href: str, before: str = "", after: str = "", kind: str = "") -> dict[str, Any]:
    """A paragraph with one link (``kind``: a CSS class)."""
    return {"kind": "link", "text": text_, "href": href, "before": before, "after": after, "class": kind}


_PROLOGUE = re.compile(r"\A.*?(?=<svg)", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_ID = re.compile(r' id="([^"]+)"')
_REFERENCE = re.compile(r'(url\(#|href="#)([^)"]+)')
_SHEET = re.compile(r'(<style type="text/css">)(.*?)(</style>)', re.S)
_RULE = re.compile(r"(^|\})\s*([^{}]+?)\s*\{")


_BETWEEN_TAGS = re.compile(r">\s+<")
_GROUP = re.compile(r"<g>|<g\s[^>]*>|</g>")


def _bare_groups(svg: str) -> str:
    """``svg`` without its attribute-less groups (``<g>`` ... ``</g>``: matplotlib wraps every artist
    in one named by an id, which the page drops), their contents kept."""
    out, stack, last = [], [], 0
    for match in _GROUP.finditer(svg):
        tag = match.group(0)
        if tag == "</g>":
            bare = stack.pop()
            out.append(svg[last : match.start()] + ("" if bare else tag))
        else:
            stack.append(tag == "<g>")
            out.append(svg[last : match.start()] + ("" if tag == "<g>" else tag))
        last = match.end()
    return "".join(out) + svg[last:]


def inline_svg(svg: str, prefix: str) -> str:
    """A figure's SVG as markup in the page, under the id ``prefix``: no XML prologue or metadata,
    no whitespace between tags and no group without attributes; each rule of its style sheet scoped
    to it; its ids kept only where referenced, each renamed short and unique to the figure (several
    figures share one document, and a marker's id is written on every ``<use>`` of it: thousands a
    page), and SVG 2's ``href`` for ``xlink:href``. Its text stays text the reader can search."""
    prefix = re.sub(r"[^A-Za-z0-9_-]", "_", prefix)  # a CSS selector's id: no dots (lambda0-0.433)
    svg = _METADATA.sub("", _PROLOGUE.sub("", svg, count=1))
    # the figure's own token (the page refuses any id two elements share), then a count
    token = "f" + hashlib.blake2s(prefix.encode(), digest_size=3).hexdigest()
    short: dict[str, str] = {}
    for _, name in _REFERENCE.findall(svg):
        short.setdefault(name, f"{token}-{np.base_repr(len(short), 36).lower()}")
    svg = _ID.sub(lambda m: f' id="{short[m.group(1)]}"' if m.group(1) in short else "", svg)
    svg = _REFERENCE.sub(lambda m: f"{m.group(1)}{short[m.group(2)]}", svg)
    svg = _bare_groups(_BETWEEN_TAGS.sub("><", svg)).replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "", 1)
    svg = svg.replace(" xlink:href=", " href=").replace("<svg ", f'<svg id="{prefix}" role="img" ', 1)
    return _SHEET.sub(lambda m: m.group(1) + _RULE.sub(rf"\1#{prefix} \2{{", m.group(2)) + m.group(3), svg, count=1)


def figure(item: dict[str, Any], links: dict[str, str]) -> dict[str, Any]:
    """A figure of the figures' manifest, its SVG inline, with its caption, what drew it from which
    tables, and links (``links``: text -> relative address) to that code, those tables and its
    numbers."""
    return {
        "kind": "figure",
        "id": item["id"],
        "svg": inline_svg(Path(item["path"]).read_text(encoding="utf-8"), f"svg-{item['id']}"),
        "title": item["title"],
        "caption": item["caption"],
        "links": list(links.items()),
    }


def _decimals(value: float) -> int | None:
    """The decimals that show ``value`` to three significant digits in plain notation (None: it
    needs an exponent, below 1e-3 or from 1e5 on)."""
    size = abs(value)
    if size == 0:
        return 0
    if not 1e-3 <= size < 1e5:
        return None
    return max(0, 2 - math.floor(math.log10(size)))


def number(value: float | None) -> str:
    """One format for every number of the report: three significant digits, plain between 1e-3 and
    1e5 (``2030``, ``0.123``), an exponent outside (``1.23e-05``); an en dash for a missing value."""
    if value is None or not math.isfinite(value):
        return "–"
    decimals = _decimals(value)
    return f"{value:.2e}" if decimals is None else f"{round(value, decimals - 0):.{decimals}f}"


def mean_se(mean: float, se: float) -> str:
    """``"0.123 ± 0.045"``, ``"2030 ± 54"``: the s.e. to the mean's last digit; the mean alone when
    there is no standard error (one seed)."""
    if not math.isfinite(se):
        return number(mean)
    decimals = _decimals(mean) if math.isfinite(mean) else None
    if decimals is None:
        return f"{number(mean)} ± {number(se)}"
    return f"{number(mean)} ± {se:.{decimals}f}"


def short_commit(commit: str) -> str:
    """A run's commit as the report shows it: 12 hex digits, and ``+dirty`` kept (the tree was modified)."""
    return commit[:12] + ("+dirty" if commit.endswith("+dirty") else "")


def span(values: Iterable[Any]) -> str:
    """``"10"`` when all values agree, else ``"8–10"``."""
    values = [int(v) for v in values]
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}–{high}"
