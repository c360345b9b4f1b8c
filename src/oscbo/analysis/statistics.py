"""Paired comparisons of final regret over seeds, honest about what the seeds can support.

Two methods' runs of one task are paired on seed (the same seed gives the same initial design).
For each pair of methods of a task, the ``tests`` table holds the mean and median difference,
a two-sided Wilcoxon signed-rank test, a percentile bootstrap interval of the mean difference,
and what the number of seeds allows:

* ``min_p``: the smallest p-value the test can return with this many non-zero differences,
  2 / 2^n (every difference of one sign). Below :data:`ALPHA`'s reach (n <= 5) a test cannot
  reject at that level whatever the data: ``testable`` is False and the row says "too few
  seeds" rather than a p-value that looks like evidence.
* ``p_holm``: Holm's step-down adjustment (family-wise error at ALPHA) across the testable
  rows of a family, one family per (experiment, metric): every pair of methods on every task
  of the experiment.
* The bootstrap interval only from :data:`MIN_BOOTSTRAP_PAIRS` pairs on: with two pairs it is
  their [min, max], which says nothing about the mean.
"""

from __future__ import annotations

from itertools import combinations, count

import numpy as np
import pandas as pd

from oscbo.paper import REGRET_METRICS

#: The level the paired tests are read at (two-sided).
ALPHA = 0.05
#: Bootstrap intervals need at least this many pairs.
MIN_BOOTSTRAP_PAIRS = 10
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
#: The final-regret metrics compared.
TESTED_METRICS = list(REGRET_METRICS)
COLUMNS = [
    "experiment",
    "task",
    "metric",
    "method_a",
    "method_b",
    "n",
    "mean_diff",
    "median_diff",
    "ci_low",
    "ci_high",
    "p_value",
    "min_p",
    "testable",
    "p_holm",
    "significant",
]


def min_attainable_p(nonzero: int) -> float:
    """The smallest two-sided p of the exact Wilcoxon signed-rank test with ``nonzero`` differences."""
    return min(1.0, 2.0 ** (1 - nonzero)) if nonzero else 1.0


#: The fewest non-zero paired differences whose test can reach :data:`ALPHA` (6 at 0.05).
MIN_TESTABLE_PAIRS = next(n for n in count(1) if min_attainable_p(n) < ALPHA)


def paired_difference(diff: np.ndarray) -> dict[str, float]:
    """Summary, bootstrap interval and Wilcoxon p-value of paired differences ``diff``.

    The bootstrap uses its own generator seeded with :data:`BOOTSTRAP_SEED`, so a pair's
    interval does not depend on which other pairs were compared before it. ``p_value`` is NaN
    when fewer than 2 pairs or every difference is zero (the test is undefined there).
    """
    n = len(diff)
    nonzero = int(np.count_nonzero(diff))
    min_p = min_attainable_p(nonzero)
    result = {
        "n": n,
        "mean_diff": float(np.mean(diff)) if n else np.nan,
        "median_diff": float(np.median(diff)) if n else np.nan,
        "ci_low": np.nan,
        "ci_high": np.nan,
        "p_value": np.nan,
        "min_p": min_p,
        "testable": bool(min_p < ALPHA),
    }
    if n >= MIN_BOOTSTRAP_PAIRS:
        rng = np.random.default_rng(BOOTSTRAP_SEED)
        means = diff[rng.integers(0, n, size=(BOOTSTRAP_RESAMPLES, n))].mean(axis=1)
        result["ci_low"], result["ci_high"] = (float(q) for q in np.percentile(means, [2.5, 97.5]))
    if n >= 2 and nonzero:
        from scipy import stats  # here, not at the top: the workflow's DAG imports this package (1 s)

        result["p_value"] = float(stats.wilcoxon(diff).pvalue)
    return result


def holm(p_values: pd.Series) -> pd.Series:
    """Holm's step-down adjusted p-values (family-wise error), index kept; NaN stays NaN."""
    finite = p_values.dropna().sort_values(kind="stable")
    m = len(finite)
    adjusted = (finite * np.arange(m, 0, -1)).cummax().clip(upper=1.0)
    return adjusted.reindex(p_values.index)


def tests_table(final: pd.DataFrame) -> pd.DataFrame:
    """Paired comparisons of final regret for every pair of methods of a task.

    Differences are ``method_a - method_b`` with the labels in sorted order, so a negative
    difference means ``method_a`` reached lower regret. Columns: see :data:`COLUMNS` and the
    module docstring; ``significant`` is ``p_holm < ALPHA``.
    """
    rows = []
    for metric in TESTED_METRICS:
        for (experiment, task), runs in final.groupby(["experiment", "task"], sort=True):
            wide = runs.pivot(index="seed", columns="method", values=metric)  # seeds in order
            values = {method: wide[method].to_numpy(dtype=float) for method in wide.columns}
            for method_a, method_b in combinations(sorted(wide.columns), 2):
                a, b = values[method_a], values[method_b]
                paired = ~(np.isnan(a) | np.isnan(b))  # the seeds both methods finished
                rows.append(
                    {
                        "experiment": experiment,
                        "task": task,
                        "metric": metric,
                        "method_a": method_a,
                        "method_b": method_b,
                        **paired_difference(a[paired] - b[paired]),
                    }
                )
    table = pd.DataFrame(rows, columns=COLUMNS[:-2])
    testable = table["p_value"].where(table["testable"].astype(bool))
    table["p_holm"] = testable.groupby([table["experiment"], table["metric"]]).transform(holm)
    table["significant"] = table["p_holm"] < ALPHA
    return table[COLUMNS]
