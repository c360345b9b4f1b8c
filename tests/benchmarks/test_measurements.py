"""The measurements table names no machine's path: a command's absolute paths are written relative
to the repository, or by their last two parts."""

from __future__ import annotations

import csv
import shlex
from pathlib import Path
from types import ModuleType

from helpers import benchmark_module

REPO = Path(__file__).resolve().parents[2]
measurements = benchmark_module("measurements")


def test_a_command_s_paths_are_portable(measurements: ModuleType) -> None:
    portable = measurements.portable
    assert portable(str(REPO / "config" / "reference.yaml")) == "config/reference.yaml"
    assert portable("/somewhere/else/results/reference") == "…/results/reference"
    assert portable("config/quick.yaml") == "config/quick.yaml" and portable("--record") == "--record"


def test_the_table_holds_no_absolute_path(measurements: ModuleType) -> None:
    with measurements.TABLE.open(newline="") as handle:
        for row in csv.DictReader(handle):
            absolute = [part for part in shlex.split(row["command"]) if part.startswith("/")]
            assert not absolute, (row["date"], row["figure"], absolute)
