"""The test suite's CPU time at two commits, one after the other on this machine, and their ratio.

    python benchmarks/suite_time.py [--before 956ed35] [--after HEAD] [--no-record]

Each commit is cloned from this repository into a temporary folder and installed there as CI does
(``python3 -m venv .venv``, ``pip install -c envs/constraints.txt -e ".[test]"``, not timed); then
the README's test command's ``pytest`` (the project's ``addopts``: two processes on two cores) runs
under ``/usr/bin/time`` (its 25 slowest tests printed), which counts the CPU seconds of every
process it waits for (pytest's workers, the workflow tests' Snakemake processes and their jobs). The
figures: each commit's CPU seconds (user and system) and wall seconds, the tests passed, and after /
before of the CPU time, appended to the measurements table (``benchmarks/measurements.py``). Run it
on an idle machine; the VMs' speed varies from day to day, which is why the two run back to back.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from measurements import report

REPO = Path(__file__).resolve().parents[1]
INSTALL = 'python3 -m venv .venv && . .venv/bin/activate && pip install -q -c envs/constraints.txt -e ".[test]"'


def suite_seconds(commit: str) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, tests passed) of the test suite at ``commit``, in a fresh clone."""
    with tempfile.TemporaryDirectory() as folder:
        clone = Path(folder, "clone")
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        subprocess.run(["git", "checkout", "-q", commit], cwd=clone, check=True)
        env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
        subprocess.run(["bash", "-c", INSTALL], cwd=clone, env=env, check=True, capture_output=True)
        timing = clone / "time.txt"
        pytest = "pytest -q -p no:cacheprovider --durations=25"
        command = f". .venv/bin/activate && /usr/bin/time -f '%U %S %e' -o {timing} {pytest}"
        done = subprocess.run(["bash", "-c", command], cwd=clone, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the suite failed at {commit} ({done.returncode}):\n{done.stdout[-4000:]}")
        user, system, wall = map(float, timing.read_text().split()[-3:])
        slowest = done.stdout.split("slowest 25 durations", 1)[-1].split("\n\n", 1)[0]
        print(f"{commit}: the slowest tests (wall, beside the other process's){slowest}", flush=True)
        passed = re.search(r"(\d+) passed", done.stdout.splitlines()[-1])
    return user + system, wall, int(passed.group(1)) if passed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="956ed35", help="the earlier commit (default: where 55 measured)")
    parser.add_argument("--after", default="HEAD", help="the later commit")
    parser.add_argument("--no-record", action="store_true", help="print only; leave the measurements table as it is")
    args = parser.parse_args()
    figures = []
    cpu, short = {}, {}
    for label, commit in (("before", args.before), ("after", args.after)):
        name = subprocess.run(["git", "rev-parse", "--short", commit], cwd=REPO, capture_output=True, text=True)
        short[label] = name.stdout.strip()
        cpu[label], wall, passed = suite_seconds(commit)
        figures += [
            (f"test suite at {short[label]}, CPU (user + system)", cpu[label] / 60, "min"),
            (f"test suite at {short[label]}, wall", wall / 60, "min"),
            (f"test suite at {short[label]}, tests passed", passed, "tests"),
        ]
    ratio = cpu["after"] / cpu["before"]
    figures.append((f"test suite CPU time, {short['after']} / {short['before']}", ratio, "ratio"))
    report(figures, keep=not args.no_record)


if __name__ == "__main__":
    main()
