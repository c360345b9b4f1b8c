"""The tiny study the workflow tests read, built once per session for every test process, and the
copies of the repository the tests that edit or run anything work in."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from snakemake_copy import Built, assert_left_as_built, copy_workflow, fingerprint, snakemake


@pytest.fixture
def workflow_copy(tmp_path: Path, tiny_config: dict[str, Any]) -> Path:
    """A copy of the workflow and package of the test's own, with the tiny study as config/tiny.yaml."""
    root = copy_workflow(tmp_path / "workflow")
    (root / "config" / "tiny.yaml").write_text(yaml.safe_dump(tiny_config, sort_keys=False))
    return root


def _build(root: Path, config: dict[str, Any]) -> dict[str, Any]:
    """The tiny study built in two parts, as config/reference.yaml is: ``main`` alone (its target
    ``results/runs/main.json``), then the rest and the report, by ``snakemake --cores 2``."""
    copy_workflow(root)
    (root / "config" / "tiny.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    part = snakemake(root, "--cores", "2", "results/runs/main.json", "--configfile", "config/tiny.yaml")
    kept = {str(path): path.stat().st_mtime_ns for path in (root / "results" / "runs" / "main").rglob("*.*")}
    result = snakemake(root, "--cores", "2", "--configfile", "config/tiny.yaml")
    runs = {
        name: {"returncode": run.returncode, "stdout": run.stdout} for name, run in [("part", part), ("result", result)]
    }
    return {**runs, "kept": kept, "as_built": fingerprint(root)}


@pytest.fixture(scope="session")
def tiny_study(tmp_path_factory: pytest.TempPathFactory, tiny_config: dict[str, Any]) -> Built:
    """The tiny study, built once for the session: the first test process to ask builds it under
    pytest's folder for the session, holding a lock; the others wait for it and read what it wrote
    (pytest-xdist's recipe for a session fixture shared by its processes)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # every test process's folder lies in the session's
    root, done = shared / "tiny-study", shared / "tiny-study.json"
    with open(shared / "tiny-study.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            done.write_text(json.dumps(_build(root, tiny_config)))
    built = json.loads(done.read_text())
    runs = {
        name: subprocess.CompletedProcess("snakemake", built[name]["returncode"], built[name]["stdout"])
        for name in ("part", "result")
    }
    kept = {Path(path): mtime for path, mtime in built["kept"].items()}
    as_built = {name: tuple(value) for name, value in built["as_built"].items()}
    return Built(root, **runs, kept=kept, as_built=as_built)


@pytest.fixture(autouse=True)
def the_built_study_left_as_built(request: pytest.FixtureRequest) -> Any:
    """After a test that read the built study: its sources are the repository's, and every other
    file is as built, so that no test runs, saves or judges what another edited and left so."""
    yield
    if "tiny_study" not in request.fixturenames:
        return
    built: Built = request.getfixturevalue("tiny_study")
    assert_left_as_built(built, request.node.name)
