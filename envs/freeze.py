"""Write envs/constraints.txt and envs/*.yaml: what the project installs, and each stage's
packages, with everything they depend on, pinned to the versions installed in this interpreter
(the ones the test suite passed with).

    pip install -c envs/constraints.txt -e ".[test]"   # the README's install: these versions
    python envs/freeze.py                              # after an upgrade; tests/workflow/test_envs.py checks the files

``constraints.txt`` pins everything ``pip install -e ".[test]"`` brings, so that a new release of
any dependency cannot change what the README's commands install. The rules name the ``*.yaml``
files in their ``conda:`` directives (``snakemake --sdm conda``). An env holds third-party packages
only: jobs import ``oscbo`` from the checkout's ``src/`` (``workflow/rules/common.smk`` puts it on
their ``PYTHONPATH``). Pins are public versions: torch's ``2.13.0+cpu`` is pinned as ``2.13.0``,
which pip resolves to the CUDA build on Linux from PyPI (with its own exactly pinned ``nvidia-*``
packages, which no file here names) and to the CPU build elsewhere; a CPU build installed first
satisfies it too.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ENVS = Path(__file__).resolve().parent
#: what the README's test command installs: the project, with its test extras
INSTALL = "oscbo[test]"
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


def requirements(name: str, extras: Iterable[str] = ()) -> list[Requirement]:
    """What distribution ``name``, with ``extras``, requires here: markers evaluated."""
    environments = [{"extra": extra} for extra in ("", *extras)]
    return [
        requirement
        for requirement in map(Requirement, metadata.requires(name) or [])
        if requirement.marker is None or any(map(requirement.marker.evaluate, environments))
    ]


def closure(names: Iterable[str]) -> list[str]:
    """The distributions ``names`` (requirements, extras allowed: ``oscbo[test]``) and everything
    they require, transitively: canonical names, sorted."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(name) for name in names]
    while todo:
        requirement = todo.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key not in seen:
            seen.add(key)
            todo.extend(requirements(requirement.name, requirement.extras))
    return sorted({name for name, _ in seen})


def pin(name: str) -> str:
    """``name==version`` at the installed version: a line of constraints.txt and of an env's pip section."""
    return f"{name}=={installed_version(name)}"


def constraints() -> str:
    pins = "".join(f"{pin(name)}\n" for name in closure([INSTALL]) if name != "oscbo")
    return (
        f"# Everything `pip install -e .` installs, with the test extras ({INSTALL}), pinned to the\n"
        "# versions the tests passed with. Written by envs/freeze.py. The README's commands install with\n"
        '# `pip install -c envs/constraints.txt -e .` (or `-e ".[test]"`).\n'
        f"{pins}"
    )


def render(stage: str) -> str:
    what, packages = STAGES[stage]
    pins = "".join(f"      - {pin(name)}\n" for name in closure(packages))
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
    (ENVS / "constraints.txt").write_text(constraints())
    print("wrote envs/constraints.txt", file=sys.stderr)
    for stage in STAGES:
        (ENVS / f"{stage}.yaml").write_text(render(stage))
        print(f"wrote envs/{stage}.yaml", file=sys.stderr)
