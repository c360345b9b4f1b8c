"""The tiny study the workflow tests build (tests/workflow/conftest.py), and what an edit of its
sources re-runs: the jobs whose code digest changes and the rules whose inputs list the edited file
(asserted in-process by tests/study/test_reruns.py, and by one real Snakemake run by
tests/workflow/test_workflow.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study import sources

REPO = Path(__file__).resolve().parents[1]
#: Two seeds (a standard error, a paired test) of two BO rounds (a curve, a refit after the
#: first): the smallest study every claim and figure reads; a third round cost 11 CPU-seconds.
TINY = {"seeds": 2, "seeds_per_job": 2, "budget": 2}
#: Lunar Lander's episodes per evaluation in the tiny study: one exercises the same code as the
#: quick study's five, which took a quarter of the Lunar pack's seconds.
TINY_EPISODES = 1
#: The main experiment's tasks in the tiny study: one of each kind (synthetic, tabular, Lunar).
TINY_TASKS = ["hartmann3", "material5", "lunar12"]


def tiny(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` (config/quick.yaml's mapping) with every method kept, one task of each kind, 2
    seeds x 2 BO rounds, Lunar Lander on one episode, validated (defaults filled in, as the
    workflow sees it)."""
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
    return study_config.validate(config)


def tiny_config() -> dict[str, Any]:
    """The tiny study's config: :func:`tiny` of config/quick.yaml."""
    return tiny(yaml.safe_load((REPO / "config" / "quick.yaml").read_text()))


#: Every registry name of the tiny study (config/quick.yaml runs every method).
EVERY_METHOD = None
#: A change of what a module computes (a comment or a docstring is not one).
CODE_EDIT = "\n_EDITED_BY_TEST_WORKFLOW = 1\n"
#: An edit of one source file -> what it re-runs: the registry names whose BO jobs execute the file
#: (written out from the imports, checkable by eye), or the rules whose scripts execute it alone.
EDITS: dict[str, set[str] | None] = {
    "methods/gp_ucb_mll.py": {"gp-ucb-mll", "ocbo"},  # OCBO subclasses GP-UCB-MLL
    "methods/a_gp_ucb.py": {"a-gp-ucb", "lb-gp-ucb"},  # LB-GP-UCB grows its grid on A-GP-UCB's schedule
    "model/kernel.py": EVERY_METHOD,  # every surrogate is built on it (TabICLv2's method base imports it too)
    "figures/curves.py": {"figures"},
    "findings/claims.py": {"findings"},
}
#: The rules downstream of the BO jobs, in the order they are listed.
DOWNSTREAM = {"aggregate", "findings", "figures", "report", "all"}


def sourced_rules() -> dict[str, Path]:
    """The rules whose inputs list their script's sources (``script_sources("NAME.py")`` in
    workflow/rules/), by name: the script's path."""
    text = "".join(path.read_text() for path in sorted((REPO / "workflow" / "rules").glob("*.smk")))
    return {
        name: REPO / "workflow" / "scripts" / f"{name}.py"
        for name in re.findall(r'script_sources\("(\w+)\.py"\)', text)
    }


def rules_listing(paths: set[Path]) -> set[str]:
    """The rules of :func:`sourced_rules` whose listed sources hold one of ``paths``."""
    return {rule for rule, script in sourced_rules().items() if paths & set(sources.script_sources(script))}


def reworded(text: str) -> str:
    """A module's text with its docstring reworded and a comment added: prose, no code."""
    first = text.index('"""') + 3
    return text[:first] + "Reworded. " + text[first:] + "\n# a comment added by the test\n"


def study_jobs_of(config: dict[str, Any]) -> tuple[dict[tuple, Any], dict[tuple, tuple]]:
    """The study's jobs by key, and each job's owner (the job that runs it: oscbo.study.jobs.owners)."""
    found = study_jobs.jobs(config, lambda task: None)
    return found, study_jobs.owners(found)


def expected_jobs(config: dict[str, Any], methods: set[str] | None) -> set[tuple]:
    """The BO jobs (``("run_bo", experiment, task, label)`` alone, ``("run_pack", experiment, task)``
    for a pack) of every label that runs one of the registry names ``methods`` (None: all), a run
    that an earlier experiment's job runs for it left out."""
    found, owners = study_jobs_of(config)
    return {
        bo_job(config, key)
        for key, job in found.items()
        if owners[key] == key and (methods is None or job.method.name in methods)
    }


def bo_job(config: dict[str, Any], key: tuple) -> tuple:
    """The workflow job that runs the study's job ``key``: ``("run_bo", experiment, task, label)``
    alone, or ``("run_pack", experiment, task)`` in a packed experiment."""
    return ("run_pack", *key[:2]) if config["experiments"][key[0]]["pack_methods"] else ("run_bo", *key[:3])


def packed_labels(config: dict[str, Any], methods: set[str] | None) -> set[str]:
    """The labels of the packed experiments that run one of ``methods``: what the packs run again."""
    found, owners = study_jobs_of(config)
    return {
        key[2]
        for key, job in found.items()
        if config["experiments"][key[0]]["pack_methods"]
        and owners[key] == key
        and (methods is None or job.method.name in methods)
    }
