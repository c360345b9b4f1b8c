"""The claims on the registered seed sets: each claim that an experiment's runs on unseen seeds can
decide, judged on those seeds alone (the confirmatory test), beside the seeds the tests were written
on and the two pooled.

``registration.yaml`` declares the sets (:func:`oscbo.findings.registration.seed_sets`: e.g.
exploratory 0-19, confirmatory 20-39, pooled 0-39) and the experiments they apply to (``main``,
``known-truth``). An experiment's runs on other seeds are an experiment of their own
(:data:`oscbo.paper.REPLICATES`: ``main-seeds20-39`` judges ``main``'s claims again), so that adding
them moves none of the study's own verdicts. A set's view of the study is the experiment's rows and
its replicate's, renamed to it, on the set's seeds; every claim that reads only those experiments is
evaluated on it by the registered tests (:func:`oscbo.findings.evaluate.evaluate`), under the default
reading and the headline one. A set none of whose seeds ran is left out, and so is one whose seeds
that ran are an earlier set's; while a single set ran, the table is empty (its verdicts are the
study's own). A claim that reads the pooled ``curves`` (no per-seed values) is not evaluated on a set.
"""

from __future__ import annotations

import pandas as pd

from oscbo.analysis import readings as readings_
from oscbo.findings import registration
from oscbo.findings.catalogue import CLAIMS
from oscbo.findings.claims import short
from oscbo.findings.evaluate import Tables, evaluate
from oscbo.findings.sampling import RESAMPLES
from oscbo.paper import REPLICATES, claim_order
from oscbo.verdicts import HELD, NOT_HELD

#: The seed sets' table: one row per (claim, reading, set).
COLUMNS = ["id", "plain", "reading", "seeds", "first", "last", "n_seeds", "verdict", "share", "direction", "numbers"]
#: The per-seed tables a set cuts to its seeds.
PER_SEED = ("final", "trajectories")


def view(tables: Tables, experiments: list[str], first: int, last: int) -> Tables:
    """The study as a seed set sees it: ``experiments``' rows (their replicates' renamed to them) on
    seeds ``first``-``last``, every other experiment's rows left out; ``curves`` empty (they pool
    the seeds)."""
    renamed = {replicate: own for replicate, own in REPLICATES.items() if own in experiments}
    cut = dict(tables)
    for name in PER_SEED:
        rows = tables[name]
        rows = rows[rows["experiment"].isin([*experiments, *renamed])]
        rows = rows.assign(experiment=rows["experiment"].replace(renamed))
        cut[name] = rows[rows["seed"].between(first, last)].reset_index(drop=True)
    cut["curves"] = tables["curves"].iloc[0:0]
    return cut


def claims_on(experiments: list[str]) -> list[str]:
    """The claims that read only ``experiments`` (those a seed set can decide)."""
    return [claim.id for claim in CLAIMS if set(claim.experiments) <= set(experiments)]


def evaluate_sets(tables: Tables, resamples: int = RESAMPLES) -> pd.DataFrame:
    """Each claim of the registered experiments on each registered seed set that ran (see the module)."""
    declared = registration.seed_sets()
    if not declared:
        return pd.DataFrame(columns=COLUMNS)
    experiments = list(declared["experiments"])
    final = tables["final"]
    ran = set(final.loc[final["experiment"].isin([*experiments, *REPLICATES]), "seed"])
    # the sets to judge on: those some of whose seeds ran, each with other seeds than a set before it
    sets, seen = [], set()
    for name, (first, last) in declared["sets"].items():
        present = frozenset(ran & set(range(first, last + 1)))
        if present and present not in seen:
            sets.append((name, first, last))
            seen.add(present)
    if len(sets) < 2:
        return pd.DataFrame(columns=COLUMNS)  # one set of seeds ran: its verdicts are the study's own
    study = readings_.from_table(tables["readings"])
    shown = [r for r in study if r.name == readings_.DEFAULT or r.headline]
    kept = tables["readings"][tables["readings"]["reading"].isin([r.name for r in shown])]
    # the other readings' stand-ins and tasks left out, as the study's own verdicts leave them out
    # (readings_.apply): they are not methods or tasks of the experiment
    hidden = [r for r in study if r not in shown]
    methods = {m for r in hidden for m in r.methods} - {m for r in shown for m in r.methods}
    tasks = {t for r in hidden for t in r.tasks} - {t for r in shown for t in r.tasks}
    for name in (*PER_SEED, "not_run"):  # what did not run of them is not the experiment's either
        rows = tables[name]
        tables = {**tables, name: rows[~rows["method"].isin(methods) & ~rows["task"].isin(tasks)]}
    rows = []
    for name, first, last in sets:
        cut = view({**tables, "readings": kept}, experiments, first, last)
        seeds = cut["final"].groupby(["experiment", "task", "method"])["seed"].nunique()
        verdicts, _ = evaluate(cut, resamples, only=claims_on(experiments))
        verdicts = verdicts[verdicts["reading"].isin([r.name for r in shown])]
        rows.append(
            verdicts.assign(seeds=name, first=first, last=last, n_seeds=int(seeds.max()) if len(seeds) else 0).reindex(
                columns=COLUMNS
            )
        )
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=COLUMNS)


def sentence(sets: pd.DataFrame) -> str:
    """Of the verdicts decided on the exploratory seeds, how many come out the same on the
    confirmatory ones, under the defaults ("" until the confirmatory set has run)."""
    declared = registration.seed_sets()
    if sets.empty or not declared:
        return ""
    confirmatory = declared["confirmatory"]
    others = [name for name in declared["sets"] if name != confirmatory and name != "pooled"]
    default = sets[sets["reading"] == readings_.DEFAULT].set_index(["seeds", "id"])["verdict"]
    if confirmatory not in default.index.get_level_values(0) or not others:
        return ""
    before, after = default.loc[others[0]], default.loc[confirmatory]
    decided = [claim for claim, verdict in before.items() if verdict in (HELD, NOT_HELD)]
    same = [claim for claim in decided if after.get(claim) == before[claim]]
    flipped = [claim for claim in decided if after.get(claim) in (HELD, NOT_HELD) and after.get(claim) != before[claim]]
    (first, last), (first_c, last_c) = declared["sets"][others[0]], declared["sets"][confirmatory]
    return (
        f"Of the {len(decided)} verdicts decided on seeds {first}-{last} (the seeds the tests were written on), "
        f"{len(same)} come out the same on seeds {first_c}-{last_c}, run after the tests were registered; "
        f"{len(flipped)} come out the other way"
        + (f" ({', '.join(flipped)})" if flipped else "")
        + f" and {len(decided) - len(same) - len(flipped)} undecided or not evaluated there."
    )


def markdown(sets: pd.DataFrame) -> str:
    """Each claim's default verdict on each seed set, as a Markdown table in the paper's order
    (reference/README.md's block, written from ``summary/seed_sets.parquet``; a test keeps it equal)."""
    default = sets[sets["reading"] == readings_.DEFAULT]
    if default.empty:
        return ""
    order = list(dict.fromkeys(default["seeds"]))
    spans = {row.seeds: f"seeds {row.first}-{row.last}" for row in default.itertuples()}
    lines = ["| the paper's claim | " + " | ".join(f"{spans[name]} ({name})" for name in order) + " |"]
    lines.append("|---|" + "---|" * len(order))
    cells = default.set_index(["id", "seeds"])
    listed = [claim.id for claim in CLAIMS]
    for claim in sorted(default["id"].unique(), key=lambda claim: (claim_order(claim), listed.index(claim))):
        plain = default.loc[default["id"] == claim, "plain"].iloc[0]
        lines.append(f"| {plain} | " + " | ".join(short(cells.loc[(claim, name)]) for name in order) + " |")
    return "\n".join(lines)
