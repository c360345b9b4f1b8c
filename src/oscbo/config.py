"""Settings of the surrogate, the acquisition and the methods, and the study configuration.

:class:`Settings` holds every constant of SPEC sections 2-4 with its default. The study
configuration (``config/*.yaml``) is validated against ``workflow/schemas/config.schema.yaml``,
whose ``settings`` block mirrors this dataclass field for field (a test keeps the two equal).
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A configuration value is missing, unknown or of the wrong type."""


@dataclass(frozen=True)
class Settings:
    """Every tunable constant of a run. Defaults follow the paper's Table S1 and SPEC."""

    # Surrogate (SPEC 2)
    nu: float = 2.5
    ard: bool = False
    noise_var: float = 0.01
    lengthscale_bounds: tuple[float, float] = (1e-2, 1e1)
    refit_lr: float = 0.01
    refit_steps: int = 50
    # Acquisition (SPEC 3)
    acquisition: str = "ucb"
    beta: float = 2.0
    acq_raw_samples: int = 20
    acq_restarts: int = 5
    # Calibration diagnostics and OSCBO (SPEC 4)
    calibration_power: int = 2
    lambda0: float = 1.0
    omega: float = 0.001
    rho_hat: float = 0.5
    delta: float = 0.1
    T_rho: int = 150
    sigma_eta: float = 0.1
    violation_budget: float | None = None
    recovery_utility: str = "calibration"
    # TabICLv2 (SPEC 4, Table S1)
    tabicl_checkpoint: str = "data/checkpoints/tabicl-regressor-v2-20260212.ckpt"
    tabicl_allow_download: bool = False
    tabicl_lr: float = 0.05
    tabicl_steps: int = 50
    tabicl_batch_size: int = 32

    def __post_init__(self) -> None:
        if self.nu not in (0.5, 1.5, 2.5):
            raise ConfigError(f"settings.nu must be 0.5, 1.5 or 2.5, got {self.nu}")
        if self.acquisition not in ("ucb", "logei"):
            raise ConfigError(f"settings.acquisition must be 'ucb' or 'logei', got {self.acquisition!r}")
        if self.calibration_power not in (1, 2):
            raise ConfigError(f"settings.calibration_power must be 1 or 2, got {self.calibration_power}")
        if self.recovery_utility not in ("calibration", "sharpness+calibration"):
            raise ConfigError(
                "settings.recovery_utility must be 'calibration' or 'sharpness+calibration', "
                f"got {self.recovery_utility!r}"
            )
        low, high = self.lengthscale_bounds
        if not 0 < low < high:
            raise ConfigError(f"settings.lengthscale_bounds must satisfy 0 < low < high, got {self.lengthscale_bounds}")
        for name in ("noise_var", "beta", "refit_lr", "lambda0", "rho_hat", "delta", "tabicl_lr"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"settings.{name} must be positive, got {getattr(self, name)}")
        for name in ("refit_steps", "acq_raw_samples", "acq_restarts", "T_rho", "tabicl_steps", "tabicl_batch_size"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"settings.{name} must be at least 1, got {getattr(self, name)}")
        if self.acq_restarts > self.acq_raw_samples:
            raise ConfigError("settings.acq_restarts cannot exceed settings.acq_raw_samples")
        if self.omega < 0 or self.sigma_eta < 0:
            raise ConfigError("settings.omega and settings.sigma_eta must be non-negative")

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> Settings:
        """Build settings from a (partial) mapping; unknown keys are an error naming the key."""
        values = dict(values or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"unknown setting(s) {unknown}; valid settings: {sorted(known)}")
        if "lengthscale_bounds" in values:
            values["lengthscale_bounds"] = tuple(float(v) for v in values["lengthscale_bounds"])
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["lengthscale_bounds"] = list(self.lengthscale_bounds)
        return values

    @property
    def rho_tilde(self) -> float:
        """rho~ = max(T_rho^(-1/4), rho^/2) (Algorithm 1, line 2; Table S1)."""
        return max(self.T_rho ** -0.25, self.rho_hat / 2)

    @property
    def mll_equivalent_lambda(self) -> float:
        """The constant lambda at which S5 (p = 2) is proportional to -2 x MLL."""
        return self.beta / math.log1p(1 / self.noise_var)


@dataclass(frozen=True)
class MethodSpec:
    """A method as an experiment names it: a registry name, a label and setting overrides."""

    label: str
    name: str
    settings: dict[str, Any] = field(default_factory=dict)


def method_specs(experiment: dict[str, Any]) -> list[MethodSpec]:
    """The methods of an experiment block; a plain string means label = name, no overrides."""
    specs = []
    for entry in experiment["methods"]:
        if isinstance(entry, str):
            specs.append(MethodSpec(label=entry, name=entry))
        else:
            specs.append(MethodSpec(label=entry["label"], name=entry["method"], settings=dict(entry.get("settings", {}))))
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


def load_schema() -> dict[str, Any]:
    return yaml.safe_load(SCHEMA_PATH.read_text())


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


def validate(config: dict[str, Any]) -> dict[str, Any]:
    """Validate a study configuration against the JSON schema, filling defaults in place.

    Raises:
        ConfigError: naming the offending key path and what was wrong.
    """
    import jsonschema

    schema = load_schema()
    validator_cls = _with_defaults(jsonschema.validators.validator_for(schema))
    errors = sorted(validator_cls(schema).iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{'.'.join(str(p) for p in e.absolute_path) or '<top>'}: {e.message}" for e in errors]
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    from oscbo import methods, tasks

    for task, options in config["task_options"].items():
        if task not in tasks.names():
            raise ConfigError(f"task_options: unknown task {task!r}; valid tasks: {tasks.names()}")
        try:
            tasks.check_options(task, options)
        except ValueError as error:
            raise ConfigError(f"task_options.{task}: {error}") from None
    for name, experiment in config["experiments"].items():
        # JSON Schema counts 2.0 as an integer; Python's range() does not.
        for key in ("budget", "n_init", "seeds_per_job"):
            experiment[key] = int(experiment[key])
        if not isinstance(experiment["seeds"], list):
            experiment["seeds"] = int(experiment["seeds"])
        unknown_tasks = [task for task in experiment["tasks"] if task not in tasks.names()]
        if unknown_tasks:
            raise ConfigError(f"experiments.{name}.tasks: unknown {unknown_tasks}; valid tasks: {tasks.names()}")
        for spec in method_specs(experiment):
            if spec.name not in methods.names():
                raise ConfigError(
                    f"experiments.{name}.methods: unknown method {spec.name!r}; valid methods: {methods.names()}"
                )
            try:
                method_settings(experiment, spec)
            except ConfigError as error:
                raise ConfigError(f"experiments.{name}.{spec.label}: {error}") from None
    return config


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a study configuration file."""
    return validate(yaml.safe_load(Path(path).read_text()) or {})
