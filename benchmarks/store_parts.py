"""The reference's table of parts, written from its record store and the measurements table.

    python benchmarks/store_parts.py [--store reference/store] [--notes reference/parts.yaml]
        [--readme reference/README.md]

One row per part of ``--notes`` (the order the parts ran in): what it ran and how (the notes, in
words), its BO runs and jobs and its size (the store's records and manifests), the projection of
its wall time (the measurements table's ``projected wall on 2 cores`` of the run of
``project_full_study.py`` that measured the part, ``--part-since`` within minutes of its first job)
and its wall time (its sidecars: the first run's start to the last run's end), and what ran beside
it (the notes). A part the store does not hold yet is listed as registered, to run. With
``--readme``, the table replaces the block between :data:`BLOCK`'s lines there (a test keeps it
equal); without, it prints it.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
#: The README's block of the table lies between these lines.
BLOCK = ("<!-- parts:", "<!-- /parts -->")
#: A measurement is a part's where its ``--part-since`` lies this close to the part's first start.
NEAR = timedelta(minutes=10)
PROJECTED = "config/reference.yaml projected wall on 2 cores"
TABLE = Path(__file__).with_name("measurements.csv")


def stored(store: Path, name: str) -> dict:
    """What the store holds of part ``name``: its runs, jobs, size (MB) and first start and last end (UTC)."""
    files = pd.read_parquet(store / f"{name}.files.parquet", columns=["path", "kind", "text"])
    sidecars = files[files["path"].str.fullmatch(r".*/seed\d+\.json")]
    times = [json.loads(text) for text in sidecars["text"]]
    size = sum((store / f"{name}.{kind}.parquet").stat().st_size for kind in ("records", "files"))
    return {
        "runs": len(sidecars),
        "jobs": int((files["kind"] == "manifest").sum()),
        "size": size / 1e6,
        "start": min(datetime.fromisoformat(meta["started"]) for meta in times),
        "end": max(datetime.fromisoformat(meta["finished"]) for meta in times),
    }


def projected(table: Path, start: datetime) -> float | None:
    """The projection (minutes) of the part that started at ``start``, from the measurements table."""
    with table.open(newline="") as handle:
        for row in csv.DictReader(handle):
            since = re.search(r"--part-since (\S+)", row["command"])
            if row["figure"] == PROJECTED and since and abs(datetime.fromisoformat(since[1]) - start) < NEAR:
                return float(row["value"])
    return None


def minutes(span: timedelta) -> str:
    return f"{span.total_seconds() / 60:.1f} min"


def table(store: Path, notes: Path, measurements: Path) -> list[str]:
    """The table's lines (Markdown)."""
    lines = [
        "| part | what, and how it ran | BO runs (jobs) | projected | wall time (its runs' sidecars) | ran beside it |",
        "|---|---|---|---|---|---|",
    ]
    for number, part in enumerate(yaml.safe_load(notes.read_text(encoding="utf-8")), start=1):
        name, what, beside = part.get("part"), part["what"], part.get("beside", "")
        if not name or not (store / f"{name}.records.parquet").exists():
            lines.append(f"| {number} | {what}; registered, to run | | | | |")
            continue
        found = stored(store, name)
        projection = projected(measurements, found["start"])
        wall = found["end"] - found["start"]
        shown = f"{projection:.1f} min" if projection else "–"
        ratio = f", {wall.total_seconds() / 60 / projection:.2f}x the projection" if projection else ""
        when = f"{found['start']:%Y-%m-%d %H:%M} to {found['end']:%H:%M} UTC"
        lines.append(
            f"| {number} | {what}; store part `{name}` ({found['size']:.1f} MB) | {found['runs']:,} ({found['jobs']}) "
            f"| {shown} | {minutes(wall)} ({when}{ratio}) | {beside} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=REPO / "reference" / "store")
    parser.add_argument("--notes", type=Path, default=REPO / "reference" / "parts.yaml")
    parser.add_argument("--measurements", type=Path, default=TABLE)
    parser.add_argument("--readme", type=Path, help="write the table into this file's block")
    args = parser.parse_args()
    lines = table(args.store, args.notes, args.measurements)
    if not args.readme:
        print("\n".join(lines))
        return
    text = args.readme.read_text(encoding="utf-8")
    start = text.index(BLOCK[0])
    start = text.index("\n", start) + 1
    end = text.index(BLOCK[1])
    args.readme.write_text(text[:start] + "\n".join(lines) + "\n" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
