"""Regenerate the golden records: ``python tests/golden/regenerate.py``.

Only on purpose: a change that alters a record says so in its commit and regenerates the
fixture here (docs/user-guide.md, "Reproducibility"). ``tests/run/test_golden.py`` checks
that the engine still produces these records bit for bit.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from oscbo import records
from oscbo import run as engine

FIXTURE = Path(__file__).with_name("records.parquet")
#: A small study that runs every line of every GP method's rules: the five-input tabular task,
#: two seeds in one batch, ten rounds (LB-GP-UCB adds candidates from round 6 and eliminates
#: once they have all been played).
TASK = "material5"
METHODS = ["oscbo", "oscbo-l1", "gp-ucb-mll", "ocbo", "a-gp-ucb", "lb-gp-ucb", "scgp", "vanilla-bo"]
SEEDS = [0, 1]
BUDGET = 10
N_INIT = 5
#: Columns that measure the machine, not the algorithm.
UNCOMPARED = records.SECONDS_COLUMNS


def study() -> pd.DataFrame:
    """Every method's records of the golden study, one table, timing columns dropped."""
    engine.limit_threads(1)
    tables = []
    for method in METHODS:
        result = engine.run(TASK, method, SEEDS, budget=BUDGET, n_init=N_INIT, experiment="golden")
        tables += [table.drop(columns=UNCOMPARED) for table in result.tables.values()]
    return pd.concat(tables, ignore_index=True)


if __name__ == "__main__":
    table = study()
    table.to_parquet(FIXTURE, index=False)
    print(f"wrote {FIXTURE} ({len(table)} rows, {FIXTURE.stat().st_size} bytes)")
