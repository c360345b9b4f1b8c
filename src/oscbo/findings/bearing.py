"""The paired tests that bear on a claim: the ``claim_tests`` table, one row per Wilcoxon test of
the ``tests`` summary table between a claim's subject and the methods it is compared with. They
are the evidence a reader checks a verdict against; no verdict is decided by them (the claims'
tests: :mod:`oscbo.findings.evaluate`)."""

from __future__ import annotations

from typing import Any

from oscbo.analysis import readings as readings_
from oscbo.findings.claims import Claim, Tables

#: The columns of the ``claim_tests`` table.
COLUMNS = [
    "id",
    "reading",
    "experiment",
    "task",
    "metric",
    "subject",
    "other",
    "n",
    "mean_diff",
    "p_holm",
    "significant",
]


def tests(claim_: Claim, tables: Tables, reading: readings_.Reading) -> list[dict[str, Any]]:
    """The paired tests of ``tests`` between each comparison's subject and others, the subject first
    (its difference's sign flipped where the table has it second); a reading's stand-in takes the
    place of the method it replaces."""
    found = []
    table = tables["tests"]
    for experiment, metric, subject, others in claim_.bearing:
        label = next((s for s, replaced in reading.methods.items() if replaced == subject), subject)
        for other in others:
            other_label = next((s for s, replaced in reading.methods.items() if replaced == other), other)
            for flip, (a, b) in ((1, (label, other_label)), (-1, (other_label, label))):
                rows = table[
                    (table["experiment"] == experiment)
                    & (table["metric"] == metric)
                    & (table["method_a"] == a)
                    & (table["method_b"] == b)
                ]
                for test in rows.itertuples():
                    found.append(
                        {
                            "id": claim_.id,
                            "reading": reading.name,
                            "experiment": experiment,
                            "task": test.task,
                            "metric": metric,
                            "subject": subject,
                            "other": other,
                            "n": test.n,
                            "mean_diff": flip * test.mean_diff,
                            "p_holm": test.p_holm,
                            "significant": bool(test.significant),
                        }
                    )
    return found
