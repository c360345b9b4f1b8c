"""The study configuration: reading, validating and expanding ``config/*.yaml``.

A configuration is checked against ``config.schema.yaml`` (beside this module; package data),
whose defaults are filled in, then beyond the schema: finite numbers, string keys, registered
task and method names, settings that build a :class:`~oscbo.settings.Settings`, readings whose
stand-ins ran, and no path that leaves the project folder. Every error is a
:class:`~oscbo.settings.ConfigError` naming the key.
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePath
from typing import Any

import yaml

from oscbo import methods, tasks
from oscbo.settings import ConfigError, Settings


@dataclass(frozen=True)
class MethodSpec:
    """A method as an experiment names it: a registry name, a label, setting overrides and the
    method's own settings (``options``: keyword arguments of its class)."""

    label: str
    name: str
    settings: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)


def method_specs(experiment: dict[str, Any]) -> list[MethodSpec]:
    """The methods of an experiment block; a plain string means label = name, no overrides."""
    specs = []
    for entry in experiment["methods"]:
        if isinstance(entry, str):
            specs.append(MethodSpec(label=entry, name=entry))
        else:
            specs.append(
                MethodSpec(
                    label=entry["label"],
                    name=entry["method"],
                    settings=dict(entry.get("settings", {})),
                    options=dict(entry.get("options", {})),
                )
            )
    labels = [spec.label for spec in specs]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"method labels must be unique within an experiment, got {labels}")
    return specs


def method_settings(experiment: dict[str, Any], spec: MethodSpec) -> Settings:
    """Experiment-wide settings, then the method entry's own overrides."""
    return Settings.from_dict({**experiment.get("settings", {}), **spec.settings})


def experiment_seeds(experiment: dict[str, Any]) -> list[int]:
    """``seeds: 20`` means seeds 0..19; a list is taken as is."""
    seeds = experiment["seeds"]
    return list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]


def seed_chunks(seeds: list[int], per_job: int) -> list[list[int]]:
    return [seeds[i : i + per_job] for i in range(0, len(seeds), per_job)]


@functools.cache
def schema() -> dict[str, Any]:
    """The parsed schema (package data), read once: parsing it costs more than validating a config."""
    return yaml.safe_load(resources.files("oscbo.study").joinpath("config.schema.yaml").read_text(encoding="utf-8"))


def _with_defaults(validator_cls: Any) -> Any:
    """A validator class that also fills each property's ``default`` (as Snakemake's does)."""
    import jsonschema

    check_properties = validator_cls.VALIDATORS["properties"]

    def properties(validator: Any, props: dict[str, Any], instance: Any, schema: dict[str, Any]) -> Any:
        if isinstance(instance, dict):
            for key, sub in props.items():
                if "default" in sub:
                    instance.setdefault(key, copy.deepcopy(sub["default"]))
        yield from check_properties(validator, props, instance, schema)

    return jsonschema.validators.extend(validator_cls, {"properties": properties})


#: Top-level keys that hold paths; like every path from a config they must stay inside the
#: project folder (the working directory of the workflow).
PATH_KEYS = ("results", "report")


def validate(config: dict[str, Any]) -> dict[str, Any]:
    """Validate a study configuration against the JSON schema, filling defaults in place.

    Beyond the schema: every number is finite and every mapping key a string; task and
    method names are registered (the error lists the valid ones); a method entry's settings
    are checked like the experiment's; no path (``results``, ``report``, the experiment and
    method folders, ``tabicl_checkpoint``) leaves the project folder.

    Raises:
        ConfigError: naming the offending key path and what was wrong.
    """
    import jsonschema

    if not isinstance(config, dict):
        raise ConfigError(f"<top>: a configuration is a mapping with an 'experiments' key, got {config!r}")
    _check_keys_and_numbers(config)
    schema_ = schema()
    validator_cls = _with_defaults(jsonschema.validators.validator_for(schema_))
    errors = [(e, ()) for e in validator_cls(schema_).iter_errors(config)]
    if not errors:
        # A method entry's settings override the experiment's: checked, but not filled with defaults.
        plain = jsonschema.validators.validator_for(schema_)({"$ref": "#/$defs/settings", "$defs": schema_["$defs"]})
        for name, experiment in config["experiments"].items():
            for i, entry in enumerate(experiment["methods"]):
                if isinstance(entry, dict) and "settings" in entry:
                    prefix = ("experiments", name, "methods", i, "settings")
                    errors += [(e, prefix) for e in plain.iter_errors(entry["settings"])]
    if errors:
        lines = sorted(_describe(error, prefix) for error, prefix in errors)
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    for key in PATH_KEYS:
        _check_inside_project(key, config[key])
    if config["summaries"] is not None:
        _check_inside_project("summaries", config["summaries"])
    for method in config["gpu_methods"] or []:
        if method not in methods.names():
            raise ConfigError(f"gpu_methods: unknown method {method!r}; valid methods: {methods.names()}")
    for task, options in config["task_options"].items():
        if task not in tasks.names():
            raise ConfigError(f"task_options: unknown task {task!r}; valid tasks: {tasks.names()}")
        try:
            tasks.REGISTRY[task].check_options(options)
        except ValueError as error:
            raise ConfigError(f"task_options.{task}: {error}") from None
    for name, experiment in config["experiments"].items():
        _check_inside_project(f"experiments.{name}", name)
        # JSON Schema counts 2.0 as an integer; Python's range() does not.
        for key in ("budget", "n_init", "seeds_per_job"):
            experiment[key] = int(experiment[key])
        if not isinstance(experiment["seeds"], list):
            experiment["seeds"] = int(experiment["seeds"])
        for key in ("tasks", "noise_std"):
            unknown = [task for task in experiment[key] if task not in tasks.names()]
            if unknown:
                raise ConfigError(f"experiments.{name}.{key}: unknown task(s) {unknown}; valid tasks: {tasks.names()}")
        for spec in method_specs(experiment):
            if spec.name not in methods.names():
                raise ConfigError(
                    f"experiments.{name}.methods: unknown method {spec.name!r}; valid methods: {methods.names()}"
                )
            _check_inside_project(f"experiments.{name}.methods.label", spec.label)
            try:
                settings = method_settings(experiment, spec)
                if spec.options:
                    methods.REGISTRY[spec.name].check_options(spec.options, methods.METHOD_ARGUMENTS)
            except (ConfigError, ValueError) as error:
                raise ConfigError(f"experiments.{name}.{spec.label}: {error}") from None
            _check_inside_project(
                f"experiments.{name}.{spec.label}: settings.tabicl_checkpoint", settings.tabicl_checkpoint
            )
    _check_readings(config)
    not_run(config)  # each entry is complete and names registered tasks and methods
    return config


def not_run(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The (experiment, task, method) runs the config's ``not_run`` entries leave out, each as a job
    that did not run: ``experiment, task, method, seeds (list), reason``. A left-out key defaults
    to the experiment's own; an experiment the study does not run must give tasks, methods and seeds.

    Raises:
        ConfigError: an entry lacks what its experiment cannot supply, names an unknown task or
            method, or leaves out a run the study makes.
    """
    found = []
    for i, entry in enumerate(config.get("not_run", [])):
        where = f"not_run.{i} ({entry['experiment']})"
        experiment = config["experiments"].get(entry["experiment"])
        labels = [spec.label for spec in method_specs(experiment)] if experiment else []
        missing = [key for key in ("tasks", "methods", "seeds") if key not in entry and experiment is None]
        if missing:
            raise ConfigError(f"{where}: the study does not run this experiment, so give its {missing}")
        left_tasks = entry.get("tasks") or experiment["tasks"]
        left_methods = entry.get("methods") or labels
        seeds = list(range(entry["seeds"])) if "seeds" in entry else experiment_seeds(experiment)
        unknown = [task for task in left_tasks if task not in tasks.names()]
        if unknown:
            raise ConfigError(f"{where}.tasks: unknown task(s) {unknown}; valid tasks: {tasks.names()}")
        unknown = [method for method in left_methods if method not in methods.names() and method not in labels]
        if unknown:
            raise ConfigError(f"{where}.methods: unknown method(s) {unknown}; valid methods: {methods.names()}")
        if experiment:
            made = [(t, m) for t in left_tasks for m in left_methods if t in experiment["tasks"] and m in labels]
            if made:
                raise ConfigError(f"{where}: leaves out {made}, which the experiment runs")
        found += [
            {
                "experiment": entry["experiment"],
                "task": task,
                "method": method,
                "seeds": seeds,
                "reason": entry["reason"],
            }
            for task in left_tasks
            for method in left_methods
        ]
    return found


def _check_readings(config: dict[str, Any]) -> None:
    """Every stand-in and what it replaces is a method label or task of some experiment, a reading
    has at least one stand-in, a reading's declared setting is the one its method stand-ins run
    with, and at most one reading is the headline."""
    runs = [(experiment, spec) for experiment in config["experiments"].values() for spec in method_specs(experiment)]
    labels = {spec.label for _, spec in runs}
    tasks = {task for experiment in config["experiments"].values() for task in experiment["tasks"]}
    for name, reading in config["readings"].items():
        if not reading["methods"] and not reading["tasks"]:
            raise ConfigError(f"readings.{name}: names no stand-in (give 'methods' or 'tasks')")
        for kind, known in (("methods", labels), ("tasks", tasks)):
            for stand_in, replaced in reading[kind].items():
                where = f"readings.{name}.{kind}.{stand_in}"
                for role, value in (("the stand-in", stand_in), ("what it stands in for", replaced)):
                    if value not in known:
                        raise ConfigError(
                            f"{where}: {role}, {value!r}, is in no experiment; {kind} of the "
                            f"study: {sorted(known)} (run it, or drop the reading)"
                        )
                if stand_in == replaced:
                    raise ConfigError(f"{where}: stands in for itself")
        for setting, value in (reading.get("setting") or {}).items():
            for experiment, spec in runs:
                if spec.label in reading["methods"]:
                    has = getattr(method_settings(experiment, spec), setting, None)
                    if has != value:
                        raise ConfigError(
                            f"readings.{name}.setting: {setting} = {value}, but its stand-in {spec.label!r} runs "
                            f"with {setting} = {has}"
                        )
    headlines = [name for name, reading in config["readings"].items() if reading.get("headline")]
    if len(headlines) > 1:
        raise ConfigError(f"readings: {headlines} are each marked headline; the answer shows one")


def _check_keys_and_numbers(node: Any, path: tuple[str, ...] = ()) -> None:
    """Every mapping key is a string and every number finite (YAML has .nan, .inf and 1: keys)."""
    where = ".".join(path) or "<top>"
    if isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(f"{where}: {node} is not a finite number")
    if isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(key, str):
                raise ConfigError(f"{where}: key {key!r} is not a string")
            _check_keys_and_numbers(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _check_keys_and_numbers(value, (*path, str(i)))


def _describe(error: Any, prefix: tuple[Any, ...]) -> str:
    """``key.path: message``; for ``oneOf``, what the alternatives of the value's type objected
    to, with their keys (a method entry that is a mapping: not "is not of type 'string'")."""
    path = ".".join(str(p) for p in (*prefix, *error.absolute_path)) or "<top>"
    reasons = [
        f"{'.'.join(str(p) for p in (*prefix, *c.absolute_path))}: {c.message}"
        for c in error.context or []
        if not (c.validator == "type" and c.absolute_path == error.absolute_path)
    ]
    return f"{path}: {error.message}" + (f" ({'; '.join(reasons)})" if reasons else "")


def _check_inside_project(key: str, value: str) -> None:
    """A path from the config is relative to the project folder and never leaves it."""
    path = PurePath(value)
    if not value or path.is_absolute() or ".." in path.parts or path.parts in ((), (".",)):
        raise ConfigError(
            f"{key}: {value!r} is not a path inside the project folder; give a relative path without '..' "
            "(link a file from elsewhere into the project)"
        )


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a study configuration file (YAML, read with ``yaml.safe_load``).

    Raises:
        ConfigError: the file cannot be read, is not YAML, or is not a valid configuration.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot be read ({error})") from None
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as error:  # safe_load refuses !!python tags: never code from a config
        raise ConfigError(f"{path}: not a YAML configuration ({error})") from None
    return validate({} if config is None else config)
