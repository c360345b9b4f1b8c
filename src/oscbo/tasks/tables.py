"""The raw experiment tables behind the tabular tasks (paper E.3), checked and prepared.

Three tables under the project's ``data/raw/`` (provenance in its SOURCES.md, checksums in
SHA256SUMS):

- ``material5`` / ``material5-max``: ``agnp.csv``, 5 inputs, ``spectrum_score`` (times -1 for
  ``material5``: the source's loss; as Table S2 prints it for ``material5-max``); 164 rows.
- ``concrete7``: ``concrete.csv`` without ``age``, 7 mixture inputs, ``compressive_strength``;
  1030 rows, 428 distinct mixtures after averaging.
- ``crossbarrel4``: ``crossed_barrel.csv``, 4 inputs, ``toughness``; 600 rows.

:func:`prepare` reads and validates a CSV, keeps the task's columns (Concrete drops ``age``),
averages repeated designs (plain mean of all their rows) and multiplies the objective by
``sign``. The raw folder is passed in; :data:`RAW_DIR`, the default, is ``data/raw`` of the
working directory (the repository root, where the workflow and the tests run).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

#: The project's raw tables, relative to the working directory (the repository root).
RAW_DIR = Path("data", "raw")
CHECKSUM_FILE = "SHA256SUMS"


@dataclass(frozen=True)
class TableSpec:
    """Which file, columns and default sign make up a tabular task."""

    name: str
    file: str
    inputs: tuple[str, ...]
    objective: str
    sign: int


TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (
        # spectrum_score is a loss (see the module docstring): maximise its negation
        TableSpec("material5", "agnp.csv", ("q_agno3", "q_pva", "q_tsc", "q_seed", "q_tot"), "spectrum_score", sign=-1),
        # the paper's Table S2 as printed: maximise the column itself
        TableSpec(
            "material5-max", "agnp.csv", ("q_agno3", "q_pva", "q_tsc", "q_seed", "q_tot"), "spectrum_score", sign=+1
        ),
        TableSpec(
            "concrete7",
            "concrete.csv",
            (
                "cement",
                "blast_furnace_slag",
                "fly_ash",
                "water",
                "superplasticizer",
                "coarse_aggregate",
                "fine_aggregate",
            ),
            "compressive_strength",
            sign=+1,
        ),
        TableSpec("crossbarrel4", "crossed_barrel.csv", ("n", "theta", "r", "t"), "toughness", sign=+1),
    )
}


class ChecksumError(ValueError):
    """A raw file listed in SHA256SUMS is missing or differs from its recorded digest."""


class TableError(ValueError):
    """A raw or prepared table cannot be used as an oracle (names file, column, problem)."""


_SUM_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")


def sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_checksums(raw_dir: str | Path = RAW_DIR) -> None:
    """Check every file listed in ``raw_dir/SHA256SUMS`` (``sha256sum`` format).

    Raises:
        ChecksumError: naming each listed file that is missing or whose digest differs.
    """
    raw_dir = Path(raw_dir)
    sums = raw_dir / CHECKSUM_FILE
    if not sums.is_file():
        raise ChecksumError(f"checksum list {sums} is missing")
    problems = []
    for number, line in enumerate(sums.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        match = _SUM_LINE.match(line)
        if match is None:
            raise ChecksumError(f"{sums}, line {number}: not a sha256sum line: {line!r}")
        expected, name = match.group(1).lower(), match.group(2)
        path = raw_dir / name
        if not path.is_file():
            problems.append(f"{path}: missing")
        elif (actual := sha256(path)) != expected:
            problems.append(f"{path}: altered (sha256 {actual}, expected {expected})")
    if problems:
        raise ChecksumError("raw data does not match " + str(sums) + ":\n  " + "\n  ".join(problems))


def read_numeric_csv(path: str | Path) -> pd.DataFrame:
    """A CSV whose every cell is a finite number, as float64 columns.

    Cells are parsed with Python's ``float`` so each value is the double the text denotes.

    Raises:
        TableError: naming the file, the column, the data row and the problem.
    """
    path = Path(path)
    if not path.is_file():
        raise TableError(f"{path}: file not found")
    text = pd.read_csv(path, dtype=str, keep_default_na=False)
    columns = {}
    for column in text.columns:
        values = np.empty(len(text))
        for row, cell in enumerate(text[column]):
            where = f"{path}: column {column!r}, data row {row + 1}"
            if not cell.strip():
                raise TableError(f"{where}: missing value (empty cell)")
            try:
                values[row] = float(cell)
            except ValueError:
                raise TableError(f"{where}: non-numeric value {cell!r}") from None
            if not math.isfinite(values[row]):
                raise TableError(f"{where}: non-finite value {cell!r} (NaN or inf)")
        columns[column] = values
    return pd.DataFrame(columns)


def check_inputs(where: str, frame: pd.DataFrame, inputs: list[str]) -> None:
    """Every input column must span a positive width (it is normalised by max - min)."""
    for column in inputs:
        low, high = frame[column].min(), frame[column].max()
        if not low < high:
            raise TableError(f"{where}: column {column!r}: zero width (every value is {low!r}), cannot normalise it")


def table_spec(name: str) -> TableSpec:
    if name not in TABLES:
        raise ValueError(f"unknown tabular task {name!r}; valid: {', '.join(TABLES)}")
    return TABLES[name]


def resolve_sign(spec: TableSpec, sign: int | None) -> int:
    if sign is None:
        return spec.sign
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, got {sign!r}")
    return int(sign)


def prepare(name: str, raw_dir: str | Path = RAW_DIR, sign: int | None = None) -> pd.DataFrame:
    """The oracle table of task ``name``: its inputs, then the signed, averaged objective.

    Reads and validates ``raw_dir/<file>``, drops the columns the task does not use,
    replaces the rows of each repeated design by one row holding their plain mean, and
    multiplies the objective by ``sign`` (default: the task's, see :data:`TABLES`). Rows are
    sorted by the inputs. ``attrs`` records the task, source file, columns, sign and raw row
    count (kept by Parquet).

    Raises:
        TableError: a missing column, an empty, NaN or non-numeric cell, or a zero-width input.
    """
    spec = table_spec(name)
    sign = resolve_sign(spec, sign)
    path = Path(raw_dir) / spec.file
    raw = read_numeric_csv(path)
    inputs = list(spec.inputs)
    missing = [c for c in inputs + [spec.objective] if c not in raw.columns]
    if missing:
        raise TableError(f"{path}: missing column(s) {missing}; found {list(raw.columns)}")
    check_inputs(str(path), raw, inputs)
    table = raw.groupby(inputs, sort=True)[spec.objective].mean().reset_index()
    table[spec.objective] = sign * table[spec.objective]
    table.attrs = {
        "task": name,
        "source": spec.file,
        "inputs": inputs,
        "objective": spec.objective,
        "sign": sign,
        "rows_raw": len(raw),
    }
    return table
