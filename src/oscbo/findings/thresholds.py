"""The constants the claims' tests read the paper's words with, together: each is the project's
reading of a word (its meaning beside it), and every verdict reports the value at which it flips.

The paper's own numbers (the 0.9 coverage target, the top three of Fig. 2) are in
:mod:`oscbo.paper` or named as such here; a word the paper does not quantify ("slightly",
"consistently", "closely") is a choice, shown with every verdict that rests on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from oscbo.analysis.statistics import MIN_BOOTSTRAP_PAIRS


@dataclass(frozen=True)
class Constant:
    """A threshold of the claims' tests: its name, value, unit and what it reads."""

    name: str
    value: Fraction | float | int
    unit: str
    reads: str

    def __str__(self) -> str:
        return f"{self.name} = {float(self.value):g}"


TOP_K = Constant("TOP_K", 3, "places", "'among the strongest': a place among the 3 best (Fig. 2 shows the top three)")
CONSISTENT_SHARE = Constant(
    "CONSISTENT_SHARE", Fraction(3, 4), "share of tasks", "'consistently': on at least three quarters of the tasks"
)
SEVERAL_TASKS = Constant("SEVERAL_TASKS", 3, "tasks", "'several tasks': at least 3 (all, where there are fewer)")
MATCH_TOLERANCE = Constant(
    "MATCH_TOLERANCE", 0.10, "ratio - 1", "'matches': a seed-mean final simple regret at most 10 % above"
)
SLIGHT_GAP = Constant(
    "SLIGHT_GAP", 2, "mean-rank places", "'slightly' worse: a mean rank higher by more than 0 and less than 2 places"
)
CLUSTER_GAP = Constant(
    "CLUSTER_GAP", 1, "mean-rank places", "a 'cluster': methods whose sorted mean ranks are at most 1 place apart"
)
TRACKING_TOLERANCE = {
    "simple_regret": Constant("TRACKING_REGRET", 0.2, "decades", "'closely tracks' in regret: within 10^0.2 = 1.58x"),
    "mean_halfwidth": Constant(
        "TRACKING_SHARPNESS", 0.1, "decades", "'closely tracks' in sharpness: mean half-width within 10^0.1 = 1.26x"
    ),
    "coverage": Constant(
        "TRACKING_CALIBRATION", 0.05, "coverage", "'closely tracks' in calibration: coverage within 0.05"
    ),
    "lengthscale": Constant("TRACKING_LENGTHSCALE", 0.1, "decades", "'closely tracks' in lengthscale: within 1.26x"),
}
DISTINCT_FACTOR = Constant(
    "DISTINCT_FACTOR", 2, "x OSCBO's gap", "'distinct' dynamics: at least twice as far from GP-UCB-MLL as OSCBO"
)
OFTEN_SHARE = Constant("OFTEN_SHARE", Fraction(1, 2), "share of tasks", "'often': on at least half of the tasks")
COLLAPSE = Constant(
    "COLLAPSE", 0.5, "decades", "a lengthscale 'collapse': a fall by more than 10^0.5 = 3.2x over the BO rounds"
)
#: The theory's claims fit log R_t against log t over the rounds from this share of the horizon on
#: (the first rounds, before any regret accumulates, say nothing of a growth rate).
SLOPE_FROM = Fraction(1, 10)
#: Seed-mean values below this are raised to it before a log10 (a run at the optimum has zero regret).
TRACKING_FLOOR = 1e-8
#: A verdict is decided when at least this share of the seed resamples agrees with it, and every task
#: has at least MIN_SEEDS seeds: with fewer, the seed bootstrap has too few distinct resamples to
#: measure its own spread (2 seeds give 3), the rule the paired tests' bootstrap intervals follow.
DECIDED_SHARE = Fraction(9, 10)
MIN_SEEDS = MIN_BOOTSTRAP_PAIRS
#: Seeds per task tried, in order, to estimate how many would decide an undecided verdict.
SEED_GRID = (40, 80, 160, 320, 640)

#: Every constant, for the report's list.
CONSTANTS = [
    TOP_K,
    CONSISTENT_SHARE,
    SEVERAL_TASKS,
    MATCH_TOLERANCE,
    SLIGHT_GAP,
    CLUSTER_GAP,
    *TRACKING_TOLERANCE.values(),
    DISTINCT_FACTOR,
    OFTEN_SHARE,
    COLLAPSE,
]
