"""The findings stage's time on the published reference's tables at two commits, and their ratio.

    python benchmarks/findings_time.py [--before REV] [--after HEAD] [--no-record]

Each commit's source tree is checked out into a temporary folder (``git worktree``); then, one
after the other on this machine, a fresh Python process with that tree's ``src`` first on its path
runs :func:`oscbo.findings.write` on its own copy of ``reference/summary`` (every claim under
every reading, 1,000 seed resamples, the seed sets): the figures are each commit's CPU seconds
(user and system, of that process) and wall seconds, and after / before of the CPU time, appended
to the measurements table (``benchmarks/measurements.py``). It also says whether the two commits
wrote the same claims, claim_tests, answer and seed_sets tables, compared exactly. Run it on an
idle machine: the two run back to back because the VMs' speed varies from day to day.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from measurements import report, short_commit

REPO = Path(__file__).resolve().parents[1]
#: The findings tables whose equality between the two commits is checked (the findings table's
#: paragraphs name the registration, which may differ by design).
COMPARED = ("claims", "claim_tests", "answer", "seed_sets")
WRITE = "import sys; from oscbo import findings; findings.write(sys.argv[1])"


def timed(tree: Path, summary: Path) -> tuple[float, float]:
    """CPU and wall seconds of one findings stage: ``tree``'s code on ``summary`` (rewritten in place)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    tic = time.perf_counter()
    environment = {**os.environ, "PYTHONPATH": str(tree / "src")}
    subprocess.run([sys.executable, "-c", WRITE, str(summary)], check=True, env=environment, cwd=tree)
    wall = time.perf_counter() - tic
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the commit to compare against")
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--no-record", action="store_true", help="print the figures; leave the table")
    args = parser.parse_args()
    figures, written = [], {}
    commits = [short_commit(args.before), short_commit(args.after)]
    with tempfile.TemporaryDirectory() as scratch:
        for commit in commits:
            tree = Path(scratch, commit)
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(tree), commit], check=True)
            try:
                summary = shutil.copytree(REPO / "reference" / "summary", Path(scratch, f"summary-{commit}"))
                cpu, wall = timed(tree, summary)
            finally:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=True)
            written[commit] = {name: pd.read_parquet(summary / f"{name}.parquet") for name in COMPARED}
            figures += [
                (f"findings stage on reference/summary at {commit}, CPU (user + system)", cpu, "s"),
                (f"findings stage on reference/summary at {commit}, wall", wall, "s"),
            ]
    before, after = commits
    ratio = figures[2][1] / figures[0][1]
    figures.append((f"findings stage CPU time on reference/summary, {after} / {before}", ratio, "ratio"))
    same = {name: written[before][name].equals(written[after][name]) for name in COMPARED}
    print("the same tables at both commits:", json.dumps(same))
    report(figures, keep=not args.no_record)


if __name__ == "__main__":
    main()
