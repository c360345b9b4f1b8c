"""The study configuration: schema vs Settings, shipped configs, defaults, overrides, errors."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from oscbo import methods, tasks
from oscbo.settings import ConfigError, Settings
from oscbo.study import config as study_config

REPO = Path(__file__).resolve().parents[2]
SHIPPED = ["config/config.yaml", "config/quick.yaml", "config/reference.yaml"]


def minimal(**experiment: Any) -> dict[str, Any]:
    """A study of one experiment ``e``: levy5 x oscbo unless ``experiment`` says otherwise."""
    return {"experiments": {"e": {"tasks": ["levy5"], "methods": ["oscbo"], **experiment}}}


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/$defs/...``)."""
    while "$ref" in node:
        target = schema
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def properties(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every ``properties`` entry anywhere in ``node``, as (dotted path, its schema)."""
    found = []
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            found.append((f"{path}.{name}".lstrip("."), sub))
        for key, value in node.items():
            found += properties(value, f"{path}.{key}".lstrip("."))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += properties(value, f"{path}[{i}]")
    return found


# ----------------------------------------------------------------------------- schema


def test_schema_settings_mirror_the_settings_dataclass() -> None:
    block = study_config.schema()["$defs"]["settings"]["properties"]
    fields = {f.name for f in dataclasses.fields(Settings)}
    assert set(block) == fields
    schema_defaults = {name: spec["default"] for name, spec in block.items()}
    assert schema_defaults == Settings().to_dict()
    # ... and the schema's defaults build the same Settings as the dataclass's own.
    assert Settings.from_dict(schema_defaults) == Settings()


def test_every_schema_property_is_described() -> None:
    schema = study_config.schema()
    found = properties(schema)
    assert len(found) > 25  # top level, experiment, method entry and settings
    undescribed = [path for path, sub in found if not resolve(schema, sub).get("description")]
    assert undescribed == []
    assert schema.get("description")


# ----------------------------------------------------------------------------- shipped configs


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_are_valid_and_use_registered_names(name: str) -> None:
    config = study_config.load(REPO / name)
    assert config["experiments"]
    for experiment in config["experiments"].values():
        assert set(experiment["tasks"]) <= set(tasks.names())
        specs = study_config.method_specs(experiment)
        assert {spec.name for spec in specs} <= set(methods.names())
        for spec in specs:
            assert isinstance(study_config.method_settings(experiment, spec), Settings)


def test_the_reference_s_known_truth_part_runs_the_theory_s_comparison_at_its_horizon() -> None:
    """The theory's claims: OSCBO beside GP-UCB at the true kernel, GP-UCB-MLL and the negative
    control (random search) on the known-truth tasks, 300 BO rounds, 20 seeds."""
    part = study_config.load(REPO / "config" / "reference.yaml")["experiments"]["known-truth"]
    assert part["budget"] == 300 and part["seeds"] == 20
    assert set(part["methods"]) == {"oscbo", "gp-ucb-true", "gp-ucb-mll", "random-search"}
    assert part["tasks"] == ["gp2", "gp5"]  # the GP sample paths of the surrogate's own kernel (oscbo.tasks.gp_sample)


# ----------------------------------------------------------------------------- defaults and overrides


def test_defaults_are_filled() -> None:
    config = study_config.validate(minimal())
    experiment = config["experiments"]["e"]
    assert experiment["budget"] == 100
    assert experiment["n_init"] == 10
    assert experiment["seeds"] == 20
    assert experiment["seeds_per_job"] == 10
    assert experiment["noise_std"] == {}
    assert experiment["description"] == ""
    assert config["results"] == "results"
    assert config["report"] == "report/index.html"
    assert config["device"] == "auto"
    assert config["use_gpu"] is False
    assert config["device_locks"] is None
    assert config["threads_per_job"] == 1
    # Whatever the resolved config holds, a method of it runs with the default settings.
    spec = study_config.method_specs(experiment)[0]
    assert study_config.method_settings(experiment, spec) == Settings()


def test_settings_defaults_are_filled_when_the_settings_block_is_left_out() -> None:
    experiment = study_config.validate(minimal())["experiments"]["e"]
    assert experiment["settings"]["nu"] == 2.5
    assert experiment["settings"] == Settings().to_dict()


def test_settings_defaults_are_filled_into_an_empty_settings_block() -> None:
    experiment = study_config.validate(minimal(settings={}))["experiments"]["e"]
    assert experiment["settings"] == Settings().to_dict()


def test_given_values_are_kept() -> None:
    config = study_config.validate(minimal(budget=7, seeds=[3, 5], settings={"nu": 1.5, "beta": 3.0}))
    experiment = config["experiments"]["e"]
    assert experiment["budget"] == 7
    assert experiment["seeds"] == [3, 5]
    assert experiment["settings"]["nu"] == 1.5 and experiment["settings"]["beta"] == 3.0
    assert experiment["settings"]["lambda0"] == 1.0  # the rest filled in


def test_a_method_entry_overrides_the_experiment_settings_only_where_it_says() -> None:
    entry = {"label": "x", "method": "oscbo", "settings": {"lambda0": 0.4}}
    config = study_config.validate(minimal(methods=["oscbo", entry], settings={"nu": 1.5}))
    experiment = config["experiments"]["e"]
    plain, variant = study_config.method_specs(experiment)
    assert (variant.label, variant.name, variant.settings) == ("x", "oscbo", {"lambda0": 0.4})
    settings = study_config.method_settings(experiment, variant)
    assert settings.nu == 1.5  # from the experiment, not reset to the default 2.5
    assert settings.lambda0 == 0.4
    assert settings.beta == Settings().beta
    plain_settings = study_config.method_settings(experiment, plain)
    assert plain_settings.nu == 1.5 and plain_settings.lambda0 == 1.0


# ----------------------------------------------------------------------------- errors


def _with_method(entry: Any) -> dict[str, Any]:
    return minimal(methods=["oscbo", entry])


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (minimal(budgt=3), ["budgt"]),
        (minimal(budget="three"), ["budget", "three"]),
        (minimal(budget=0), ["budget"]),
        (minimal(seeds=[1, 1]), ["seeds"]),
        (minimal(settings={"nu": 0.7}), ["nu"]),
        (minimal(settings={"foo": 1}), ["foo"]),
        (minimal(settings={"scgp_multiplier": "upper"}), ["scgp_multiplier", "upper"]),
        ({"experiments": {"e": {"tasks": ["levy5"], "methods": ["oscbo"]}}, "reslts": "x"}, ["reslts"]),
        ({"experiments": {"e": {"methods": ["oscbo"]}}}, ["tasks"]),
        (minimal(tasks=["levy6"]), ["levy6", *tasks.names()]),
        (minimal(methods=["oscbo", "oscbo-l3"]), ["oscbo-l3", *methods.names()]),
        (_with_method({"label": "x", "method": "oscbo-l3"}), ["oscbo-l3"]),
        (_with_method({"label": "x", "method": "oscbo", "settings": {"lamda0": 0.4}}), ["lamda0", "x"]),
        (_with_method({"label": "x", "method": "oscbo", "settings": {"nu": 0.7}}), ["nu", "x"]),
        (_with_method({"label": "x", "methd": "oscbo"}), ["methd"]),
        (_with_method("oscbo"), ["unique", "oscbo"]),
        (_with_method({"label": "oscbo", "method": "oscbo-l1"}), ["unique", "oscbo"]),
    ],
    ids=[
        "misspelled-experiment-key",
        "wrong-type",
        "out-of-range",
        "duplicate-seeds",
        "bad-setting-value",
        "unknown-setting",
        "bad-scgp-reading",
        "misspelled-top-level-key",
        "missing-tasks",
        "unknown-task",
        "unknown-method",
        "unknown-method-in-entry",
        "unknown-setting-in-entry",
        "bad-setting-value-in-entry",
        "misspelled-entry-key",
        "duplicate-label",
        "duplicate-label-of-a-variant",
    ],
)
def test_bad_configs_raise_naming_the_key(config: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(ConfigError) as error:
        study_config.validate(copy.deepcopy(config))
    for word in words:
        assert word in str(error.value)


def test_load_reads_and_validates_a_file(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(minimal(budget=5)))
    assert study_config.load(path)["experiments"]["e"]["budget"] == 5
    path.write_text("")
    with pytest.raises(ConfigError, match="experiments"):
        study_config.load(path)


# ----------------------------------------------------------------------------- seeds


def test_experiment_seeds() -> None:
    assert study_config.experiment_seeds({"seeds": 3}) == [0, 1, 2]
    assert study_config.experiment_seeds({"seeds": [4, 2, 9]}) == [4, 2, 9]
    assert study_config.experiment_seeds(study_config.validate(minimal())["experiments"]["e"]) == list(range(20))


def test_seed_chunks() -> None:
    assert study_config.seed_chunks([0, 1, 2, 3, 4], 2) == [[0, 1], [2, 3], [4]]
    assert study_config.seed_chunks(list(range(20)), 10) == [list(range(10)), list(range(10, 20))]
    assert study_config.seed_chunks([0, 1, 2], 5) == [[0, 1, 2]]
    assert study_config.seed_chunks([7, 3, 5], 1) == [[7], [3], [5]]
    # Every seed once, in order.
    seeds = list(range(23))
    assert [s for chunk in study_config.seed_chunks(seeds, 4) for s in chunk] == seeds


# ----------------------------------------------------------------------------- not_run entries


def _left_out(*entries: dict[str, Any]) -> dict[str, Any]:
    return {**minimal(tasks=["levy5", "hartmann3"], methods=["oscbo", "scgp"], seeds=3), "not_run": list(entries)}


def test_not_run_entries_default_to_their_experiment_and_expand_to_runs() -> None:
    config = study_config.validate(
        _left_out(
            {"experiment": "e", "tasks": ["lunar12"], "reason": "compute"},
            {"experiment": "e", "methods": ["tabicl"], "reason": "no checkpoint"},
            {
                "experiment": "timing",
                "tasks": ["levy5"],
                "methods": ["oscbo", "tabicl"],
                "seeds": 10,
                "reason": "a study of its own",
            },
        )
    )
    rows = [
        (r["experiment"], r["task"], r["method"], len(r["seeds"]), r["reason"]) for r in study_config.not_run(config)
    ]
    assert rows == [
        ("e", "lunar12", "oscbo", 3, "compute"),
        ("e", "lunar12", "scgp", 3, "compute"),
        ("e", "levy5", "tabicl", 3, "no checkpoint"),
        ("e", "hartmann3", "tabicl", 3, "no checkpoint"),
        ("timing", "levy5", "oscbo", 10, "a study of its own"),
        ("timing", "levy5", "tabicl", 10, "a study of its own"),
    ]


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"experiment": "timing", "tasks": ["levy5"], "reason": "x"}, ["not_run.0", "timing", "methods", "seeds"]),
        ({"experiment": "e", "tasks": ["levy6"], "reason": "x"}, ["not_run.0", "levy6"]),
        ({"experiment": "e", "methods": ["oscbo-l3"], "reason": "x"}, ["not_run.0", "oscbo-l3"]),
        ({"experiment": "e", "tasks": ["levy5"], "reason": "x"}, ["which the experiment runs", "levy5", "oscbo"]),
        ({"experiment": "e", "tasks": ["lunar12"]}, ["not_run.0", "reason"]),
        ({"experiment": "e", "tasks": ["lunar12"], "reason": ""}, ["not_run.0.reason"]),
    ],
    ids=[
        "absent-experiment-incomplete",
        "unknown-task",
        "unknown-method",
        "leaves-out-a-run-made",
        "no-reason",
        "empty-reason",
    ],
)
def test_bad_not_run_entries_raise_naming_the_entry(entry: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(ConfigError) as error:
        study_config.validate(_left_out(entry))
    for word in words:
        assert word in str(error.value)


def test_a_reading_s_declared_setting_and_headline_are_checked() -> None:
    """A reading's setting is the one its stand-ins run with, and one reading at most is the headline."""
    config = yaml.safe_load((Path(__file__).resolve().parents[2] / "config" / "quick.yaml").read_text())
    study_config.validate(copy.deepcopy(config))
    wrong = copy.deepcopy(config)
    wrong["readings"]["lambda0=0.433"]["setting"] = {"lambda0": 0.5}
    with pytest.raises(
        ConfigError, match=r"lambda0 = 0.5, but its stand-in 'oscbo-lambda0=0.433' runs with lambda0 = 0.433"
    ):
        study_config.validate(wrong)
    two = copy.deepcopy(config)
    two["readings"]["material-max"]["headline"] = True
    with pytest.raises(ConfigError, match="each marked headline"):
        study_config.validate(two)
