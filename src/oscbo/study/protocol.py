"""The report's protocol: every setting of the study, and every departure from the paper.

Each row is ``{"setting", "value", "paper", "kind", "note"}``: ``value`` is what this study ran
(read from the resolved configuration), ``paper`` what the paper states (or "silent"), ``kind``
one of :data:`KINDS` -- the paper's own setting, a gap the paper leaves that the project filled,
or a departure from what the paper states -- and ``note`` why, with the measured effect where a
departure could change a number. The rows shared by every run are here; a method's and a task's
own rows are in its registry entry (:mod:`oscbo.methods`, :mod:`oscbo.tasks`), beside its code,
and appear for the methods and tasks the study runs. Docstrings elsewhere point here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from oscbo import methods, records, tasks
from oscbo.paper import MAIN, N_INIT, NOT_IN_PAPER, ROUNDS, paper_seeds
from oscbo.registry import AS_STATED, DEPARTURE, GAP, KINDS, Row
from oscbo.settings import Settings
from oscbo.study.config import experiment_seeds, method_settings, method_specs

#: Columns of the ``protocol`` summary table.
COLUMNS = ["setting", "value", "paper", "kind", "note"]


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


def registered_rows(config: dict[str, Any], settings: Settings) -> list[dict[str, str]]:
    """The protocol rows of the methods and tasks the study runs, from their registry entries
    (``{s.NAME}`` filled from ``settings``), each row once, in registry order."""
    used_methods = {spec.name for experiment in config["experiments"].values() for spec in method_specs(experiment)}
    used_tasks = {task for experiment in config["experiments"].values() for task in experiment["tasks"]}
    entries = [methods.REGISTRY[name] for name in methods.names() if name in used_methods]
    entries += [tasks.REGISTRY[name] for name in tasks.names() if name in used_tasks]
    rows: dict[str, Row] = {}
    for entry in entries:
        for row in entry.protocol:
            rows.setdefault(row[0], row)
    return [
        _row(setting, value.format(s=settings), paper, kind, note.format(s=settings))
        for setting, value, paper, kind, note in rows.values()
    ]


def departures(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows that depart from what the paper states."""
    return [row for row in rows if row["kind"] == DEPARTURE]


def rows(config: dict[str, Any]) -> list[dict[str, str]]:
    """Protocol rows for a validated study configuration."""
    s = _reference_settings(config)
    table = [
        _row(
            "Kernel",
            f"Matérn nu = {s.nu}, output scale 1, zero mean",
            "Matérn 5/2, fixed output scale, mean 0",
            AS_STATED,
        ),
        _row("Lengthscale", "ARD" if s.ard else "isotropic", "isotropic (ARD in an ablation)", AS_STATED),
        _row(
            "Lengthscale domain Theta",
            f"[{s.lengthscale_bounds[0]:g}, {s.lengthscale_bounds[1]:g}] per dimension",
            "silent",
            GAP,
            "A-GP-UCB and LB-GP-UCB use their own floor theta_min = 1e-4 (Table S1), VanillaBO "
            "the upper end 1e2 (its row).",
        ),
        _row(
            "Noise variance sigma^2",
            s.noise_var,
            "0.01, fixed",
            AS_STATED,
            "In units of y standardised each round; not rescaled with the data (BoTorch 0.18's SingleTaskGP "
            "would rescale it through its default Standardize transform, which we do not use).",
        ),
        _row(
            "Input / output scaling",
            "x mapped to [0,1]^d; y standardised with the data seen so far, every round",
            "BoTorch Normalize / Standardize",
            AS_STATED,
        ),
        _row(
            "Initial lengthscale θ₀",
            "botorch.fit.fit_gpytorch_mll on the initial design, one seed at a time, "
            "then clipped to Theta; every method but VanillaBO (its MAP, its row) starts from it",
            "MLL fit on D_0, stated for A-GP-UCB and LB-GP-UCB",
            GAP,
            "GPyTorch's default softplus parametrisation (initial 0.693). One seed at a time because BoTorch's "
            "scipy fit of a batched model optimises all seeds jointly. GP-UCB-MLL, OCBO, SCGP and OSCBO (its row) "
            "also start from it.",
        ),
        _row(
            "Per-round refit (MLL, FTPL oracle)",
            f"Adam lr {s.refit_lr}, {s.refit_steps} steps on log-lengthscale, warm start, projected onto Theta",
            "Adam lr 0.01, 50 steps",
            AS_STATED,
            "Log-lengthscale, the warm start and the projection are the project's (the paper is silent).",
        ),
        _row(
            "Cholesky",
            "per-seed jitter escalation from 1e-8 (x10, 8 tries); the record's jitter_events counts "
            "the escalations of the posterior that chose x_t, the sidecar's jitter_escalations_batch every escalation "
            "of the job (refits included)",
            "silent",
            GAP,
        ),
        _row(
            "Queries outside the box",
            "clipped to [0, 1]^d before the oracle call; the record holds the clipped point",
            "silent",
            GAP,
        ),
        _row(
            "Objective faults",
            "an exception, NaN or inf from the objective ends that seed as a failed run (partial "
            "record, sidecar status 'failed' with the reason and the oracle call); the job's other seeds go on "
            "unchanged; failed runs are in no curve, rank or test and are listed under 'What was run'",
            "silent",
            GAP,
            "Means are over the seeds that finished: a method that fails on its hardest seeds can look better "
            "than it is.",
        ),
        _row(
            "Initial design",
            "scrambled Sobol, seeded by (task, seed): identical across methods",
            "|D_0| = 10",
            AS_STATED,
            "The design's kind and seeding are the project's.",
        ),
        _row(
            "Seeds",
            "one named random stream per seed and purpose; seeds of a job run in lockstep as one batched "
            "program, with MKL in a conditional-reproducibility mode (next row) and no matrix-vector kernels, so "
            "a seed's record is bitwise the same whichever seeds share its job (tested)",
            "20 seeds, mean +- s.e.",
            AS_STATED,
        ),
        _row(
            "Numerics",
            "one code path on every x86-64 CPU with AVX2 and FMA: MKL_CBWR=COMPATIBLE (the one MKL "
            "branch that gives the same results on Intel and non-Intel CPUs), ATEN_CPU_CAPABILITY=avx2, "
            "OPENBLAS_CORETYPE=Haswell, NumPy's AVX-512 loops off, IEEE 754's square root for torch's (MKL's vdSqrt "
            "rounds by CPU); one torch thread per job; each run's sidecar "
            "records the path it ran on (oscbo.reproducibility)",
            "silent (D.4: the hardware)",
            GAP,
            "Same seed, same numbers on an Intel Xeon with AVX-512 and an AMD EPYC (other CPUs simulated on one, "
            "an AMD EPYC emulated in software; tested). Measured with python benchmarks/code_path.py (hartmann6, "
            "20 seeds, 100 rounds, idle): the pinned path takes 1.25x the time of the machine's own kernels "
            "(MKL AUTO,STRICT) for GP-UCB-MLL and 1.46x for OSCBO on an Intel Xeon with AVX-512, 1.21x and "
            "1.04x on an AMD EPYC. A GPU run, an ARM machine or a CPU without AVX2 runs its own kernels, and says so.",
        ),
        _row(
            "Acquisition",
            f"UCB mu + sqrt({s.beta}) sigma, latent sigma"
            if s.acquisition == "ucb"
            else "BoTorch LogExpectedImprovement over the best standardised y so far",
            "UCB, beta = 2.0 (LogEI ablation)",
            AS_STATED,
        ),
        _row(
            "Acquisition optimiser",
            f"L-BFGS-B as BoTorch's optimize_acqf runs it (its batched L-BFGS-B, maxiter 2000), q = 1, from the "
            f"{s.acq_restarts} best of {s.acq_raw_samples} scrambled-Sobol raw samples per seed; every (seed, "
            "restart) is an independent problem, all seeds' problems in one batched call",
            "BoTorch optimize_acqf, q = 1, 5 restarts, 20 raw samples",
            AS_STATED,
            "Raw samples come from a per-(seed, round) Sobol stream and the starts are the best raw samples, "
            "rather than BoTorch's Boltzmann draw from the global random state, so a seed's choice does not "
            "depend on its batch.",
        ),
        _row(
            "Evaluation noise",
            _evaluation_noise(config),
            "silent",
            GAP,
            "The GP's sigma^2 = 0.01 is fixed either way. OCBO depends on it: on a noise-free task its leave-one-out "
            "residuals shrink well below the predictive std sqrt(s2 + sigma^2), the PIT values crowd round 0.5, and "
            "so does q_t. Measured (python benchmarks/ocbo_noise.py --seeds 20 --budget 100: hartmann3, 20 seeds, "
            "T = 100, medians over seeds): noise-free, OCBO's q_t over the last 20 rounds is 0.526 (width "
            "Phi^-1(q_t) = 0.066, against GP-UCB-MLL's sqrt(2) = 1.41) and its final simple regret 0.127 against "
            "GP-UCB-MLL's 0.026; with noise_std 0.1, q_t is 0.871 (width 1.13) and the final simple regrets 0.105 "
            "against 0.067 (cumulative regret 24.7 against 35.1 noise-free, 33.0 against 38.9 with noise).",
        ),
        _row(
            "What every run records",
            "one row per oracle call: the query, y, f, best f, simple and cumulative "
            "regret, the lengthscale that chose it, the posterior's mu and sigma there, the method's half-width, "
            "coverage, L^s, L^s at a known-truth task's true lengthscale (the sharpness gap's comparator, Lemma 6.2), "
            "L^c (raw), V_t, lambda, the phase, wall-clock split into fit, acquisition and oracle, and jitter "
            "escalations (oscbo.records)",
            "the quantities of Figs. 2, 3, S1-S4",
            GAP,
        ),
        _row(
            "Diagnostics of every method",
            "L^s, L^c (p = calibration_power, 2; OSCBO-L1: 1), half-width "
            "sqrt(beta) sqrt(s2 + sigma^2) and coverage at x_t, from the method's own posterior",
            "Fig. S3",
            AS_STATED,
        ),
        _row("Timing columns", "a batched job's wall-clock divided by its number of seeds", "Fig. S4", GAP),
    ]
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
