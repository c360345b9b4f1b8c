"""The answer's λ₀ sentence: over which values of the multiplier the paper leaves open each claim
holds, and whether one value makes them hold together, read from a verdicts table built by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from oscbo.analysis import readings
from oscbo.findings import answer

GRID = (0.1, 0.433, 3.5)


def curve_tables(grid: tuple[float, ...] = GRID) -> dict[str, pd.DataFrame]:
    found = [readings.Reading(readings.DEFAULT, readings.DEFAULT_DESCRIPTION)]
    for value in grid:
        stand_ins = {f"oscbo-lambda0={value:g}": "oscbo"}
        found.append(readings.Reading(f"lambda0={value:g}", "λ₀", stand_ins, {}, "lambda0", value, value == 0.433))
    # a combination with a task's stand-in is off the curve
    found.append(readings.Reading("lambda0=0.433+max", "both", {"oscbo-lambda0=0.433": "oscbo"}, {"m-max": "m"}))
    return {"readings": readings.to_table(found)}


def verdicts(held: dict[str, dict[str, str]]) -> pd.DataFrame:
    """claim -> reading -> verdict; a reading not named is not applicable."""
    names = [readings.DEFAULT, *(f"lambda0={value:g}" for value in GRID), "lambda0=0.433+max"]
    rows = [
        {"id": claim, "reading": name, "verdict": by.get(name, "not applicable"), "plain": f"the {claim} claim"}
        for claim, by in held.items()
        for name in names
    ]
    return pd.DataFrame(rows)


def test_the_curve_is_the_headline_setting_s_readings_with_the_default_at_its_value() -> None:
    points = readings.curve(readings.from_table(curve_tables()["readings"]))
    assert points == [(0.1, "lambda0=0.1"), (0.433, "lambda0=0.433"), (1.0, "default"), (3.5, "lambda0=3.5")]


def test_the_lambda0_sentence_says_where_each_claim_holds_and_changes_with_a_verdict() -> None:
    """Two main claims and one the λ₀ runs do not bear on (only its default applies). 'strong' holds
    at 0.433 and 1, 'tracks' at 0.1 and 0.433: both hold together at 0.433. Then 'tracks' is not held
    at 0.433: the sentence changes, and no value makes both hold."""
    held, no = "held", "not held"
    table = verdicts(
        {
            "strong": {"default": held, "lambda0=0.1": no, "lambda0=0.433": held, "lambda0=3.5": "undecided"},
            "tracks": {"default": no, "lambda0=0.1": held, "lambda0=0.433": held, "lambda0=3.5": no},
            "theory": {"default": held},
        }
    )
    sentence = answer.curve(table, curve_tables())
    assert sentence == (
        "Over λ₀ from 0.1 to 3.5 (4 values; the paper states none), of the 2 claims λ₀ bears on, 0 hold at "
        "every value, 0 at none and 2 at some: the strong claim at λ₀ = 0.433 and 1; the tracks claim at "
        "λ₀ = 0.1 and 0.433; one value makes them all hold: λ₀ = 0.433."
    )
    moved = table.copy()
    moved.loc[(moved["id"] == "tracks") & (moved["reading"] == "lambda0=0.433"), "verdict"] = no
    changed = answer.curve(moved, curve_tables())
    assert changed != sentence
    assert changed.endswith(
        "no single value makes them all hold (the most together: 1 of 2, at λ₀ = 0.1, 0.433 and 1)."
    )
    assert "the tracks claim at λ₀ = 0.1;" in changed


@pytest.mark.parametrize("grid", [(), (0.433,)])
def test_two_points_are_not_a_curve(grid: tuple[float, ...]) -> None:
    """The default and one reading (the published reference before the λ₀ study): no sentence."""
    assert answer.curve(verdicts({"strong": {"default": "held"}}), curve_tables(grid)) == ""
