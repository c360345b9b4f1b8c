"""The report's protocol: every setting of the study, and every departure from the paper.

Each row is ``{"setting", "value", "paper", "kind", "note"}``: ``value`` is what this study ran
(read from the resolved configuration), ``paper`` what the paper states (or "silent"), ``kind``
one of :data:`KINDS` -- the paper's own setting, a gap the paper leaves that the project filled,
or a departure from what the paper states -- and ``note`` why, with the measured effect where a
departure could change a number. The rows are facts, kept in :data:`PROTOCOL_FILE` beside this
module (the study's own, then each method's and task's, which appear for the methods and tasks
the study runs); this module fills them from the study's settings and adds one row per
experiment. Docstrings elsewhere point here.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from oscbo import records
from oscbo.paper import MAIN, N_INIT, NOT_IN_PAPER, ROUNDS, paper_seeds
from oscbo.settings import Settings
from oscbo.study.config import experiment_seeds, method_settings, method_specs

#: The protocol's rows (package data beside this module): the study's, each method's and each task's.
PROTOCOL_FILE = "protocol.yaml"
#: Columns of the ``protocol`` summary table.
COLUMNS = ["setting", "value", "paper", "kind", "note"]

#: A row's kind: the paper's own setting, a gap the paper leaves that the project filled, or a
#: departure from what the paper states.
AS_STATED, GAP, DEPARTURE = "as stated", "gap filled", "departure"
KINDS = (AS_STATED, GAP, DEPARTURE)


def write_table(rows: list[dict[str, str]], path: str | Path) -> None:
    """The ``protocol`` summary table (``rows`` of :func:`rows`), written atomically: a study's
    protocol as it ran, published with its tables, so that the report only renders it."""
    with records.atomic_path(path) as tmp:
        pd.DataFrame(rows, columns=COLUMNS).to_parquet(tmp, index=False)


def _row(setting: str, value: Any, paper: str, kind: str, note: str = "") -> dict[str, str]:
    if kind not in KINDS:
        raise ValueError(f"protocol row {setting!r}: kind must be one of {KINDS}, got {kind!r}")
    return {"setting": setting, "value": str(value), "paper": paper, "kind": kind, "note": note}


def _reference_settings(config: dict[str, Any]) -> Settings:
    """The experiment-wide settings of the first experiment (``main`` when present)."""
    experiments = config["experiments"]
    name = MAIN if MAIN in experiments else next(iter(experiments))
    return Settings.from_dict(experiments[name].get("settings"))


def _evaluation_noise(config: dict[str, Any]) -> str:
    """The protocol's value for evaluation noise: the tasks any experiment observes with noise."""
    noisy = [
        f"{task} {std:g} in '{name}'"
        for name, experiment in config["experiments"].items()
        for task, std in experiment.get("noise_std", {}).items()
        if std > 0
    ]
    return "noise-free, y = f" + (f", but for noise_std {', '.join(noisy)}" if noisy else ", on every task")


def _text(template: str | dict[Any, str], settings: Settings, fields: dict[str, str]) -> str:
    """A row's text: a format string of ``{s.NAME}`` and ``fields``, or a mapping ``{"by": SETTING,
    value: text, ...}`` that picks the text of the study's value of SETTING."""
    if isinstance(template, dict):
        by = template["by"]
        value = getattr(settings, by)
        if value not in template:
            raise ValueError(f"protocol value for {by} = {value!r}: none in {PROTOCOL_FILE} ({list(template)[1:]})")
        template = template[value]
    return template.format(s=settings, **fields)


def _file_row(row: dict[str, Any], settings: Settings, fields: dict[str, str]) -> dict[str, str]:
    return _row(
        row["setting"],
        _text(row["value"], settings, fields),
        row["paper"],
        row["kind"],
        _text(row.get("note", ""), settings, fields),
    )


@cache
def entries() -> dict[str, list[dict[str, Any]]]:
    """The rows of :data:`PROTOCOL_FILE` (package data), by section: ``study``, ``methods``, ``tasks``."""
    return yaml.safe_load(resources.files("oscbo.study").joinpath(PROTOCOL_FILE).read_text(encoding="utf-8"))


def registered_rows(config: dict[str, Any], settings: Settings) -> list[dict[str, str]]:
    """The protocol rows of the methods and tasks the study runs (:data:`PROTOCOL_FILE`'s
    ``methods`` and ``tasks``, each row once, in the file's order), filled from ``settings``."""
    used = {spec.name for experiment in config["experiments"].values() for spec in method_specs(experiment)}
    used |= {task for experiment in config["experiments"].values() for task in experiment["tasks"]}
    return [
        _file_row(row, settings, {})
        for section in ("methods", "tasks")
        for row in entries()[section]
        if used & set(row["for"])
    ]


def departures(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows that depart from what the paper states."""
    return [row for row in rows if row["kind"] == DEPARTURE]


def rows(config: dict[str, Any]) -> list[dict[str, str]]:
    """Protocol rows for a validated study configuration."""
    s = _reference_settings(config)
    fields = {"evaluation_noise": _evaluation_noise(config)}
    table = [_file_row(row, s, fields) for row in entries()["study"]]
    table += registered_rows(config, s)
    for name, experiment in config["experiments"].items():
        variants = []
        for spec in method_specs(experiment):
            own = method_settings(experiment, spec).to_dict()
            changed = {k: v for k, v in own.items() if v != s.to_dict()[k]}
            if changed:
                variants.append(f"{spec.label}: {changed}")
        seeds = experiment_seeds(experiment)
        paper = (paper_seeds(name), ROUNDS, N_INIT)
        ran = (len(seeds), experiment["budget"], experiment["n_init"])
        table.append(
            _row(
                f"Experiment '{name}'",
                f"{len(experiment['tasks'])} tasks x {len(experiment['methods'])} methods x {len(seeds)} seeds; "
                f"T = {experiment['budget']}, n_init = {experiment['n_init']}"
                + (f"; settings differing from the reference: {'; '.join(variants)}" if variants else ""),
                "not in the paper" if name in NOT_IN_PAPER else "{} seeds, T = {}, n_init = {}".format(*paper),
                GAP if name in NOT_IN_PAPER else AS_STATED if ran == paper else DEPARTURE,
                "A smaller study than the paper's: its verdicts say little either way."
                if name not in NOT_IN_PAPER and ran != paper
                else "",
            )
        )
    return table
