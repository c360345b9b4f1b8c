"""The tiny study the workflow tests run, and the copy of the repository they run it in (one per
module that asks for it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from snakemake_copy import REPO, copy_workflow

from oscbo.study import config as study_config

#: Two seeds (a standard error, a paired test) of two BO rounds (a curve, a refit after the
#: first): the smallest study every claim and figure reads; a third round cost 11 CPU-seconds.
TINY = {"seeds": 2, "seeds_per_job": 2, "budget": 2}
#: Lunar Lander's episodes per evaluation in the tiny study: one exercises the same code as the
#: quick study's five, which took a quarter of the Lunar pack's seconds.
TINY_EPISODES = 1
#: The main experiment's tasks in the tiny study: one of each kind (synthetic, tabular, Lunar).
TINY_TASKS = ["hartmann3", "material5", "lunar12"]


@pytest.fixture(scope="module")
def tiny_config() -> dict[str, Any]:
    """config/quick.yaml with every method kept, one task of each kind, 2 seeds x 2 BO rounds, Lunar
    Lander on one episode."""
    config = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())
    for experiment in config["experiments"].values():
        experiment.update(TINY)
    config["experiments"]["main"]["tasks"] = TINY_TASKS
    config["task_options"]["lunar12"]["episodes"] = TINY_EPISODES
    config["experiments"]["dual"]["tasks"] = config["experiments"]["dual"]["tasks"][-1:]  # every arm, one task
    # the readings of lambda_0 and SCGP (their stand-ins run in main); material5-max is not among the tiny tasks
    config["readings"] = {name: reading for name, reading in config["readings"].items() if "tasks" not in reading}
    # what the study leaves out of the paper (config/reference.yaml leaves out Lunar's ablations)
    config["not_run"] = [
        {
            "experiment": "paper-only",
            "tasks": ["levy5"],
            "methods": ["oscbo", "scgp"],
            "seeds": 3,
            "reason": "compute (left out by the test)",
        }
    ]
    return study_config.validate(config)  # defaults filled in, as the workflow sees it


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory: pytest.TempPathFactory, tiny_config: dict[str, Any]) -> Path:
    """A copy of the workflow and package, with the tiny study as config/tiny.yaml."""
    root = copy_workflow(tmp_path_factory.mktemp("workflow"))
    (root / "config" / "tiny.yaml").write_text(yaml.safe_dump(tiny_config, sort_keys=False))
    return root
