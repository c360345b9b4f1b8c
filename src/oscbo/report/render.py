"""Rendering the report: the sections (:mod:`oscbo.report.sections`) into one HTML file.

Everything shown comes from the summary tables (:mod:`oscbo.analysis.tables`), the findings
(:mod:`oscbo.findings`), the protocol table, the figures' manifest (:func:`oscbo.figures.draw`)
and the configuration: nothing is computed here, and the figures are embedded as SVG data, so
the file stands alone.
"""

from __future__ import annotations

import collections
import re
import shutil
from pathlib import Path
from typing import Any

import jinja2

from oscbo import analysis, records
from oscbo.report.blocks import short_commit
from oscbo.report.sections import SECTIONS, ReportInputs, numbers_dir
from oscbo.report.sections.method import FOLDED_COMMITS

TITLE = "OSCBO replication report"
TEMPLATE = "index.html.j2"
#: The summary tables the sections read.
TABLES = [
    "protocol",
    "claims",
    "seed_sets",
    "answer",
    "claim_tests",
    "findings",
    "vocabulary",
    "readings",
    "final",
    "ranks",
    "tests",
    "tasks",
    "dual",
    "not_run",
    "failed",
    "provenance",
]


def _runs_from(commits: list[str]) -> str:
    """The commits the runs come from, for the report's header: named when few, else counted."""
    if not commits:
        return "an unknown commit"
    if len(commits) > FOLDED_COMMITS:
        dirty = sum(commit.endswith("+dirty") for commit in commits)
        why = f"{dirty} of them a tree with uncommitted changes; " if dirty else ""
        return f"{len(commits)} commits ({why}listed under Provenance: compare them before comparing numbers)"
    return f"commit{'s' * (len(commits) > 1)} " + ", ".join(map(short_commit, commits))


def render_report(
    summary_dir: str | Path,
    figures: dict[str, Any],
    config: dict[str, Any],
    out_html: str | Path,
    config_hash: str = "",
) -> Path:
    """Render the report to one HTML file with the figures inline, and their numbers as CSV files
    in a folder beside it (:func:`~oscbo.report.sections.numbers_dir`), which the page links to.

    Args:
        summary_dir: Folder of the summary tables, ``claims`` and ``findings`` included.
        figures: The figures' manifest (:func:`oscbo.figures.draw`; ``{"figures": [], "sections":
            [], "omitted": []}`` for none); their SVG files are read and embedded.
        config: The resolved study configuration (shown in full).
        out_html: Where to write the page; its folder is created if missing. Rendering the same
            inputs again writes the same bytes (the page carries no wall-clock time).
        config_hash: Shown in the header.

    Raises:
        ValueError: Two elements would share an ``id`` (the page's anchors must be unique).
    """
    out_html = Path(out_html)
    tables = analysis.load(summary_dir, TABLES) | analysis.load(summary_dir, analysis.OPTIONAL, optional=True)
    inputs = ReportInputs(Path(summary_dir), tables, figures, config, out_html)
    sections = [section for build in SECTIONS for section in build(inputs)]
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True,  # method labels and config values are data, never markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    commits = sorted(set(inputs.tables["provenance"]["git_commit"]) - {""})
    html = environment.get_template(TEMPLATE).render(
        title=TITLE,
        config_hash=config_hash or "unknown",
        runs_from=_runs_from(commits),
        sections=sections,
    )
    ids = collections.Counter(re.findall(r'\bid="([^"]+)"', html))
    duplicates = sorted(id for id, count in ids.items() if count > 1)
    if duplicates:
        raise ValueError(f"report elements share ids {duplicates} (a section's, a figure's, a heading's)")
    write_numbers(figures, numbers_dir(out_html))
    with records.atomic_path(out_html) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return out_html


def write_numbers(figures: dict[str, Any], folder: Path) -> None:
    """Copy each figure's numbers (CSV) into ``folder``, and remove any CSV there no figure has."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {Path(item["numbers"]).name: Path(item["numbers"]) for item in figures["figures"] if item.get("numbers")}
    for stale in set(p.name for p in folder.glob("*.csv")) - set(wanted):
        (folder / stale).unlink()
    for name, source in sorted(wanted.items()):
        with records.atomic_path(folder / name) as tmp:
            shutil.copyfile(source, tmp)


__all__ = ["TABLES", "render_report"]
