"""Every tunable constant of a run, with its default: :class:`Settings`.

Defaults are the paper's Table S1 and, where the paper is silent, the project's choices, each a
row of the report's protocol (:mod:`oscbo.study.protocol`). The study configuration's ``settings``
block (``oscbo/study/config.schema.yaml``) mirrors this dataclass field for field (a test keeps the
two equal). This module imports nothing of the project: every method, the engine and the study
validation read it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

#: The paper's symbol of a setting, where it has one, for the words a reader sees (``λ₀ = 0.433``).
SYMBOLS = {"lambda0": "λ₀", "omega": "ω", "nu": "ν", "beta": "β", "calibration_power": "p"}


def shown(name: str, value: Any) -> str:
    """A setting and its value as a reader sees them: ``λ₀ = 0.433``."""
    return f"{SYMBOLS.get(name, name)} = {value:g}" if isinstance(value, float | int) else f"{name} = {value}"


class ConfigError(ValueError):
    """A configuration value is missing, unknown or of the wrong type."""


@dataclass(frozen=True)
class Settings:
    """Every tunable constant of a run. Defaults: the paper's Table S1, else the protocol's choice.

    A method's own knob is a keyword argument of its class (a config entry's ``options``), not a
    field here; the OSCBO, SCGP and TabICLv2 fields predate options and are part of every
    published job's identity (docs/architecture.md, "Adding things")."""

    # Surrogate (paper 7, Table S1)
    nu: float = 2.5
    ard: bool = False
    noise_var: float = 0.01
    lengthscale_bounds: tuple[float, float] = (1e-2, 1e1)
    refit_lr: float = 0.01
    refit_steps: int = 50
    # Acquisition (paper D.1, Table S1)
    acquisition: str = "ucb"
    beta: float = 2.0
    acq_raw_samples: int = 20
    acq_restarts: int = 5
    # Calibration diagnostics and OSCBO (eqs. 6-7, Algorithms 1-2, Table S1)
    calibration_power: int = 2
    calibration_clip: bool = True
    lambda0: float = 1.0
    omega: float = 0.001
    rho_hat: float = 0.5
    delta: float = 0.1
    T_rho: int = 150
    sigma_eta: float = 0.1
    violation_budget: float | None = None
    recovery_utility: str = "calibration"
    # SCGP (paper D.1, Table S1; the readings of oscbo.methods.scgp)
    scgp_conditioning: str = "all"
    scgp_multiplier: str = "one-sided"
    # TabICLv2 (paper D.1, Table S1)
    tabicl_checkpoint: str = "data/checkpoints/tabicl-regressor-v2-20260212.ckpt"
    tabicl_allow_download: bool = False
    tabicl_lr: float = 0.05
    tabicl_steps: int = 50
    tabicl_batch_size: int = 32

    def __post_init__(self) -> None:
        self._check_types()
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
        if self.scgp_conditioning not in ("all", "regression"):
            raise ConfigError(
                f"settings.scgp_conditioning must be 'all' or 'regression', got {self.scgp_conditioning!r}"
            )
        if self.scgp_multiplier not in ("one-sided", "two-sided"):
            raise ConfigError(
                f"settings.scgp_multiplier must be 'one-sided' or 'two-sided', got {self.scgp_multiplier!r}"
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

    def _check_types(self) -> None:
        """Each field has its default's type (a number: finite; an integer: integral, made int)."""
        for spec in dataclasses.fields(self):
            name, value = spec.name, getattr(self, spec.name)
            if name == "lengthscale_bounds":
                if not (isinstance(value, tuple) and len(value) == 2 and all(is_number(v) for v in value)):
                    raise ConfigError(f"settings.{name} must be two finite numbers, got {value!r}")
                object.__setattr__(self, name, tuple(float(v) for v in value))
            elif name == "violation_budget":
                if not (value is None or is_number(value)):
                    raise ConfigError(f"settings.{name} must be null or a finite number, got {value!r}")
            else:
                object.__setattr__(self, name, checked(f"settings.{name}", value, spec.default))

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> Settings:
        """Build settings from a (partial) mapping; unknown keys are an error naming the key."""
        if values is not None and not isinstance(values, dict):
            raise ConfigError(f"settings must be a mapping of setting names to values, got {values!r}")
        values = dict(values or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known, key=str)
        if unknown:
            raise ConfigError(f"unknown setting(s) {unknown}; valid settings: {sorted(known)}")
        if "lengthscale_bounds" in values and isinstance(values["lengthscale_bounds"], (list, tuple)):
            values["lengthscale_bounds"] = tuple(values["lengthscale_bounds"])
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
        return max(self.T_rho**-0.25, self.rho_hat / 2)

    @property
    def mll_equivalent_lambda(self) -> float:
        """The constant lambda at which S5 (p = 2) is proportional to -2 x MLL."""
        return self.beta / math.log1p(1 / self.noise_var)


def is_number(value: Any) -> bool:
    """An int or float (not a bool) that is finite."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def checked(name: str, value: Any, default: Any) -> Any:
    """``value`` if it has the kind of ``default`` (a bool; an integer, returned as int, so that
    50.0 in YAML is 50 steps; a finite number; a string); defaults of other kinds take anything.

    Raises:
        ConfigError: naming ``name``, the kind wanted and the value.
    """
    if isinstance(default, bool):
        ok, kind = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, kind = is_number(value) and float(value).is_integer(), "an integer"
        value = int(value) if ok else value
    elif isinstance(default, float):
        ok, kind = is_number(value), "a finite number"
    elif isinstance(default, str):
        ok, kind = isinstance(value, str), "a string"
    else:
        return value
    if not ok:
        raise ConfigError(f"{name} must be {kind}, got {value!r}")
    return value
