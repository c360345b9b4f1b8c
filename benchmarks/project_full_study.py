"""Projected wall time of the full study (config/config.yaml) on this machine.

    python benchmarks/project_full_study.py [--config config/config.yaml] [--cores 2] [--batch 5]

Measures every (task, method) pair of the config at the full budget with default settings,
single-threaded, in one lockstep job of ``--batch`` seeds (seeds share a job as they do in the
workflow; a smaller batch than the config's ``seeds_per_job`` costs a little more per seed, so
the projection errs high), then projects every experiment from those costs: seed-runs x cost
(a variant or an ablation costs what its method costs with default settings; a one-seed-per-job
experiment is priced at the batched cost, which under-prices it) plus a per-job start-up cost,
spread over the cores. Lunar Lander is measured with 2 episodes and its oracle re-priced at the measured
seconds per 50-episode evaluation. TabICLv2 is priced separately (see the note it prints).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections import defaultdict

import torch

from oscbo import run as engine
from oscbo.study import config as study_config
from oscbo.tasks.lunar import HEURISTIC_WEIGHTS, mean_reward


def job_startup_seconds() -> float:
    """A workflow job's start: a Python process importing the engine."""
    tic = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import oscbo.run"], check=True)
    return time.perf_counter() - tic


def lunar_seconds_per_evaluation(episodes: int) -> float:
    """Mean time of an evaluation over 3 random controllers (which crash early) and the
    heuristic (which flies whole episodes): BO's queries move from the first to the second."""
    generator = torch.Generator().manual_seed(0)
    controllers = [(2 * torch.rand(12, generator=generator, dtype=torch.float64)).tolist() for _ in range(3)]
    times = []
    for weights in [*controllers, list(HEURISTIC_WEIGHTS)]:
        tic = time.perf_counter()
        mean_reward(weights, episodes=episodes)
        times.append(time.perf_counter() - tic)
    return statistics.mean(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--batch", type=int, default=5, help="seeds per measured job")
    args = parser.parse_args()
    config = study_config.load(args.config)
    engine.limit_threads(1)
    episodes = config["task_options"].get("lunar12", {}).get("episodes", 50)
    lunar_eval = lunar_seconds_per_evaluation(episodes)
    startup = job_startup_seconds()
    print(f"job start-up {startup:.1f} s; lunar12: {lunar_eval:.2f} s per {episodes}-episode evaluation")

    cost: dict[tuple[str, str], float] = {}

    def seed_run_seconds(task: str, method: str) -> float:
        """One seed-run at the full budget with default settings (measured once per pair)."""
        if (task, method) not in cost:
            options = {**config["task_options"].get(task, {}), **({"episodes": 2} if task == "lunar12" else {})}
            tic = time.perf_counter()
            result = engine.run(task, method, list(range(args.batch)), budget=100, n_init=10, task_options=options)
            seconds = (time.perf_counter() - tic) / args.batch
            oracle = result.tables[0]["oracle_seconds"].sum()
            if task == "lunar12":  # re-price the 2-episode oracle at the configured episodes
                seconds += 110 * lunar_eval - oracle
                oracle = 110 * lunar_eval
            cost[(task, method)] = seconds
            print(f"{task:13s} {method:12s} {seconds:7.2f} s per seed-run, oracle {oracle / seconds:4.0%}", flush=True)
        return cost[(task, method)]

    by_method, by_task = defaultdict(float), defaultdict(float)
    total, jobs, skipped = 0.0, 0, []
    for name, experiment in config["experiments"].items():
        seeds = len(study_config.experiment_seeds(experiment))
        chunks = -(-seeds // experiment["seeds_per_job"])
        for spec in study_config.method_specs(experiment):
            for task in experiment["tasks"]:
                if spec.name == "tabicl":
                    skipped.append((name, task))
                    continue
                seconds = seed_run_seconds(task, spec.name) * seeds * experiment["budget"] / 100
                by_method[spec.name] += seconds
                by_task[task] += seconds
                total += seconds + chunks * startup
                jobs += chunks
    print("\nprojected core-hours per method (all experiments):")
    for method, seconds in sorted(by_method.items(), key=lambda kv: -kv[1]):
        print(f"  {method:12s} {seconds / 3600:7.2f}")
    print("\nprojected core-hours per task (all experiments):")
    for task, seconds in sorted(by_task.items(), key=lambda kv: -kv[1]):
        print(f"  {task:13s} {seconds / 3600:7.2f}")
    print(f"\n{jobs} BO jobs (TabICLv2 excluded), {total / 3600:.1f} core-hours: "
          f"about {total / 3600 / args.cores:.1f} h of wall time on {args.cores} cores")
    print(f"TabICLv2: {len(skipped)} (experiment, task) cells not priced here; on CPU the default "
          "model takes seconds to tens of seconds per forward-backward pass (see the README), so it "
          "needs GPUs.")


if __name__ == "__main__":
    main()
