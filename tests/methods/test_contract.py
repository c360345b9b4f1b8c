"""What every registered method must do, checked once over the method registry: a seed's record
is the same bit for bit alone or in a batch, every column of the record is set in every BO round
(but those the method has not: OSCBO's λ, a lengthscale where there is none), the record's regret
columns agree with its own values, and bad input is refused naming what is wrong.

A method added to the registry is checked here without a line of its own; its own file tests
what only it does (its equations, its schedule, its readings)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from tabicl_checkpoint import tiny_settings, write_tiny_checkpoint

from oscbo import methods, records
from oscbo import run as engine
from oscbo.api import cli, optimize
from oscbo.methods.gp_ucb_mll import GPUCBMLL
from oscbo.registry import Entry
from oscbo.run.loop import MethodOutputError
from oscbo.settings import ConfigError, Settings
from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs

#: A known-truth task built in a fraction of a second (few Fourier features): every method runs on
#: it, GP-UCB at the true kernel included, and its true lengthscale is diagnosed for every method.
TASK, OPTIONS, DIM = "gp2", {"features": 256}, 2
BUDGET, N_INIT = 6, 5
#: Methods with no lengthscale of their own (TabICLv2, a network): their lengthscale columns are empty.
NO_LENGTHSCALE = {"tabicl"}
#: The record columns only OSCBO's dual sets.
DUAL_COLUMNS = ["lambda"]


@pytest.fixture(scope="module")
def settings_of(tmp_path_factory):
    """Each method's settings: the defaults, and TabICLv2's tiny random checkpoint (no download)
    with a small budget of Adam steps."""
    checkpoint = write_tiny_checkpoint(tmp_path_factory.mktemp("checkpoints") / "tiny.ckpt")
    return lambda method: tiny_settings(checkpoint) if method == "tabicl" else Settings()


def run(method: str, seeds: list[int], settings: Settings) -> engine.RunResult:
    return engine.run(TASK, method, seeds, BUDGET, N_INIT, settings, task_options=OPTIONS, device="cpu")


def is_oscbo(method: str) -> bool:
    return methods.REGISTRY[method].target == methods.REGISTRY["oscbo"].target


@pytest.mark.parametrize("method", methods.names())
def test_a_seed_s_record_is_the_same_alone_or_in_a_batch(method, settings_of):
    """Seed 1 alone, and seed 1 among seeds 0-2 in another run: the same record bit for bit, every
    column but the wall-clock times (so the same seed gives the same record, run after run)."""
    alone = run(method, [1], settings_of(method)).tables[1]
    together = run(method, [0, 1, 2], settings_of(method)).tables[1]
    untimed = [column for column in alone.columns if column not in records.SECONDS_COLUMNS]
    pd.testing.assert_frame_equal(alone[untimed], together[untimed], check_exact=True)


@pytest.mark.parametrize("method", methods.names())
def test_every_round_records_every_column_the_method_has(method, settings_of):
    """The record's columns are the standard ones (records.record_columns) and then the method's own
    state; every BO row sets every one of them but the columns the method has not; the regrets
    follow from the record's own f (simple: f* minus the best f so far; cumulative: the sum of
    f* - f over the BO rounds), and the query lies in the unit cube."""
    settings = settings_of(method)
    result = run(method, [0, 1], settings)
    lengthscales = DIM if methods.REGISTRY[method].settings.get("ard", settings.ard) else 1
    standard = records.record_columns(DIM, lengthscales)
    for table in result.tables.values():
        assert list(table.columns[: len(standard)]) == standard
        bo = table[table["phase"] == "bo"]
        assert len(bo) == BUDGET and len(table) == BUDGET + N_INIT
        empty = set(records.lengthscale_columns(lengthscales)) if method in NO_LENGTHSCALE else set()
        empty |= set() if is_oscbo(method) else set(DUAL_COLUMNS)
        assert bo[[c for c in table.columns if c in empty]].isna().all().all(), f"{method} sets {sorted(empty)}"
        unset = [column for column in table.columns if column not in empty and bo[column].isna().any()]
        assert not unset, f"{method} leaves {unset} unset in a BO round"
        f_star = table["simple_regret"] + table["f"].cummax()
        np.testing.assert_allclose(f_star, f_star.iloc[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(bo["cumulative_regret"], np.cumsum(f_star.iloc[0] - bo["f"]), rtol=1e-12)
        assert table[records.x_columns(DIM)].stack().between(0, 1).all()


@pytest.mark.parametrize("method", methods.names())
def test_bad_input_is_refused_naming_what_is_wrong(method, settings_of):
    """Before any oracle call: a budget of no rounds, a seed twice, a setting of the wrong kind."""
    with pytest.raises(ValueError, match="budget"):
        engine.run(TASK, method, [0], 0, N_INIT, settings_of(method), task_options=OPTIONS)
    with pytest.raises(ValueError, match="distinct"):
        engine.run(TASK, method, [1, 1], BUDGET, N_INIT, settings_of(method), task_options=OPTIONS)
    with pytest.raises(ValueError, match="beta"):
        engine.run(TASK, method, [0], BUDGET, N_INIT, Settings.from_dict({"beta": "two"}), task_options=OPTIONS)


class BatchDependent(GPUCBMLL):
    """GP-UCB-MLL whose UCB multiplier grows with its batch: a seed's queries depend on its batch."""

    def width(self, model):
        return super().width(model) * (1 + 0.1 * len(self.seeds))


class Forgetful(GPUCBMLL):
    """GP-UCB-MLL that records a state column and leaves it unset."""

    def state(self):
        return {"forgotten": torch.full((len(self.seeds),), float("nan"), dtype=torch.float64)}


@pytest.mark.parametrize(
    "plugin, check, message",
    [
        (BatchDependent, test_a_seed_s_record_is_the_same_alone_or_in_a_batch, "are different"),
        (Forgetful, test_every_round_records_every_column_the_method_has, r"leaves \['forgotten'\] unset"),
    ],
)
def test_the_contract_fails_a_method_that_breaks_it(plugin, check, message, settings_of, monkeypatch):
    """The contract's checks can fail: a method registered as a user's would be, breaking one."""
    monkeypatch.setitem(methods.REGISTRY, "plugin", Entry(f"{__name__}:{plugin.__name__}"))
    with pytest.raises(AssertionError, match=message):
        check("plugin", settings_of)


class ScalarLengthscale(GPUCBMLL):
    """GP-UCB-MLL that plays one lengthscale for the whole batch, a 0-d tensor."""

    def lengthscale(self, t, data):
        return self.theta.mean()


class FlatQueries(GPUCBMLL):
    """GP-UCB-MLL that proposes its queries flattened, one vector for the batch."""

    def propose(self, model, width, raw_points):
        return super().propose(model, width, raw_points).flatten()


class ListWidth(GPUCBMLL):
    """GP-UCB-MLL whose UCB multiplier is a Python list."""

    def width(self, model):
        return super().width(model).tolist()


@pytest.mark.parametrize(
    "plugin, message",
    [
        (
            ScalarLengthscale,
            r"lengthscale\(t=1, data\) returned a tensor of shape \(\); expected a tensor of 2 x 1 or 2 x 3",
        ),
        (
            FlatQueries,
            r"propose\(model, width, raw_points\) returned a tensor of shape \(6,\); expected a tensor of 2 x 3",
        ),
        (ListWidth, r"width\(model\) returned a list; expected a tensor of 2 \(S: per seed\)"),
    ],
)
def test_a_method_s_output_of_the_wrong_shape_is_refused_naming_the_shape(plugin, message, monkeypatch):
    """At the engine's boundary, in the first round, before any diagnostic reads it: the hook, what
    it returned and the shape the contract asks for (S seeds, d inputs), not an IndexError deep inside."""
    monkeypatch.setitem(methods.REGISTRY, "plugin", Entry(f"{__name__}:{plugin.__name__}"))
    with pytest.raises(MethodOutputError, match=rf"method 'plugin': {message}"):
        engine.run("hartmann3", "plugin", [0, 1], 2, 4)


class Shrinking(GPUCBMLL):
    """GP-UCB-MLL that plays its fitted lengthscale times ``shrink``, a setting of its own."""

    def __init__(self, settings, budget, seeds, shrink: float = 0.9):
        super().__init__(settings, budget, seeds)
        self.shrink = shrink

    def lengthscale(self, t, data):
        return super().lengthscale(t, data) * self.shrink


@pytest.fixture
def shrinking(monkeypatch):
    """:class:`Shrinking` registered as method ``shrinking`` for one test."""
    monkeypatch.setitem(methods.REGISTRY, "shrinking", Entry(f"{__name__}:Shrinking"))


@pytest.mark.usefixtures("shrinking")
def test_a_method_s_own_setting_reaches_it_and_a_misspelt_one_fails_the_config_check():
    """A method declares its own settings as keyword parameters of its class; a config's method
    entry sets them under ``options``. check-config refuses a name the class does not take, or a
    value not of its default's kind; a given value reaches the method; a job without options is
    the job it was before methods took them (its identity unchanged)."""

    def config(options):
        entry = {"label": "s", "method": "shrinking", "options": options}
        return {"experiments": {"e": {"tasks": ["hartmann3"], "methods": [entry], "seeds": 1, "budget": 2}}}

    study_config.validate(config({"shrink": 0.5}))
    with pytest.raises(
        ConfigError, match=r"experiments.e.s: .*takes no option\(s\) \['shrnk'\]; its options: \['shrink'\]"
    ):
        study_config.validate(config({"shrnk": 0.5}))
    with pytest.raises(ConfigError, match=r"option shrink must be a finite number, got 'half'"):
        study_config.validate(config({"shrink": "half"}))
    played = {
        shrink: engine.run("hartmann3", "shrinking", [0], 2, 4, method_options={"shrink": shrink}).tables[0]
        for shrink in (0.9, 0.5)
    }
    first = [table["lengthscale_0"].dropna().iloc[0] for table in played.values()]
    assert first[1] / first[0] == pytest.approx(0.5 / 0.9, rel=1e-12)  # the same theta_0, shrunk by each
    with pytest.raises(ValueError, match=r"takes no option\(s\) \['shrnk'\]"):
        engine.run("hartmann3", "shrinking", [0], 2, 4, method_options={"shrnk": 0.5})
    found = study_jobs.jobs(study_config.validate(config({"shrink": 0.5})), lambda task: None)
    assert [job.to_dict()["method_options"] for job in found.values()] == [{"shrink": 0.5}]
    plain = study_jobs.jobs(study_config.validate(config({})), lambda task: None)
    assert all("method_options" not in job.to_dict() for job in plain.values())


@pytest.mark.usefixtures("shrinking")
def test_the_api_passes_a_method_s_own_setting_and_records_it():
    """``optimize(..., method_options=...)``: the setting reaches the method and the sidecar says it."""

    def bowl(x):
        return -float(np.sum((np.asarray(x) - 0.3) ** 2))

    runs = {
        shrink: optimize(
            bowl,
            [(0, 1)] * 3,
            method="shrinking",
            budget=2,
            n_init=4,
            progress=False,
            method_options={"shrink": shrink},
        )
        for shrink in (0.9, 0.5)
    }
    first = [run.history["lengthscale_0"].dropna().iloc[0] for run in runs.values()]
    assert first[1] / first[0] == pytest.approx(0.5 / 0.9, rel=1e-12)
    assert runs[0.5].meta()["method_options"] == {"shrink": 0.5}


@pytest.mark.usefixtures("shrinking")
def test_the_command_line_passes_a_method_s_own_setting_and_names_a_misspelt_one(tmp_path, capsys):
    """``oscbo run ... --method-option KEY=VALUE``: the sidecar records it; a name the class does
    not take exits 2, naming it and the valid options, before any evaluation."""
    command = ["run", "hartmann3", "shrinking", "--seed", "0", "--budget", "2", "--n-init", "4"]
    assert cli.main([*command, "--out", str(tmp_path / "bad"), "--method-option", "shrnk=0.5"]) == 2
    assert "takes no option(s) ['shrnk']; its options: ['shrink']" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists() or not list((tmp_path / "bad").glob("seed*"))
    assert cli.main([*command, "--out", str(tmp_path / "good"), "--method-option", "shrink=0.5"]) == 0
    assert json.loads((tmp_path / "good" / "seed0.json").read_text())["method_options"] == {"shrink": 0.5}
