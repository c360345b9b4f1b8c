"""The engine's GP-UCB-MLL and VanillaBO beside plain per-seed BoTorch loops of them: same seeds, same protocol.

    python benchmarks/crosscheck.py [--seeds 20] [--budget 100] [--n-init 10]
        [--gp-ucb-mll-tasks hartmann3 hartmann6 levy5] [--vanilla-bo-tasks hartmann6] [--workers 1]

The references (``benchmarks/botorch_loops.py``, which shares no GP, fit or acquisition code with
the engine) are, per method:

* GP-UCB-MLL: ``botorch-loop``, BoTorch's ``SingleTaskGP`` under the study's protocol;
* VanillaBO (ARD, as the ``ard`` ablation runs it): ``botorch-default``, BoTorch's default
  ``SingleTaskGP(X, y)`` (RBF, learned noise, constant mean: the source as it is), and
  ``botorch-study``, BoTorch's ``SingleTaskGP`` with the study's observation model (Matérn-5/2,
  fixed noise, zero mean, the same prior: what the engine implements). Engine against
  ``botorch-study`` is the implementation; ``botorch-study`` against ``botorch-default`` is the
  model's departures.

For each (task, method, reference), on the same seeds and initial designs, it prints:

* ``p(SR)``, ``p(CR)``, ``p(ls)``: two-sided Mann-Whitney p of the reference's against the engine's
  final simple regret, final cumulative regret and final lengthscale (ARD: its geometric mean);
* ``gap ls``, ``gap SR``: the seed-mean trajectories' gap, the mean over BO rounds of
  ``|log10 m(t) - log10 m_engine(t)|`` with ``m`` the seed mean of the lengthscale (as above) and
  of the simple regret;
* ``1 %``: how many seeds end within 1 % of the engine's final simple regret of the same seed;
* the medians of the final simple regret and lengthscale, the seconds per seed-run and the
  number of ``fit_gpytorch_mll`` attempts that ended abnormally (each retried from a draw of the
  priors, which the engine does not do).
"""

from __future__ import annotations

# isort: off
import oscbo  # noqa: F401  (first of all: it pins the numerical code path before torch and NumPy start)

# isort: on
import argparse
import shlex
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import botorch_loops
import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from oscbo import records
from oscbo import run as engine
from oscbo.report.sections import CROSSCHECK_COLUMNS

#: (method, reference name) -> the reference loop's extra arguments after (task, seed, budget, n_init).
REFERENCES = {
    "gp-ucb-mll": {"botorch-loop": ()},
    "vanilla-bo": {"botorch-default": ("default",), "botorch-study": ("study",)},
}
#: What each implementation is, in the table ``--table`` writes (the report shows it).
IMPLEMENTATIONS = {
    "engine": "this project's engine (src/oscbo)",
    "botorch-loop": "BoTorch's SingleTaskGP under the study's protocol (Matérn-5/2, fixed noise, Adam refits)",
    "botorch-default": "BoTorch's default SingleTaskGP(X, y), as the source runs it (RBF, learned noise, "
    "constant mean, MAP by fit_gpytorch_mll every round)",
    "botorch-study": "BoTorch's SingleTaskGP with the study's observation model (Matérn-5/2, fixed noise, "
    "zero mean, the same prior, MAP every round)",
}
COLUMNS = ["p(SR)", "p(CR)", "p(ls)", "gap ls", "gap SR", "1 %", "median SR", "median ls", "s/run", "fit retries"]
#: How each printed column is formatted from its number (``1 %`` prints as ``within/seeds``).
FORMATS = {"p(SR)": ".3f", "p(CR)": ".3f", "p(ls)": ".3f", "gap ls": ".3f", "gap SR": ".3f", "median SR": ".4f"}
FORMATS |= {"median ls": ".3f", "s/run": ".1f", "fit retries": "d"}
#: The ``--table`` summary table's name of each column: the report's (it reads the table).
TABLE_COLUMNS = dict(zip(COLUMNS, (name for name, _ in CROSSCHECK_COLUMNS), strict=True))


@dataclass
class Runs:
    """One (task, method, implementation)'s records, by seed, and its seconds per seed-run."""

    tables: dict[int, pd.DataFrame]
    seconds: float

    def bo(self) -> list[pd.DataFrame]:
        return [table[table.phase == "bo"] for table in self.tables.values()]

    def lengthscale(self) -> np.ndarray:
        """``S x T``: the geometric mean of each BO round's lengthscales (one column when isotropic)."""
        return np.stack([np.exp(np.log(t.filter(like="lengthscale_").to_numpy()).mean(-1)) for t in self.bo()])

    def simple_regret(self) -> np.ndarray:
        """``S x T``."""
        return np.stack([t["simple_regret"].to_numpy() for t in self.bo()])

    def final(self, column: str) -> np.ndarray:
        """``S``: the last row's value of ``column``."""
        return np.array([t[column].iloc[-1] for t in self.tables.values()])


def reference_run(
    method: str, reference: str, task: str, seed: int, budget: int, n_init: int
) -> tuple[pd.DataFrame, float]:
    """One seed of a reference loop and its seconds (a module-level function: worker processes run it)."""
    loop = botorch_loops.gp_ucb_mll if method == "gp-ucb-mll" else botorch_loops.vanilla_bo
    tic = time.perf_counter()
    table = loop(task, seed, budget, n_init, *REFERENCES[method][reference])
    return table, time.perf_counter() - tic


def run_references(jobs: list[tuple], workers: int) -> list[tuple[pd.DataFrame, float]]:
    """:func:`reference_run` of each job, in ``workers`` single-threaded processes (1: in this one)."""
    if workers == 1:
        return [reference_run(*job) for job in jobs]
    with ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=engine.limit_threads, initargs=(1,)
    ) as pool:
        return list(pool.map(reference_run, *zip(*jobs)))


def trajectory_gap(reference: np.ndarray, engine_values: np.ndarray) -> float:
    """Mean over BO rounds of ``|log10 m(t) - log10 m_engine(t)|``, ``m`` the seed mean (``S x T`` inputs)."""
    return float(np.abs(np.log10(reference.mean(0)) - np.log10(engine_values.mean(0))).mean())


def compare(reference: Runs, ours: Runs) -> dict[str, float]:
    """One reference against the engine, as numbers (module docstring; ``1 %`` counts seeds)."""
    final_sr, ours_sr = reference.final("simple_regret"), ours.final("simple_regret")
    final_ls, ours_ls = reference.lengthscale()[:, -1], ours.lengthscale()[:, -1]

    def p(a: np.ndarray, b: np.ndarray) -> float:
        return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)

    return {
        "p(SR)": p(final_sr, ours_sr),
        "p(CR)": p(reference.final("cumulative_regret"), ours.final("cumulative_regret")),
        "p(ls)": p(final_ls, ours_ls),
        "gap ls": trajectory_gap(reference.lengthscale(), ours.lengthscale()),
        "gap SR": trajectory_gap(reference.simple_regret(), ours.simple_regret()),
        "1 %": int((np.abs(final_sr - ours_sr) <= 0.01 * ours_sr).sum()),
        "median SR": float(np.median(final_sr)),
        "median ls": float(np.median(final_ls)),
        "s/run": reference.seconds,
        "fit retries": sum(int(t["fit_warnings"].sum()) for t in reference.tables.values()),
    }


def engine_row(ours: Runs) -> dict[str, float]:
    """The engine's own row: its medians and seconds, nothing to compare."""
    return {
        "median SR": float(np.median(ours.final("simple_regret"))),
        "median ls": float(np.median(ours.lengthscale()[:, -1])),
        "s/run": ours.seconds,
    }


def formatted(row: dict[str, float], seeds: int) -> list[str]:
    """A row's printed cells, in :data:`COLUMNS` order (blank where the row has no number)."""
    cells = []
    for column in COLUMNS:
        if column not in row:
            cells.append("")
        elif column == "1 %":
            cells.append(f"{row[column]}/{seeds}")
        else:
            cells.append(format(row[column], FORMATS[column]))
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--gp-ucb-mll-tasks", nargs="*", default=["hartmann3", "hartmann6", "levy5"])
    parser.add_argument("--vanilla-bo-tasks", nargs="*", default=["hartmann6"])
    parser.add_argument("--workers", type=int, default=1, help="processes for the reference loops")
    parser.add_argument(
        "--table",
        type=Path,
        help="also write the comparison here as a summary table (Parquet), one row per (task, method, "
        "implementation), numbers unrounded: reference/summary/crosscheck.parquet is what the reference's "
        "report shows in its protocol section",
    )
    args = parser.parse_args()
    command = "python " + shlex.join(sys.argv)
    print("command: " + command, flush=True)
    engine.limit_threads(1)
    seeds = list(range(args.seeds))
    cases = [("gp-ucb-mll", task) for task in args.gp_ucb_mll_tasks]
    cases += [("vanilla-bo", task) for task in args.vanilla_bo_tasks]

    ours = {}
    for method, task in cases:
        tic = time.perf_counter()
        result = engine.run(task, method, seeds, budget=args.budget, n_init=args.n_init)
        ours[method, task] = Runs(result.tables, (time.perf_counter() - tic) / len(seeds))
    jobs = [
        (method, reference, task, seed, args.budget, args.n_init)
        for method, task in cases
        for reference in REFERENCES[method]
        for seed in seeds
    ]
    done = dict(zip(jobs, run_references(jobs, args.workers)))

    print(
        f"{len(seeds)} seeds, {args.budget} BO rounds after {args.n_init} initial points; "
        "p: Mann-Whitney (two-sided) against the engine; gap: mean over rounds of |log10| seed-mean difference"
    )
    header = f"{'task':12s} {'method':11s} {'implementation':16s}" + "".join(f" {c:>11s}" for c in COLUMNS)
    print(header)
    print("-" * len(header))
    compared = []
    for method, task in cases:
        rows = {"engine": engine_row(ours[method, task])}
        for reference in REFERENCES[method]:
            runs = [done[method, reference, task, seed, args.budget, args.n_init] for seed in seeds]
            rows[reference] = compare(
                Runs(dict(zip(seeds, (table for table, _ in runs))), float(np.mean([s for _, s in runs]))),
                ours[method, task],
            )
        for name, row in rows.items():
            cells = formatted(row, len(seeds))
            print(f"{task:12s} {method:11s} {name:16s}" + "".join(f" {c:>11s}" for c in cells), flush=True)
            compared.append({"task": task, "method": method, "implementation": name} | row)
    if args.table:
        write_table(compared, args.table, command, seeds=len(seeds), budget=args.budget, n_init=args.n_init)


def write_table(rows: list[dict], path: Path, command: str, **protocol: int) -> None:
    """The comparison as a summary table: :data:`TABLE_COLUMNS`, what each implementation is, the
    protocol and the command that made it (written whole or not at all)."""
    frame = pd.DataFrame(rows, columns=["task", "method", "implementation", *COLUMNS]).rename(columns=TABLE_COLUMNS)
    frame.insert(3, "description", frame["implementation"].map(IMPLEMENTATIONS))
    frame = frame.astype({"within_1pct": "Int64", "fit_retries": "Int64"}).assign(**protocol, command=command)
    path.parent.mkdir(parents=True, exist_ok=True)
    with records.atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


if __name__ == "__main__":
    main()
