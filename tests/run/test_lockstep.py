"""The lockstep BO engine: batch invariance, determinism, the record, and that BO works."""

import numpy as np
import pandas as pd
import pytest
import torch

from oscbo import records
from oscbo import run as engine
from oscbo.methods.base import Observations
from oscbo.model.gp import GaussianProcess
from oscbo.model.losses import sharpness_loss
from oscbo.settings import Settings
from oscbo.study.job import Job, JobMethod, JobTask

TIMING = records.SECONDS_COLUMNS
#: gp2 with few Fourier features: a known-truth task built in a fraction of a second.
SMALL_GP = {"features": 256}


@pytest.mark.parametrize(
    "method, settings, state",
    [
        ("oscbo", Settings(), ["lengthscale_0", "lambda"]),
        # ARD; every seed's L-BFGS-B MAP fit stops on its own, while the others still run
        ("vanilla-bo", Settings(), [f"lengthscale_{i}" for i in range(6)]),
        # SCGP's other readings (its defaults: tests/methods/test_scgp.py)
        (
            "scgp",
            Settings(scgp_conditioning="regression", scgp_multiplier="two-sided"),
            ["lengthscale_0", "calibration_multiplier", "calibration_lengthscale"],
        ),
    ],
    ids=["oscbo", "vanilla-bo", "scgp-regression-two-sided"],
)
def test_a_seed_does_not_depend_on_its_batch_at_length(method, settings, state):
    """Seed 3 alone and seed 3 among seeds 0-4 query the same points for 20 rounds on hartmann6:
    the engine at length, where a last-bit difference has rounds to grow (every method's short run,
    alone and in a batch: tests/methods/test_contract.py)."""
    alone = engine.run("hartmann6", method, [3], budget=20, n_init=10, settings=settings).tables[3]
    together = engine.run("hartmann6", method, [0, 1, 2, 3, 4], budget=20, n_init=10, settings=settings).tables[3]
    x = [f"x_{i}" for i in range(6)]
    # bitwise: any difference, even 1e-16, grows to 1e-3 within a few OSCBO rounds
    np.testing.assert_array_equal(alone[x].to_numpy(), together[x].to_numpy())
    np.testing.assert_array_equal(alone[state].to_numpy(), together[state].to_numpy())


def test_initial_design_is_shared_by_methods():
    a = engine.run("hartmann3", "oscbo", [2], budget=1, n_init=8).tables[2]
    b = engine.run("hartmann3", "gp-ucb-mll", [2], budget=1, n_init=8).tables[2]
    init = ["x_0", "x_1", "x_2", "y"]
    pd.testing.assert_frame_equal(a[a.phase == "init"][init], b[b.phase == "init"][init])


def test_a_job_runs_as_its_plain_arguments_and_its_sidecar_says_so():
    """run_lockstep(job) is run(...) of the job's fields; a partial settings dict is completed by the
    defaults, and the sidecar holds the method's resolved settings (OSCBO-L1's power 1 on top)."""
    job = Job(
        "exp",
        JobTask("hartmann3", noise_std=0.1),
        JobMethod("l1-x", "oscbo-l1", settings={"lambda0": 0.5}),
        (0, 1),
        2,
        4,
    )
    by_job = engine.run_lockstep(job)
    by_args = engine.run(
        "hartmann3", "oscbo-l1", [0, 1], 2, 4, Settings(lambda0=0.5), noise_std=0.1, experiment="exp", label="l1-x"
    )
    for seed in (0, 1):
        pd.testing.assert_frame_equal(
            by_job.tables[seed].drop(columns=TIMING), by_args.tables[seed].drop(columns=TIMING), check_exact=True
        )
    volatile = {"started", "finished"}
    assert {k: v for k, v in by_job.meta.items() if k not in volatile} == {
        k: v for k, v in by_args.meta.items() if k not in volatile
    }
    meta = by_job.meta
    assert (meta["experiment"], meta["method"], meta["method_name"]) == ("exp", "l1-x", "oscbo-l1")
    assert (meta["budget"], meta["n_init"], meta["batch_seeds"], meta["noise_std"]) == (2, 4, [0, 1], 0.1)
    assert meta["settings"] == Settings(lambda0=0.5, calibration_power=1).to_dict()
    assert meta["task_options"] == {} and job.method.settings == {"lambda0": 0.5}


def test_record_columns_and_values():
    result = engine.run("hartmann3", "oscbo", [0], budget=5, n_init=4, experiment="exp", label="oscbo-x")
    table = result.tables[0]
    assert list(table.columns) == records.record_columns(3, 1)
    assert len(table) == 9 and table["step"].tolist() == list(range(9))
    assert table["phase"].tolist() == ["init"] * 4 + ["bo"] * 5
    assert (table[["experiment", "task", "method", "seed"]].iloc[0] == ["exp", "hartmann3", "oscbo-x", 0]).all()
    bo = table[table.phase == "bo"]
    must_be_set = [
        "y",
        "f",
        "best_f",
        "simple_regret",
        "cumulative_regret",
        "lengthscale_0",
        "mu",
        "sigma",
        "halfwidth",
        "covered",
        "loss_sharpness",
        "loss_calibration",
        "violation",
        "lambda",
        "fit_seconds",
        "acq_seconds",
        "oracle_seconds",
        "jitter_events",
    ]
    assert not bo[must_be_set].isna().any().any()
    assert table["loss_sharpness_true"].isna().all()  # hartmann3 declares no true lengthscale
    assert table[[f"x_{i}" for i in range(3)]].stack().between(0, 1).all()
    f_star = 3.86278
    assert np.allclose(table["simple_regret"], f_star - table["f"].cummax())
    assert np.allclose(bo["cumulative_regret"], np.cumsum(f_star - bo["f"]))
    assert (table[table.phase == "init"]["cumulative_regret"] == 0).all()
    assert np.allclose(table["y"], table["f"])  # noise-free by default
    assert (bo["covered"] == (bo["loss_calibration"] <= 0)).all()  # the interval of eq. 7
    assert np.allclose(bo["violation"], np.cumsum(bo["loss_calibration"].clip(-1, 1)))
    assert result.meta["settings"]["calibration_power"] == 2


@pytest.mark.parametrize("settings", [Settings(), Settings(ard=True)], ids=["isotropic", "ard"])
def test_gp_ucb_true_plays_the_true_lengthscale_so_its_sharpness_gap_is_zero(settings):
    """L^s at the true lengthscale is GP-UCB-at-the-true-kernel's own L^s, bit for bit, every BO round
    (the played model is the comparator's); NaN on the initial design."""
    result = engine.run("gp2", "gp-ucb-true", [0, 1], budget=6, n_init=5, settings=settings, task_options=SMALL_GP)
    for table in result.tables.values():
        bo = table["phase"] == "bo"
        assert (table.loc[bo, "lengthscale_0"] == 0.2).all()
        np.testing.assert_array_equal(table.loc[bo, "loss_sharpness_true"], table.loc[bo, "loss_sharpness"])
        assert table.loc[~bo, "loss_sharpness_true"].isna().all()


def test_sharpness_at_the_true_lengthscale_is_the_gp_at_theta_true_on_the_same_data():
    """Another method's L^s_t(theta_true), recomputed from its record: the GP on D_{t-1} (y
    standardised with its statistics) at l = 0.2, its variance at x_t in eq. 6."""
    noise_var = Settings().noise_var
    table = engine.run("gp2", "gp-ucb-mll", [0], budget=6, n_init=5, task_options=SMALL_GP).tables[0]
    X = torch.tensor(table[["x_0", "x_1"]].to_numpy())
    y = torch.tensor(table["y"].to_numpy())
    expected = []
    for t in range(5, len(table)):
        data = Observations(X[None, :t], y[None, :t])
        model = GaussianProcess(data.X, data.standardized(), torch.tensor([[0.2]], dtype=X.dtype), 2.5, noise_var)
        _, variance = model.predict(X[None, t : t + 1])
        expected.append(sharpness_loss(variance + noise_var, noise_var).item())
    bo = table["phase"] == "bo"
    np.testing.assert_allclose(table.loc[bo, "loss_sharpness_true"], expected, rtol=1e-12)
    assert not np.allclose(table.loc[bo, "loss_sharpness_true"], table.loc[bo, "loss_sharpness"])


def test_observation_noise_is_seeded_and_recorded():
    table = engine.run("hartmann3", "gp-ucb-mll", [0], budget=2, n_init=4, noise_std=0.1).tables[0]
    noise = table["y"] - table["f"]
    assert noise.abs().max() > 0 and noise.std() < 0.5
    again = engine.run("hartmann3", "gp-ucb-mll", [0], budget=2, n_init=4, noise_std=0.1).tables[0]
    assert np.array_equal(table["y"], again["y"])


def test_write_and_read_records(tmp_path):
    result = engine.run("hartmann3", "gp-ucb-mll", [4, 5], budget=2, n_init=3)
    paths = engine.write(result, tmp_path)
    assert [p.name for p in paths] == ["seed4.parquet", "seed5.parquet"]
    table, meta = records.read_record(paths[1])
    assert meta["seed"] == 5 and meta["status"] == "complete" and meta["batch_seeds"] == [4, 5]
    assert meta["settings"] == Settings().to_dict()
    pd.testing.assert_frame_equal(table, result.tables[5])
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary files left behind


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="budget"):
        engine.run("hartmann3", "oscbo", [0], budget=0, n_init=5)
    with pytest.raises(ValueError, match="distinct"):
        engine.run("hartmann3", "oscbo", [1, 1], budget=2, n_init=5)
    with pytest.raises(KeyError, match="valid tasks"):
        engine.run("nope", "oscbo", [0], budget=2, n_init=5)
    with pytest.raises(KeyError, match="valid methods"):
        engine.run("hartmann3", "nope", [0], budget=2, n_init=5)


def test_gp_ucb_mll_finds_hartmann3_optimum_on_a_small_budget():
    result = engine.run("hartmann3", "gp-ucb-mll", [0, 1, 2, 3], budget=30, n_init=10)
    final = [table["simple_regret"].iloc[-1] for table in result.tables.values()]
    initial = [table["simple_regret"].iloc[9] for table in result.tables.values()]
    assert sum(r < 0.05 for r in final) >= 3, final
    assert all(f <= i for f, i in zip(final, initial))


@pytest.mark.slow
def test_gp_ucb_mll_full_budget_hartmann3():
    """The paper's budget (100 rounds, 10 seeds): most seeds end with a small simple regret.

    Below about 0.02 the fixed noise variance (0.01 in standardised units) hides the
    differences from the GP, and some seeds settle on the ridge at x_0 ~ 0.8 (regret 0.24),
    so "small" means 0.05 here.
    """
    result = engine.run("hartmann3", "gp-ucb-mll", list(range(10)), budget=100, n_init=10)
    final = np.array([table["simple_regret"].iloc[-1] for table in result.tables.values()])
    initial = np.array([table["simple_regret"].iloc[9] for table in result.tables.values()])
    assert (final < 0.05).sum() >= 7, final
    assert np.median(final) < 0.03, final
    assert (final < initial).all()


@pytest.mark.parametrize("method", ["oscbo", "gp-ucb-mll"])
def test_ard_plays_one_lengthscale_per_dimension(method):
    table = engine.run("hartmann3", method, [0], budget=3, n_init=6, settings=Settings(ard=True)).tables[0]
    columns = [f"lengthscale_{i}" for i in range(3)]
    assert columns == [c for c in table.columns if c.startswith("lengthscale_")]
    bo = table[table.phase == "bo"][columns]
    assert not bo.isna().any().any()
    assert (bo.nunique(axis=1) > 1).any()  # the dimensions get their own values


@pytest.mark.parametrize("nu", [0.5, 1.5])
def test_other_smoothness_changes_the_trajectory(nu):
    rough = engine.run("hartmann3", "oscbo", [0], budget=3, n_init=6, settings=Settings(nu=nu)).tables[0]
    smooth = engine.run("hartmann3", "oscbo", [0], budget=3, n_init=6).tables[0]
    assert not np.allclose(rough["lengthscale_0"].iloc[6:], smooth["lengthscale_0"].iloc[6:])


def test_logei_acquisition_runs_and_differs_from_ucb():
    logei = engine.run("hartmann3", "gp-ucb-mll", [0], budget=3, n_init=6, settings=Settings(acquisition="logei"))
    ucb = engine.run("hartmann3", "gp-ucb-mll", [0], budget=3, n_init=6)
    x = ["x_0", "x_1", "x_2"]
    assert not np.allclose(logei.tables[0][x].iloc[6:], ucb.tables[0][x].iloc[6:])
    assert not logei.tables[0].iloc[6:][["mu", "sigma", "halfwidth"]].isna().any().any()
