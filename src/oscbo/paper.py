"""The paper's vocabulary: what the project calls its methods, experiments and tasks, and the
numbers of its protocol (D.1, D.2 and Table S1, E), in one place.

A name here is the registry name of a method or task (``oscbo.methods``, ``oscbo.tasks``) or the
experiment name a configuration uses (``config/config.yaml``); the analysis, the claims, the
figures and the report recognise the paper's roles by them.
"""

from __future__ import annotations

import re

from oscbo.settings import SYMBOLS, Settings

# Methods (D.1).
OSCBO, OSCBO_L1, GP_UCB_MLL, OCBO = "oscbo", "oscbo-l1", "gp-ucb-mll", "ocbo"
A_GP_UCB, LB_GP_UCB, SCGP, VANILLA_BO = "a-gp-ucb", "lb-gp-ucb", "scgp", "vanilla-bo"
#: The negative control of the theory's claims (not in the paper): uniform random search, whose
#: cumulative regret grows linearly, so a regret test that it passes cannot tell a rate.
NEGATIVE_CONTROL = "random-search"
#: The paper's names of the methods (D.1), as a reader sees them wherever the report writes one.
NAMES = {
    OSCBO: "OSCBO",
    OSCBO_L1: "OSCBO-L1",
    GP_UCB_MLL: "GP-UCB-MLL",
    OCBO: "OCBO",
    A_GP_UCB: "A-GP-UCB",
    LB_GP_UCB: "LB-GP-UCB",
    SCGP: "SCGP",
    VANILLA_BO: "VanillaBO",
    "gp-ucb-true": "GP-UCB at the true kernel",
    NEGATIVE_CONTROL: "random search",
}


def name(label: str) -> str:
    """The paper's name of a method label (:data:`NAMES`); any other label as it is."""
    return NAMES.get(label, label)


def _method_of(label: str) -> tuple[str, str]:
    """A label's method (the longest of :data:`NAMES` it starts with) and the rest."""
    for method in sorted(NAMES, key=len, reverse=True):
        if label == method or label.startswith((f"{method}-", f"{method},")):
            return method, label[len(method) :].lstrip("-")
    return "", label


def shown_name(label: str) -> str:
    """A method label in the paper's words: ``OSCBO-L1``; a variant of a method with its setting in
    symbols, ``OSCBO-L1, λ₀ = 0.433``, ``SCGP, conditioning = regression``; else the label."""
    method, rest = _method_of(label)
    if not method:
        return "TabICLv2" + label[len(TABICL_PREFIX) :] if label.startswith(TABICL_PREFIX) else label
    if not rest:
        return NAMES[method]
    if rest.startswith(","):  # already in words: "oscbo, ω = 0.001"
        return NAMES[method] + rest
    parts = []
    for part in re.split(r"-(?=[a-z_0-9]+=)", rest):
        key, _, value = part.partition("=")
        parts.append(f"{SYMBOLS.get(key, key)} = {value}" if value else part)
    return f"{NAMES[method]}, " + ", ".join(parts)


def paper_order(label: str) -> tuple[int, str]:
    """Where a label comes in a legend or a table: its method's place in the paper's list, then the label."""
    method, _ = _method_of(label)
    order = list(NAMES)
    return (order.index(method) if method else len(order), label)


#: The tasks as the paper names them (section 7; Appendix E), and the ones it does not run.
TASK_NAMES = {
    "levy5": "Levy 5D",
    "hartmann3": "Hartmann 3D",
    "hartmann6": "Hartmann 6D",
    "lunar12": "Lunar 12D",
    "material5": "Material 5D",
    "material5-max": "Material 5D (maximised)",
    "concrete7": "Concrete 7D",
    "crossbarrel4": "Crossbarrel 4D",
    "gp2": "GP sample 2D",
    "gp5": "GP sample 5D",
}


def task_name(task: str) -> str:
    """The paper's name of a task (:data:`TASK_NAMES`); any other task as it is."""
    return TASK_NAMES.get(task, task)


#: TabICLv2 is recognised by this label prefix (``tabicl``, ``tabicl-v2``, ...).
TABICL_PREFIX = "tabicl"
#: The GP baselines of section 7 ("the main GP-baseline cluster").
GP_BASELINES = (GP_UCB_MLL, OCBO, A_GP_UCB, LB_GP_UCB, SCGP)
#: The two calibration penalties (p = 2 and p = 1) that Fig. 3 top right and Fig. S3 compare.
CALIBRATION_PAIR = (OSCBO, OSCBO_L1)
#: The method every trajectory is compared with (7.2: "OSCBO closely tracks GP-UCB-MLL").
TRACKING_REFERENCE = GP_UCB_MLL

# Experiments (section 7, Fig. 2, 3, S1-S4); the project's own are marked.
MAIN, TIMING, LOGEI, ARD = "main", "timing", "logei", "ard"
#: The paper's two final metrics (D.2): simple and cumulative regret, the ones every comparison ranks.
SIMPLE, CUMULATIVE = REGRET_METRICS = ("simple_regret", "cumulative_regret")
#: Every experiment whose name starts with this varies the Matérn smoothness (Fig. 3 top).
SMOOTHNESS_PREFIX = "smoothness"
#: Not in the paper: OSCBO's lambda_0 and omega (the dual study), and GP samples of known truth.
DUAL, KNOWN_TRUTH = "dual", "known-truth"
#: Not in the paper: an experiment's runs on unseen seeds (the registered confirmatory set), each
#: experiment -> the one whose claims it judges again (its tasks and arms, other seeds).
REPLICATES = {f"{MAIN}-seeds20-39": MAIN, f"{KNOWN_TRUTH}-seeds20-39": KNOWN_TRUTH}
NOT_IN_PAPER = (DUAL, KNOWN_TRUTH, *REPLICATES)

# The paper's figures, as the answer groups its claims: id -> what the figure shows, in the paper's
# order; the theory (section 6, no figure) last.
FIGURES = {
    "fig2-s1": "Fig. 2 and S1: the main benchmark",
    "fig3-top-s2": "Fig. 3 top and S2: the ablations",
    "fig3-bottom-s3": "Fig. 3 bottom and S3: lengthscale and calibration diagnostics",
    "fig1c": "Fig. 1 C: calibration, sharpness and the lengthscale",
    "theory": "Section 6: the theory, on the known-truth tasks (not in the paper's experiments)",
}
#: Each claim (oscbo.findings.catalogue) -> the figure of :data:`FIGURES` whose evidence it tests,
#: and the report's sections that show that evidence, exactly (oscbo.report.outline): a section
#: heads its figures with the verdicts of these claims alone.
_SHOWN = [
    ("fig2-s1", ("fig2",), ["main-strongest", "main-matches-mll", "main-avoids-weaker", "main-l1-slightly-worse"]),
    ("fig2-s1", ("fig2",), ["main-tabicl-competitive"]),
    ("fig2-s1", ("figS1",), ["main-l1-best-cumulative", "main-gp-cluster-cumulative"]),
    ("fig2-s1", ("fig2", "figS1"), ["main-robust-cumulative"]),
    ("fig3-top-s2", ("fig3-top",), ["smoothness-top", "logei-competitive", "ard-slightly-worse-than-mll"]),
    ("fig3-top-s2", ("figS2",), ["ard-due-to-lunar"]),
    ("fig3-top-s2", ("fig3-top",), ["ard-vanilla-not-stronger", "main-l1-tradeoff", "ablations-consistent"]),
    ("fig3-bottom-s3", ("figS3",), ["main-tracks-mll", "main-often-tracks-mll", "main-l1-distinct-lengthscale"]),
    ("fig3-bottom-s3", ("figS3",), ["main-l1-distinct-regret", "main-l1-fewer-corrections"]),
    ("fig1c", ("figS3",), ["fig1c-wider-better-covered", "fig1c-less-quantile-driven", "fig1c-no-schedule-collapse"]),
    ("theory", (KNOWN_TRUTH,), ["theory-sublinear-regret", "theory-sublinear-violation", "theory-sharpness-gap"]),
]
CLAIM_FIGURES = {claim: figure for figure, _, claims in _SHOWN for claim in claims}
EVIDENCE = {claim: sections for _, sections, claims in _SHOWN for claim in claims}


def claim_order(claim: str) -> int:
    """Sort key of a claim by the paper's figure it tests (:data:`FIGURES`' order; a claim of none last)."""
    return list(FIGURES).index(CLAIM_FIGURES[claim]) if claim in CLAIM_FIGURES else len(FIGURES)


# Tasks (E).
LUNAR = "lunar12"
#: Fig. 3 bottom's diagnostics task.
DIAGNOSTICS_TASK = "levy5"

# The protocol (D.2, Table S1).
#: Seeds per (task, method), BO rounds T, and the initial Sobol design |D_0|.
SEEDS, ROUNDS, N_INIT = 20, 100, 10
#: Fig. S4's seeds.
TIMING_SEEDS = 10
#: Table S1's constants, as :class:`~oscbo.settings.Settings` holds them by default (defined there).
_TABLE_S1 = Settings()
#: The dual step size omega.
OMEGA = _TABLE_S1.omega
#: The confidence delta of the calibrated intervals and of LB-GP-UCB's elimination test.
DELTA = _TABLE_S1.delta
#: The coverage the intervals aim at, 1 - delta (0.9): the sharpness-calibration plane (Fig. 1 C,
#: S3) measures the gap |p^_t - 0.9|.
TARGET_COVERAGE = 1 - DELTA


def experiment_order(name: str) -> tuple[int, str]:
    """Sort key of an experiment in the paper's order: main (Fig. 2, S1), the ablations (Fig. 3 top,
    S2: smoothness, LogEI, ARD), timing (Fig. S4), then the project's own (dual, known-truth), then
    any other by name."""
    if name.startswith(SMOOTHNESS_PREFIX):
        return 1, name
    order = [MAIN, None, LOGEI, ARD, TIMING, DUAL, KNOWN_TRUTH]
    return (order.index(name), name) if name in order else (len(order), name)


def ablation_change(experiment: str) -> str:
    """What an ablation of the paper's (Fig. 3 top, S2) changes against the main experiment, in
    words; empty for any other experiment."""
    if experiment.startswith(SMOOTHNESS_PREFIX):
        nu = experiment.removeprefix(SMOOTHNESS_PREFIX).lstrip("-").removeprefix("nu")
        return f"every GP method's Matérn kernel at smoothness ν = {nu} (the main experiment's: 5/2)"
    return {
        LOGEI: "LogEI in place of UCB as every GP method's acquisition",
        ARD: "one lengthscale per input dimension (ARD) for every GP method, with VanillaBO beside them",
    }.get(experiment, "")


def paper_seeds(experiment: str) -> int:
    """The seeds the paper runs an experiment with."""
    return TIMING_SEEDS if experiment == TIMING else SEEDS
