"""Faults on purpose: objective faults, numerical corners, damaged files and security basics.

Each test provokes one fault through the real code (BoTorch's Hartmann function, the engine,
the methods, the records) and checks the documented outcome (docs/user-guide.md, "Faults and bad input").
The faulty parts are small plug-ins registered for the test as a user registers a task or a
method: a Hartmann 3-D that fails at chosen points, a constant objective, and GP-UCB-MLL with
an optimiser that overshoots the box.
"""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from botorch.test_functions import Hartmann
from helpers import run_table, write_run, write_study
from tabicl_checkpoint import write_tiny_checkpoint

from oscbo import analysis as aggregate
from oscbo import findings, methods, records, tasks
from oscbo import run as engine
from oscbo.methods.base import Observations
from oscbo.methods.gp_ucb_mll import GPUCBMLL
from oscbo.methods.tabicl.checkpoint import CheckpointError
from oscbo.model.gp import GaussianProcess, fit_initial_lengthscale, minimize_lengthscale
from oscbo.model.linalg import negative_mll
from oscbo.registry import Entry
from oscbo.report.render import render_report
from oscbo.settings import ConfigError, Settings
from oscbo.study import config as study_config
from oscbo.study import protocol as study_protocol
from oscbo.study.job import Job
from oscbo.tasks.base import BoTorchTask, Task, build_task

REPO = Path(__file__).resolve().parents[2]
TIMING = records.TIMING_COLUMNS
SEEDS = [0, 1, 2]
SHORT = {"budget": 3, "n_init": 4}
HOSTILE = "<script>alert('x')</script>"

NO_FIGURES = {"figures": [], "sections": [], "omitted": []}


# ----------------------------------------------------------------------------- plug-ins


class PoisonedHartmann(BoTorchTask):
    """Hartmann 3-D that fails at the ``poison`` points: NaN, inf, or a crash of the simulator."""

    def __init__(self, poison: list[list[float]], fault: str) -> None:
        super().__init__("poisoned3", Hartmann, dim=3)
        self.poison = torch.tensor(poison, dtype=torch.float64).reshape(-1, 3)
        self.fault = fault

    def evaluate_true(self, X: torch.Tensor) -> torch.Tensor:
        values = super().evaluate_true(X)
        hit = (X.unsqueeze(-2) == self.poison).all(-1).any(-1)
        if hit.any() and self.fault == "raise":
            raise RuntimeError("the simulator crashed")
        return torch.where(hit, float(self.fault) if hit.any() else 0.0, values)


def poisoned3(poison: list | None = None, fault: str = "nan") -> PoisonedHartmann:
    return PoisonedHartmann(poison or [], fault)


class Constant(Task):
    """f = 0 on [0, 1]^3: every y equal, zero variance before standardising."""

    name = "constant3"
    bounds = torch.tensor([[0.0] * 3, [1.0] * 3], dtype=torch.float64)
    optimal_value = 0.0

    def evaluate_true(self, X: torch.Tensor) -> torch.Tensor:
        return torch.zeros(X.shape[:-1], dtype=X.dtype)


def constant3() -> Constant:
    return Constant()


class Overshoot(GPUCBMLL):
    """GP-UCB-MLL whose optimiser returns points past the box (every coordinate + 2)."""

    def propose(self, model, width, raw_points):
        return super().propose(model, width, raw_points) + 2.0


@pytest.fixture(scope="module", autouse=True)
def plugins():
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(tasks.REGISTRY, "poisoned3", Entry("test_faults:poisoned3"))
        patch.setitem(tasks.REGISTRY, "constant3", Entry("test_faults:constant3"))
        patch.setitem(methods.REGISTRY, "overshoot", Entry("test_faults:Overshoot"))
        yield


@pytest.fixture(scope="module")
def clean() -> engine.RunResult:
    """Seeds 0-2 of GP-UCB-MLL on the task with no poison: the trajectories the faults hit."""
    return engine.run("poisoned3", "gp-ucb-mll", SEEDS, **SHORT)


def query(table: pd.DataFrame, step: int) -> list[float]:
    return table.loc[table["step"] == step, ["x_0", "x_1", "x_2"]].iloc[0].tolist()


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Bitwise equal records, timing columns aside."""
    pd.testing.assert_frame_equal(
        a.drop(columns=TIMING).reset_index(drop=True), b.drop(columns=TIMING).reset_index(drop=True), check_exact=True
    )


# ----------------------------------------------------------------------------- objective faults


@pytest.mark.parametrize(
    ("fault", "says"),
    [("nan", "returned nan"), ("inf", "returned inf"), ("raise", "raised RuntimeError: the simulator crashed")],
)
def test_an_objective_fault_ends_that_seed_only(clean: engine.RunResult, fault: str, says: str) -> None:
    """Seed 1's second BO query fails: seed 1 is a failed run with its first 5 oracle calls;
    seeds 0 and 2 are bitwise the runs they would have been."""
    poison = [query(clean.tables[1], 5)]
    result = engine.run("poisoned3", "gp-ucb-mll", SEEDS, **SHORT, task_options={"poison": poison, "fault": fault})
    assert sorted(result.tables) == [0, 2] and list(result.failed) == [1]
    failed = result.failed[1]
    assert failed.step == 5 and says in failed.reason and str(poison[0][0]) in failed.reason
    same(failed.table, clean.tables[1].iloc[:5])
    for seed in (0, 2):
        same(result.tables[seed], clean.tables[seed])


def test_a_fault_in_the_initial_design_leaves_an_empty_record(clean: engine.RunResult) -> None:
    poison = [query(clean.tables[2], 0)]
    result = engine.run("poisoned3", "gp-ucb-mll", SEEDS, **SHORT, task_options={"poison": poison})
    assert sorted(result.tables) == [0, 1] and result.failed[2].step == 0
    assert result.failed[2].table.empty
    assert list(result.failed[2].table.columns) == records.record_columns(3, 0)


def test_failed_runs_are_recorded_listed_and_left_out_of_every_summary(clean: engine.RunResult, tmp_path: Path) -> None:
    """Through run_job and aggregation as the workflow runs them; every seed of a second job fails."""
    hit = {"poison": [query(clean.tables[1], 5)], "fault": "nan"}
    all_fail = {"poison": [query(clean.tables[0], 6), query(clean.tables[1], 4)], "fault": "inf"}
    jobs = [
        {
            "experiment": "faults",
            "task": "poisoned3",
            "method": method,
            "method_name": "gp-ucb-mll",
            "seeds": seeds,
            "budget": 3,
            "n_init": 4,
            "noise_std": 0.0,
            "task_options": options,
            "settings": Settings().to_dict(),
        }
        for method, seeds, options in [("one-fails", SEEDS, hit), ("all-fail", [0, 1], all_fail)]
    ]
    manifests = [tmp_path / "runs" / job["method"] / "seeds.json" for job in jobs]
    for job, manifest in zip(jobs, manifests):
        engine.run_job(Job.from_dict(job), manifest)
    one, every = (json.loads(path.read_text()) for path in manifests)
    assert one["status"] == "complete" and one["records"] == ["seed0.parquet", "seed2.parquet"]
    assert [(f["seed"], f["step"], f["record"]) for f in one["failed"]] == [(1, 5, "seed1.parquet")]
    assert every["records"] == [] and [(f["seed"], f["step"]) for f in every["failed"]] == [(0, 6), (1, 4)]

    failed_record = manifests[0].parent / "seed1.parquet"
    sidecar = records.read_sidecar(failed_record)
    assert sidecar["status"] == "failed" and sidecar["failed_step"] == 5 and "returned nan" in sidecar["reason"]
    assert len(pd.read_parquet(failed_record)) == 5
    with pytest.raises(ValueError, match="'failed'"):
        records.read_record(failed_record)

    # What workflow/scripts/aggregate.py does with the manifests.
    paths = [path.parent / name for path, m in zip(manifests, (one, every)) for name in m["records"]]
    failed = [{**job, **run} for job, m in zip(jobs, (one, every)) for run in m["failed"]]
    aggregate.aggregate(paths, tmp_path / "summary", failed=failed)
    tables = aggregate.load(tmp_path / "summary")
    assert tables["failed"][["method", "seed", "step"]].values.tolist() == [
        ["one-fails", 1, 5],
        ["all-fail", 0, 6],
        ["all-fail", 1, 4],
    ]
    assert set(map(tuple, tables["final"][["method", "seed"]].values)) == {("one-fails", 0), ("one-fails", 2)}
    assert not tables["curves"]["mean"].isna().any() and np.isfinite(tables["curves"]["mean"]).all()
    assert tables["curves"].loc[tables["curves"]["metric"] == "simple_regret", "n"].eq(2).all()

    study_protocol.write_table([], aggregate.table_path(tmp_path / "summary", "protocol"))
    findings.write(tmp_path / "summary")
    page = render_report(tmp_path / "summary", NO_FIGURES, {"experiments": {}}, tmp_path / "r.html")
    summary = page.read_text().split('<section id="summary">')[1].split("</section>")[0]
    assert "Failed runs" in summary and "<td>all-fail</td>" in summary and "returned inf" in summary


def test_a_record_with_a_nan_value_is_refused_by_aggregation(tmp_path: Path) -> None:
    """A record from elsewhere (another tool, an old version) never brings a NaN into the curves."""
    table = run_table()
    table.loc[3, "f"] = np.nan
    path = write_run(tmp_path / "runs", table)
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}.*step\(s\) \[3\]"):
        aggregate.aggregate([path], tmp_path / "summary")


def test_out_of_bounds_queries_are_clipped_and_recorded_as_evaluated() -> None:
    table = engine.run("hartmann3", "overshoot", [0], **SHORT).tables[0]
    bo = table[table["phase"] == "bo"]
    assert (bo[["x_0", "x_1", "x_2"]] == 1.0).all().all()  # every coordinate overshot to 2+
    corner = build_task("hartmann3")(torch.ones(1, 3, dtype=torch.float64)).item()
    assert (bo["f"] == corner).all()


# ----------------------------------------------------------------------------- numerical corners


@pytest.mark.parametrize("bounds", [(1e-2, 1.001e-2), (9.99, 10.0)], ids=["lower-bound", "upper-bound"])
def test_duplicate_points_at_a_lengthscale_bound_do_not_crash(bounds: tuple[float, float]) -> None:
    """Every BO query is the same corner (duplicates), the lengthscale is pinned at a bound of
    Theta and the noise variance is 1e-20, so K + sigma^2 I is singular up to rounding.

    At the lower bound K is the identity but for the duplicates, whose Cholesky pivot is exactly
    0: jitter from the third round on (two copies of the corner), counted in the record; the
    refits' escalations are in the sidecar's batch total. At the upper bound K is all but
    all-ones and rounding decides whether a pivot is positive: only "no crash" is asserted.
    """
    settings = Settings(noise_var=1e-20, lengthscale_bounds=bounds)
    result = engine.run("hartmann3", "overshoot", [0, 1], budget=4, n_init=4, settings=settings)
    assert sorted(result.tables) == [0, 1] and not result.failed
    counted = 0
    for table in result.tables.values():
        bo = table[table["phase"] == "bo"]
        assert np.isfinite(bo[["mu", "sigma", "halfwidth", "lengthscale_0", "loss_calibration"]].to_numpy()).all()
        assert bo["lengthscale_0"].between(*bounds).all()
        if bounds[0] == 1e-2:
            assert bo["jitter_events"].tolist() == [0, 0, 1, 1]
        counted += int(bo["jitter_events"].sum())
    assert result.meta["jitter_escalations_batch"] >= counted


@pytest.mark.parametrize("method", ["gp-ucb-mll", "oscbo", "ocbo", "lb-gp-ucb", "scgp"])
def test_a_constant_objective_runs(method: str) -> None:
    """Zero variance before standardising: y is centred and divided by 1, never by 0."""
    table = engine.run("constant3", method, [0], budget=3, n_init=5).tables[0]
    bo = table[table["phase"] == "bo"]
    assert np.isfinite(bo[["mu", "sigma", "halfwidth", "lengthscale_0", "loss_sharpness"]].to_numpy()).all()
    assert (table["simple_regret"] == 0).all()


def test_one_observation() -> None:
    """n = 1: statistics, theta_0, the MLL and its refit, and the posterior."""
    X = torch.tensor([[[0.3, 0.6, 0.9]]], dtype=torch.float64)
    y = torch.tensor([[2.5]], dtype=torch.float64)
    data = Observations(X, y)
    assert data.standardized().tolist() == [[0.0]]
    theta0 = fit_initial_lengthscale(X, data.standardized(), 2.5, 0.01, False, (1e-2, 1e1))
    theta = minimize_lengthscale(
        lambda th: negative_mll(X, data.standardized(), th, 2.5, 0.01), theta0, (1e-2, 1e1), 0.01, 5
    )
    mean, variance = GaussianProcess(X, data.standardized(), theta, 2.5, 0.01).predict(torch.rand(1, 4, 3).double())
    assert torch.isfinite(theta0).all() and torch.isfinite(theta).all()
    assert torch.isfinite(mean).all() and (variance > 0).all()


@pytest.mark.parametrize("lengthscale", [1e-2, 1e1])
def test_mll_gradient_is_finite_at_both_bounds_with_duplicate_points(lengthscale: float) -> None:
    X = torch.tensor([[0.2, 0.2], [0.2, 0.2], [0.7, 0.1]], dtype=torch.float64)
    y = torch.tensor([1.0, 1.0, -1.0], dtype=torch.float64)
    theta = torch.tensor([lengthscale], dtype=torch.float64, requires_grad=True)
    value = negative_mll(X, y, theta, 2.5, 1e-20)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(theta.grad).all()


# ----------------------------------------------------------------------------- damaged files


def test_a_truncated_checkpoint_is_named(tmp_path: Path) -> None:
    path = write_tiny_checkpoint(tmp_path / "tabicl.ckpt")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(CheckpointError, match=re.escape(str(path))):
        engine.run("hartmann3", "tabicl", [0], budget=1, n_init=4, settings=Settings(tabicl_checkpoint=str(path)))


@pytest.mark.parametrize("damage", ["truncated-record", "garbage-record", "garbage-sidecar", "missing-column"])
def test_a_damaged_record_is_named(tmp_path: Path, damage: str) -> None:
    good = write_run(tmp_path / "runs", run_table(seed=0))
    path = write_run(tmp_path / "runs", run_table(seed=1))
    side = records.sidecar_path(path)
    if damage == "truncated-record":
        path.write_bytes(path.read_bytes()[:-100])
    elif damage == "garbage-record":
        path.write_bytes(b"\x00not a parquet file" * 10)
    elif damage == "garbage-sidecar":
        side.write_text('{"status": "complete", "seed"')
    else:
        run_table(seed=1).drop(columns=["best_f"]).to_parquet(path, index=False)
    named = side if damage == "garbage-sidecar" else path
    with pytest.raises(records.RecordError, match=re.escape(str(named))):
        records.read_record(path)
    with pytest.raises(records.RecordError, match=re.escape(str(named))):
        aggregate.aggregate([good, path], tmp_path / "summary")
    assert not (tmp_path / "summary").exists()


# ----------------------------------------------------------------------------- security basics


class _Touch:
    """A pickle that creates a file when unpickled by an unsafe loader."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_checkpoint_that_runs_code_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    path = tmp_path / "tabicl.ckpt"
    torch.save({"config": {}, "state_dict": _Touch(marker)}, path)
    with pytest.raises(CheckpointError, match=re.escape(str(path))):
        engine.run("hartmann3", "tabicl", [0], budget=1, n_init=4, settings=Settings(tabicl_checkpoint=str(path)))
    assert not marker.exists()
    pickle.loads(pickle.dumps(_Touch(marker)))  # the payload is live: an unsafe load would run it
    assert marker.exists()


def test_yaml_with_python_tags_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    path = tmp_path / "study.yaml"
    path.write_text(f"results: !!python/object/apply:pathlib.Path.touch [{str(marker)!r}]\nexperiments: {{}}\n")
    with pytest.raises(ConfigError, match=re.escape(str(path))):
        study_config.load(path)
    assert not marker.exists()


UNSAFE = [
    (r"yaml\.(load|unsafe_load|full_load)\(", "YAML read without safe_load"),
    (r"Loader\s*=\s*yaml\.(Loader|UnsafeLoader|FullLoader)", "an unsafe YAML loader"),
    (r"\bpickle\.loads?\(", "pickle"),
    (r"torch\.load\((?![^)]*weights_only\s*=\s*True)", "torch.load without weights_only=True"),
]


def test_no_source_loads_data_unsafely() -> None:
    """Every YAML read is safe_load, every checkpoint read weights_only (tabicl's own loader is
    checked by the tests above)."""
    files = [
        *REPO.glob("src/**/*.py"),
        *REPO.glob("workflow/**/*.py"),
        *REPO.glob("workflow/**/*.smk"),
        *REPO.glob("benchmarks/**/*.py"),
        REPO / "Snakefile",
    ]
    assert len(files) > 30
    found = [
        f"{path.relative_to(REPO)}: {what}"
        for path in files
        for pattern, what in UNSAFE
        if re.search(pattern, path.read_text())
    ]
    assert found == []


def test_the_report_escapes_strings_from_config_and_data(tmp_path: Path) -> None:
    paths = write_study(tmp_path / "runs", tasks=("t1",), methods=("m1", HOSTILE))
    failed = [{"experiment": "exp", "task": "t1", "method": HOSTILE, "seed": 5, "step": 3, "reason": HOSTILE}]
    not_run = [{"experiment": "exp", "task": "t1", "method": HOSTILE, "seeds": [0], "reason": HOSTILE}]
    for path in paths:  # what a hostile sidecar would bring into the provenance table
        side = path.with_suffix(".json")
        side.write_text(
            side.read_text().replace(
                '"seed"',
                f'"git_commit": {json.dumps(HOSTILE)}, "hardware": '
                f'{json.dumps(HOSTILE)}, "versions": {{{json.dumps(HOSTILE)}: 1}}, "seed"',
            )
        )
    aggregate.aggregate(paths, tmp_path / "summary", not_run, failed)
    findings.write(tmp_path / "summary")
    config = {"results": HOSTILE, "experiments": {"exp": {"description": HOSTILE, "seeds": 2}}}
    protocol = [{"setting": HOSTILE, "value": HOSTILE, "paper": HOSTILE, "kind": "departure", "note": HOSTILE}]
    study_protocol.write_table(protocol, aggregate.table_path(tmp_path / "summary", "protocol"))
    page = render_report(tmp_path / "summary", NO_FIGURES, config, tmp_path / "r.html")
    html = page.read_text()
    assert "<script" not in html
    assert html.count("&lt;script&gt;") >= 10


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"results": "../elsewhere"}, "results"),
        ({"results": "/tmp/results"}, "results"),
        ({"report": "report/../../index.html"}, "report"),
        ({"report": ""}, "report"),
        ({"experiments": {"..": {"tasks": ["levy5"], "methods": ["oscbo"]}}}, "experiments.."),
        ({"experiments": {"e": {"tasks": ["levy5"], "methods": [{"label": "..", "method": "oscbo"}]}}}, "label"),
        (
            {
                "experiments": {
                    "e": {
                        "tasks": ["levy5"],
                        "methods": ["tabicl"],
                        "settings": {"tabicl_checkpoint": "/etc/tabicl.ckpt"},
                    }
                }
            },
            "tabicl_checkpoint",
        ),
        (
            {
                "experiments": {
                    "e": {
                        "tasks": ["levy5"],
                        "methods": [{"label": "t", "method": "tabicl", "settings": {"tabicl_checkpoint": "../t.ckpt"}}],
                    }
                }
            },
            "tabicl_checkpoint",
        ),
    ],
    ids=[
        "results-up",
        "results-absolute",
        "report-up",
        "report-empty",
        "experiment-name",
        "label",
        "checkpoint",
        "checkpoint-in-entry",
    ],
)
def test_no_path_from_the_config_leaves_the_project(change: dict, key: str) -> None:
    config = {"experiments": {"e": {"tasks": ["levy5"], "methods": ["oscbo"]}}, **change}
    with pytest.raises(ConfigError, match="not a path inside the project folder") as error:
        study_config.validate(config)
    assert key in str(error.value)
