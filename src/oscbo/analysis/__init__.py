"""The analysis stage: finished records -> summary tables -> the claims' verdicts and findings.

* :mod:`oscbo.analysis.tables`: :func:`aggregate` (records -> every summary table) and :func:`load`;
* :mod:`oscbo.analysis.summaries`: steps, curves, finals, tasks, lengthscales, provenance;
* :mod:`oscbo.analysis.readings`: the readings of what the paper leaves open;
* :mod:`oscbo.analysis.ranks`: ranks, mean ranks and trajectory gaps, per reading;
* :mod:`oscbo.analysis.statistics`: paired comparisons over seeds;
* :mod:`oscbo.analysis.dual`: the dual study's tables and paragraph;
* :mod:`oscbo.analysis.claims`: the paper's claims as tests;
* :mod:`oscbo.analysis.findings`: the claims table and the report's paragraphs.
"""

from oscbo.analysis.tables import PUBLISHED, TABLES, aggregate, load, missing, table_path

__all__ = ["PUBLISHED", "TABLES", "aggregate", "load", "missing", "table_path"]
