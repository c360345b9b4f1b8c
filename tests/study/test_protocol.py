"""The report's protocol: rows that depend on the study's configuration."""

from __future__ import annotations

import pytest

from oscbo import methods, tasks
from oscbo.settings import Settings
from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study import protocol
from oscbo.study.protocol import AS_STATED, GAP, KINDS


def rows_of(**experiment) -> dict[str, dict[str, str]]:
    config = {"experiments": {"e": {"tasks": ["levy5", "hartmann3"], "methods": ["scgp", "ocbo"], **experiment}}}
    return {row["setting"]: row for row in protocol.rows(study_config.validate(config))}


def test_evaluation_noise_names_the_noisy_tasks():
    assert rows_of()["Evaluation noise"]["value"] == "noise-free, y = f, on every task"
    noisy = rows_of(noise_std={"hartmann3": 0.1, "levy5": 0.0})["Evaluation noise"]
    assert noisy["value"] == "noise-free, y = f, but for noise_std hartmann3 0.1 in 'e'"
    assert noisy["kind"] == GAP and "benchmarks/ocbo_noise.py" in noisy["note"]


def test_scgp_rows_show_the_run_s_readings_as_gaps():
    default = rows_of()
    assert default["SCGP: calibrated multiplier β"]["value"].startswith("one-sided: ")
    assert default["SCGP: the UCB's conditioning set"]["value"].startswith("all (")
    assert {default[name]["kind"] for name in ("SCGP: split", "OCBO: leave-one-out predictives")} == {GAP}
    assert default["SCGP: the two GPs"]["kind"] == default["OCBO: lengthscale and acquisition"]["kind"] == AS_STATED
    other = rows_of(settings={"scgp_multiplier": "two-sided", "scgp_conditioning": "regression"})
    assert other["SCGP: calibrated multiplier β"]["value"].startswith("two-sided: ")
    assert other["SCGP: the UCB's conditioning set"]["value"].startswith("regression (")


def test_a_row_that_picks_its_text_by_a_setting_follows_the_study_s_value():
    """A mapped value (``by: SETTING``) shows the text of the study's value, and refuses a value
    the file has no text for, naming it."""
    assert rows_of()["Acquisition"]["value"] == "UCB mu + sqrt(2.0) sigma, latent sigma"
    logei = rows_of(settings={"acquisition": "logei"})["Acquisition"]["value"]
    assert logei.startswith("BoTorch LogExpectedImprovement")
    assert rows_of()["Lengthscale"]["value"] == "isotropic"
    assert rows_of(settings={"ard": True})["Lengthscale"]["value"] == "ARD"
    with pytest.raises(ValueError, match="protocol value for acquisition = 'logei'"):
        protocol._text({"by": "acquisition", "ucb": "UCB"}, Settings(acquisition="logei"), {})


def test_the_protocol_file_names_registered_methods_and_tasks_and_known_kinds():
    """Each row of the file names only registered methods or tasks and one of the three kinds, each
    setting is one row, and every field of a template is a setting (so that no study fails to
    render its protocol because of a typo in the file)."""
    entries = protocol.entries()
    assert set(entries) == {"study", "methods", "tasks"}
    for section, registry in (("methods", methods.REGISTRY), ("tasks", tasks.REGISTRY)):
        for row in entries[section]:
            assert row["for"] and set(row["for"]) <= set(registry), (section, row["setting"])
    every = [row for rows in entries.values() for row in rows]
    settings = [row["setting"] for row in every]
    assert len(settings) == len(set(settings)), "a setting is one row"
    assert {row["kind"] for row in every} <= set(KINDS)
    fields = {"evaluation_noise": ""}
    for row in every:
        for key in ("value", "note"):
            texts = row.get(key, "")
            for text in texts.values() if isinstance(texts, dict) else [texts]:
                if isinstance(text, str) and text not in Settings.__dataclass_fields__:
                    text.format(s=Settings(), **fields)  # KeyError/AttributeError on an unknown field


def test_no_job_s_identity_holds_a_protocol_row():
    """Protocol rows are part of no job's identity, so editing one re-runs no job: what each job of
    the full study computes (:func:`oscbo.study.jobs.computes`, what its outputs depend on) holds no
    row's setting or text."""
    config = study_config.load("config/config.yaml")
    identities = [study_jobs.computes(job) for job in study_jobs.jobs(config, lambda task: None).values()]
    texts = [row["setting"] for rows in protocol.entries().values() for row in rows]
    assert identities and not any(text in identity for text in texts for identity in identities)
