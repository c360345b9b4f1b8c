"""Which figures a study gets, in the paper's order, decided from its configuration alone.

The workflow declares every figure file as an output of its rule, so the list must be known
before anything runs: :func:`plan` reads the experiments' tasks and methods and returns one
:class:`Figure` per file, in report order, with the report section it belongs to; and a line
for each figure left out because it would carry no information (a "top 3" of three methods or
fewer, a rank distribution over one task, an experiment the paper does not have).

Sections follow the paper: Fig. 2 (``main``: simple regret, the final distribution of the top
three, ranks), Fig. S1 (the cumulative analogue), Fig. 3 top (mean rank per ablation), Fig. S2
(ablation curves), Fig. 3 bottom and S3 (diagnostics per task), Fig. S4 (timing); then what the
paper does not have: the ARD lengthscales, the dual study, the known-truth tasks. Every
experiment other than ``main``, ``timing``, ``dual`` and ``known-truth`` is an ablation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from oscbo.analysis.readings import Reading, curve, from_config, headline
from oscbo.paper import ARD, CALIBRATION_PAIR, DUAL, KNOWN_TRUTH, MAIN, REGRET_METRICS, REPLICATES, TIMING
from oscbo.report.outline import DUAL as DUAL_SECTION
from oscbo.report.outline import LAMBDA0 as LAMBDA0_SECTION
from oscbo.report.outline import SECTIONS

if TYPE_CHECKING:
    import pandas as pd

NOT_ABLATIONS = {MAIN, TIMING, DUAL, KNOWN_TRUTH, *REPLICATES}
#: Fig. 2's final distributions show this many methods per task.
TOP = 3


@dataclass(frozen=True)
class Figure:
    """One figure file: its id (the file stem), what draws it, for which experiment and task.

    Attributes:
        id: the file stem, unique in the study.
        kind: the drawing function's name in :data:`oscbo.figures.draw.DRAWERS`.
        section: the report section (:data:`SECTIONS`).
        experiment: the experiment it shows (None: several).
        task: the task it shows (None: every task of the experiment).
        options: what else the drawer needs (e.g. the metric).
    """

    id: str
    kind: str
    section: str
    experiment: str | None = None
    task: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def tasks(self, present: pd.Series) -> list[str]:
        """The tasks the figure shows of those ``present`` holds: its ``tasks`` option's, in its
        order, or all of them, sorted."""
        have = set(present.unique())
        return [task for task in self.options.get("tasks") or sorted(have) if task in have]


def _labels(experiment: dict[str, Any]) -> list[str]:
    return [entry if isinstance(entry, str) else entry["label"] for entry in experiment["methods"]]


def lambda0_study(config: dict[str, Any]) -> bool:
    """The study measures λ₀ as a curve: ``main`` runs the headline setting's readings at two values
    or more beside the default (:func:`oscbo.analysis.readings.curve`)."""
    return MAIN in config.get("experiments", {}) and len(curve(from_config(config))) >= 3


def ablations(config: dict[str, Any]) -> list[str]:
    """The study's ablation experiments, in config order."""
    return [name for name in config["experiments"] if name not in NOT_ABLATIONS]


def headline_reading(config: dict[str, Any]) -> Reading | None:
    """The headline reading (config ``headline: true``) if its stand-ins run in 'main': the rank
    figures are drawn under it too, beside the default (the answer turns on it)."""
    reading = headline(from_config(config))
    main = config["experiments"].get(MAIN)
    if reading is None or main is None:
        return None
    return reading if set(reading.methods) & set(_labels(main)) else None


def slug(reading: str) -> str:
    """A reading's name as part of a figure id (a file stem): ``lambda0-0.433``."""
    return reading.replace("=", "-").replace("+", "-and-")


def plan(config: dict[str, Any]) -> tuple[list[Figure], list[str]]:
    """The figures of a study and a line for each figure left out (see the module docstring).

    Args:
        config: a validated study configuration (``experiments`` with ``tasks`` and ``methods``).
    """
    experiments = config["experiments"]
    figures: list[Figure] = []
    omitted: list[str] = []
    main = experiments.get(MAIN)
    headline_ = headline_reading(config)
    reading = headline_.name if headline_ else None
    if main is None:
        omitted.append("Figs. 2, S1 and S3: the study has no 'main' experiment.")
    else:
        methods, tasks = len(_labels(main)), len(main["tasks"])
        for section, metric in (("fig2", "simple_regret"), ("figS1", "cumulative_regret")):
            figures.append(Figure(f"{section}-curves", "regret_curves", section, MAIN, options={"metric": metric}))
            if reading:
                figures.append(
                    Figure(
                        f"{section}-curves-{slug(reading)}",
                        "regret_curves",
                        section,
                        MAIN,
                        options={"metric": metric, "reading": reading, "reading_shown": headline_.shown},
                    )
                )
            if methods > TOP:
                figures.append(
                    Figure(f"{section}-final-top{TOP}", "final_top", section, MAIN, options={"metric": metric})
                )
            else:
                omitted.append(f"{section}: no top-{TOP} distribution ('main' has {methods} methods).")
            if tasks > 1:
                figures.append(
                    Figure(f"{section}-ranks", "rank_distribution", section, MAIN, options={"metric": metric})
                )
                if reading:
                    figures.append(
                        Figure(
                            f"{section}-ranks-{slug(reading)}",
                            "rank_distribution",
                            section,
                            MAIN,
                            options={"metric": metric, "reading": reading, "reading_shown": headline_.shown},
                        )
                    )
            else:
                omitted.append(f"{section}: no rank distribution across tasks ('main' has one task).")
        # a reading's stand-in task (Material maximised) is drawn under its reading, not as a task of its own
        stand_in_tasks = {task for reading_ in from_config(config) for task in reading_.tasks}
        figures += [
            Figure(f"figS3-{task}", "diagnostics", "figS3", MAIN, task)
            for task in main["tasks"]
            if task not in stand_in_tasks
        ]
    ranked = [name for name in [MAIN, *ablations(config)] if name in experiments]
    if any(len(experiments[name]["tasks"]) > 1 for name in ranked):
        figures.append(Figure("fig3-mean-rank", "mean_rank", "fig3-top", options={"experiments": ranked}))
        if reading:
            figures.append(
                Figure(
                    f"fig3-mean-rank-{slug(reading)}",
                    "mean_rank",
                    "fig3-top",
                    options={"experiments": ranked, "reading": reading, "reading_shown": headline_.shown},
                )
            )
    else:
        omitted.append("Fig. 3 top: no experiment has more than one task to rank over.")
    for name in ablations(config):
        figures.append(Figure(f"figS2-{name}", "regret_curves", "figS2", name, options={"metric": "simple_regret"}))
    if main is not None and set(CALIBRATION_PAIR) <= set(_labels(main)):
        figures.append(
            Figure(
                "figS2-oscbo-vs-l1",
                "regret_curves",
                "figS2",
                MAIN,
                options={"metric": "cumulative_regret", "methods": list(CALIBRATION_PAIR)},
            )
        )
    if TIMING in experiments:
        figures.append(Figure("figS4-timing", "wallclock", "figS4", TIMING))
    else:
        omitted.append(
            "Fig. S4 (wall-clock time per method): this study does not run the paper's timing experiment "
            "(config/config.yaml and the quick study do)."
        )
    if ARD in experiments:
        figures.append(Figure("ard-lengthscales", "ard_lengthscales", "lengthscales-under-ard", ARD))
    if DUAL in experiments:
        section = DUAL_SECTION
        figures += [
            Figure("dual-lambda", "dual_lambda", section, DUAL),
            Figure("dual-lengthscale", "versus_lambda0", section, DUAL, options={"metrics": ["lengthscale"]}),
            Figure(
                "dual-regret",
                "versus_lambda0",
                section,
                DUAL,
                options={"metrics": list(REGRET_METRICS)},
            ),
        ]
    if lambda0_study(config):
        every = {"every_reading": True}
        figures += [
            Figure("lambda0-claims", "lambda0_claims", LAMBDA0_SECTION, MAIN, options=every),
            Figure("lambda0-regret", "lambda0_regret", LAMBDA0_SECTION, MAIN, options=every),
        ]
    if KNOWN_TRUTH in experiments:
        figures += [
            Figure(
                "known-truth-regret", "regret_curves", "known-truth", KNOWN_TRUTH, options={"metric": "simple_regret"}
            ),
            Figure("known-truth-growth", "growth_curves", "known-truth", KNOWN_TRUTH),
            Figure("known-truth-lengthscale", "lengthscale_curves", "known-truth", KNOWN_TRUTH),
        ]
    order = [id for id, _, _ in SECTIONS]
    return sorted(figures, key=lambda figure: order.index(figure.section)), omitted
