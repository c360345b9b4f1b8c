"""The report's third band, the method: the protocol beside the paper's, the baselines beside
independent code, and where the numbers came from (provenance)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import yaml

from oscbo.analysis.summaries import distinct_runs
from oscbo.paper import shown_name, task_name
from oscbo.report.blocks import (
    Section,
    bullets,
    cell,
    details,
    facts,
    heading,
    number,
    pre,
    section,
    table,
    text,
)
from oscbo.report.sections.inputs import ReportInputs


def protocol(inputs: ReportInputs) -> list[Section]:
    """Every setting, and every departure from the paper: the ``protocol`` table the study wrote."""
    columns = ["setting", "value", "paper", "kind", "note"]
    entries = inputs.tables["protocol"].to_dict("records")
    rows = [
        [cell(entry[column], strong=column == "kind" and entry[column] == "departure") for column in columns]
        for entry in entries
    ]
    departures = [entry["setting"] for entry in entries if entry["kind"] == "departure"]
    intro = (
        "The settings of this run beside the paper's. Kind: 'as stated' is the paper's own setting, 'gap filled' "
        "the project's choice where the paper is silent, 'departure' a deliberate difference from what the paper "
        "states; the notes explain each, with its measured effect where it could change a number. "
        + (f"Departures ({len(departures)}): {'; '.join(departures)}." if departures else "No departures.")
    )
    chosen = [row for row, entry in zip(rows, entries) if entry["kind"] != "as stated"]
    blocks = [
        text(intro),
        details(f"Departures and gaps filled ({len(chosen)})", [table(columns, chosen)], id="protocol-choices"),
        details(f"Every setting ({len(rows)})", [table(columns, rows)], id="protocol-all"),
        *crosscheck(inputs.tables.get("crosscheck")),
    ]
    return [section("protocol", "Protocol", blocks)]


#: The cross-check's columns as the report heads them: (table column, heading).
CROSSCHECK_COLUMNS = [
    ("p_sr", "p(SR)"),
    ("p_cr", "p(CR)"),
    ("p_ls", "p(ls)"),
    ("gap_ls", "gap ls"),
    ("gap_sr", "gap SR"),
    ("within_1pct", "within 1 %"),
    ("median_sr", "median SR"),
    ("median_ls", "median ls"),
    ("seconds_per_run", "s/run"),
    ("fit_retries", "fit retries"),
]


def crosscheck(checked: pd.DataFrame | None) -> list[dict[str, Any]]:
    """The baselines run beside independent code (``benchmarks/crosscheck.py --table``), when the
    study has that table; a line saying how to add it when not."""
    if checked is None:
        return [
            text(
                "The baselines were not run beside independent code for this study: "
                "python benchmarks/crosscheck.py --table SUMMARY/crosscheck.parquet adds that check here."
            )
        ]
    first = checked.iloc[0]

    def shown(row: Any, column: str) -> str:
        value = getattr(row, column)
        if pd.isna(value):
            return ""
        return f"{value}/{row.seeds}" if column == "within_1pct" else number(float(value))

    rows = [
        [
            cell(task_name(r.task)),
            cell(shown_name(r.method)),
            cell(r.implementation, strong=r.implementation == "engine"),
        ]
        + [cell(shown(r, column)) for column, _ in CROSSCHECK_COLUMNS]
        for r in checked.itertuples()
    ]
    described = dict(zip(checked["implementation"], checked["description"]))
    return [
        heading("protocol-crosscheck", "The baselines beside independent code"),
        text(
            "GP-UCB-MLL and VanillaBO (ARD, as the ard ablation runs it) beside plain per-seed BoTorch loops that "
            "share no GP, fit or acquisition code with the engine (benchmarks/botorch_loops.py), on the same seeds "
            f"and initial designs: {first.seeds} seeds, {first.budget} BO rounds after {first.n_init} points. "
            "p: two-sided Mann-Whitney p of the final simple regret (SR), cumulative regret (CR) and lengthscale "
            "(ls; ARD: its geometric mean) against the engine's; gap: the mean over rounds of the |log10| "
            "difference of the seed-mean trajectories; within 1 %: the seeds whose final simple regret is within "
            "1 % of the engine's on the same seed; s/run: wall seconds per seed-run (the engine runs the seeds as "
            "one batch, the loops one seed at a time); fit retries: fits BoTorch ended abnormally (each retried "
            f"from a draw of the priors). Made by: {first.command}"
        ),
        details(
            f"The cross-check, implementation by implementation ({len(rows)} rows)",
            [
                bullets(f"{name}: {description}" for name, description in described.items()),
                table(["task", "method", "implementation", *(title for _, title in CROSSCHECK_COLUMNS)], rows),
            ],
            id="crosscheck",
        ),
    ]


#: More commits than this, and the provenance's list of them is folded (the warning above it stays).
FOLDED_COMMITS = 3


def provenance(inputs: ReportInputs) -> list[Section]:
    """Where the numbers came from, as the runs' sidecars recorded it, and the configuration in full;
    a run two experiments share counted once."""
    runs = distinct_runs(inputs.tables["provenance"])
    blocks = []
    commits = runs["git_commit"].value_counts()
    if len(commits) > 1:
        blocks.append(
            text(
                f"The runs come from {len(commits)} commits: compare them before reading one number against another.",
                "warning",
            )
        )
    by_commit = table(["git commit", "runs"], [[cell(c), cell(n)] for c, n in commits.items()])
    blocks.append(by_commit if len(commits) <= FOLDED_COMMITS else details(f"The {len(commits)} commits", [by_commit]))
    if "code_path" in runs:
        unpinned = int((~runs["code_path"].astype(str).str.startswith("pinned")).sum())
        blocks.append(
            text(
                "What reproduces, and how: a run's records are the same bit for bit when it runs again with the same "
                "seeds, settings and code on the pinned numerical code path (below), alone or in a batch, on any "
                "x86-64 CPU the path supports; a GPU, or a machine's own kernels, round differently. Rounding is not "
                "noise that averages out within a run: a different last bit early on can send a BO run down another "
                "trajectory, so two runs of this protocol that differ only in rounding agree in distribution over "
                "the seeds, and seed by seed only often (a seed's two runs share their initial design); the seeds' "
                "spread, which every verdict here resamples, is the measure of that."
            )
        )
        if unpinned:
            blocks.append(
                text(
                    f"{unpinned} of {len(runs)} runs did not run on the pinned numerical code path "
                    "(below): their numbers reproduce bit for bit on the same kind of machine only.",
                    "warning",
                )
            )
    machine = []
    for column, title in (
        ("device", "device"),
        ("threads", "threads"),
        ("code_path", "numerical code path"),
        ("mkl_reproducibility", "MKL mode (runs before the code path was pinned)"),
        ("hardware", "machine"),
    ):
        if column in runs:
            counts = runs[column].astype(str).value_counts()
            machine.append(table([title, "runs"], [[cell(value), cell(n)] for value, n in counts.items()]))
    for versions, n in runs["versions"].value_counts().items():
        machine.append(
            table(["package", f"version ({n} runs)"], [[cell(k), cell(v)] for k, v in json.loads(versions).items()])
        )
    if len(runs):
        machine.append(
            facts(
                [
                    ("first run started", runs["started"].min()),
                    ("last run finished", runs["finished"].max()),
                    ("summary tables", inputs.summary_dir),
                ]
            )
        )
    resolved = yaml.safe_dump(json.loads(json.dumps(inputs.config, default=str)), sort_keys=False, allow_unicode=True)
    blocks += [
        details("Devices, threads, numerical code path, machines and package versions", machine, id="machines"),
        details("The resolved configuration", [pre(resolved)], id="configuration"),
    ]
    return [section("provenance", "Provenance", blocks)]
