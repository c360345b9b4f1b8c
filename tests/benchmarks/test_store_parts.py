"""benchmarks/store_parts.py: reference/README's table of parts is written from the store, the
measurements table and reference/parts.yaml, never by hand."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pandas as pd
from helpers import benchmark_module

REPO = Path(__file__).resolve().parents[2]
store_parts = benchmark_module("store_parts")
RUN = ["experiment", "task", "method", "seed"]


def test_the_readme_s_table_of_parts_is_the_one_written_from_the_store(store_parts: ModuleType) -> None:
    readme = (REPO / "reference" / "README.md").read_text(encoding="utf-8")
    block = readme.split(store_parts.BLOCK[0])[1].split("\n", 1)[1].split(store_parts.BLOCK[1])[0]
    lines = store_parts.table(REPO / "reference" / "store", REPO / "reference" / "parts.yaml", store_parts.TABLE)
    assert block == "\n".join(lines) + "\n", "run: python benchmarks/store_parts.py --readme reference/README.md"


def test_a_part_s_numbers_are_its_records_and_sidecars(store_parts: ModuleType) -> None:
    """Part 11, counted independently from its records: 280 runs of 28 jobs, its wall time the span of
    its sidecars, and the projection the measurements table recorded for it (82.9 min)."""
    store = REPO / "reference" / "store"
    found = store_parts.stored(store, "part11-lambda0-grid-lunar")
    runs = pd.read_parquet(store / "part11-lambda0-grid-lunar.records.parquet", columns=RUN).drop_duplicates()
    assert found["runs"] == len(runs) == 280 and found["jobs"] == 28
    assert 90 < (found["end"] - found["start"]).total_seconds() / 60 < 95
    assert round(store_parts.projected(store_parts.TABLE, found["start"]), 1) == 82.9
    assert store_parts.projected(store_parts.TABLE, found["start"] - 2 * store_parts.NEAR) is None
