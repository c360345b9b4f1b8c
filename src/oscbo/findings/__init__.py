"""The findings stage: summary tables -> the claims' verdicts and the paragraphs the report opens with.

:func:`write` reads the summary tables of :mod:`oscbo.analysis.tables` and writes two more beside
them, so that the report only renders:

=============  ==============================================================================
table          one row per
=============  ==============================================================================
``claims``       (claim, reading): the verdict, how sure it is (seed resamples), its margins,
                 the constants' flip values, the tasks that decide it, the numbers it rests on,
                 the other methods' verdicts on the same test (:mod:`oscbo.findings.evaluate`;
                 the claims: :mod:`oscbo.findings.catalogue`)
``claim_tests``  (claim, reading, task, comparison): the paired tests that bear on a claim, its
                 subject first
``findings``     paragraph (:mod:`oscbo.findings.paragraphs`): ``verdict``, ``size``, ``readings``,
                 ``dual`` (:mod:`oscbo.findings.dual`), ``answer`` and ``demonstration``
                 (:mod:`oscbo.findings.answer`)
``answer``       claim: in plain words, its verdict and how sure under the default reading and
                 the headline reading (the config's ``headline: true``; :mod:`oscbo.findings.answer`)
``vocabulary``   word of the paper that the claims read one way (``thresholds.VOCABULARY``)
``seed_sets``    (claim, reading, seed set): the claims on the registered seed sets, the confirmatory
                 seeds alone among them (:mod:`oscbo.findings.seeds`)
=============  ==============================================================================
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from oscbo import records
from oscbo.analysis.tables import load, table_path
from oscbo.findings import answer, evaluate, paragraphs, seeds
from oscbo.findings.sampling import RESAMPLES
from oscbo.findings.thresholds import VOCABULARY

#: The summary tables the findings read, and the two they write.
TABLES = sorted({*evaluate.TABLES, *paragraphs.TABLES})
OUTPUTS = ["claims", "claim_tests", "findings", "answer", "vocabulary", "seed_sets"]


def write(summary_dir: str | Path, resamples: int = RESAMPLES) -> dict[str, Path]:
    """Compute the claims and the findings from the summary tables in ``summary_dir`` and write
    them there (:data:`OUTPUTS`), each atomically; each verdict on ``resamples`` seed resamples
    (the protocol's :data:`~oscbo.findings.sampling.RESAMPLES` unless a test asks for fewer)."""
    tables = load(summary_dir, TABLES)
    verdicts, bearing = evaluate.evaluate(tables, resamples)
    sets = seeds.evaluate_sets(tables, resamples)
    paragraphs_ = pd.concat(
        [
            paragraphs.findings(tables, verdicts),
            pd.DataFrame(answer.rows(verdicts, tables), columns=["id", "text"]),
            pd.DataFrame([("seed_sets", seeds.sentence(sets))], columns=["id", "text"]),
        ],
        ignore_index=True,
    )
    written = {}
    outputs = (
        ("claims", verdicts),
        ("claim_tests", bearing),
        ("findings", paragraphs_),
        ("answer", answer.table(verdicts, tables)),
        ("vocabulary", pd.DataFrame(list(VOCABULARY.items()), columns=["word", "reading"])),
        ("seed_sets", sets),
    )
    for name, table in outputs:
        path = table_path(summary_dir, name)
        with records.atomic_path(path) as tmp:
            table.to_parquet(tmp, index=False)
        written[name] = path
    return written


__all__ = ["OUTPUTS", "TABLES", "write"]
