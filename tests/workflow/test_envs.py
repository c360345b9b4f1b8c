"""envs/constraints.txt, what the README's commands install, and envs/*.yaml, the conda env of
each stage: they parse, pin exactly what this suite runs with, leave no dependency unpinned, the
install commands use the constraints, the envs hold every package their stage's code imports, and
the rules name them.

Conda is not installed here, so no env is built: these checks stand in for it.
"""

from __future__ import annotations

import ast
import importlib.util
import platform
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.utils import canonicalize_name

from oscbo import methods, tasks
from oscbo.study import jobs
from oscbo.study.sources import run_sources

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
ENVS = REPO / "envs"
_spec = importlib.util.spec_from_file_location("freeze", ENVS / "freeze.py")
freeze = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(freeze)

STAGE_FILES = sorted(ENVS.glob("*.yaml"))
CONSTRAINTS = ENVS / "constraints.txt"
PINNED = [CONSTRAINTS, *STAGE_FILES]
#: what to do when pins are not what is installed
REPAIR = 'install with `pip install -c envs/constraints.txt -e ".[test]"`, or after an upgrade `python envs/freeze.py`'


def pins(path: Path) -> dict[str, str]:
    """{canonical name: version} of constraints.txt's lines or of an env file's pip section,
    checking its layout on the way."""
    if path == CONSTRAINTS:
        lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    else:
        env = yaml.safe_load(path.read_text())
        conda, (pip,) = env["dependencies"][:-1], env["dependencies"][-1:]
        assert conda == [f"python={platform.python_version()}", f"pip={freeze.installed_version('pip')}"], path.name
        lines = pip["pip"]
    found = {}
    for line in lines:
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([^=\s]+)", line)
        assert match, f"{path.name}: {line!r} is not pinned as name==version"
        found[canonicalize_name(match[1])] = match[2]
    return found


def test_every_stage_has_its_file() -> None:
    assert sorted(path.stem for path in STAGE_FILES) == sorted(freeze.STAGES)


@pytest.mark.parametrize("path", PINNED, ids=lambda path: path.name)
def test_every_pin_is_the_installed_version(path: Path) -> None:
    wrong = {
        name: (pinned, freeze.installed_version(name))
        for name, pinned in pins(path).items()
        if pinned != freeze.installed_version(name)
    }
    assert not wrong, f"{path.name}: (pinned, installed) {wrong}; {REPAIR}"


@pytest.mark.parametrize("path", PINNED, ids=lambda path: path.name)
def test_no_dependency_is_left_unpinned(path: Path) -> None:
    pinned = set(pins(path))
    missing = {}
    for name in pinned:
        if unpinned := {canonicalize_name(needed.name) for needed in freeze.requirements(name)} - pinned:
            missing[name] = sorted(unpinned)
    assert not missing, f"{path.name}: requirements not pinned: {missing}; run `python envs/freeze.py`"


def test_the_constraints_pin_what_the_install_brings_and_the_envs_agree_with_them() -> None:
    constrained = pins(CONSTRAINTS)  # installed, each at its version: test_every_pin_is_the_installed_version
    assert set(constrained) == set(freeze.closure([freeze.INSTALL])) - {"oscbo"}
    assert {"torch", "snakemake", "gymnasium", "box2d", "tabicl", "pytest", "ruff"} <= set(constrained)
    for path in STAGE_FILES:
        assert pins(path).items() <= constrained.items(), path.name


def test_the_install_commands_install_the_constraints() -> None:
    commands = [
        line
        for path in (REPO / "README.md", REPO / ".ci" / "run", REPO / "docs" / "user-guide.md")
        for line in path.read_text().splitlines()
        if re.search(r"pip install .*-e ", line)
    ]
    assert len(commands) >= 4, commands  # README: the study, the tests, the CPU build; .ci/run
    unpinned = [line for line in commands if "-c envs/constraints.txt -e " not in line]
    assert not unpinned, f"installs without the pins of envs/constraints.txt: {unpinned}"


def third_party_imports(files: list[Path]) -> set[str]:
    """Top-level names of the modules ``files`` import that are not oscbo's or the standard
    library's, following oscbo's own imports (lazy ones, inside functions, included)."""
    seen: set[Path] = set()
    todo, found = list(files), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for name in names:
                if name.split(".")[0] != "oscbo":
                    found.add(name.split(".")[0])
                    continue
                module = SRC.joinpath(*name.split("."))
                todo.extend(file for file in (module / "__init__.py", module.with_suffix(".py")) if file.is_file())
    return found - set(sys.stdlib_module_names) - {"__future__"}


def stage_files() -> dict[str, list[Path]]:
    """Per env, the files its jobs start from: each rule's script; for run_bo, by kind of run,
    the oscbo sources the run executes (oscbo.study.sources.run_sources)."""
    files: dict[str, list[Path]] = {}
    for rule_file in (REPO / "workflow" / "rules").glob("*.smk"):
        text = rule_file.read_text()
        for env, script in re.findall(
            r'conda:\s*\n\s*"\.\./\.\./envs/(\w+)\.yaml"\s*\n\s*script:\s*\n\s*"\.\./(scripts/\w+\.py)"', text
        ):
            files.setdefault(env, []).append(REPO / "workflow" / script)
    for method in methods.names():
        for task in tasks.names():
            env = jobs.environment(task, method)
            files.setdefault(env, [REPO / "workflow" / "scripts" / "run_bo.py"]).extend(run_sources(method, task))
    return files


@pytest.mark.parametrize("stage", sorted(freeze.STAGES))
def test_an_env_holds_every_package_its_stage_imports(stage: str) -> None:
    imported = third_party_imports(stage_files()[stage])
    owners = metadata.packages_distributions()
    unknown = sorted(name for name in imported if name not in owners)
    assert not unknown, f"imported by the {stage} stage but not installed: {unknown}"
    needed = {canonicalize_name(dist) for name in imported for dist in owners[name]}
    assert {"torch", "pandas"} <= needed  # the walk sees what it should
    missing = needed - set(pins(ENVS / f"{stage}.yaml"))
    assert not missing, f"envs/{stage}.yaml lacks {sorted(missing)}: add them to envs/freeze.py's STAGES"


def test_the_rules_name_the_env_files() -> None:
    rules = "\n".join(path.read_text() for path in (REPO / "workflow" / "rules").glob("*.smk"))
    named = re.findall(r'conda:\s*\n\s*"\.\./\.\./envs/(\w+)\.yaml"', rules)
    assert re.findall(r"conda:\s*\n\s*run_env\b", rules)  # run_bo: one env per kind of run
    runs = {jobs.environment(task, method) for method in methods.names() for task in tasks.names()}
    assert runs == {"bo", "lunar", "tabicl"}
    assert jobs.environment("lunar12", "tabicl") == "tabicl"  # its env has Lunar's packages too
    assert set(named) | runs == set(freeze.STAGES)
    blocks = re.split(r"^\s*rule (\w+):", rules, flags=re.M)[1:]
    scripted = {name: body for name, body in zip(blocks[::2], blocks[1::2]) if "script:" in body}
    assert len(scripted) >= 8 and all("conda:" in body for body in scripted.values()), sorted(scripted)
