"""The project's measurements table: one row per figure a benchmark measured, written by the
benchmark that measured it (``benchmarks/measurements.csv``; docs quote it, never log runs in prose).

Each row says what was measured and how: the command, the commit it ran at (``+dirty`` for
uncommitted code), the machine, the date (UTC), the figure's name, its value and unit. A
comparison is a ratio measured in one run, beside the figures it divides.

The README quotes the latest row of each figure of :data:`QUOTED`, and docs/performance.md of
every figure, in blocks that ``python benchmarks/measurements.py --pages`` writes and
``tests/test_readme.py`` keeps equal to the table.
"""

from __future__ import annotations

import csv
import shlex
import subprocess
import sys
from pathlib import Path

from oscbo import provenance

TABLE = Path(__file__).with_name("measurements.csv")
COLUMNS = ["date", "commit", "machine", "command", "figure", "value", "unit"]
README = Path(__file__).resolve().parents[1] / "README.md"
#: The figures the README quotes (their latest rows), in the order it shows them.
QUOTED = [
    "README's study command on a fresh clone, install included, wall",
    "lunar12 evaluation (50 episodes), late round: the heuristic, 4 points near it, 1 worker: plain loop / lunar12",
    "outside the rounds / bare import torch",
    "config/reference.yaml store as saved (reference/store)",
]
#: The README's block of quoted rows lies between these lines.
BLOCK = ("<!-- measurements:", "<!-- /measurements -->")


def short_commit(revision: str, root: Path = README.parent) -> str:
    """``revision``'s short hash, as a figure comparing commits names it (``git rev-parse --short``)."""
    found = subprocess.run(
        ["git", "rev-parse", "--short", revision], cwd=root, check=True, capture_output=True, text=True
    )
    return found.stdout.strip()


def portable(argument: str, root: Path = README.parent) -> str:
    """A command's argument as any machine may read it: an absolute path relative to the repository
    (``root``) where it lies in it, else its last two parts under ``…/``; never a machine's path."""
    path = Path(argument)
    if not path.is_absolute():
        return argument
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return "…/" + "/".join(path.parts[-2:])


def record(figures: list[tuple[str, float, str]], table: Path = TABLE, commit: str | None = None) -> None:
    """Append ``(figure, value, unit)`` rows for this process's command (its paths :func:`portable`),
    commit, machine and date. ``commit``: the checkout's commit where git cannot tell it (a copy of a
    clean checkout, without its ``.git``), else git's."""
    new = not table.exists()
    common = {
        "date": provenance.now(),
        "commit": commit or provenance.git_commit(),
        "machine": provenance.machine(),
        "command": shlex.join(["python", *map(portable, sys.argv)]),
    }
    with table.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS)
        if new:
            writer.writeheader()
        for figure, value, unit in figures:
            writer.writerow({**common, "figure": figure, "value": f"{value:.6g}", "unit": unit})


def report(figures: list[tuple[str, float, str]], keep: bool = True) -> None:
    """Print ``(figure, value, unit)`` rows, and append them to the table unless ``keep`` is false
    (a benchmark's ``--no-record``)."""
    for figure, value, unit in figures:
        print(f"{figure}: {value:.4g} {unit}")
    if keep:
        record(figures)


def latest(figure: str, table: Path = TABLE) -> dict[str, str]:
    """The latest row (by date) of ``figure``; KeyError naming it if the table has none."""
    with table.open(newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["figure"] == figure]
    if not rows:
        raise KeyError(f"no row of {figure!r} in {table}: run the benchmark that measures it")
    return max(rows, key=lambda row: row["date"])


def every_figure(table: Path = TABLE) -> list[str]:
    """Every figure the table holds, in the order first measured."""
    with table.open(newline="") as handle:
        return list(dict.fromkeys(row["figure"] for row in csv.DictReader(handle)))


def quoted_rows(figures: list[str], table: Path = TABLE) -> list[str]:
    """A Markdown table of ``figures``' latest rows, each with when, at which commit and on which
    machine it was measured, and the command that measured it."""
    lines = ["| figure | value | measured | by |", "|---|---|---|---|"]
    for figure in figures:
        row = latest(figure, table)
        machine = ",".join(row["machine"].split(",")[:2]).replace("(R)", "")
        when = f"{row['date'][:10]}, {row['commit'][:7]}, {machine}"
        lines.append(f"| {figure} | {float(row['value']):.3g} {row['unit']} | {when} | `{row['command']}` |")
    return lines


#: The pages that quote the table, each with the figures it quotes: the README a few
#: (:data:`QUOTED`), docs/performance.md the latest row of every figure.
PAGES = {README: lambda table: QUOTED, README.parent / "docs" / "performance.md": every_figure}


def block(page: Path) -> list[str]:
    """The lines of ``page`` between its :data:`BLOCK` markers."""
    text = page.read_text()
    start = text.index("\n", text.index(BLOCK[0])) + 1
    return text[start : text.index(BLOCK[1])].strip().splitlines()


def write_pages(table: Path = TABLE) -> None:
    """Write each page's block (:data:`PAGES`) from the table's latest rows."""
    for page, figures in PAGES.items():
        text = page.read_text()
        start = text.index("\n", text.index(BLOCK[0])) + 1
        rows = quoted_rows(figures(table), table)
        page.write_text(text[:start] + "\n".join(rows) + "\n" + text[text.index(BLOCK[1]) :])


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="the measurements table's tools")
    parser.add_argument(
        "--pages", action="store_true", help="write the blocks of the pages that quote the table (README, performance)"
    )
    if parser.parse_args().pages:
        write_pages()
