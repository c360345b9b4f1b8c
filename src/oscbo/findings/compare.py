"""Two studies of one protocol side by side: a replicate's final results and verdicts beside a
reference's (``oscbo compare``). The reference replication compares its rerun with the study it
replaced so: the same protocol, run on another code path's rounding and, for SCGP and VanillaBO,
on their authors' settings since.

:func:`finals`: per (experiment, task, method label) and final metric, each study's seed mean and
seeds, the two-sided Mann-Whitney p of the two samples of seeds, Holm's adjustment across each
experiment's comparisons of a metric, and whether they differ at
:data:`~oscbo.analysis.statistics.ALPHA`; and the same for the seeds paired: Wilcoxon's two-sided
signed-rank p of the per-seed differences over the seeds both studies ran (``p_paired``; exact for
up to 50 pairs without ties, and 1 where every pair is equal). A seed's two runs share their initial
design, and a last-bit difference sends a BO run down another trajectory only sometimes, so the
two samples are not independent: where they are correlated the unpaired p runs high and the
paired test is the sharper one. A task of unknown optimum (Lunar Lander) compares the best value
found, whose reference point does not move with the study.

:func:`verdicts`: per (claim, reading) each study's verdict and share, and whether a change lies
within the new study's resampling: the earlier outcome as run occurs in at least
1 - :data:`~oscbo.findings.thresholds.DECIDED_SHARE` of the new study's seed resamples.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
from scipy import stats

from oscbo.analysis.statistics import ALPHA, holm
from oscbo.findings.thresholds import DECIDED_SHARE
from oscbo.verdicts import HELD, NOT_HELD

KEYS = ["experiment", "task", "method"]
#: The final metrics compared, and whether each needs a known optimum.
METRICS = {"simple_regret": True, "cumulative_regret": True, "best_f": False}
FINAL_COLUMNS = [
    *KEYS,
    "metric",
    "seeds_new",
    "mean_new",
    "seeds_old",
    "mean_old",
    "ratio",
    "p",
    "p_holm",
    "differ",
    "pairs",
    "p_paired",
    "p_paired_holm",
    "differ_paired",
    "new_code",
]
VERDICT_COLUMNS = ["id", "reading", "verdict_new", "share_new", "verdict_old", "as_run_old", "changed", "within"]


def finals(new: pd.DataFrame, old: pd.DataFrame, new_code: Iterable[str] = ()) -> pd.DataFrame:
    """The ``final`` tables of two studies compared (module docstring): one row per (experiment,
    task, method) both ran and metric (:data:`FINAL_COLUMNS`). ``new_code``: the methods whose code
    or settings differ between the studies (their labels, and ``NAME-...`` variants of them): a row
    of theirs says so in ``new_code``, where any other row's difference is the rounding's."""
    rows = []
    earlier_of = dict(iter(old.groupby(KEYS, sort=False)))
    changed = tuple(new_code)
    for key, group in new.groupby(KEYS, sort=True):
        earlier = earlier_of.get(key)
        if earlier is None:
            continue
        known = bool(group["f_star_known"].all() and earlier["f_star_known"].all())
        for metric, needs_optimum in METRICS.items():
            if needs_optimum != known:
                continue
            a, b = group[metric].dropna().to_numpy(), earlier[metric].dropna().to_numpy()
            p = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue if len(a) and len(b) else float("nan")
            mean_a, mean_b = float(a.mean()), float(b.mean())
            ratio = mean_a / mean_b if mean_b != 0 else float("nan")
            pairs = pd.concat([group.set_index("seed")[metric], earlier.set_index("seed")[metric]], axis=1).dropna()
            rows.append([*key, metric, len(a), mean_a, len(b), mean_b, ratio, float(p), len(pairs), _paired_p(pairs)])
    measured = [c for c in FINAL_COLUMNS if not c.endswith("holm") and not c.startswith("differ") and c != "new_code"]
    table = pd.DataFrame(rows, columns=measured)
    for column, adjusted, decided in (("p", "p_holm", "differ"), ("p_paired", "p_paired_holm", "differ_paired")):
        table[adjusted] = table.groupby(["experiment", "metric"])[column].transform(holm)
        table[decided] = table[adjusted] < ALPHA
    table = table.reindex(columns=FINAL_COLUMNS[:-1])
    variants = tuple(f"{method}-" for method in changed)
    table["new_code"] = [label in changed or label.startswith(variants) for label in table["method"]]
    return table


def _paired_p(pairs: pd.DataFrame) -> float:
    """Wilcoxon's two-sided signed-rank p of the pairs' differences (rows: seeds; NaN without a
    pair, 1 where every pair is equal)."""
    if not len(pairs):
        return float("nan")
    differences = pairs.iloc[:, 0].to_numpy() - pairs.iloc[:, 1].to_numpy()
    if not differences.any():
        return 1.0
    return float(stats.wilcoxon(differences, alternative="two-sided").pvalue)


def verdicts(new: pd.DataFrame, old: pd.DataFrame) -> pd.DataFrame:
    """The ``claims`` tables of two studies compared (module docstring): one row per (claim,
    reading) of the new study (:data:`VERDICT_COLUMNS`); a claim or reading the earlier study lacks
    has no earlier verdict."""
    merged = new[["id", "reading", "verdict", "share"]].merge(
        old[["id", "reading", "verdict", "as_run"]], on=["id", "reading"], how="left", suffixes=("_new", "_old")
    )
    merged = merged.rename(columns={"as_run": "as_run_old", "share": "share_new"})
    merged["changed"] = merged["verdict_old"].notna() & (merged["verdict_new"] != merged["verdict_old"])
    rare = 1 - float(DECIDED_SHARE)
    held_share = merged["share_new"]
    within = ((merged["as_run_old"] == HELD) & (held_share >= rare)) | (
        (merged["as_run_old"] == NOT_HELD) & (1 - held_share >= rare)
    )
    defined = held_share.notna() & merged["as_run_old"].isin([HELD, NOT_HELD])
    merged["within"] = within.astype("boolean").where(defined)
    return merged[VERDICT_COLUMNS]


def markdown(finals_: pd.DataFrame, verdicts_: pd.DataFrame) -> str:
    """The comparison as Markdown: per experiment and metric how many (task, method) means differ,
    by the unpaired and the paired test, each one that does by either, and each claim whose verdict
    changed, with both verdicts."""
    lines = [
        f"| experiment | metric | compared | differ (Holm p < {ALPHA:g}) | of them new code "
        "| differ, seeds paired | of them new code |"
    ]
    lines.append("|---|---|---|---|---|---|---|")
    for (experiment, metric), group in finals_.groupby(["experiment", "metric"], sort=True):
        counts = [(int(d.sum()), int((d & group["new_code"]).sum())) for d in (group["differ"], group["differ_paired"])]
        cells = " | ".join(f"{n} | {code}" for n, code in counts)
        lines.append(f"| {experiment} | {metric} | {len(group)} | {cells} |")
    differ = finals_[finals_["differ"] | finals_["differ_paired"]]
    if len(differ):
        lines += [
            "",
            "| experiment | task | method | metric | mean, new | mean, old | ratio | Holm p | Holm p, paired "
            "| new code |",
        ]
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in differ.itertuples():
            lines.append(
                f"| {r.experiment} | {r.task} | {r.method} | {r.metric} | {r.mean_new:.4g} | {r.mean_old:.4g} | "
                f"{r.ratio:.3g} | {r.p_holm:.2g} | {r.p_paired_holm:.2g} | {'yes' if r.new_code else ''} |"
            )
    changed = verdicts_[verdicts_["changed"]]
    lines += ["", f"{len(changed)} of {int(verdicts_['verdict_old'].notna().sum())} (claim, reading) verdicts changed."]
    if len(changed):
        lines += ["", "| claim | reading | new | old | old outcome within the new resampling |"]
        lines.append("|---|---|---|---|---|")
        for r in changed.itertuples():
            within = "" if pd.isna(r.within) else "yes" if r.within else "no"
            share = "" if pd.isna(r.share_new) else f" ({r.share_new:.0%} held)"
            lines.append(f"| {r.id} | {r.reading} | {r.verdict_new}{share} | {r.verdict_old} | {within} |")
    return "\n".join(lines)
