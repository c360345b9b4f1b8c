"""The project's measurements table: one row per figure a benchmark measured, written by the
benchmark that measured it (``benchmarks/measurements.csv``; docs quote it, never log runs in prose).

Each row says what was measured and how: the command, the commit it ran at (``+dirty`` for
uncommitted code), the machine, the date (UTC), the figure's name, its value and unit. A
comparison is a ratio measured in one run, beside the figures it divides.
"""

from __future__ import annotations

import csv
import shlex
import sys
from pathlib import Path

from oscbo import provenance

TABLE = Path(__file__).with_name("measurements.csv")
COLUMNS = ["date", "commit", "machine", "command", "figure", "value", "unit"]


def record(figures: list[tuple[str, float, str]], table: Path = TABLE) -> None:
    """Append ``(figure, value, unit)`` rows for this process's command, commit, machine and date."""
    new = not table.exists()
    common = {
        "date": provenance.now(),
        "commit": provenance.git_commit(),
        "machine": provenance.machine(),
        "command": shlex.join(["python", *sys.argv]),
    }
    with table.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS)
        if new:
            writer.writeheader()
        for figure, value, unit in figures:
            writer.writerow({**common, "figure": figure, "value": f"{value:.6g}", "unit": unit})
