"""The measures the claims' tests compare, each computed per sample (``S`` first) from
:class:`~oscbo.findings.sampling.Samples`: places and mean ranks, shares of tasks, trajectory gaps,
growth rates, clusters. A measure is undefined (NaN, or an :class:`Exact` over 0) where it has no
value, never silently 0.

"Mean rank" is Fig. 3's aggregate: final regret averaged over seeds per task and method, methods
ranked within each task (ties share the average rank), ranks averaged over tasks; "place" is 1 + the
number of methods with a strictly lower mean rank.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np

from oscbo.findings.sampling import Exact, Samples
from oscbo.findings.thresholds import CLUSTER_GAP, SLOPE_FROM, TOP_K, TRACKING_FLOOR
from oscbo.paper import GP_UCB_MLL, name, task_name

#: The trajectories "tracking" compares (7.2: regret, sharpness-calibration, lengthscale), each on a
#: log scale but the coverage (a share: its difference).
TRACKED = ("simple_regret", "mean_halfwidth", "coverage", "lengthscale")


def ranked(s: Samples, metric: str, method: str, among: Sequence[str] | None = None) -> str:
    """``"OSCBO place 2 of 7 (mean rank 2.43)"`` for the study as it ran."""
    n = len(among or s.methods)
    mean = float(s.mean_rank(metric, method, among).at(0))
    return f"{name(method)} place {int(s.place(metric, method, among)[0])} of {n} (mean rank {mean:.2f})"


def top_tasks(s: Samples, metric: str, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Per sample, on how many of the counted tasks ``method`` is among the TOP_K, and of how many."""
    ranks, _ = s.ranks(metric)
    counted = s.ranked_tasks(metric, method)
    top = counted & (ranks[..., s.methods.index(method)] <= TOP_K.value)
    return top.sum(-1), counted.sum(-1)


def middle(s: Samples) -> Fraction:
    """The middle rank of the experiment's methods, (N + 1) / 2: "competitive" is at or better."""
    return Fraction(len(s.methods) + 1, 2)


def competitive_tasks(s: Samples, metric: str, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sample: the tasks where ``method`` ranks at most the middle rank of that task's methods,
    the counted tasks, and those where it is the worst alone (``S x T`` each)."""
    ranks, present = s.ranks(metric)
    counted = s.ranked_tasks(metric, method)
    own = ranks[..., s.methods.index(method)]
    n = present.sum(-1)
    return counted & (own <= (n + 1) / 2), counted, counted & (own == n)


def per_task(s: Samples, values: np.ndarray, digits: str = ".2f") -> str:
    return ", ".join(f"{task_name(task)} {value:{digits}}" for task, value in zip(s.tasks, values))


def mean_over_tasks(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``S``: the mean over the counted tasks of ``S x T`` values (NaN tasks left out; NaN over none)."""
    counted = mask & ~np.isnan(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.where(counted, values, 0).sum(-1) / counted.sum(-1)


def gaps(s: Samples, metric: str, method: str) -> np.ndarray:
    """``S x T``: the mean over BO rounds of ``method``'s trajectory gap to GP-UCB-MLL's."""
    return s.task_gaps(metric, method, GP_UCB_MLL, log=metric != "coverage", floor=TRACKING_FLOOR)


def task_values(s: Samples, metric: str, method: str, log: bool = False) -> np.ndarray:
    """``S x T``: a final metric's seed means of ``method`` per task (their log10, with ``log``)."""
    values = s.final_means(metric)[..., s.methods.index(method)]
    return np.log10(np.clip(values, TRACKING_FLOOR, None)) if log else values


def task_mean(s: Samples, metric: str, method: str, log: bool = False) -> np.ndarray:
    """``S``: a final metric's seed mean averaged over the counted tasks (its log10, with ``log``)."""
    return mean_over_tasks(task_values(s, metric, method, log), s.task_in)


def total_variation(values: np.ndarray) -> np.ndarray:
    """``k x M x R -> k x M``: the sum over rounds of |change in log10| (a lengthscale's
    corrections; NaN where a run has fewer than two rounds)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.abs(np.diff(np.log10(values), axis=-1))
    return np.where(np.isfinite(steps).sum(-1) > 0, np.nansum(steps, axis=-1), np.nan)


def growth(s: Samples, metric: str, method: str, negative: float = np.nan) -> tuple[np.ndarray, np.ndarray]:
    """``S x T``: the least-squares slope of log10 of the seed-mean cumulative ``metric`` against
    log10 t over the BO rounds from SLOPE_FROM of the horizon on (1: linear growth), and ``S x T``
    the ratio of its value per round at the horizon T to that at T / 2 (below 1: falling).

    Both are undefined (NaN) where the metric ends above 0 but is not positive throughout the fitted
    rounds (no log); ``negative``: the value both take where the metric ends at or below 0 (nothing
    accumulates, or a gap that favours the method: no degradation at all)."""
    values = s.trajectory(metric, method)
    rounds = np.arange(1, values.shape[-1] + 1)
    keep = rounds >= max(2, int(np.ceil(float(SLOPE_FROM) * rounds[-1])))
    window = values[..., keep]
    positive = np.all(window > 0, axis=-1)
    x = np.log10(rounds[keep])
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log10(np.where(window > 0, window, np.nan))
        slope = ((x - x.mean()) * (y - y.mean(-1, keepdims=True))).sum(-1) / ((x - x.mean()) ** 2).sum()
        half = rounds[-1] // 2
        ratio = (values[..., -1] / rounds[-1]) / (values[..., half - 1] / half)
    end = values[..., -1]
    slope = np.where(positive, slope, np.where(end <= 0, negative, np.nan))
    ratio = np.where(positive & np.isfinite(ratio), ratio, np.where(end <= 0, negative, np.nan))
    return slope, ratio


def interval(values: np.ndarray, s: Samples) -> str:
    """``"0.50 [0.43, 0.56]"``: a :func:`growth` slope of the study and its 95 % resampling interval.
    A slope of -inf (``growth``'s ``negative``: the quantity ends below 0, nothing degrades) is said
    in words, and the resamples where it is are counted apart from the interval, which spans the
    others: ``"ends below 0 (in 97% of resamples; elsewhere [0.10, 0.90])"``,
    ``"1.49 [1.20, 1.74] (ends below 0 in 3% of resamples)"``."""
    if np.isnan(values[0]):
        return "undefined"
    boot = values[s.bootstrap]
    below = np.isneginf(boot)
    spread = ""
    if not np.isnan(boot[~below]).all():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            low, high = np.nanpercentile(boot[~below], [2.5, 97.5])
        spread = f"[{low:.2f}, {high:.2f}]"
    share = f"{below.mean():.0%} of resamples"
    if np.isneginf(values[0]):
        return f"ends at or below 0 (in {share}" + (f"; elsewhere {spread})" if spread else ")")
    return f"{values[0]:.2f} {spread}".rstrip() + (f" (ends at or below 0 in {share})" if below.any() else "")


def extreme(ranks: list[Exact], pick: Callable) -> Exact:
    """Per sample, the smallest (``min``) or largest (``max``) of exact mean ranks, of those defined
    there (undefined only where none is)."""
    values = np.stack([r.float() for r in ranks])
    values = np.where(np.isnan(values), np.inf if pick is min else -np.inf, values)
    index = (np.argmin if pick is min else np.argmax)(values, axis=0)
    num = np.stack([r.num for r in ranks])[index, np.arange(values.shape[1])]
    den = np.stack([r.den for r in ranks])[index, np.arange(values.shape[1])]
    return Exact(num, den)


def clusters(mean_ranks: dict[str, float], gap: float) -> list[list[str]]:
    """Single-linkage clusters of methods by mean rank: sorted, split where neighbours are more than
    ``gap`` apart."""
    groups: list[list[str]] = []
    previous = None
    for method, value in sorted(mean_ranks.items(), key=lambda item: item[1]):
        if previous is None or value - previous > gap:
            groups.append([])
        groups[-1].append(method)
        previous = value
    return groups


def in_main_cluster(ranks: dict[str, Exact], method: str, baselines: Sequence[str]) -> np.ndarray:
    """Per sample, whether ``method`` lies in the main cluster of :func:`clusters` (CLUSTER_GAP) of
    ``ranks``: the cluster holding more than half of ``baselines``; NaN where no cluster does (the
    main cluster is undefined). Gaps are compared exactly, as fractions."""
    names = list(ranks)
    num = np.stack([ranks[m].num for m in names], axis=-1).astype(object)
    den = np.stack([ranks[m].den for m in names], axis=-1).astype(object)
    order = np.argsort(np.stack([ranks[m].float() for m in names], axis=-1), axis=-1, kind="stable")
    num, den = np.take_along_axis(num, order, -1), np.take_along_axis(den, order, -1)
    gap = Fraction(CLUSTER_GAP.value)
    # neighbours b > a split where b - a > gap: (nb da - na db) gap.den > gap.num da db
    split = (num[:, 1:] * den[:, :-1] - num[:, :-1] * den[:, 1:]) * gap.denominator > (
        gap.numerator * den[:, 1:] * den[:, :-1]
    )
    cluster = np.concatenate([np.zeros((len(num), 1), dtype=int), np.cumsum(split.astype(int), -1)], -1)
    sorted_names = np.asarray(names)[order]
    is_base = np.isin(sorted_names, list(baselines))
    out = np.full(len(num), np.nan)
    for i in range(len(num)):
        counts = np.bincount(cluster[i][is_base[i]], minlength=cluster[i].max() + 1)
        main = np.flatnonzero(2 * counts > is_base[i].sum())
        if len(main):
            out[i] = float(cluster[i][list(sorted_names[i]).index(method)] == main[0])
    return out
