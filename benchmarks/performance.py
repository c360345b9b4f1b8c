"""The engine against the plain per-seed BoTorch loop, and every method's cost, in one run.

    python benchmarks/performance.py [--task hartmann6] [--budget 100] [--seeds 20]
        [--loop-seeds 3] [--methods gp-ucb-mll oscbo ...] [--concurrent 2] [--device cpu]

1. The BoTorch loop a user would write for GP-UCB-MLL with the paper's protocol, one seed
   at a time (``benchmarks/botorch_loops.py``): a ``SingleTaskGP`` (Matérn-5/2, zero mean, fixed
   noise 0.01 on standardised y), theta_0 by ``fit_gpytorch_mll``, then each round Adam (lr 0.01,
   50 steps, warm start) on log-lengthscale and the exact marginal likelihood, and
   ``optimize_acqf(UCB beta = 2, 5 restarts from the best of 20 raw samples)``; ``--loop-seeds``
   seeds (it is slow), their mean.
2. The engine: one lockstep job of ``--seeds`` seeds for each method, on the same task,
   budget and initial designs, on ``--device`` (the CPU unless told: ``auto`` would move it
   to a GPU where there is one, beside a loop on the CPU).
3. With ``--concurrent N``: N GP-UCB-MLL jobs at once against the same N one after the other
   (wall-clock, start-up included): with threads capped at one per job, N jobs on N free
   cores must take no longer together than one after the other (no oversubscription).

Every measurement runs in a fresh single-threaded process (imports excluded from its time,
as a workflow job pays them once); its peak resident memory is that process's. Prints
seconds per seed-run, the ratio of the loop to the engine, and peak memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_METHODS = ["gp-ucb-mll", "oscbo", "oscbo-l1", "ocbo", "a-gp-ucb", "lb-gp-ucb", "scgp", "vanilla-bo"]
#: The methods that run only on a task that declares its true lengthscale (a GP-sample task, e.g.
#: gp5): a benchmark times them there, not on the other methods' task.
NEEDS_TRUE_LENGTHSCALE = frozenset({"gp-ucb-true"})


def worker(args: argparse.Namespace) -> None:
    """One measurement in this process; prints JSON lines: when the measured run starts (a caller
    that stops it knows for how long it ran), then the result (seconds, peak memory in MB)."""
    import oscbo  # noqa: F401  (first: the pinned numerical code path)
    from oscbo import run as engine

    engine.limit_threads(1)
    if args.worker == "loop":
        import botorch_loops

        botorch_loops.gp_ucb_mll(args.task, 100, 2, args.n_init)  # warm-up: lazy imports, first calls
        tic = time.perf_counter()
        for seed in range(args.loop_seeds):
            botorch_loops.gp_ucb_mll(args.task, seed, args.budget, args.n_init)
        seconds = (time.perf_counter() - tic) / args.loop_seeds
    else:
        from oscbo.methods.base import MethodUnavailableError
        from oscbo.settings import Settings

        settings = Settings() if args.tabicl_checkpoint is None else Settings(tabicl_checkpoint=args.tabicl_checkpoint)
        options = {"n_init": args.n_init, "settings": settings, "device": args.device}
        try:
            # warm-up (lazy imports, first calls, CUDA's set-up): the measured run's first rounds
            engine.run(args.task, args.worker, [100], budget=min(2, args.budget), **options)
        except MethodUnavailableError as error:
            print(json.dumps({"error": str(error)}))
            return
        print(json.dumps({"measuring_since": time.time()}), flush=True)
        tic = time.perf_counter()
        result = engine.run(args.task, args.worker, list(range(args.seeds)), budget=args.budget, **options)
        seconds = (time.perf_counter() - tic) / args.seeds
        if args.records:
            import pandas as pd

            pd.concat(result.tables.values(), ignore_index=True).to_parquet(args.records)
        shares = {
            c: sum(t[c].sum() for t in result.tables.values()) for c in ("fit_seconds", "acq_seconds", "oracle_seconds")
        }
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"seconds": seconds, "peak_mb": peak}
    if args.worker != "loop":
        total = sum(shares.values())
        out.update({k.split("_")[0]: v / total for k, v in shares.items()})
    print(json.dumps(out))


def worker_command(
    kind: str,
    *,
    task: str,
    budget: int,
    seeds: int,
    n_init: int,
    loop_seeds: int = 1,
    device: str = "cpu",
    tabicl_checkpoint: str | Path | None = None,
    records: str | Path | None = None,
) -> list[str]:
    """The command of one measurement in a fresh process: ``kind`` is ``loop`` or a method's name;
    ``records``: where the engine's records of every seed go (one parquet file), if anywhere."""
    command = [sys.executable, __file__, "--worker", kind, "--task", task, "--budget", str(budget)]
    command += ["--seeds", str(seeds), "--loop-seeds", str(loop_seeds), "--n-init", str(n_init), "--device", device]
    if tabicl_checkpoint:
        command += ["--tabicl-checkpoint", str(tabicl_checkpoint)]
    if records:
        command += ["--records", str(records)]
    return command


def measure(kind: str, timeout: float | None = None, **options) -> dict:
    """One measurement (:func:`worker_command`'s ``options``) in a fresh process: its JSON line.

    Raises:
        subprocess.CalledProcessError: the worker failed (its ``stderr`` says why).
        subprocess.TimeoutExpired: it ran past ``timeout`` seconds (it is killed).
    """
    done = subprocess.run(worker_command(kind, **options), check=True, capture_output=True, text=True, timeout=timeout)
    return json.loads(done.stdout.strip().splitlines()[-1])


def sizes(args: argparse.Namespace) -> dict:
    """This run's measurement options, as :func:`worker_command` takes them."""
    return {
        "task": args.task,
        "budget": args.budget,
        "seeds": args.seeds,
        "n_init": args.n_init,
        "loop_seeds": args.loop_seeds,
        "device": args.device,
        "tabicl_checkpoint": args.tabicl_checkpoint,
    }


def concurrency(args: argparse.Namespace) -> None:
    """N single-threaded jobs at once against one after the other, as wall-clock."""
    command = worker_command("gp-ucb-mll", **sizes(args))
    tic = time.perf_counter()
    for _ in range(args.concurrent):
        subprocess.run(command, check=True, capture_output=True)
    sequential = time.perf_counter() - tic
    tic = time.perf_counter()
    running = [subprocess.Popen(command, stdout=subprocess.DEVNULL) for _ in range(args.concurrent)]
    if any(process.wait() for process in running):
        raise RuntimeError("a concurrent job failed")
    together = time.perf_counter() - tic
    print(
        f"{args.concurrent} GP-UCB-MLL jobs: {sequential:.1f} s one after the other, {together:.1f} s at once "
        f"(ratio {together / sequential:.2f}; at most 1 means no oversubscription on {args.concurrent} free cores)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="hartmann6")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--loop-seeds", type=int, default=3)
    parser.add_argument("--methods", nargs="*", default=DEFAULT_METHODS)
    parser.add_argument("--concurrent", type=int, default=0, help="also time N jobs at once (0: skip)")
    parser.add_argument("--device", default="cpu", help="where the engine runs: cpu, cuda[:i] or auto")
    parser.add_argument("--tabicl-checkpoint", help="TabICLv2's checkpoint (default: the settings')")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--records", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if args.concurrent:
        concurrency(args)

    print(
        f"task {args.task}, budget {args.budget} + {args.n_init} initial points, 1 thread per process, "
        f"engine on {args.device}"
    )
    loop = measure("loop", **sizes(args))
    print(
        f"plain BoTorch loop, GP-UCB-MLL ({args.loop_seeds} seeds, one at a time): "
        f"{loop['seconds']:6.2f} s per seed-run, peak {loop['peak_mb']:5.0f} MB",
        flush=True,
    )
    print(f"engine, one job of {args.seeds} seeds:")
    print(
        f"  {'method':12s} {'s/seed-run':>10s} {'loop/engine':>11s} {'x GP-UCB-MLL':>12s} {'peak MB':>8s}"
        f"  share fit / acquisition / oracle"
    )
    reference = None
    for method in args.methods:
        result = measure(method, **sizes(args))
        if "error" in result:
            print(f"  {method:12s} not run: {result['error']}")
            continue
        reference = reference or (result["seconds"] if method == "gp-ucb-mll" else None)
        relative = f"{result['seconds'] / reference:12.2f}" if reference else f"{'':12s}"
        print(
            f"  {method:12s} {result['seconds']:10.2f} {loop['seconds'] / result['seconds']:11.1f} {relative} "
            f"{result['peak_mb']:8.0f}  {result['fit']:.0%} / {result['acq']:.0%} / {result['oracle']:.0%}",
            flush=True,
        )


if __name__ == "__main__":
    main()
