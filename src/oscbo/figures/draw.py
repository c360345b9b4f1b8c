"""Drawing the planned figures from the summary tables, as SVG, with their manifest.

:func:`plan` (:mod:`oscbo.figures.plan`) lists a study's figures in the paper's order before
anything runs, so that the workflow declares every file; :func:`draw` draws them from the
summary tables of :mod:`oscbo.analysis.tables` (nothing is recomputed here) and writes, beside the
SVG files, ``figures.json``: each figure's title, caption, section, the tables it read and the
function that drew it, and the lines saying which figures were left out and why. Each figure's
footer says where its numbers came from: the config hash and the git commits the runs' sidecars
recorded (the ``provenance`` table).

Adding a figure: a drawing function ``(tables, figure, styles) -> (matplotlib figure, title,
caption)`` in a module of this package, its name in :data:`DRAWERS`, and a :class:`Figure` for
it in :func:`plan`.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

import pandas as pd

from oscbo import analysis, records
from oscbo.analysis import readings as readings_
from oscbo.analysis.summaries import distinct_runs
from oscbo.figures import curves, diagnostics, dual, lambda0, ranks, style
from oscbo.figures.plan import Figure, plan
from oscbo.report.blocks import short_commit
from oscbo.report.outline import SECTIONS

#: kind -> (drawing function, the summary tables it reads).
DRAWERS = {
    "regret_curves": (curves.regret_curves, ("curves", "ranks", "not_run")),
    "final_top": (ranks.final_top, ("ranks", "final")),
    "rank_distribution": (ranks.rank_distribution, ("ranks",)),
    "mean_rank": (ranks.mean_rank, ("mean_ranks",)),
    "diagnostics": (diagnostics.diagnostics, ("curves", "ranks")),
    "wallclock": (curves.wallclock, ("curves", "provenance")),
    "ard_lengthscales": (diagnostics.ard_lengthscales, ("lengthscales",)),
    "dual_lambda": (dual.dual_lambda, ("curves",)),
    "versus_lambda0": (dual.versus_lambda0, ("dual", "tasks")),
    "lengthscale_curves": (curves.lengthscale_curves, ("curves", "tasks")),
    "growth_curves": (curves.growth_curves, ("curves",)),
    "lambda0_claims": (lambda0.lambda0_claims, ("claims", "readings")),
    "lambda0_regret": (lambda0.lambda0_regret, ("final", "readings")),
}
#: Tables a drawer reads that the findings write (the figures wait for them only where drawn).
FINDINGS_READ = {"claims"}
TABLES = sorted(
    {table for _, tables in DRAWERS.values() for table in tables} - FINDINGS_READ | {"provenance", "dual", "readings"}
)
MANIFEST = "figures.json"


def path(out_dir: str | Path, figure: Figure) -> Path:
    return Path(out_dir) / f"{figure.id}.svg"


def numbers_path(out_dir: str | Path, figure: Figure) -> Path:
    """The figure's numbers as CSV, beside its SVG."""
    return Path(out_dir) / f"{figure.id}.csv"


def numbers_of(tables: dict[str, pd.DataFrame], figure: Figure, read: tuple[str, ...]) -> pd.DataFrame:
    """What a figure plots: the series its drawer reported (:func:`oscbo.figures.style.plotted`), or
    else the rows of the tables it read for its experiment or experiments (and task)."""
    if style.PLOTTED:
        return pd.concat(style.PLOTTED, ignore_index=True)
    frames = []
    for name in read:
        rows = tables[name]
        if figure.experiment is not None and "experiment" in rows:
            rows = rows[rows["experiment"] == figure.experiment]
        elif "experiments" in figure.options and "experiment" in rows:  # several (Fig. 3 top): those it draws
            rows = rows[rows["experiment"].isin(figure.options["experiments"])]
        if figure.task is not None and "task" in rows:
            rows = rows[rows["task"] == figure.task]
        frames.append(rows.assign(table=name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


#: More commits than this, and a figure's stamp counts them (the report's provenance lists them).
STAMPED_COMMITS = 2


def footer(provenance: pd.DataFrame, config_hash: str) -> str:
    """``config H · N runs, commit C``; the commits named when two, counted when more, so that the
    stamp stays short enough to sit whole in the figure's corner."""
    commits = sorted(set(provenance["git_commit"]) - {""}) if len(provenance) else []
    runs = f"{len(distinct_runs(provenance)):,} runs"
    if len(commits) > STAMPED_COMMITS:
        return f"config {config_hash} · {runs} from {len(commits)} commits (the report's Provenance)"
    shown = ", ".join(map(short_commit, commits)) or "unknown"
    return f"config {config_hash} · {runs}, commit{'s' * (len(commits) > 1)} {shown}" + (
        " (runs from several commits)" if len(commits) > 1 else ""
    )


def draw(
    config: dict[str, Any], summary_dir: str | Path, out_dir: str | Path, config_hash: str, processes: int = 1
) -> dict[str, Any]:
    """Draw every figure of :func:`plan` (``config``) into ``out_dir`` and write its manifest.

    Args:
        processes: figures drawn at once, each in a process of its own (forked before any table
            is read; each figure alone decides its bytes, so they are the same for any number).

    Returns:
        The manifest: ``{"figures": [{id, title, caption, section, path, sources, producer}],
        "omitted": [lines], "sections": [[id, title, paper]]}``, also written as ``figures.json``.
    """
    out_dir = Path(out_dir)
    figures, omitted = plan(config)
    study = (config, summary_dir, config_hash)
    if processes > 1 and len(figures) > 1:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(min(processes, len(figures)), context, initializer=_start, initargs=study) as pool:
            described = list(pool.map(_draw_one, figures, repeat(out_dir)))
    else:
        _start(*study)
        try:
            described = [_draw_one(figure, out_dir) for figure in figures]
        finally:
            _STUDY.clear()  # the tables are not kept past the call
    manifest = {"figures": described, "omitted": omitted, "sections": [list(s) for s in SECTIONS]}
    records.write_json(out_dir / MANIFEST, manifest)
    return manifest


@dataclass
class _Study:
    """What every figure of a study is drawn from: its config, tables, styles and footer."""

    config: dict[str, Any]
    summary_dir: Path
    loaded: dict[str, pd.DataFrame]
    tables: dict[str, pd.DataFrame]
    styles: style.Styles
    note: str


#: The study this process draws (:func:`_start`).
_STUDY: list[_Study] = []


#: The tables of every run and round, which a reading changes by its stand-ins (the others carry a
#: ``reading`` column, :func:`oscbo.analysis.readings.select`).
PER_RUN = ("curves", "final")


def as_read(loaded: dict[str, pd.DataFrame], reading: str = readings_.DEFAULT) -> dict[str, pd.DataFrame]:
    """The summary tables as ``reading`` has them: its rows of a table with a ``reading`` column, and
    the runs' tables with its stand-ins in place of what they replace and every other stand-in left
    out (:func:`oscbo.analysis.readings.apply`): under the defaults a figure draws the paper's
    methods and tasks alone, and a reading's figure its stand-ins under their methods' names."""
    tables = readings_.select(loaded, reading)
    study = readings_.from_table(loaded["readings"])
    chosen = next((r for r in study if r.name == reading), None)
    if chosen is None:
        return tables
    for name in PER_RUN:
        tables[name] = readings_.apply(loaded[name], chosen, study).drop(columns=["label", "task_run"])
    return tables


def _start(config: dict[str, Any], summary_dir: str | Path, config_hash: str) -> None:
    """Read the summary tables and fix the methods' styles, once per drawing process."""
    loaded = analysis.load(summary_dir, TABLES) | analysis.load(summary_dir, sorted(FINDINGS_READ), optional=True)
    tables = as_read(loaded)
    curves_ = loaded["curves"]
    by_experiment = sorted(
        curves_[["experiment", "method"]].drop_duplicates().itertuples(index=False),
        key=lambda row: (row.experiment != "main", row.experiment, row.method),
    )
    stand_ins = style.StandIns.of(tables["readings"])
    lines = dual.labels(tables["dual"])
    # drawn together: an experiment's methods, stand-ins included (a reading's figure draws them under
    # their methods' names), and the dual figures' lines beside the reference method
    together = [set(group["method"]) for _, group in curves_.groupby("experiment")] + [{*lines, dual.REFERENCE}]
    styles = style.Styles([row.method for row in by_experiment] + lines, stand_ins.methods, together)
    _STUDY[:] = [_Study(config, Path(summary_dir), loaded, tables, styles, footer(tables["provenance"], config_hash))]


def drawn(figure: Figure) -> tuple[Any, str, str, dict[str, pd.DataFrame], Figure]:
    """One figure of the study :func:`_start` read, drawn and not saved: the matplotlib figure, its
    title and caption, the tables it was drawn from, and ``figure`` with its experiment's tasks."""
    study = _STUDY[0]
    drawer, _ = DRAWERS[figure.kind]
    experiment = study.config["experiments"].get(figure.experiment, {})
    if "tasks" in experiment and "tasks" not in figure.options:
        figure = Figure(
            figure.id,
            figure.kind,
            figure.section,
            figure.experiment,
            figure.task,
            {**figure.options, "tasks": list(experiment["tasks"])},
        )
    style.PLOTTED.clear()
    reading = figure.options.get("reading")
    if figure.options.get("every_reading"):
        tables = study.loaded
    else:
        tables = as_read(study.loaded, reading) if reading else study.tables
    return *drawer(tables, figure, study.styles), tables, figure


def _draw_one(figure: Figure, out_dir: Path) -> dict[str, Any]:
    """Draw one figure of the study :func:`_start` read: its SVG and numbers; its manifest entry."""
    study = _STUDY[0]
    drawer, read = DRAWERS[figure.kind]
    image, title, caption, tables, figure = drawn(figure)
    reading = figure.options.get("reading")
    style.save(image, path(out_dir, figure), study.note)
    numbers = numbers_of(tables, figure, read)
    if reading and "reading" not in numbers:  # a reading's figure says whose numbers it plots
        numbers = numbers.assign(reading=reading)
    numbers.to_csv(numbers_path(out_dir, figure), index=False, float_format="%.6g")
    return {
        "id": figure.id,
        "title": title,
        "caption": caption,
        "section": figure.section,
        "path": str(path(out_dir, figure)),
        "sources": [str(analysis.table_path(study.summary_dir, t)) for t in read],
        "numbers": str(numbers_path(out_dir, figure)),
        "producer": f"{drawer.__module__}.{drawer.__name__}",
        "reading": reading or "",
        "reading_shown": figure.options.get("reading_shown", reading or ""),
    }


__all__ = ["DRAWERS", "draw", "path"]
