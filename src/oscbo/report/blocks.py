"""The report's building blocks: what a section is made of, as plain dicts the template draws.

A section is ``{"id", "title", "blocks"}``; a block is one of ``text``, ``facts``, ``list``,
``table``, ``figure`` and ``pre``. Every value is text: the template escapes it.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

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


def cell(content: Any, strong: bool = False, tone: str = "") -> dict[str, Any]:
    """A table cell; ``tone`` is a CSS class of the template that colours it (e.g. ``held``); a
    newline in ``content`` breaks the line."""
    return {"text": str(content), "strong": bool(strong), "tone": tone}


def table(columns: list[str], rows: list[list[dict[str, Any]]], caption: str = "", kind: str = "") -> dict[str, Any]:
    """A table; each row is a list of :func:`cell` dicts, one per column; ``kind``: a CSS class."""
    return {"kind": "table", "columns": columns, "rows": rows, "caption": caption, "class": kind}


def pre(content: str) -> dict[str, Any]:
    return {"kind": "pre", "text": content}


def figure(item: dict[str, Any]) -> dict[str, Any]:
    """A figure of the figures' manifest, its SVG embedded as a data URI, with its caption and
    where it came from."""
    encoded = base64.b64encode(Path(item["path"]).read_bytes()).decode("ascii")
    return {
        "kind": "figure",
        "id": item["id"],
        "src": f"data:image/svg+xml;base64,{encoded}",
        "alt": item["title"],
        "title": item["title"],
        "caption": item["caption"],
        "sources": item["sources"],
        "producer": item["producer"],
    }


def number(value: float | None) -> str:
    """Three significant digits, or an en dash for a missing value."""
    return "–" if value is None or not math.isfinite(value) else f"{value:.3g}"


def mean_se(mean: float, se: float) -> str:
    """``"0.123 ± 0.045"``; the mean alone when there is no standard error (one seed)."""
    return number(mean) if not math.isfinite(se) else f"{number(mean)} ± {se:.2g}"


def short_commit(commit: str) -> str:
    """A run's commit as the report shows it: 12 hex digits, and ``+dirty`` kept (the tree was modified)."""
    return commit[:12] + ("+dirty" if commit.endswith("+dirty") else "")


def span(values: Iterable[Any]) -> str:
    """``"10"`` when all values agree, else ``"8–10"``."""
    values = [int(v) for v in values]
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}–{high}"
