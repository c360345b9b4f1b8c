"""Every method on a CUDA device beside the CPU: seconds per seed-run, and where their records part.

    python benchmarks/gpu_check.py [--task hartmann6] [--known-truth-task gp5] [--budget 20] [--tabicl-budget 1]
        [--n-init 10] [--seeds 10 20] [--methods oscbo ... tabicl] [--tabicl-checkpoint PATH]
        [--time-limit 540] [--cpu-parallel N] [--cpu-only] [--no-record] [--commit SHA]

The device policy (docs/user-guide.md, "Where it runs": GP methods on CPU cores, TabICLv2 on
GPUs) was set by arithmetic, with no GPU to measure it. On a machine with a CUDA device this
measures it, in at most ``--time-limit`` seconds in all (default 9 minutes):

1. Each method of ``--methods`` (default: every method of the registry) runs one lockstep job
   of each ``--seeds`` count on the CPU and on CUDA, each job in a fresh process with one
   thread, as the workflow runs it, imports and a warm-up excluded (``performance.measure``),
   on ``--task``; GP-UCB at the true kernel, which runs only where the lengthscale is known, on
   ``--known-truth-task`` (a GP-sample task).
   CUDA jobs run one at a time (the workflow never shares a GPU); CPU jobs ``--cpu-parallel``
   at once (default: every core but two, one left to the CUDA job), as the workflow fills the
   cores.
2. It prints the seconds per seed-run, CPU beside CUDA. A job still running at the time limit
   is stopped, and its cell is a lower bound (``>``).
3. It prints, per method, the first BO round at which the CUDA and the CPU records of the same
   seeds part: mu, sigma or a lengthscale more than 1e-6 apart (a GPU rounds differently from
   the CPU, and the trajectories then go their own ways).
4. Unless ``--no-record``, it appends its figures to the measurements table
   (``benchmarks/measurements.py``): per method and device the seconds per seed-run, CUDA / CPU
   where both finished, and the round where the records part (0: never). On a copy of a clean
   checkout without its ``.git``, ``--commit`` says which commit it is.

TabICLv2 refits a 29 M-parameter network for every seed and round, far slower than a GP: it runs
``--tabicl-budget`` rounds instead of ``--budget``. It uses the real checkpoint when it is on
disk (docs/user-guide.md, "TabICLv2 and its checkpoint"), else the tiny random one that
``tests/tabicl_checkpoint.py`` writes, whose seconds say nothing of TabICLv2's; the output says
which. Without a CUDA device, or with ``--cpu-only``, only the CPU half runs, and it says so.
``CUDA_VISIBLE_DEVICES`` picks the GPU.

Sizing: on this project's 2-core machine a GP job of 10 or 20 seeds x 20 rounds took 2 to 9 s
on one core, plus about 5 s of imports and warm-up per process; how long it takes on a GPU is
what this measures, and the time limit stops what does not fit (the output says which jobs). A
forward-backward pass of TabICLv2's real network takes seconds on a CPU (docs/user-guide.md), so its CPU
jobs may reach the limit: their cells are then lower bounds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import torch
from performance import NEEDS_TRUE_LENGTHSCALE, measure  # benchmarks/ is on the path of the scripts in it

from oscbo import methods, provenance
from oscbo.settings import Settings

REPO = Path(__file__).resolve().parents[1]
#: The CUDA and CPU records part where mu, sigma or a lengthscale differ by more than this.
PARTING = 1e-6
DEVICES = ("cpu", "cuda")


def tabicl_checkpoint(given: str | None, folder: Path) -> tuple[Path, bool]:
    """TabICLv2's checkpoint, and whether it is the real one (said on stdout): ``given``, else the
    settings' (in this checkout, wherever the script runs from), if it is on disk; else a tiny
    random one, written into ``folder``."""
    path = Path(given).absolute() if given else REPO / Settings().tabicl_checkpoint
    if path.is_file():
        print(f"TabICLv2 on the checkpoint {path}")
        return path, True
    print(
        f"TabICLv2 on a TINY RANDOM checkpoint (tests/tabicl_checkpoint.py): {path} is not on disk, so its "
        "seconds say nothing of TabICLv2's (docs/user-guide.md, 'TabICLv2 and its checkpoint', says how to fetch it)",
        flush=True,
    )
    tiny = folder / "tabicl-tiny.ckpt"
    subprocess.run([sys.executable, REPO / "tests" / "tabicl_checkpoint.py", tiny], check=True, capture_output=True)
    return tiny, False


def records_path(folder: Path, method: str, device: str, seeds: int) -> Path:
    """Where a measured job's records go (every seed's, one file)."""
    return folder / f"{method}-{device}-{seeds}.parquet"


def parting(cpu: pd.DataFrame, cuda: pd.DataFrame, n_init: int) -> str:
    """The first BO round at which a seed's CUDA record parts from its CPU record (mu, sigma or
    a lengthscale more than :data:`PARTING` apart), with the largest difference there; or "never"."""
    columns = ["mu", "sigma", *[column for column in cpu.columns if column.startswith("lengthscale_")]]
    on_cpu, on_cuda = (
        frame[frame.phase == "bo"].set_index(["step", "seed"])[columns].sort_index() for frame in (cpu, cuda)
    )
    on_cuda = on_cuda.reindex(on_cpu.index)
    # both NaN (TabICLv2 has no lengthscale) agree; one NaN does not
    apart = (on_cpu - on_cuda).abs().where(on_cpu.notna() | on_cuda.notna(), 0.0).fillna(math.inf)
    parted = apart[(apart > PARTING).any(axis=1)]
    if parted.empty:
        return "never"
    step = parted.index.get_level_values("step")[0]
    at = apart.loc[step]
    column = at.max().idxmax()
    seed = at[column].idxmax()
    return f"round {step - n_init + 1} ({column} of seed {seed}: {at.loc[seed, column]:.1e} apart)"


def attempt(method: str, device: str, seeds: int, deadline: float, **options) -> dict:
    """One job's measurement (``performance.measure``'s ``options``), stopped at ``deadline``
    (``time.monotonic``): its JSON, ``{"over": a lower bound of its seconds per seed-run}`` if
    stopped, or ``{"error": why}``."""
    left = deadline - time.monotonic()
    if left < 1:
        return {"error": "not started: the time limit was reached"}
    try:
        result = measure(method, timeout=left, seeds=seeds, device=device, **options)
    except subprocess.TimeoutExpired as stopped:
        lines = (stopped.stdout or b"").decode().splitlines()
        since = [json.loads(line)["measuring_since"] for line in lines if "measuring_since" in line]
        result = {"over": (time.time() - since[0]) / seeds} if since else {"error": "stopped in its warm-up"}
    except subprocess.CalledProcessError as failed:
        result = {"error": (failed.stderr.strip().splitlines() or [f"exit status {failed.returncode}"])[-1]}
    said = result.get("error") or cell(result).strip() + " s per seed-run"
    print(f"  {method} on {device}, {seeds} seeds: {said}", file=sys.stderr, flush=True)
    return result


def cell(result: dict | None) -> str:
    """A job's seconds per seed-run, a lower bound (stopped), ``n/a`` (no result) or ``-`` (not asked for)."""
    if result is None:
        return f"{'-':>8s}"
    if "over" in result:
        return f"{'>' + format(result['over'], '.2f'):>8s}"
    return f"{result['seconds']:8.2f}" if "seconds" in result else f"{'n/a':>8s}"


def figures(
    measured: dict, budgets: dict[str, int], tasks: dict[str, str], seeds: int, folder: Path, n_init: int
) -> list[tuple[str, float, str]]:
    """The measurements table's rows of one count of ``seeds``: per method, the seconds per
    seed-run on each device that finished, CUDA / CPU where both did, and the BO round at which
    the records part (0: never)."""
    rows = []
    for method, budget in budgets.items():
        name = f"gpu_check {tasks[method]}, {budget} rounds, {seeds} seeds: {method}"
        seconds = {device: (measured.get((method, device, seeds)) or {}).get("seconds") for device in DEVICES}
        rows += [(f"{name} on {device}", value, "s per seed-run") for device, value in seconds.items() if value]
        if all(seconds.values()):
            rows.append((f"{name}, CUDA / CPU", seconds["cuda"] / seconds["cpu"], "ratio"))
            records = [records_path(folder, method, device, seeds) for device in DEVICES]
            part = parting(*map(pd.read_parquet, records), n_init)
            at = 0 if part == "never" else int(part.split()[1])
            rows.append((f"{name}, first BO round the CUDA and CPU records part", at, "round (0: never)"))
    return rows


def table(measured: dict, seed_counts: list[int], budgets: dict[str, int], folder: Path, n_init: int) -> list[str]:
    """The lines of the results: per method, seconds per seed-run on each device at each count
    of seeds and where the records part (on the largest count); then why a job has no result."""
    compared_at = max(seed_counts)
    lines = [
        "seconds per seed-run (imports and a warm-up excluded; cuda/cpu below 1: faster on CUDA)",
        f"{'':19s}"
        + "".join(f" | {f'{seeds} seeds per job':^26s}" for seeds in seed_counts)
        + f" | CUDA and CPU records part ({compared_at} seeds, by more than {PARTING:g})",
        f"{'method':12s} {'rounds':>6s}"
        + " | {:>8s} {:>8s} {:>8s}".format(*DEVICES, "cuda/cpu") * len(seed_counts)
        + " | at",
    ]
    missing = []
    for method, budget in budgets.items():
        cells = []
        for seeds in seed_counts:
            results = [measured.get((method, device, seeds)) for device in DEVICES]
            seconds = [(result or {}).get("seconds") for result in results]
            ratio = f"{seconds[1] / seconds[0]:8.2f}" if all(seconds) else f"{'-':>8s}"
            cells.append(" ".join([*map(cell, results), ratio]))
            missing += [
                f"no result: {method} on {device}, {seeds} seeds: {result['error']}"
                for device, result in zip(DEVICES, results)
                if result and "error" in result
            ]
        records = [records_path(folder, method, device, compared_at) for device in DEVICES]
        part = parting(*map(pd.read_parquet, records), n_init) if all(map(Path.is_file, records)) else "-"
        lines.append(f"{method:12s} {budget:6d} | " + " | ".join(cells) + f" | {part}")
    return lines + missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="hartmann6")
    parser.add_argument(
        "--known-truth-task",
        default="gp5",
        help=f"the task of {', '.join(sorted(NEEDS_TRUE_LENGTHSCALE))} (a GP-sample task: its lengthscale is known)",
    )
    parser.add_argument("--budget", type=int, default=20, help="BO rounds of the GP methods")
    parser.add_argument("--tabicl-budget", type=int, default=1, help="BO rounds of TabICLv2 (far slower a round)")
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="+", default=[10, 20], help="seeds per job, one job of each")
    parser.add_argument("--methods", nargs="+", default=methods.names(), choices=methods.names(), metavar="METHOD")
    parser.add_argument("--tabicl-checkpoint", help="TabICLv2's checkpoint (default: the settings', if on disk)")
    parser.add_argument(
        "--time-limit", type=float, default=540.0, help="seconds for everything; jobs still running stop"
    )
    parser.add_argument(
        "--cpu-parallel",
        type=int,
        default=max(1, len(os.sched_getaffinity(0)) - 2),
        help="CPU jobs at once (default: every core but two)",
    )
    parser.add_argument("--cpu-only", action="store_true", help="only the CPU half, even with a CUDA device")
    parser.add_argument("--no-record", action="store_true", help="print only; leave the measurements table as it is")
    parser.add_argument("--commit", help="this checkout's commit, where it is a copy without its .git")
    args = parser.parse_args()
    deadline = time.monotonic() + args.time_limit

    print(f"machine: {provenance.machine()}")
    if args.cpu_only:
        print("--cpu-only: the CPU half only, no CUDA timings and no comparison of records")
        devices = DEVICES[:1]
    elif not torch.cuda.is_available():
        print("NO CUDA DEVICE FOUND (torch sees none): the CPU half only, no CUDA timings and no comparison of records")
        devices = DEVICES[:1]
    else:
        print(f"CUDA device: {torch.cuda.get_device_name()}, CUDA jobs one at a time")
        devices = DEVICES
    budgets = {method: args.tabicl_budget if method == "tabicl" else args.budget for method in args.methods}
    tasks = {method: args.known_truth_task if method in NEEDS_TRUE_LENGTHSCALE else args.task for method in budgets}
    elsewhere = sorted(method for method in budgets if tasks[method] != args.task)
    print(
        f"task {args.task}"
        + "".join(f" ({method}: {tasks[method]})" for method in elsewhere)
        + f", {args.n_init} initial points, {args.budget} BO rounds"
        + (f" (TabICLv2: {args.tabicl_budget}, its rounds are far slower)" if "tabicl" in budgets else "")
        + f"; one thread per job, {args.cpu_parallel} CPU jobs at once; time limit {args.time_limit:g} s",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        checkpoint, real = tabicl_checkpoint(args.tabicl_checkpoint, folder) if "tabicl" in budgets else (None, False)
        # the slowest first: TabICLv2 (the GPU method), then the GP methods; fewer seeds first
        order = sorted(budgets, key=lambda method: not methods.REGISTRY[method].gpu)
        futures: dict[tuple[str, str, int], Future] = {}
        with ThreadPoolExecutor(args.cpu_parallel) as cpu_lane, ThreadPoolExecutor(1) as cuda_lane:
            lanes = {"cpu": cpu_lane, "cuda": cuda_lane}
            for device in devices:
                for seeds in args.seeds:
                    for method in order:
                        futures[method, device, seeds] = lanes[device].submit(
                            attempt,
                            method,
                            device,
                            seeds,
                            deadline,
                            task=tasks[method],
                            budget=budgets[method],
                            n_init=args.n_init,
                            tabicl_checkpoint=checkpoint,
                            records=records_path(folder, method, device, seeds),
                        )
        measured = {key: future.result() for key, future in futures.items()}
        print("\n" + "\n".join(table(measured, args.seeds, budgets, folder, args.n_init)))
        if not args.no_record:
            from measurements import record  # benchmarks/ is on the path of the scripts in it

            rows = [
                row for seeds in args.seeds for row in figures(measured, budgets, tasks, seeds, folder, args.n_init)
            ]
            record(rows, commit=args.commit)
    tabicl = measured.get(("tabicl", "cuda", max(args.seeds)), {})
    if real and "seconds" in tabicl:
        seed_round = tabicl["seconds"] / args.tabicl_budget
        print(
            f"TabICLv2 on CUDA: {seed_round:.2f} s per seed-round "
            f"(benchmarks/project_full_study.py --tabicl-seed-round {seed_round:.2f} projects the study with it)"
        )


if __name__ == "__main__":
    main()
