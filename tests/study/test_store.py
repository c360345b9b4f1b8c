"""A record store holds its parts to one run code: the first part records it, and a later one on
other code is refused, naming the files, unless the store is started over on purpose. (Saving and
restoring a study's jobs: tests/workflow/test_workflow.py, on the real workflow.)"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from oscbo.run import run_job
from oscbo.study import config as study_config
from oscbo.study import sources, store
from oscbo.study.jobs import jobs

REPO = Path(__file__).resolve().parents[2]


def test_run_code_names_every_file_the_jobs_execute_by_its_code() -> None:
    code = store.run_code(study_config.load(REPO / "config" / "quick.yaml"))
    assert {"run/job.py", "run/loop.py", "methods/oscbo.py", "methods/random_search.py", "tasks/lunar.py"} <= set(code)
    assert "findings/claims.py" not in code and "methods/__init__.py" not in code  # not run code; a registry


def test_a_part_on_other_run_code_is_refused_and_a_restart_is_on_purpose(tmp_path: Path) -> None:
    code = store.run_code(study_config.load(REPO / "config" / "quick.yaml"))
    held = tmp_path / "store"
    held.mkdir()
    (held / store.RUN_CODE).write_text(json.dumps(code))
    store.check_run_code(held, code)
    store.check_run_code(tmp_path / "empty", {"run/job.py": "x"})  # a store without parts takes any
    edited = {**code, "methods/gp_ucb_mll.py": "0" * 64, "methods/new.py": "1" * 64}
    with pytest.raises(store.RunCodeChanged, match=r"changed \['methods/gp_ucb_mll.py'\], new \['methods/new.py'\]"):
        store.check_run_code(held, edited)
    with pytest.raises(ValueError, match="nothing to save"):  # restart clears the run code, then finds no job
        store.save(tmp_path / "results", held, "main", ["main"], edited, restart=True)
    assert not (held / store.RUN_CODE).exists()


def test_a_change_declared_to_keep_the_records_is_held_to_and_an_undeclared_one_refused(tmp_path: Path) -> None:
    """A change of run code since the parts ran is accepted once declared, in order, with its
    date, reason, evidence and files' digests (a file gone: null); the refusal gives the entry."""
    code = store.run_code(study_config.load(REPO / "config" / "quick.yaml"))
    held = tmp_path / "store"
    held.mkdir()
    (held / store.RUN_CODE).write_text(json.dumps(code))
    edited = {**code, "methods/ocbo.py": "0" * 64, "methods/new.py": "1" * 64}
    del edited["tasks/lunar.py"]
    declare = r'declare it in .*run-code-changes.yaml .*"methods/new.py": "1{64}"'
    with pytest.raises(store.RunCodeChanged, match=declare):
        store.check_run_code(held, edited)
    change = {"date": "2026-12-05", "reason": "r", "evidence": "golden records"}
    first = {**change, "files": {"methods/ocbo.py": "2" * 64, "methods/new.py": "1" * 64}}
    second = {**change, "files": {"methods/ocbo.py": "0" * 64, "tasks/lunar.py": None}}
    (held / store.CHANGES).write_text(yaml.safe_dump({"changes": [first]}))
    left = r"changed \['methods/ocbo.py'\], new \[\], gone \['tasks/lunar.py'\]"
    with pytest.raises(store.RunCodeChanged, match=left):
        store.check_run_code(held, edited)
    (held / store.CHANGES).write_text(yaml.safe_dump({"changes": [first, second]}))
    store.check_run_code(held, edited)
    assert store.held_run_code(held) == edited
    with pytest.raises(store.RunCodeChanged):  # the code the parts ran on is no longer what the store holds
        store.check_run_code(held, code)
    (held / store.CHANGES).write_text(yaml.safe_dump({"changes": [{"date": "2026-12-05", "files": {}}]}))
    with pytest.raises(ValueError, match=r"change 1 lacks \['evidence', 'reason'\]"):
        store.held_run_code(held)


def test_the_code_of_a_file_edited_in_the_same_process_is_read_anew(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text('"""Doc."""\nx = 1\n')
    first = sources.code(module)
    module.write_text('"""Another doc."""\nx = 1  # a comment\n')
    assert sources.code(module) == first  # prose only
    module.write_text('"""Doc."""\nx = 22\n')
    assert sources.code(module) != first


def test_a_later_part_of_one_experiment_holds_only_what_earlier_parts_do_not(tmp_path: Path) -> None:
    """An experiment run a task at a time: each part saved as it finishes holds its new jobs only,
    and the store restores both into an empty results folder, record for record."""
    config = study_config.validate(
        {
            "results": "results",
            "experiments": {
                "main": {"tasks": ["hartmann3", "levy5"], "methods": ["gp-ucb-mll"], "seeds": 1, "budget": 1}
                | {"n_init": 2}
            },
        }
    )
    results, held = tmp_path / "results", tmp_path / "store"
    found = jobs(config, lambda task: None)
    code = store.run_code(config)
    saved = []
    for part, key in zip(("first", "second"), sorted(found)):
        job = found[key]
        run_job(job, results / "runs" / "main" / job.task.name / job.manifest_name, device="cpu")
        saved.append(store.save(results, held, part, ["main"], code))
    assert [s.jobs for s in saved] == [1, 1] and [s.records for s in saved] == [1, 1]
    first, second = (set(pd.read_parquet(held / f"{p}{store.FILES}")["path"]) for p in ("first", "second"))
    assert not first & second
    assert store.save(results, held, "first", ["main"], code).jobs == 1  # a part saved again is replaced
    with pytest.raises(ValueError, match="other parts do not hold"):
        store.save(results, held, "third", ["main"], code)
    fresh = tmp_path / "fresh"
    assert store.restore(held, fresh) == len(first) + len(second)
    for path in results.rglob("seed*.parquet"):
        pd.testing.assert_frame_equal(pd.read_parquet(fresh / path.relative_to(results)), pd.read_parquet(path))
