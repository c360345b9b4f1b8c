"""What a BO job's process spends outside its BO rounds -- start, imports, set-up, writing its
record and manifest -- against a bare ``python -c "import torch"``, in one run, in turns.

    python benchmarks/process_start.py [--repeats 5] [--no-record]

Each repeat starts, one after the other, a bare interpreter importing torch and a real workflow
job (``oscbo.run.run_job``: GP-UCB-MLL on hartmann3, one seed, 3 BO rounds after 5 points, one
thread), each a fresh process timed from outside. The job's time inside its rounds is its
record's own (the fit, acquisition and oracle seconds of every step); the rest is what the
process pays to exist. Each repeat also times ``import torch`` followed by each package a job
imports beyond it (:data:`BEYOND_TORCH`): what that package adds to a job's start, the figures
that decide whether trimming it is worth a change of the run code. Prints the medians and appends
them to the measurements table (``benchmarks/measurements.py``), with the ratio of the job's
outside time to the bare import.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from oscbo import records
from oscbo.study import config as study_config
from oscbo.study.jobs import jobs

JOB = {
    "experiments": {"start": {"tasks": ["hartmann3"], "methods": ["gp-ucb-mll"], "seeds": 1, "budget": 3, "n_init": 5}}
}
#: The job's process: what workflow/scripts/run_bo.py runs, its job and manifest from the command line.
RUN = (
    "import json, sys; from oscbo.run import run_job; from oscbo.study.job import Job; "
    "run_job(Job.from_dict(json.loads(sys.argv[1])), sys.argv[2], device='cpu', threads=1)"
)
ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
#: What a job imports beyond torch: pandas (its records; oscbo.records), BoTorch (the fit and the
#: acquisition), and sympy, which torch imports at its first ``torch.broadcast_shapes`` (through
#: ``torch.fx.experimental.symbolic_shapes``), called by GPyTorch's ``MultivariateNormal`` at the
#: first fit.
BEYOND_TORCH = {
    "pandas": "import pandas",
    "botorch": "import botorch",
    "sympy (first torch.broadcast_shapes)": "torch.broadcast_shapes((2,), (3, 1))",
}


def timed(command: list[str]) -> float:
    """Wall-clock seconds of ``command`` in a fresh process (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env={**os.environ, **ENV})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-record", action="store_true", help="print only; leave the measurements table as it is")
    args = parser.parse_args()

    (job,) = jobs(study_config.validate(JOB), lambda task: None).values()
    bare, wall, inside = [], [], []
    beyond: dict[str, list[float]] = {name: [] for name in BEYOND_TORCH}
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            bare.append(timed([sys.executable, "-c", "import torch"]))
            for name, statement in BEYOND_TORCH.items():
                beyond[name].append(timed([sys.executable, "-c", f"import torch; {statement}"]))
            manifest = Path(folder, str(repeat), job.manifest_name)
            wall.append(timed([sys.executable, "-c", RUN, json.dumps(job.to_dict()), str(manifest)]))
            (path,) = [p for p in manifest.parent.iterdir() if p.suffix == ".parquet"]
            inside.append(float(pd.read_parquet(path)[records.SECONDS_COLUMNS].sum().sum()))
    outside = [w - i for w, i in zip(wall, inside)]
    figures = [
        ("bare python -c 'import torch', median", statistics.median(bare), "s"),
        ("BO job process (gp-ucb-mll, hartmann3, 1 seed, 3 rounds), median", statistics.median(wall), "s"),
        ("its seconds inside the rounds (record), median", statistics.median(inside), "s"),
        ("its seconds outside the rounds, median", statistics.median(outside), "s"),
        ("outside the rounds / bare import torch", statistics.median(outside) / statistics.median(bare), "ratio"),
        *(
            (
                f"{name} imported after torch, beyond the bare import, median",
                statistics.median(t) - statistics.median(bare),
                "s",
            )
            for name, t in beyond.items()
        ),
    ]
    from measurements import report  # benchmarks/ is on the path of the scripts in it

    report(figures, keep=not args.no_record)


if __name__ == "__main__":
    main()
