"""What an edit of a source re-runs, decided in-process: the jobs whose code digest changes (a
param of their rule) and the rules whose inputs list the edited file. The workflow's tests show on
the real DAG, once, that Snakemake re-runs exactly what these digests say
(tests/workflow/test_workflow.py, test_snakemake_reruns_what_the_code_digest_says); each edit is
checked here, where no process starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tiny_study import (
    CODE_EDIT,
    EDITS,
    EVERY_METHOD,
    bo_job,
    expected_jobs,
    reworded,
    rules_listing,
    sourced_rules,
    study_jobs_of,
)

from oscbo import imports
from oscbo.study import sources


def reruns(config: dict[str, Any], edits: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[set, set]:
    """(the BO jobs whose code digest changes, the rules whose listed sources hold an edited file)
    when each file of ``edits`` (its name under the package) reads as the text given; the files
    themselves are not touched: :func:`oscbo.study.sources.code` reads the edited text."""
    found, owners = study_jobs_of(config)
    run = {key: job for key, job in found.items() if owners[key] == key}  # a shared run is its owner's job
    before = {key: sources.code_digest(job) for key, job in run.items()}
    edited = {imports.SOURCE_ROOT / name: imports.code(text).encode() for name, text in edits.items()}
    read = sources.code
    monkeypatch.setattr(sources, "code", lambda path: edited.get(path) or read(path))
    changed = {key for key, job in run.items() if sources.code_digest(job) != before[key]}
    return {bo_job(config, key) for key in changed}, rules_listing(set(edited))


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edit_changes_the_digest_of_exactly_the_steps_that_execute_the_edited_file(
    tiny_config: dict[str, Any], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change of what a file computes: the BO jobs whose method imports it (a subclass's and a
    schedule's user's too) change their code digest, or the downstream rules that execute it alone
    list it; nothing else. (Was: a Snakemake dry run per edit in tests/workflow/test_workflow.py.)"""
    path = imports.SOURCE_ROOT / name
    jobs, rules = reruns(tiny_config, {name: path.read_text() + CODE_EDIT}, monkeypatch)
    expected = EDITS[name]
    if expected is EVERY_METHOD or not expected <= set(sourced_rules()):
        assert jobs == expected_jobs(tiny_config, expected) and jobs
        assert not rules & {"figures", "findings", "report"}
    else:
        assert not jobs and rules == expected


def test_mending_prose_changes_no_digest(tiny_config: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A docstring reworded and a comment added in a method, the engine's loop and a model module:
    a job is what its code computes, so no BO job's digest changes. (Was: a dry run in
    tests/workflow/test_workflow.py, test_mending_prose_reruns_no_job.)"""
    edits = {}
    for name in ("methods/gp_ucb_mll.py", "run/loop.py", "model/kernel.py"):
        original = (imports.SOURCE_ROOT / name).read_text()
        edits[name] = reworded(original)
        assert edits[name] != original
    jobs, _ = reruns(tiny_config, edits, monkeypatch)
    assert not jobs, jobs
    # the same text with one line of code: the check can fail
    edits["run/loop.py"] += CODE_EDIT
    assert reruns(tiny_config, edits, monkeypatch)[0] == expected_jobs(tiny_config, EVERY_METHOD)


def test_the_digest_reads_the_file_as_it_is_now(tmp_path: Path) -> None:
    """:func:`oscbo.study.sources.code` reads a file anew when it changes in the same process (a
    DAG asks for every job's digest, and the real dry run edits between them)."""
    path = tmp_path / "module.py"
    path.write_text('"""A module."""\nVALUE = 1\n')
    first = sources.code(path)
    path.write_text('"""A module, reworded."""\nVALUE = 1\n')
    assert sources.code(path) == first
    path.write_text('"""A module."""\nVALUE = 22\n')
    assert sources.code(path) != first
