"""The report's sections, in page order: the answer first (:mod:`.verdicts`), then the results in
the paper's order (:mod:`.results`, then :mod:`.regret`), then the method a reader checks them against (:mod:`.method`).

Every section renders what the earlier stages wrote (the summary tables, the protocol table, the
``claims`` and ``findings`` tables, the figures' manifest); nothing is computed here beyond
choosing rows and formatting numbers. :mod:`.inputs` holds what every section draws on.
"""

from __future__ import annotations

from collections.abc import Callable

from oscbo.report.blocks import Section
from oscbo.report.sections.inputs import REFERENCE_REPORT, ReportInputs, numbers_dir
from oscbo.report.sections.method import protocol, provenance
from oscbo.report.sections.regret import comparisons, final_regret
from oscbo.report.sections.results import figure_sections, summary
from oscbo.report.sections.verdicts import answer, claims

#: The section builders, in page order.
SECTIONS: list[Callable[[ReportInputs], list[Section]]] = [
    answer,
    claims,
    summary,
    figure_sections,
    final_regret,
    comparisons,
    protocol,
    provenance,
]

__all__ = ["SECTIONS", "REFERENCE_REPORT", "ReportInputs", "numbers_dir"]
