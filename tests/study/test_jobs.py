"""The study's jobs: a run two experiments ask for is one job (oscbo.study.jobs.owners)."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from oscbo import methods
from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study.job import Job, Manifest

REPO = Path(__file__).resolve().parents[2]
STORE = REPO / "reference" / "store"
#: A job's manifest within a study's results (``runs/EXPERIMENT/TASK/LABEL/seedsCHUNK.json``).
MANIFEST = re.compile(r"/seeds[^/]*\.json$")


@pytest.fixture(scope="module")
def quick() -> dict[str, Any]:
    return yaml.safe_load((REPO / "config" / "quick.yaml").read_text())


def owners_of(config: dict[str, Any]) -> dict[tuple, tuple]:
    return study_jobs.owners(study_jobs.jobs(study_config.validate(copy.deepcopy(config)), lambda task: None))


def shared(owners: dict[tuple, tuple]) -> dict[tuple, tuple]:
    return {key: owner for key, owner in owners.items() if owner != key}


def test_dual_asks_for_main_s_runs_and_they_run_once(quick: dict[str, Any]) -> None:
    """Written out from config/quick.yaml: dual's OSCBO at lambda_0 = 1 and 0.433 with the
    default omega, and its GP-UCB-MLL, on levy5 and hartmann3, are main's runs (main comes first);
    dual's lambda_0 = 3.5 and omega = 0.01 arms are its own, and no other experiment shares."""
    found = shared(owners_of(quick))
    same = {"oscbo-lambda0=1-omega=0.001": "oscbo", "oscbo-lambda0=0.433-omega=0.001": "oscbo-lambda0=0.433"}
    same["gp-ucb-mll"] = "gp-ucb-mll"
    assert found == {
        ("dual", task, label, "0-1"): ("main", task, held, "0-1")
        for task in ("levy5", "hartmann3")
        for label, held in same.items()
    }


@pytest.mark.parametrize(
    "change",
    [
        {"settings": {"beta": 3.0}},  # a setting: another run
        {"seeds_per_job": 1},  # other seed chunks: other jobs (a run is a job's seeds, in lockstep)
        {"budget": 21},
        {"n_init": 9},
        {"seeds": 3},  # the first chunk is the same job, the second is not
        {"noise_std": {"levy5": 0.1, "hartmann3": 0.1}},
    ],
)
def test_a_run_that_computes_anything_else_is_not_shared(quick: dict[str, Any], change: dict[str, Any]) -> None:
    config = copy.deepcopy(quick)
    config["experiments"]["dual"].update(change)
    found = shared(owners_of(config))
    if change == {"seeds": 3}:  # seeds 0-1 still main's; 2 is dual's own
        assert found and all(key[3] == "0-1" for key in found)
    else:
        assert not found


def test_a_method_s_settings_decide_not_its_label(quick: dict[str, Any]) -> None:
    """A label is who asks; renaming it shares the same run, and two labels of one experiment
    asking for one run share it too."""
    config = copy.deepcopy(quick)
    config["experiments"]["dual"]["methods"] = ["gp-ucb-mll", {"label": "again", "method": "gp-ucb-mll"}]
    found = shared(owners_of(config))
    assert found[("dual", "levy5", "again", "0-1")] == ("main", "levy5", "gp-ucb-mll", "0-1")
    assert found[("dual", "levy5", "gp-ucb-mll", "0-1")] == ("main", "levy5", "gp-ucb-mll", "0-1")


def test_the_timing_experiment_shares_no_run(quick: dict[str, Any]) -> None:
    """Fig. S4's runs measure their own wall-clock time: with main's seed chunks they compute
    main's runs, and still run apart."""
    config = copy.deepcopy(quick)
    config["experiments"]["timing"].update(seeds=2, seeds_per_job=2, budget=20)
    assert not any(key[0] == "timing" or owner[0] == "timing" for key, owner in shared(owners_of(config)).items())
    config["experiments"]["timing"]["description"] = "renamed"
    config["experiments"]["paper-timing"] = config["experiments"].pop("timing")  # the same runs, another name
    assert any(key[0] == "paper-timing" for key in shared(owners_of(config)))


def test_a_job_s_priority_is_its_expected_cost_so_the_longest_start_first() -> None:
    """The reference's jobs by expected cost, as oscbo.study.jobs.expected_cost's docstring gives
    them: a 10-seed job of 110 oracle calls 10 (20 with ARD), Lunar Lander's 100 (200 with ARD),
    a known-truth job of 310 calls 10 x (310 / 110)^3 = 224 (a tenth of it for a method that fits
    nothing: GP-UCB at the true kernel, random search), a one-seed timing job 1; the placement
    carries it, and a pack the sum of its jobs'."""
    config = study_config.load("config/reference.yaml")
    found = study_jobs.jobs(config, lambda task: None)
    cost = {key: study_jobs.placement(job, config).priority for key, job in found.items()}
    assert cost[("main", "hartmann3", "oscbo", "0-9")] == 10
    assert cost[("ard", "hartmann3", "oscbo", "0-9")] == 20
    plain = found[("main", "hartmann3", "oscbo", "0-9")]
    vanilla = dataclasses.replace(
        plain,
        method=dataclasses.replace(plain.method, name="vanilla-bo", entry=methods.REGISTRY["vanilla-bo"].definition()),
    )
    assert (
        not vanilla.method.settings.get("ard") and study_jobs.expected_cost(vanilla) == 20
    )  # ARD by its registry entry
    assert cost[("main", "lunar12", "oscbo", "0-9")] == 100 and cost[("ard", "lunar12", "oscbo", "0-9")] == 200
    assert cost[("known-truth", "gp2", "oscbo", "0-9")] == round(10 * (310 / 110) ** 3) == 224
    assert cost[("known-truth", "gp2", "gp-ucb-true", "0-9")] == cost[("known-truth", "gp5", "random-search", "0-9")]
    assert cost[("known-truth", "gp2", "gp-ucb-true", "0-9")] == round(224 * study_jobs.NO_FIT_FACTOR) == 22
    assert {cost[key] for key in cost if key[0] == "timing"} == {1}
    pack = [found[("main", "hartmann3", "oscbo", "0-9")], found[("main", "lunar12", "oscbo", "0-9")]]
    assert study_jobs.pack_placement(pack, config).priority == 110


#: The keys of a job's mapping, in their order since methods took options (``method_options``
#: follows, where a job has some): the workflow's params, which Snakemake compares to decide re-runs.
JOB_KEYS = [
    "experiment", "task", "method", "method_name", "seeds", "budget", "n_init", "noise_std",
    "task_options", "settings", "entries",
]  # fmt: skip


def test_a_job_s_typed_specs_give_the_flat_mapping_every_stored_manifest_holds() -> None:
    """The Job carries a JobTask and a JobMethod, but its mapping is the flat one the reference's
    jobs were run and stored under: every manifest in the store reads back to itself, and every
    job of the reference's configuration survives the round trip with its keys in their order."""
    files = pd.concat(pd.read_parquet(part, columns=["path", "text"]) for part in sorted(STORE.glob("*.files.parquet")))
    stored = [json.loads(text) for path, text in zip(files.path, files.text) if MANIFEST.search(path)]
    assert len(stored) > 1000
    for manifest in stored:
        assert Manifest.from_dict(manifest).to_dict() == manifest
    config = study_config.load(REPO / "config/reference.yaml")
    for job in study_jobs.jobs(config, lambda task: None).values():
        values = job.to_dict()
        assert list(values) == JOB_KEYS and Job.from_dict(values).to_dict() == values
        assert [values[key] for key in ("task", "method", "method_name")] == [
            job.task.name,
            job.method.label,
            job.method.name,
        ]
    with_options = dataclasses.replace(job, method=dataclasses.replace(job.method, options={"shrink": 0.8}))
    assert list(with_options.to_dict()) == [*JOB_KEYS, "method_options"]
    assert Job.from_dict(with_options.to_dict()).to_dict() == with_options.to_dict()
