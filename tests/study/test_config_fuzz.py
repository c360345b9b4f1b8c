"""Config fuzzing: random damage to a valid study configuration is a ConfigError naming the key.

Hypothesis starts from a valid configuration that has every kind of key (top-level settings,
task options, an experiment with noise and settings, a method entry with its own settings) and
damages one place -- each key and each mapping in turn, a few random values each: a value of a
type or range the key does not take, an unknown key, a negative number, an empty list, an
unknown task or method name. Validation must raise :class:`ConfigError`, never another
exception from deep inside, and its message must name the damaged key or the unknown name.
Each validation takes milliseconds, so the whole module runs in seconds.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oscbo import methods, tasks
from oscbo.settings import ConfigError, Settings
from oscbo.study import config as study_config

BASE: dict[str, Any] = {
    "results": "results",
    "report": "report/index.html",
    "device": "cpu",
    "use_gpu": False,
    "threads_per_job": 1,
    "task_options": {"lunar12": {"episodes": 5}, "gp2": {"lengthscale": 0.2}},
    "readings": {"r": {"description": "v for oscbo", "methods": {"v": "oscbo"}, "tasks": {"lunar12": "levy5"}}},
    "experiments": {
        "e": {
            "description": "a study",
            "tasks": ["levy5", "lunar12"],
            "methods": ["oscbo", {"label": "v", "method": "oscbo", "settings": {"lambda0": 0.433}}],
            "seeds": 3,
            "seeds_per_job": 2,
            "budget": 5,
            "n_init": 4,
            "noise_std": {"levy5": 0.1},
            "settings": {"nu": 2.5, "refit_steps": 10},
        }
    },
}
EXPERIMENT = ("experiments", "e")
ENTRY = (*EXPERIMENT, "methods", 1)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> bool:
    return _number(value) and float(value).is_integer()


#: What each kind of key takes (a value outside it must be refused).
KINDS = {
    "string": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "mapping": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
    "integer": _integer,
    "integer>=1": lambda v: _integer(v) and v >= 1,
    "integer>=2": lambda v: _integer(v) and v >= 2,
    "number": _number,
    "number>0": lambda v: _number(v) and v > 0,
    "number>=0": lambda v: _number(v) and v >= 0,
    "number-or-null": lambda v: v is None or _number(v),
    "device": lambda v: isinstance(v, str) and re.fullmatch(r"auto|cpu|cuda(:[0-9]+)?", v) is not None,
    "nu": lambda v: _number(v) and v in (0.5, 1.5, 2.5),
    "power": lambda v: _integer(v) and v in (1, 2),
    "acquisition": lambda v: v in ("ucb", "logei"),
    "recovery": lambda v: v in ("calibration", "sharpness+calibration"),
    "conditioning": lambda v: v in ("all", "regression"),
    "multiplier": lambda v: v in ("one-sided", "two-sided"),
    "bounds": lambda v: isinstance(v, list) and len(v) == 2 and all(_number(x) and x > 0 for x in v) and v[0] < v[1],
}
SETTING_KINDS = {
    "nu": "nu",
    "ard": "bool",
    "noise_var": "number>0",
    "lengthscale_bounds": "bounds",
    "refit_lr": "number>0",
    "refit_steps": "integer>=1",
    "acquisition": "acquisition",
    "beta": "number>0",
    "acq_raw_samples": "integer>=1",
    "acq_restarts": "integer>=1",
    "calibration_power": "power",
    "calibration_clip": "bool",
    "lambda0": "number>0",
    "omega": "number>=0",
    "rho_hat": "number>0",
    "delta": "number>0",
    "T_rho": "integer>=1",
    "sigma_eta": "number>=0",
    "violation_budget": "number-or-null",
    "recovery_utility": "recovery",
    "scgp_conditioning": "conditioning",
    "scgp_multiplier": "multiplier",
    "tabicl_checkpoint": "string",
    "tabicl_allow_download": "bool",
    "tabicl_lr": "number>0",
    "tabicl_steps": "integer>=1",
    "tabicl_batch_size": "integer>=1",
}
#: Every damageable key: its path in BASE and its kind.
KEYS: list[tuple[tuple[Any, ...], str]] = [
    (("results",), "string"),
    (("report",), "string"),
    (("device",), "device"),
    (("use_gpu",), "bool"),
    (("threads_per_job",), "integer>=1"),
    (("task_options",), "mapping"),
    (("task_options", "lunar12"), "mapping"),
    (("task_options", "lunar12", "episodes"), "integer"),
    (("task_options", "gp2", "lengthscale"), "number"),
    (("readings",), "mapping"),
    (("readings", "r"), "mapping"),
    (("readings", "r", "description"), "string"),
    (("readings", "r", "methods"), "mapping"),
    (("readings", "r", "methods", "v"), "string"),
    (("readings", "r", "tasks"), "mapping"),
    (("readings", "r", "tasks", "lunar12"), "string"),
    (("experiments",), "mapping"),
    (EXPERIMENT, "mapping"),
    ((*EXPERIMENT, "description"), "string"),
    ((*EXPERIMENT, "tasks"), "list"),
    ((*EXPERIMENT, "methods"), "list"),
    ((*EXPERIMENT, "seeds_per_job"), "integer>=1"),
    ((*EXPERIMENT, "budget"), "integer>=1"),
    ((*EXPERIMENT, "n_init"), "integer>=2"),
    ((*EXPERIMENT, "noise_std"), "mapping"),
    ((*EXPERIMENT, "noise_std", "levy5"), "number>=0"),
    ((*EXPERIMENT, "settings"), "mapping"),
    ((*ENTRY, "label"), "string"),
    ((*ENTRY, "method"), "string"),
    ((*ENTRY, "settings"), "mapping"),
    *(((*EXPERIMENT, "settings", name), kind) for name, kind in SETTING_KINDS.items()),
    *(((*ENTRY, "settings", name), kind) for name, kind in SETTING_KINDS.items()),
]
NUMERIC_KEYS = [(path, kind) for path, kind in KEYS if kind.startswith(("integer>", "number>"))]
#: Mappings that refuse a key they do not know (task_options and noise_std: unknown task names),
#: each with a value its known keys take (so that only the key is wrong).
MAPPINGS = {
    (): "x",
    EXPERIMENT: 1,
    (*EXPERIMENT, "settings"): 1.0,
    ENTRY: "x",
    (*ENTRY, "settings"): 1.0,
    ("task_options",): {},
    ("task_options", "lunar12"): 1,
    (*EXPERIMENT, "noise_std"): 0.1,
    ("readings", "r"): {},
    ("readings", "r", "methods"): "oscbo",
    ("readings", "r", "tasks"): "levy5",
}

ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10_000, 10_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
#: Names no registry has (tasks, methods, settings and schema keys never start with "x_").
UNKNOWN_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=8).map("x_".__add__)
#: Few examples per key: every key is its own test case, and each example takes milliseconds.
FUZZ = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _id(path: tuple[Any, ...]) -> str:
    return ".".join(map(str, path)) or "<top>"


def damaged(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    config = copy.deepcopy(BASE)
    node = config
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return config


def refused(config: dict[str, Any], *names: str) -> str:
    """Validate; it must raise ConfigError naming every one of ``names``."""
    with pytest.raises(ConfigError) as error:
        study_config.validate(config)
    message = str(error.value)
    for name in names:
        assert name in message, message
    return message


def test_the_base_configuration_is_valid() -> None:
    """Otherwise every damage below would be refused for the wrong reason."""
    study_config.validate(copy.deepcopy(BASE))
    assert set(SETTING_KINDS) == {f.name for f in dataclasses.fields(Settings)}


@pytest.mark.parametrize(("path", "kind"), KEYS, ids=[_id(path) for path, _ in KEYS])
@FUZZ
@given(data=st.data())
def test_a_value_the_key_does_not_take_is_refused_naming_the_key(path: tuple, kind: str, data: st.DataObject) -> None:
    value = data.draw(ANY_VALUE.filter(lambda v: not KINDS[kind](v)), label="value")
    refused(damaged(path, value), str(path[-1]))


@pytest.mark.parametrize(("path", "kind"), NUMERIC_KEYS, ids=[_id(path) for path, _ in NUMERIC_KEYS])
@FUZZ
@given(value=st.one_of(st.integers(-(10**6), -1), st.floats(-1e9, -1e-9)))
def test_a_negative_number_is_refused_naming_the_key(path: tuple, kind: str, value: float) -> None:
    refused(damaged(path, value), str(path[-1]))


@pytest.mark.parametrize("path", list(MAPPINGS), ids=[_id(path) for path in MAPPINGS])
@FUZZ
@given(data=st.data())
def test_an_unknown_key_is_refused_naming_it(path: tuple, data: st.DataObject) -> None:
    key = data.draw(UNKNOWN_NAME, label="key")
    config = copy.deepcopy(BASE)
    node = config
    for part in path:
        node = node[part]
    node[key] = data.draw(st.one_of(st.just(MAPPINGS[path]), ANY_VALUE), label="value")
    refused(config, key)


@pytest.mark.parametrize("key", ["tasks", "methods", "seeds"])
def test_an_empty_list_is_refused_naming_the_key(key: str) -> None:
    refused(damaged((*EXPERIMENT, key), []), key)


@pytest.mark.parametrize("where", ["tasks", "methods", "entry"])
@FUZZ
@given(name=UNKNOWN_NAME)
def test_an_unknown_task_or_method_is_refused_listing_the_valid_names(name: str, where: str) -> None:
    if where == "entry":
        config, valid = damaged((*ENTRY, "method"), name), methods.names()
    else:
        config = damaged((*EXPERIMENT, where), [*BASE["experiments"]["e"][where][:1], name])
        valid = tasks.names() if where == "tasks" else methods.names()
    refused(config, name, *valid)
