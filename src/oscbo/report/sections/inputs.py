"""What every section of the report draws on: :class:`ReportInputs` (the summary tables, the
figures' manifest, the configuration and where the page is written), and the links between the
claims and the sections that show their evidence (:data:`oscbo.paper.EVIDENCE`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from oscbo.imports import SOURCE_ROOT
from oscbo.paper import EVIDENCE, claim_order
from oscbo.report.outline import SECTIONS as OUTLINE

#: The published reference replication's report, which a smaller study's report links to.
REFERENCE_REPORT = SOURCE_ROOT.parents[1] / "reference" / "report.html"


def evidence(inputs: ReportInputs, claim: str) -> list[tuple[str, str]]:
    """The report's sections that show the evidence of ``claim`` (:data:`oscbo.paper.EVIDENCE`),
    those this report has: ``(title, #id)``."""
    drawn = {item["section"] for item in inputs.figures.get("figures", [])}
    present = {id: title for id, title, _ in inputs.figures.get("sections", []) if id in drawn}
    return [(present[id], f"#{id}") for id in EVIDENCE.get(claim, ()) if id in present]


def shown_in(claim: str) -> list[tuple[str, str]]:
    """The report's sections, by the outline, that show the evidence of ``claim``: ``(id, title)``.
    From the outline alone, so that a claim's entry is the same whatever figures a report has."""
    titles = {id: title for id, title, _ in OUTLINE}
    return [(id, titles[id]) for id in EVIDENCE.get(claim, ())]


def bearing_on(section_id: str) -> list[str]:
    """The claims whose evidence a report section shows (:func:`evidence`, the other way), in the
    paper's order."""
    return sorted((claim for claim, sections in EVIDENCE.items() if section_id in sections), key=claim_order)


def numbers_dir(page: Path) -> Path:
    """Where a report's figures' numbers (CSV) go: a folder beside it, named after it."""
    return page.with_name(f"{page.stem}-numbers")


@dataclass(frozen=True)
class ReportInputs:
    """Everything a section may draw on; ``page`` is where the report is written (its links are
    relative to its folder, so that they hold in a clone)."""

    summary_dir: Path
    tables: dict[str, pd.DataFrame]
    figures: dict[str, Any]  # the figures' manifest (oscbo.figures.draw)
    config: dict[str, Any]
    page: Path = Path("index.html")

    def finding(self, id: str) -> str:
        findings = self.tables["findings"].set_index("id")["text"]
        return findings.get(id, "")

    def href(self, target: str | Path) -> str:
        """``target``'s address relative to the report's folder."""
        return Path(os.path.relpath(Path(target).resolve(), self.page.parent.resolve())).as_posix()
