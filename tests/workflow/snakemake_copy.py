"""Running the real Snakemake CLI on a copy of the workflow: what the workflow tests share."""

from __future__ import annotations

import compileall
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
#: What the workflow needs: the rules' ``conda:`` directives point into envs/.
COPIED = ["Snakefile", "workflow", "src", "config", "profiles", "envs", "data", ".test"]
NOTHING_TO_DO = "Nothing to be done"


#: A safety net against a hung run only: a correct tiny study takes minutes even on a loaded machine.
SAFETY_NET = 3600


def snakemake(
    root: Path,
    *args: str,
    pythonpath: bool = True,
    timeout: int = SAFETY_NET,
    env_extra: dict[str, str] | None = None,
    blocks: bool = True,
) -> subprocess.CompletedProcess:
    """Run the real snakemake CLI in ``root`` (its environment: ours, with ``env_extra``); stdout and
    stderr together in ``.stdout``. ``blocks``: Snakemake's full job blocks, which
    :func:`listed_jobs` reads, in place of the workflow's one line per job (OSCBO_JOB_BLOCKS=1)."""
    extra = {**({"OSCBO_JOB_BLOCKS": "1"} if blocks else {}), **(env_extra or {})}
    env = {k: v for k, v in {**os.environ, **extra}.items() if not k.startswith("SNAKEMAKE_")}
    if not blocks:
        env.pop("OSCBO_JOB_BLOCKS", None)
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


def listed_jobs(output: str) -> list[dict]:
    """Each job a (dry-run) log lists, in the order listed: its ``rule``, ``wildcards``,
    ``threads`` (1 unless listed), ``resources`` and ``priority`` (0 unless listed)."""
    jobs: list[dict] = []
    for line in map(str.strip, output.splitlines()):
        rule = re.fullmatch(r"(?:local)?rule (\w+):", line)
        if rule:
            jobs.append({"rule": rule.group(1), "wildcards": {}, "threads": 1, "resources": {}, "priority": 0})
        elif jobs and line.startswith(("wildcards: ", "resources: ")):
            key, _, items = line.partition(": ")
            jobs[-1][key].update(item.split("=", 1) for item in items.split(", "))
        elif jobs and line.startswith("threads: "):
            jobs[-1]["threads"] = int(line.removeprefix("threads: "))
        elif jobs and line.startswith("priority: "):
            jobs[-1]["priority"] = int(line.removeprefix("priority: "))
    return jobs


def scheduled_jobs(output: str) -> list[tuple[str, dict[str, str]]]:
    """``(rule, wildcards)`` of each job a (dry-run) log lists, in the order listed."""
    return [(job["rule"], job["wildcards"]) for job in listed_jobs(output)]


def declared_resources(output: str, rule: str) -> list[tuple[dict[str, str], int, dict[str, str]]]:
    """``(wildcards, threads, resources)`` of each job of ``rule`` a (dry-run) log lists."""
    return [(job["wildcards"], job["threads"], job["resources"]) for job in listed_jobs(output) if job["rule"] == rule]


def copy_workflow(root: Path) -> Path:
    """Copy the workflow and the package (what :data:`COPIED` names) into ``root``, the package
    compiled: where bytecode is not written (PYTHONDONTWRITEBYTECODE), every job and Snakemake
    process would otherwise compile its sources anew (about 0.3 s each); an edited file's bytecode
    is stale by its timestamp, and Python compiles that file again."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".snakemake")
    root.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=ignore)
        else:
            shutil.copy2(source, root / name)
    assert compileall.compile_dir(root / "src", quiet=1), f"the copy's sources in {root} do not compile"
    return root


#: What Snakemake keeps for one process alone in a working directory: not copied.
UNSHARED = (".snakemake/locks", ".snakemake/incomplete", ".snakemake/log")


@dataclass(frozen=True)
class Built:
    """The tiny study as :func:`tiny_study` built it: its folder (read it, change nothing), the
    Snakemake runs that built it (stdout and stderr together), and each record of ``main`` with its
    modification time after the first part."""

    root: Path
    part: subprocess.CompletedProcess
    result: subprocess.CompletedProcess
    kept: dict[Path, int]
    as_built: dict[str, tuple[int, int]]

    def copy(self, folder: Path) -> Path:
        """A copy of the built study of a test's own, to edit or run in: the sources, config and
        Snakemake's records copied; the results and report linked (hard links: a job writes a new
        file and renames it over the old, so the built study's files never change)."""
        linked = {"results", "report"}
        folder.mkdir(parents=True)
        for entry in self.root.iterdir():
            if entry.is_dir():
                copier = os.link if entry.name in linked else shutil.copy2
                shutil.copytree(entry, folder / entry.name, ignore=self._unshared, copy_function=copier, symlinks=True)
            else:
                shutil.copy2(entry, folder / entry.name)
        return folder

    def _unshared(self, folder: str, names: list[str]) -> set[str]:
        """What :func:`shutil.copytree` leaves out of ``folder``: :data:`UNSHARED`."""
        inside = Path(folder).relative_to(self.root)
        return {name for name in names if (inside / name).as_posix() in UNSHARED}


def fingerprint(root: Path) -> dict[str, tuple[int, int]]:
    """Each file of a built study by its path: size and modification time (Snakemake's own files aside)."""
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in root.rglob("*")
        if path.is_file()
        and not path.relative_to(root).as_posix().startswith(".snakemake/")
        and "__pycache__" not in path.parts
    }


def assert_left_as_built(built: Built, test: str) -> None:
    """That ``test`` left ``built``'s sources the repository's and every other file as built."""
    copy = built.root / "src"
    edited = [
        str(path.relative_to(copy))
        for path in sorted(copy.rglob("*.py"))
        if path.read_bytes() != (REPO / "src" / path.relative_to(copy)).read_bytes()
    ]
    assert not edited, f"{test} left these sources of the built study edited: {edited}"
    now = fingerprint(built.root)
    changed = sorted(name for name in now.keys() | built.as_built.keys() if now.get(name) != built.as_built.get(name))
    assert not changed, f"{test} changed these files of the built study: {changed[:10]}"
