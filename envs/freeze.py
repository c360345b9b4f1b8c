"""Write envs/*.yaml: each stage's packages, and everything they depend on, pinned to the
versions installed in this interpreter (the ones the test suite passed with).

    python envs/freeze.py        # after an upgrade; tests/workflow/test_envs.py checks the files

The rules name these files in their ``conda:`` directives (``snakemake --sdm conda``). An env
holds third-party packages only: jobs import ``oscbo`` from the checkout's ``src/``
(``workflow/rules/common.smk`` puts it on their ``PYTHONPATH``). Pins are public versions:
torch's ``2.13.0+cpu`` is pinned as ``2.13.0``, which pip resolves to the CUDA build on Linux
(with its own exactly pinned ``nvidia-*`` packages) and the CPU build elsewhere.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ENVS = Path(__file__).resolve().parent
RUNS = ["torch", "botorch", "gpytorch", "numpy", "scipy", "pandas", "pyarrow", "pyyaml", "jsonschema", "threadpoolctl"]
LUNAR = ["gymnasium", "box2d", "pygame-ce"]  # gymnasium[box2d], as pyproject.toml installs it
#: stage -> (what runs in it, the packages its code imports)
STAGES: dict[str, tuple[str, list[str]]] = {
    "bo": ("BO runs of the GP methods (rule run_bo; oscbo.study.jobs.environment)", RUNS),
    "lunar": ("BO runs on Lunar Lander (rule run_bo; oscbo.study.jobs.environment)", RUNS + LUNAR),
    "tabicl": (
        "TabICLv2 runs, Lunar Lander's included (rule run_bo; oscbo.study.jobs.environment)",
        RUNS + LUNAR + ["tabicl"],
    ),
    "analysis": (
        "Oracle tables, summaries and figures (rules prepare_table, aggregate, figures)",
        ["torch", "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "pyyaml", "jsonschema", "threadpoolctl"],
    ),
    "report": (
        "The report (rule report)",
        [
            "torch",
            "numpy",
            "scipy",
            "pandas",
            "pyarrow",
            "matplotlib",
            "jinja2",
            "pyyaml",
            "jsonschema",
            "threadpoolctl",
        ],
    ),
}


def installed_version(name: str) -> str:
    """The installed version of distribution ``name``, without a local label (``+cpu``)."""
    return Version(metadata.version(name)).public


def requirements(name: str) -> set[str]:
    """The (canonical) names of the distributions ``name`` requires here: markers evaluated, no extras."""
    needed = set()
    for line in metadata.requires(name) or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            needed.add(canonicalize_name(requirement.name))
    return needed


def closure(names: list[str]) -> list[str]:
    """``names`` and everything they require, transitively, sorted."""
    found: set[str] = set()
    todo = [canonicalize_name(name) for name in names]
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo.extend(requirements(name))
    return sorted(found)


def render(stage: str) -> str:
    what, packages = STAGES[stage]
    pins = "".join(f"      - {name}=={installed_version(name)}\n" for name in closure(packages))
    return (
        f"# {what}.\n"
        f"# Written by envs/freeze.py from the installed versions: {', '.join(packages)} and their dependencies.\n"
        f"name: oscbo-{stage}\n"
        "channels:\n  - conda-forge\n  - nodefaults\n"
        "dependencies:\n"
        f"  - python={platform.python_version()}\n"
        f"  - pip={installed_version('pip')}\n"
        "  - pip:\n"
        f"{pins}"
    )


if __name__ == "__main__":
    for stage in STAGES:
        (ENVS / f"{stage}.yaml").write_text(render(stage))
        print(f"wrote envs/{stage}.yaml", file=sys.stderr)
