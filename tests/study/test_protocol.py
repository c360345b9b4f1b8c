"""The report's protocol: rows that depend on the study's configuration."""

from __future__ import annotations

from oscbo.registry import AS_STATED, GAP
from oscbo.study import config as study_config
from oscbo.study import protocol


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
