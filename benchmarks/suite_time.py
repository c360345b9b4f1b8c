"""The test suite's CPU time at two commits, one after the other on this machine, and their ratio.

    python benchmarks/suite_time.py [--before 956ed35] [--after HEAD] [--no-record]

Each commit is cloned from this repository into a temporary folder and installed there as CI does
(``python3 -m venv .venv``, ``pip install -c envs/constraints.txt -e ".[test]"``, not timed); then
each of the README's test command's ``pytest`` runs (the whole suite before it was split in tiers;
the unit tier, then the e2e tier, after; the project's ``addopts``: two processes on two cores) runs
under ``/usr/bin/time``, which counts the CPU seconds of every process it waits for (pytest's
workers, the workflow tests' Snakemake processes and their jobs), with the plugin
``cpu_per_test.py``, which counts each test's (and the processes it started). The figures: each
run's CPU seconds (user and system) and wall seconds, the tests passed, after / before of the CPU
time (each tier's, and all together), the CPU of the :data:`MODULES` test modules that cost the
most at ``--after``, at both commits, and of its :data:`TESTS` costliest tests, appended to the
measurements table
(``benchmarks/measurements.py``). Run it on an idle machine; the VMs' speed varies from day to day,
which is why the two run back to back.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import cpu_per_test
from measurements import report, short_commit

REPO = Path(__file__).resolve().parents[1]
INSTALL = 'python3 -m venv .venv && . .venv/bin/activate && pip install -q -c envs/constraints.txt -e ".[test]"'
#: The costliest test modules at ``--after`` whose CPU time is recorded at both commits.
MODULES = 8
#: The costliest tests at ``--after`` whose CPU time is recorded (at that commit alone).
TESTS = 12


def test_runs(readme: Path) -> list[str]:
    """The ``pytest`` runs of the README's test command (the line that installs ``.[test]``), in
    order: ``pytest`` alone before the suite was split in tiers, a run per tier after."""
    line = next(line for line in readme.read_text().splitlines() if '-e ".[test]"' in line)
    return [part.strip() for part in line.split("&&") if part.strip().startswith("pytest")]


def suite_seconds(commit: str) -> tuple[dict[str, tuple[float, float, int]], Counter]:
    """Each of the README's ``pytest`` runs at ``commit`` (:func:`test_runs`), in a fresh clone: its
    (CPU seconds, wall seconds, tests passed), by its command; and the CPU seconds per test."""
    with tempfile.TemporaryDirectory() as folder:
        clone, plugin = Path(folder, "clone"), Path(folder, "plugin")
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        subprocess.run(["git", "checkout", "-q", commit], cwd=clone, check=True)
        env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
        subprocess.run(["bash", "-c", INSTALL], cwd=clone, env=env, check=True, capture_output=True)
        plugin.mkdir()  # on the path alone: benchmarks/ holds modules whose names could shadow others
        shutil.copy(cpu_per_test.__file__, plugin)
        per_test = Path(folder, "cpu.jsonl")
        timing = clone / "time.txt"
        measured = {**env, "PYTHONPATH": str(plugin), cpu_per_test.VARIABLE: str(per_test)}
        runs = {}
        for run in test_runs(clone / "README.md"):
            pytest = run.replace("pytest", "pytest -q -p no:cacheprovider -p cpu_per_test", 1)
            command = f". .venv/bin/activate && /usr/bin/time -f '%U %S %e' -o {timing} {pytest}"
            done = subprocess.run(["bash", "-c", command], cwd=clone, env=measured, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"{run} failed at {commit} ({done.returncode}):\n{done.stdout[-4000:]}")
            user, system, wall = map(float, timing.read_text().split()[-3:])
            passed = re.search(r"(\d+) passed", done.stdout.splitlines()[-1])
            runs[run] = (user + system, wall, int(passed.group(1)) if passed else 0)
        return runs, cpu_per_test.per_test(per_test)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="956ed35", help="the earlier commit (default: where 55 measured)")
    parser.add_argument("--after", default="HEAD", help="the later commit")
    parser.add_argument("--no-record", action="store_true", help="print only; leave the measurements table as it is")
    args = parser.parse_args()
    figures = []
    cpu, short, tests = {}, {}, {}
    for label, commit in (("before", args.before), ("after", args.after)):
        short[label] = short_commit(commit)
        runs, tests[label] = suite_seconds(commit)
        cpu[label] = {run: seconds for run, (seconds, _, _) in runs.items()}
        for run, (seconds, wall, passed) in runs.items():
            what = f"test suite at {short[label]}" + ("" if len(runs) == 1 else f", {run}")
            figures += [
                (f"{what}, CPU (user + system)", seconds / 60, "min"),
                (f"{what}, wall", wall / 60, "min"),
                (f"{what}, tests passed", passed, "tests"),
            ]
    before = sum(cpu["before"].values())
    if len(cpu["after"]) > 1:
        figures += [
            (
                f"test suite CPU time, {run} at {short['after']} / the whole suite at {short['before']}",
                seconds / before,
                "ratio",
            )
            for run, seconds in cpu["after"].items()
        ]
    figures.append(
        (f"test suite CPU time, {short['after']} / {short['before']}", sum(cpu["after"].values()) / before, "ratio")
    )
    modules = {label: cpu_per_test.per_module(seconds) for label, seconds in tests.items()}
    costliest = [(label, module) for module, _ in modules["after"].most_common(MODULES) for label in short]
    figures += [
        (f"test suite at {short[label]}, CPU of {module} (its processes included)", modules[label][module], "s")
        for label, module in costliest
        if module in modules[label]
    ]
    figures += [
        (f"test suite at {short['after']}, CPU of {test} (its processes included)", seconds, "s")
        for test, seconds in tests["after"].most_common(TESTS)
    ]
    report(figures, keep=not args.no_record)


if __name__ == "__main__":
    main()
