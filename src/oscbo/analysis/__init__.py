"""The analysis stage: finished records -> summary tables (the findings stage, :mod:`oscbo.findings`, reads them).

* :mod:`oscbo.analysis.tables`: :func:`aggregate` (records -> every summary table) and :func:`load`;
* :mod:`oscbo.analysis.summaries`: steps, curves, finals, tasks, lengthscales, provenance;
* :mod:`oscbo.analysis.readings`: the readings of what the paper leaves open;
* :mod:`oscbo.analysis.ranks`: ranks, mean ranks and trajectory gaps, per reading;
* :mod:`oscbo.analysis.statistics`: paired comparisons over seeds;
* :mod:`oscbo.analysis.dual`: the dual study's tables.
"""

from oscbo.analysis.tables import (
    OPTIONAL,
    PROTOCOL,
    PUBLISHED,
    TABLES,
    add_part,
    aggregate,
    load,
    missing,
    present,
    table_path,
)

__all__ = [
    "OPTIONAL",
    "PROTOCOL",
    "PUBLISHED",
    "TABLES",
    "add_part",
    "aggregate",
    "load",
    "missing",
    "present",
    "table_path",
]
