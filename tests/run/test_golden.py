"""The regression guard: a small study's records, bit for bit, against the golden fixture.

The fixture (``tests/golden/records.parquet``) holds every GP method's records of
``tests/golden/regenerate.py``'s study, timing columns aside, on the pinned numerical code path
(:mod:`oscbo.reproducibility`): the same on any x86-64 CPU with AVX2. A refactor must leave them
bitwise equal; a change that moves a number regenerates the fixture on purpose and says so in
its commit.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
from helpers import needs_pinned_path

from oscbo import reproducibility

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _regenerate():
    spec = importlib.util.spec_from_file_location("regenerate", GOLDEN / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_pinned_path  # the golden records hold the pinned code path's numbers
def test_records_equal_the_golden_fixture_bit_for_bit() -> None:
    assert reproducibility.code_path()["pinned"], reproducibility.code_path()["summary"]
    regenerate = _regenerate()
    golden = pd.read_parquet(regenerate.FIXTURE)
    assert set(golden["method"]) == set(regenerate.METHODS) and set(golden["seed"]) == set(regenerate.SEEDS)
    pd.testing.assert_frame_equal(regenerate.study(), golden, check_exact=True)
