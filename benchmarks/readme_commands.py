"""The README's two commands, each on a fresh clone of this checkout's HEAD, timed end to end.

    python benchmarks/readme_commands.py [--only study|tests] [--no-record]

The README's first two commands (its first two indented command lines that create a venv): the
quick study end to end, install included, and the tests (what ``.ci/run`` runs). Each runs in its
own clone (``git clone`` of this repository into a temporary folder), so nothing of this
checkout's ``.venv``, ``results`` or ``.snakemake`` helps it; a command that fails stops the
script with its output's tail. Appends each wall time to the measurements table
(``benchmarks/measurements.py``), which the README and docs/performance.md quote. Run it on an
idle machine: the tests run two processes, and the study all cores.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: What each of the README's first two commands is, in order.
NAMES = ("study", "tests")


def readme_commands(readme: Path = REPO / "README.md") -> dict[str, str]:
    """The README's first two indented command lines that create a venv: the study's, the tests'."""
    found = [line.strip() for line in readme.read_text().splitlines() if re.match(r" {4}python3 -m venv ", line)]
    if len(found) < 2:
        raise ValueError(f"{readme} has {len(found)} indented venv command(s); the README's first two are needed")
    return dict(zip(NAMES, found[:2]))


def timed_in_clone(command: str) -> float:
    """Wall-clock seconds of ``command`` run by bash in a fresh clone of HEAD (it must succeed)."""
    with tempfile.TemporaryDirectory() as folder:
        clone = Path(folder, "clone")
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
        start = time.perf_counter()
        done = subprocess.run(["bash", "-c", command], cwd=clone, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"failed ({done.returncode}): {command}\n{(done.stdout + done.stderr)[-4000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=NAMES, help="run one of the two")
    parser.add_argument("--no-record", action="store_true", help="print only; leave the measurements table as it is")
    args = parser.parse_args()
    figures = []
    for name, command in readme_commands().items():
        if args.only in (None, name):
            seconds = timed_in_clone(command)
            figures.append((f"README's {name} command on a fresh clone, install included, wall", seconds / 60, "min"))
            print(f"{figures[-1][0]}: {seconds / 60:.2f} min", flush=True)
    if not args.no_record:
        from measurements import record

        record(figures)


if __name__ == "__main__":
    main()
