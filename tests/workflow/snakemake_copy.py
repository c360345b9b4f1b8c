"""Running the real Snakemake CLI on a copy of the workflow: what the workflow tests share."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
#: What the workflow needs: the rules' ``conda:`` directives point into envs/.
COPIED = ["Snakefile", "workflow", "src", "config", "profiles", "envs", "data", ".test"]
NOTHING_TO_DO = "Nothing to be done"


#: A safety net against a hung run only: a correct tiny study takes minutes even on a loaded machine.
SAFETY_NET = 3600


def snakemake(root: Path, *args: str, pythonpath: bool = True, timeout: int = SAFETY_NET) -> subprocess.CompletedProcess:
    """Run the real snakemake CLI in ``root``; stdout and stderr together in ``.stdout``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEMAKE_")}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root / "src"), os.environ.get("PYTHONPATH")) if p)
    else:
        env.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(SNAKEMAKE), *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )


def scheduled_jobs(output: str) -> list[tuple[str, dict[str, str]]]:
    """``(rule, wildcards)`` of each job a (dry-run) log lists, in the order listed."""
    jobs: list[tuple[str, dict[str, str]]] = []
    for line in output.splitlines():
        rule = re.fullmatch(r"(?:local)?rule (\w+):", line.strip())
        if rule:
            jobs.append((rule.group(1), {}))
            continue
        wildcards = re.fullmatch(r"wildcards: (.*)", line.strip())
        if wildcards and jobs:
            jobs[-1][1].update(item.split("=", 1) for item in wildcards.group(1).split(", "))
    return jobs


def declared_resources(output: str, rule: str) -> list[tuple[dict[str, str], int, dict[str, str]]]:
    """``(wildcards, threads, resources)`` of each job of ``rule`` a (dry-run) log lists."""
    jobs: list[tuple[dict[str, str], int, dict[str, str]]] = []
    current = None
    for line in output.splitlines():
        line = line.strip()
        if re.fullmatch(r"(?:local)?rule (\w+):", line):
            current = {} if line.endswith(f"rule {rule}:") else None
            if current is not None:
                jobs.append((current, 1, {}))
        elif current is not None and line.startswith("wildcards: "):
            current.update(item.split("=", 1) for item in line.removeprefix("wildcards: ").split(", "))
        elif current is not None and line.startswith("threads: "):
            jobs[-1] = (current, int(line.removeprefix("threads: ")), jobs[-1][2])
        elif current is not None and line.startswith("resources: "):
            jobs[-1][2].update(item.split("=", 1) for item in line.removeprefix("resources: ").split(", "))
    return jobs


def copy_workflow(root: Path) -> Path:
    """Copy the workflow and the package (what :data:`COPIED` names) into ``root``."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".snakemake")
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=ignore)
        else:
            shutil.copy2(source, root / name)
    return root


