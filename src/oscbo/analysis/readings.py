"""Readings: where the paper leaves a choice open, the study runs each choice and ranks under each.

The paper does not state OSCBO's initial multiplier lambda_0, and its Table S2 maximises the
Material column that the source and LB-GP-UCB's code minimise as a loss. A replication must show
whether its conclusions survive either choice, so the study runs both, side by side in one
experiment: the default arm (``oscbo``, lambda_0 = 1; task ``material5``, minimised) and a
*stand-in* for it (``oscbo-lambda0=0.433``; task ``material5-max``).

A :class:`Reading` names stand-ins and what they stand in for. Under a reading, in every
(experiment, task) where a stand-in ran, it takes the place of what it replaces (it is ranked
under that name, and the replaced arm leaves the ranking); stand-ins of other readings leave
the ranking altogether. The default reading is the one with no stand-ins: every stand-in is
left out, so adding an arm to a study never moves the default ranks. Ranks, mean ranks and the
tracking table are computed once per reading (their ``reading`` column); the claims are
evaluated under each (:mod:`oscbo.findings.claims`).

Readings come from the study configuration's ``readings`` block (config/README.md)::

    readings:
      lambda0=0.433:
        description: OSCBO and OSCBO-L1 start from lambda_0 = 0.433, the MLL-equivalent value
        methods: {oscbo-lambda0=0.433: oscbo, oscbo-l1-lambda0=0.433: oscbo-l1}
        setting: {lambda0: 0.433}   # the setting it changes, shown as "λ₀ = 0.433"
        headline: true              # the reading the answer shows beside the defaults
      material-max:
        description: Material maximised, as Table S2 prints it
        tasks: {material5-max: material5}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from oscbo.settings import SYMBOLS, Settings, shown

#: The reading with no stand-ins: the study's own defaults.
DEFAULT = "default"
DEFAULT_DESCRIPTION = "the defaults of the protocol (every stand-in left out)"
#: A combination of readings is named by joining theirs.
JOIN = "+"
#: Columns of the ``readings`` summary table: one row per (reading, stand-in), and one row for a
#: reading without stand-ins (the default), with empty ``kind``.
COLUMNS = ["reading", "description", "kind", "stand_in", "replaces", "setting", "value", "headline"]


def in_symbols(words: str) -> str:
    """A configuration's words as a reader sees them: its plain ``lambda_0`` written ``λ₀``."""
    return words.replace("lambda_0", SYMBOLS["lambda0"])


@dataclass(frozen=True)
class Reading:
    """One way of reading what the paper leaves open.

    Attributes:
        name: the reading's name (a column of the claims table).
        description: one line for the report.
        methods: stand-in method label -> the label it stands in for.
        tasks: stand-in task -> the task it stands in for.
        setting: the one setting of :class:`~oscbo.settings.Settings` its stand-ins change, and
            value: its value there (shown as ``λ₀ = 0.433``), where the reading is one setting.
        headline: the reading the answer shows beside the defaults (at most one).
    """

    name: str
    description: str = ""
    methods: Mapping[str, str] = field(default_factory=dict)
    tasks: Mapping[str, str] = field(default_factory=dict)
    setting: str = ""
    value: float | None = None
    headline: bool = False

    def stand_ins(self, kind: str) -> Mapping[str, str]:
        return self.methods if kind == "method" else self.tasks

    @property
    def shown(self) -> str:
        """The reading in a column's few words: ``λ₀ = 0.433``, else its name."""
        return shown(self.setting, self.value) if self.setting else self.name

    @property
    def default_shown(self) -> str:
        """The defaults in the same words: ``default (λ₀ = 1)``, the setting's default read from
        :class:`~oscbo.settings.Settings`."""
        return f"default ({shown(self.setting, getattr(Settings(), self.setting))})" if self.setting else "default"


def from_config(config: Mapping[str, Any]) -> list[Reading]:
    """The default reading, then those of the configuration's ``readings`` block, in its order."""
    readings = [Reading(DEFAULT, DEFAULT_DESCRIPTION)]
    for name, block in (config.get("readings") or {}).items():
        (setting, value), *_ = (block.get("setting") or {"": None}).items()
        readings.append(
            Reading(
                name,
                block.get("description", ""),
                dict(block.get("methods", {})),
                dict(block.get("tasks", {})),
                setting,
                value,
                bool(block.get("headline", False)),
            )
        )
    return readings


def to_table(readings: Iterable[Reading]) -> pd.DataFrame:
    """The ``readings`` summary table (see :data:`COLUMNS`)."""
    rows = []
    for reading in readings:
        pairs = [("method", *pair) for pair in reading.methods.items()]
        pairs += [("task", *pair) for pair in reading.tasks.items()]
        for kind, stand_in, replaces in pairs or [("", "", "")]:
            rows.append(
                {
                    "reading": reading.name,
                    "description": reading.description,
                    "kind": kind,
                    "stand_in": stand_in,
                    "replaces": replaces,
                    "setting": reading.setting,
                    "value": reading.value,
                    "headline": reading.headline,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def words(name: str, descriptions: Mapping[str, str], readings: Iterable[Reading] = ()) -> str:
    """A reading in a few plain words: ``λ₀ = 0.433`` (a reading of one setting), ``Material maximised
    as Table S2 prints it`` (its description up to the parenthesis), a combination joined by "and"."""
    if name == DEFAULT:
        return "the protocol's defaults"
    by_name = {reading.name: reading for reading in readings}
    found = []
    for part in name.split(JOIN):
        if part in by_name and by_name[part].setting:
            found.append(by_name[part].shown)
        else:
            found.append(descriptions.get(part, part).split(" (")[0])
    return " and ".join(found)


def headline(readings: Iterable[Reading]) -> Reading | None:
    """The reading the answer shows beside the defaults (config ``headline: true``), if any."""
    return next((reading for reading in readings if reading.headline), None)


def curve(readings: Iterable[Reading]) -> list[tuple[float, str]]:
    """The readings that vary the headline's one setting (λ₀), as ``(value, reading name)`` by value,
    the default among them at the setting's default value; ``[]`` without a headline of one setting.
    A reading that also stands in a task (a combination) is not on the curve."""
    readings = list(readings)
    found = headline(readings)
    if found is None or not found.setting:
        return []
    points = {float(getattr(Settings(), found.setting)): DEFAULT}
    for reading in readings:
        if reading.setting == found.setting and reading.value is not None and not reading.tasks:
            points.setdefault(float(reading.value), reading.name)
    return sorted(points.items())


def from_table(table: pd.DataFrame) -> list[Reading]:
    """The readings of a ``readings`` summary table, in its order (the inverse of :func:`to_table`)."""
    readings = []
    for name, rows in table.groupby("reading", sort=False):
        methods = {r.stand_in: r.replaces for r in rows.itertuples() if r.kind == "method"}
        tasks = {r.stand_in: r.replaces for r in rows.itertuples() if r.kind == "task"}
        first = rows.iloc[0]
        setting = first.get("setting", "")
        value = first.get("value")
        setting = setting if isinstance(setting, str) else ""
        value = float(value) if setting and pd.notna(value) else None
        readings.append(
            Reading(name, first["description"], methods, tasks, setting, value, bool(first.get("headline", False)))
        )
    return readings


def apply(table: pd.DataFrame, reading: Reading, readings: Iterable[Reading]) -> pd.DataFrame:
    """``table``'s rows as ``reading`` ranks them: stand-ins renamed, what they replace dropped.

    Args:
        table: any table with ``experiment``, ``task`` and ``method`` columns (``final``, ``curves``).
        reading: the reading to apply.
        readings: every reading of the study (the stand-ins of the others are dropped).

    Returns:
        The rows kept, with ``method`` and ``task`` as the reading names them and the columns
        ``label`` and ``task_run``: the method label and the task that actually ran.
    """
    table = table.assign(label=table["method"], task_run=table["task"])
    others = [r for r in readings if r.name != reading.name]
    foreign_methods = {m for r in others for m in r.methods} - set(reading.methods)
    foreign_tasks = {t for r in others for t in r.tasks} - set(reading.tasks)
    table = table[~table["method"].isin(foreign_methods) & ~table["task"].isin(foreign_tasks)]
    for column, kind in (("task", "task"), ("method", "method")):
        for stand_in, replaced in reading.stand_ins(kind).items():
            table = _stand_in(table, column, stand_in, replaced)
    return table.reset_index(drop=True)


def _stand_in(table: pd.DataFrame, column: str, stand_in: str, replaced: str) -> pd.DataFrame:
    """Where ``stand_in`` ran, drop ``replaced`` and rename ``stand_in`` to it.

    A method stands in per (experiment, task) it ran on; a task per experiment it ran in.
    """
    scope = ["experiment", "task"] if column == "method" else ["experiment"]
    ran = table.loc[table[column] == stand_in, scope].drop_duplicates()
    if ran.empty:
        return table
    replaced_rows = (table[column] == replaced).to_numpy(bool, copy=True)
    # only the replaced method's (task's) rows are looked up: a few of a table of every round
    where = table.loc[replaced_rows, scope].merge(ran.assign(_ran=True), on=scope, how="left")["_ran"]
    replaced_rows[replaced_rows] = where.fillna(False).to_numpy(bool)
    table = table[~replaced_rows]
    return table.assign(**{column: table[column].where(table[column] != stand_in, replaced)})


def select(tables: Mapping[str, pd.DataFrame], reading: str = DEFAULT) -> dict[str, pd.DataFrame]:
    """The summary tables as ``reading`` has them: of a table with a ``reading`` column (``ranks``,
    ``mean_ranks``, ``tracking``), that reading's rows; every other table as it is."""
    return {
        name: table[table["reading"] == reading] if "reading" in table.columns and name != "readings" else table
        for name, table in tables.items()
    }
