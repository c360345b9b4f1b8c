"""The ask/tell Optimizer and optimize(): the engine's trajectory, Branin, the record, bad input."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from botorch.test_functions import Branin
from helpers import clean_environment, needs_pinned_path

import oscbo
from oscbo import records
from oscbo import run as engine
from oscbo.api.inputs import ObjectiveValueError
from oscbo.api.optimizer import Optimizer
from oscbo.run.lockstep import initial_design
from oscbo.tasks.base import build_task

TIMING = records.SECONDS_COLUMNS


def ask_tell(optimizer: Optimizer, f) -> Optimizer:
    while optimizer.evaluations < optimizer.total:
        x = optimizer.ask()
        optimizer.tell(x, f(x))
    return optimizer


@pytest.mark.parametrize(("method", "minimize"), [("oscbo", False), ("lb-gp-ucb", True)])
def test_ask_tell_is_the_engine_run(method, minimize):
    """A registered task's name, bounds and values give its pipeline record, bitwise (timing aside).

    LB-GP-UCB brings its own state column; minimising the negated task must only flip the sign
    of y, f, best_f and mu.
    """
    task = build_task("hartmann3")
    n_init, rounds = 6, 8
    reference = engine.run("hartmann3", method, [2], budget=rounds, n_init=n_init).tables[2]
    sign = -1.0 if minimize else 1.0
    optimizer = Optimizer(
        task.bounds.T,
        method,
        seed=2,
        budget=rounds,
        n_init=n_init,
        name="hartmann3",
        design="hartmann3",
        minimize=minimize,
        optimal_value=sign * task.optimal_value,
    )
    ask_tell(optimizer, lambda x: sign * task.evaluate_true(torch.as_tensor(x)))
    history = optimizer.record()
    assert (history.pop("origin") == "asked").all()  # the API's own column: every point was asked
    expected = reference.copy()
    expected[["y", "f", "best_f", "mu"]] *= sign
    pd.testing.assert_frame_equal(history.drop(columns=TIMING), expected.drop(columns=TIMING), check_exact=True)
    assert (history[TIMING].iloc[n_init:] >= 0).all().all()
    best = reference["y"].idxmax()
    assert optimizer.best.y == sign * reference["y"][best]
    np.testing.assert_array_equal(
        optimizer.best.x,
        task.to_natural(torch.tensor(reference.loc[best, ["x_0", "x_1", "x_2"]].to_numpy(dtype=float))).numpy(),
    )


#: Branin's box as pairs (lower, upper) per dimension; a 2 x 2 box read either way, so named as pairs.
BRANIN = [(-5, 10), (0, 15)]


def test_the_run_does_not_depend_on_the_objective_s_name():
    """The same Branin under two names: the same points and values (the name is only the record's
    label); a task's design is asked for by ``design=``, never by the name."""
    branin = Branin()

    def objective(x):
        return branin(torch.as_tensor(x))

    def my_branin(x):
        return branin(torch.as_tensor(x))

    runs = [
        oscbo.optimize(f, BRANIN, budget=2, n_init=4, seed=3, minimize=True, progress=False, bounds_layout="pairs")
        for f in (objective, my_branin, lambda x: branin(torch.as_tensor(x)))
    ]
    assert [run.name for run in runs] == ["objective", "my_branin", "objective"]
    columns = ["x_0", "x_1", "y", "f"]
    for other in runs[1:]:
        pd.testing.assert_frame_equal(runs[0].history[columns], other.history[columns], check_exact=True)
    named = Optimizer(BRANIN, seed=3, budget=2, n_init=4, name="hartmann3", bounds_layout="pairs")
    task_design = Optimizer(BRANIN, seed=3, budget=2, n_init=4, design="hartmann3", bounds_layout="pairs")
    assert np.array_equal(named.ask(), Optimizer(BRANIN, seed=3, budget=2, n_init=4, bounds_layout="pairs").ask())
    assert not np.array_equal(named.ask(), task_design.ask())


@pytest.mark.slow
def test_optimize_on_branin_finds_the_minimum():
    """OSCBO on BoTorch's Branin, 60 evaluations (10 initial): simple regret below 0.05 for at
    least 4 of 5 seeds (measured: 0.0065, 0.028, 0.0099, 0.0004, 0.013). 20-30 s in all."""
    branin = Branin()
    final = []
    for seed in range(5):
        result = oscbo.optimize(
            lambda x: branin(torch.as_tensor(x)),
            BRANIN,
            budget=50,
            bounds_layout="pairs",
            seed=seed,
            minimize=True,
            optimal_value=branin.optimal_value,
            progress=False,
        )
        history = result.history
        assert len(history) == 60 and (history["phase"] == "bo").sum() == 50
        assert np.isclose(history["simple_regret"].iloc[-1], result.best.y - branin.optimal_value)
        final.append(history["simple_regret"].iloc[-1])
    assert sum(regret < 0.05 for regret in final) >= 4, final


def test_history_best_and_record_through_the_rounds(tmp_path):
    opt = Optimizer([(-1, 1), (2, 3)], "gp-ucb-mll", seed=0, budget=2, n_init=3, minimize=True, bounds_layout="pairs")
    assert opt.best is None and len(opt.history) == 0
    x = opt.ask()
    np.testing.assert_array_equal(opt.ask(), x)  # asked again before a tell: the same point
    assert (-1 <= x[0] <= 1) and (2 <= x[1] <= 3)
    opt.tell(x, 4.0)
    assert np.array_equal(opt.best.x, x) and opt.best.y == 4.0
    assert opt.history["y"].tolist() == [4.0] and opt.history["phase"].tolist() == ["init"]
    ask_tell(opt, lambda x: float((x**2).sum()))
    history = opt.history
    assert history["phase"].tolist() == ["init"] * 3 + ["bo"] * 2
    assert history["best_f"].tolist() == list(np.minimum.accumulate(history["y"]))  # minimised: running min
    assert opt.best.y == history["y"].min()
    assert history["simple_regret"].isna().all()  # no optimal_value given
    path = opt.write(tmp_path)
    table, meta = records.read_record(path)
    pd.testing.assert_frame_equal(table, opt.record())
    pd.testing.assert_frame_equal(table, history[table.columns])  # the history: the record, and the natural x
    assert meta["budget"] == 2 and meta["evaluations"] == 5 and meta["n_init"] == 3
    assert meta["task"]["bounds"] == [[-1.0, 2.0], [1.0, 3.0]] and meta["method"] == "gp-ucb-mll"
    # described as a pipeline run is, by its Job: the sidecar's identifiers and seeds are the job's
    assert (opt.job.experiment, opt.job.method.label, opt.job.seeds) == ("adhoc", "gp-ucb-mll", (opt.seed,))
    assert (meta["experiment"], meta["method_name"], meta["batch_seeds"]) == ("adhoc", "gp-ucb-mll", [opt.seed])
    with pytest.raises(RuntimeError, match=r"budget of 2 BO rounds \(after 3 initial points\) is used up"):
        opt.ask()


def test_a_partial_record_is_marked(tmp_path):
    opt = Optimizer([(0, 1)], seed=0, budget=2, n_init=2)
    opt.tell(opt.ask(), 1.0)
    path = opt.write(tmp_path)
    assert records.read_sidecar(path)["status"] == "partial"
    with pytest.raises(ValueError, match="partial"):
        records.read_record(path)


def test_progress_bar_can_be_turned_off(capsys):
    oscbo.optimize(lambda x: -abs(x[0] - 0.3), [(0, 1)], budget=1, n_init=3, progress=True)
    assert "4/4" in capsys.readouterr().err
    oscbo.optimize(lambda x: -abs(x[0] - 0.3), [(0, 1)], budget=1, n_init=3, progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ([(0, 1), (2, 2), (0, 1)], r"lower bound must be below its upper bound; dimension 1: \(2, 2\)"),
        ([(1, 0)], r"dimension 0: \(1, 0\)"),
        ([0, 1], r"d pairs \(lower, upper\).*shape \(2,\)"),
        ([(0, 1, 2)], r"shape \(1, 3\)"),
        ([("a", "b")], "of numbers"),
        ([(0, float("inf"))], "finite"),
    ],
)
def test_bad_bounds_are_named(bounds, message):
    with pytest.raises(ValueError, match=message):
        Optimizer(bounds, budget=20)


def test_a_budget_without_bo_rounds_is_an_error():
    with pytest.raises(
        ValueError,
        match=r"budget \(the BO rounds after the initial design of n_init=10 points\) "
        r"must be at least 1, got 0",
    ):
        oscbo.optimize(lambda x: 0.0, [(0, 1)], budget=0)


def test_unknown_method_and_setting_are_named():
    with pytest.raises(KeyError, match="valid methods"):
        Optimizer([(0, 1)], method="nope", budget=20)
    with pytest.raises(ValueError, match="unknown setting.*lamda0"):
        Optimizer([(0, 1)], budget=20, lamda0=0.4)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ("1.0", ObjectiveValueError, "returned '1.0' \\(str\\) at x = .*expected a real number"),
        (None, ObjectiveValueError, "returned None"),
        (True, ObjectiveValueError, "returned True"),
        (1 + 2j, ObjectiveValueError, "complex"),
        ([1.0, 2.0], ObjectiveValueError, r"returned 2 values \(shape \(2,\)\)"),
        (torch.zeros(2, 1), ObjectiveValueError, r"returned 2 values \(shape \(2, 1\)\)"),
        (np.array([]), ObjectiveValueError, "returned 0 values"),
        ([1.0, [2.0]], ObjectiveValueError, "expected a real number"),
        (float("nan"), engine.NonFiniteObjectiveError, "returned nan"),
        (-float("inf"), engine.NonFiniteObjectiveError, "returned -inf"),
    ],
)
def test_an_objective_that_returns_no_number_is_named(value, error, message):
    with pytest.raises(error, match=message):
        oscbo.optimize(lambda x: value, [(0, 1)], budget=12, progress=False)


@pytest.mark.parametrize("value", [2, np.float32(2.5), np.array([[3.0]]), torch.tensor([1.5])])
def test_any_one_number_is_accepted(value):
    opt = Optimizer([(0, 1)], budget=12)
    opt.tell(opt.ask(), value)
    assert opt.best.y == float(np.asarray(value).reshape(()))


def test_tell_needs_the_asked_point():
    opt = Optimizer([(0, 1), (0, 1)], budget=12)
    with pytest.raises(RuntimeError, match="ask"):
        opt.tell([0.5, 0.5], 1.0)
    x = opt.ask()
    with pytest.raises(ValueError, match="the last ask\\(\\) returned"):
        opt.tell(x + 0.01, 1.0)
    with pytest.raises(ValueError, match="the last ask\\(\\) returned"):
        opt.tell(x[:1], 1.0)
    opt.tell(x.tolist(), 1.0)  # a list of the same numbers is the same point
    assert opt.evaluations == 1


def test_the_optimiser_s_threads_are_its_own_and_put_back():
    """threads=1 caps torch's threads while the optimiser works, and the user's process keeps its
    own around it: the objective, called between ask and tell, sees the user's setting."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    seen = []

    def objective(x):
        seen.append(torch.get_num_threads())
        return float(np.sum(x))

    try:
        oscbo.optimize(objective, [(0, 1), (0, 1)], budget=2, n_init=3, progress=False, threads=1)
        assert seen == [2] * 5 and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


#: An Optimizer built in a fresh process: whether it warned of this machine's own rounding.
STARTED_FIRST = """
import warnings
{first}
import oscbo
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    oscbo.Optimizer([(0, 1), (0, 1)], budget=1, n_init=2)
    oscbo.OSCBOLengthscale(budget=1)
said = [str(w.message) for w in caught if "numerical code path" in str(w.message)]
print(max(map(len, said), default=0), len(said))
"""


@needs_pinned_path
@pytest.mark.parametrize(("first", "warnings_"), [("import torch, numpy; torch.ones(9) @ torch.ones(9)", 1), ("", 0)])
def test_the_api_warns_when_torch_started_before_oscbo(first, warnings_, processes):
    """Imported after torch and NumPy, oscbo cannot pin the numerical code path: the first of the
    Optimizer and the lengthscale rule says so, once for the process, in a short warning (the
    records then hold this machine's own rounding)."""
    out = subprocess.run(
        [sys.executable, "-c", STARTED_FIRST.format(first=first)],
        capture_output=True,
        text=True,
        env=clean_environment(),
        check=True,
    )
    length, count = map(int, out.stdout.split()[-2:])
    assert count == warnings_ and length <= 250, (out.stdout, out.stderr[-2000:])


def test_a_botorch_problem_runs_as_botorch_lays_it_out():
    """BoTorch's Branin as it is: its 2 x d bounds (Branin's box, not its transpose), minimised as
    BoTorch defines it (negate=False), its optimum for the regret: the run of the same objective
    given as pairs. With negate=True its values, already negated, are maximised: the same points."""
    as_pairs = oscbo.optimize(
        lambda x: Branin()(torch.as_tensor(x)),
        BRANIN,
        budget=3,
        n_init=4,
        seed=2,
        minimize=True,
        optimal_value=Branin().optimal_value,
        progress=False,
        bounds_layout="pairs",
    )
    as_problem = oscbo.optimize(Branin(), budget=3, n_init=4, seed=2, progress=False)
    assert as_problem.name == "branin" and as_problem.meta()["task"]["minimize"]
    untimed = [c for c in as_pairs.history.columns if c not in records.SECONDS_COLUMNS + ["task"]]
    pd.testing.assert_frame_equal(as_problem.history[untimed], as_pairs.history[untimed], check_exact=True)
    points = np.stack([as_problem._natural(x) for x in as_problem._observed()[0]])
    assert ((points[:, 0] >= -5) & (points[:, 0] <= 10) & (points[:, 1] >= 0) & (points[:, 1] <= 15)).all()
    negated = oscbo.optimize(Branin(negate=True), budget=3, n_init=4, seed=2, progress=False)
    x = [f"x_{i}" for i in range(2)]
    np.testing.assert_array_equal(negated.history[x], as_problem.history[x])
    assert negated.history["y"].tolist() == [-y for y in as_problem.history["y"]]


def test_bounds_read_back_from_a_sidecar_are_the_same_box(tmp_path):
    """The sidecar keeps the bounds in BoTorch's layout and says so: given back as they are, with
    their layout, they are the same box; a 2 x 2 read either way without a layout is refused,
    naming both boxes."""
    opt = Optimizer([(-1, 1), (2, 3), (0, 4)], budget=1, n_init=2)
    task = opt.meta()["task"]
    again = Optimizer(task["bounds"], budget=1, n_init=2, bounds_layout=task["bounds_layout"])
    assert torch.equal(again.bounds, opt.bounds)
    with pytest.raises(
        ValueError, match=r"a box either way: as pairs .*\[\[-5\.0, 10\.0\], \[0\.0, 15\.0\]\].*bounds_layout"
    ):
        Optimizer(BRANIN, budget=1)
    with pytest.raises(ValueError, match="a box only in BoTorch's layout"):
        Optimizer([(0, 1), (2, 2)], budget=1)
    assert torch.equal(Optimizer(Branin().bounds, budget=1, bounds_layout="botorch").bounds, Branin().bounds.double())


@pytest.mark.parametrize(
    ("bad", "reason"),
    [(float("nan"), "the objective returned nan"), (ZeroDivisionError("boom"), "raised ZeroDivisionError: boom")],
)
def test_a_fault_stops_the_run_and_keeps_every_evaluation_before_it(bad, reason, tmp_path):
    """The objective fails on evaluation 15 (in the BO rounds): the 14 before it stay in the history
    and the record, the sidecar says failed, why and where, and a warning says so; on_fault='raise'
    lets the error through instead."""
    calls = []

    def objective(x):
        calls.append(x)
        if len(calls) == 15:
            if isinstance(bad, Exception):
                raise bad
            return bad
        return float(-np.sum((x - 0.3) ** 2))

    with pytest.warns(RuntimeWarning, match="evaluation 14 failed.*its 14 evaluations before it kept"):
        opt = oscbo.optimize(objective, [(0, 1), (0, 1)], budget=10, n_init=5, progress=False)
    assert opt.fault["step"] == 14 and reason in opt.fault["reason"]
    assert len(opt.history) == 14 and opt.history["step"].tolist() == list(range(14))
    path = opt.write(tmp_path)
    meta = records.read_sidecar(path)
    assert meta["status"] == "failed" and meta["failed_step"] == 14 and reason in meta["reason"]
    pd.testing.assert_frame_equal(pd.read_parquet(path), opt.record())
    with pytest.raises(RuntimeError, match="stopped at a failed evaluation"):
        opt.ask()
    calls.clear()
    with pytest.raises((ZeroDivisionError, RuntimeError)):
        oscbo.optimize(objective, [(0, 1), (0, 1)], budget=10, n_init=5, progress=False, on_fault="raise")


def test_points_told_from_outside_join_the_design_or_take_a_round_and_the_record_says_so(tmp_path):
    """tell(x, y, outside=True): the user's own evaluations. Before the initial design is complete a
    point takes one of its places (the design's remaining points fill the rest, in their order);
    after it, the next BO round (an asked point not yet told is dropped). The record holds each at
    its step, in [0, 1]^d as every x, and the sidecar lists those steps; a point outside the box is
    refused, naming it."""

    def bowl(x):
        return float(np.sum((np.asarray(x) - 1.0) ** 2))

    plain = oscbo.Optimizer([(0, 4), (-2, 2)], seed=0, budget=3, n_init=3, minimize=True)
    design = [plain.ask()]
    opt = oscbo.Optimizer([(0, 4), (-2, 2)], seed=0, budget=3, n_init=3, minimize=True)
    opt.ask()  # a design point asked, then not told: the earlier evaluation takes its place
    opt.tell([2.0, 0.0], bowl([2.0, 0.0]), outside=True)  # data from before the run
    for _ in range(2):
        x = opt.ask()
        design.append(x)
        opt.tell(x, bowl(x))
    np.testing.assert_array_equal(design[1], design[0])  # the design's first point, asked after the outside one
    opt.ask()  # asked, then not told: the outside point takes its round
    with pytest.raises(ValueError, match="not a point of the box"):
        opt.tell([5.0, 0.0], 1.0, outside=True)
    opt.tell([1.0, 0.5], bowl([1.0, 0.5]), outside=True)
    x = opt.ask()
    opt.tell(x, bowl(x))
    history = opt.history
    assert len(history) == 5 and history.loc[0, ["x_0", "x_1"]].tolist() == [0.5, 0.5]
    assert history.loc[3, ["x_0", "x_1"]].tolist() == [0.25, 0.625] and history.loc[3, "y"] == pytest.approx(0.25)
    assert opt.meta()["told_outside"] == [0, 3] == history.loc[[0, 3], "step"].tolist()
    assert history["origin"].tolist() == ["outside", "asked", "asked", "outside", "asked"]  # per row
    assert opt.best.y == pytest.approx(min(history["y"]))
    opt.write(tmp_path)
    assert records.read_sidecar(tmp_path / "seed0.parquet")["told_outside"] == [0, 3]
    opt.ask()
    opt.tell([1.0, 1.0], 0.0, outside=True)  # the last evaluation of n_init + budget = 6
    with pytest.raises(RuntimeError, match=r"6 evaluations told; 3 of them told with outside=True.* larger by as many"):
        opt.ask()


def test_on_fault_continue_tells_a_failed_point_at_the_worst_value_and_goes_on(tmp_path):
    """on_fault='continue': evaluations 15 and 17 fail (NaN, then an exception); each is told at the
    worst value told before it, listed with its reason, and the run completes its budget, asking
    elsewhere after each failure."""
    calls = []

    def objective(x):
        calls.append(np.asarray(x).copy())
        if len(calls) == 15:
            return float("nan")
        if len(calls) == 17:
            raise ZeroDivisionError("boom")
        return float(-np.sum((x - 0.3) ** 2))

    with pytest.warns(RuntimeWarning, match="evaluation 14 failed .*told at the worst value so far"):
        opt = oscbo.optimize(objective, [(0, 1), (0, 1)], budget=13, n_init=5, progress=False, on_fault="continue")
    history = opt.history
    assert len(history) == opt.total == 18 and opt.fault is None
    failed = opt.failed_evaluations
    assert [f["step"] for f in failed] == [14, 16] and "nan" in failed[0]["reason"] and "boom" in failed[1]["reason"]
    for f in failed:
        assert f["imputed"] == history["y"].iloc[: f["step"]].min() == history["y"].iloc[f["step"]]
    assert not np.allclose(calls[14], calls[15])  # asked elsewhere after the failure
    opt.write(tmp_path)
    assert [f["step"] for f in records.read_sidecar(tmp_path / "seed0.parquet")["failed_evaluations"]] == [14, 16]
    written, _ = records.read_record(tmp_path / "seed0.parquet")  # the record says it row by row
    assert written.index[written["origin"] == "imputed"].tolist() == [14, 16]
    assert (written["origin"].drop([14, 16]) == "asked").all()


def test_a_value_that_looks_wrong_is_warned_about_once_per_kind() -> None:
    """An optimal value the observations beat (the wrong sign: -1 for a bowl whose maximum is 0)
    and a value of 1e200 each warn once, naming the value and the point; a right optimum and
    ordinary values say nothing."""
    import warnings

    def bowl(x: np.ndarray) -> float:
        return -float(np.sum((x - 0.3) ** 2))

    def huge(x: np.ndarray) -> float:
        return 1e200 if x[0] > 0.5 else -float(np.sum((x - 0.3) ** 2))

    def warned(objective, **options) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            oscbo.optimize(objective, [(0, 1)] * 3, budget=6, n_init=3, progress=False, **options)
        return [str(w.message) for w in caught if "the objective returned" in str(w.message)]

    beaten = warned(bowl, optimal_value=-1.0)
    assert len(beaten) == 1 and "better than optimal_value=-1 (maximising)" in beaten[0] and "at x = [" in beaten[0]
    assert warned(bowl, optimal_value=0.0) == []
    large = warned(huge)
    assert len(large) == 1 and "returned 1e+200" in large[0] and "failure code or an overflow" in large[0]
    assert warned(bowl, optimal_value=1.0, minimize=True)[0].endswith("check optimal_value's sign and minimize")


def test_the_history_holds_each_point_in_the_objective_s_units_and_the_record_does_not() -> None:
    """``natural_x0``... beside the record's [0, 1] ``x_*``: the best row's are ``.best.x``, every one
    lies in the box, and the written record keeps the pipeline's columns alone."""
    bounds = [(-5.0, 10.0), (0.0, 15.0), (100.0, 101.0)]
    seen = []

    def shifted(x: np.ndarray) -> float:
        seen.append(np.array(x))
        return -float(np.sum((x - np.array([1.0, 2.0, 100.5])) ** 2))

    run = oscbo.optimize(shifted, bounds, budget=6, n_init=3, progress=False)
    history = run.history
    natural = history[[f"natural_x{i}" for i in range(3)]].to_numpy()
    np.testing.assert_allclose(natural, np.array(seen), rtol=0, atol=1e-9)  # the points f was called at
    np.testing.assert_allclose(natural[history["y"].to_numpy().argmax()], run.best.x, atol=1e-9)
    assert not any(column.startswith("natural_x") for column in run.record().columns)


def test_the_sidecar_counts_the_evaluations_done_and_the_threads_used(tmp_path) -> None:
    """A run stopped at its 13th evaluation of 15 planned, on one thread in a process of two: its
    sidecar says 12 done and 15 planned (it said 15), and 1 thread (it said the process's 2)."""
    import torch

    def breaks_at_13(x: np.ndarray) -> float:
        breaks_at_13.calls += 1
        return float("nan") if breaks_at_13.calls == 13 else -float(np.sum(x**2))

    breaks_at_13.calls = 0
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.warns(RuntimeWarning, match="the run stopped there"):
            opt = oscbo.optimize(breaks_at_13, [(0, 1), (0, 1)], budget=10, n_init=5, threads=1, progress=False)
    finally:
        torch.set_num_threads(before)
    meta = records.read_sidecar(opt.write(tmp_path))
    assert (meta["evaluations"], meta["planned_evaluations"], meta["threads"]) == (12, 15, 1)


def test_a_run_s_picture_draws_its_history_and_leaves_pyplot_alone() -> None:
    """.plot(): best so far (the history's best_f) against the evaluation, the regret where the
    optimum is known (a panel fewer without), the lengthscale played and the coverage so far; a
    Figure that pyplot does not hold (the user's open figures and backend as they were)."""
    import matplotlib.pyplot as plt

    def bowl(x: np.ndarray) -> float:
        return -float(np.sum((x - 0.3) ** 2))

    open_before = plt.get_fignums()
    known = oscbo.optimize(bowl, [(0, 1)] * 2, budget=4, n_init=3, optimal_value=0.0, progress=False)
    figure = known.plot()
    assert [ax.get_ylabel() for ax in figure.axes] == [
        "objective",
        "simple regret",
        "lengthscale played",
        "coverage so far (dashed: 0.9)",
    ]
    best = figure.axes[0].get_lines()[1]
    np.testing.assert_array_equal(best.get_ydata(), known.history["best_f"].to_numpy())
    np.testing.assert_array_equal(best.get_xdata(), np.arange(1, 8))
    covered = known.history.query("phase == 'bo'")["covered"].astype(float).to_numpy()  # p̂_t, eq. 3
    np.testing.assert_allclose(figure.axes[3].get_lines()[0].get_ydata(), np.cumsum(covered) / np.arange(1, 5))
    unknown = oscbo.optimize(bowl, [(0, 1)] * 2, budget=4, n_init=3, progress=False)
    assert len(unknown.plot().axes) == 3 and plt.get_fignums() == open_before


def test_ctrl_c_keeps_every_evaluation_made_and_lets_the_interrupt_through(tmp_path) -> None:
    """An interrupt during the 8th evaluation: KeyboardInterrupt comes through, its ``optimizer``
    holds the 7 told (it was lost before), and its record says ``interrupted`` at step 7."""

    def interrupted_at_8(x: np.ndarray) -> float:
        interrupted_at_8.calls += 1
        if interrupted_at_8.calls == 8:
            raise KeyboardInterrupt
        return -float(np.sum(x**2))

    interrupted_at_8.calls = 0
    with pytest.raises(KeyboardInterrupt) as stop:
        oscbo.optimize(interrupted_at_8, [(0, 1), (0, 1)], budget=10, n_init=5, progress=False)
    opt = stop.value.optimizer
    assert opt.evaluations == 7 and len(opt.history) == 7 and opt.interrupted == 7
    assert "stop.optimizer.write(folder)" in "".join(getattr(stop.value, "__notes__", []))
    meta = records.read_sidecar(opt.write(tmp_path))
    assert (meta["status"], meta["interrupted_step"], meta["evaluations"]) == ("interrupted", 7, 7)


def test_a_first_evaluation_that_fails_under_continue_moves_the_design_on(tmp_path):
    """A simulator that fails in part of the box (|x_0 - 0.47| > 0.3), at the first two points:
    nothing to impute yet, so each is listed with its point and no step, and the initial design moves
    on to the Sobol sequence's next points; the run completes its budget. An objective that fails
    everywhere ends after a design's worth of failures, naming it."""
    design = initial_design("objective", 2, 12, 0).numpy()
    failing = np.abs(design[:, 0] - 0.47) > 0.3
    assert failing[:2].all() and not failing[2:6].any()  # the seed's first two points fail, the next four work

    def simulator(x):
        if abs(x[0] - 0.47) > 0.3:
            raise OSError("the simulator crashed")
        return float(-np.sum((x - 0.7) ** 2))

    with pytest.warns(RuntimeWarning, match="before any value failed .*moves on to its next point"):
        opt = oscbo.optimize(simulator, [(0, 1), (0, 1)], budget=4, n_init=5, progress=False, on_fault="continue")
    assert opt.fault is None and opt.evaluations == opt.total == 9
    skipped = [failed for failed in opt.failed_evaluations if failed["step"] is None]
    assert [failed["x"] for failed in skipped] == design[:2].tolist()
    history = opt.history
    init = history[history["phase"] == "init"]
    # the design's points in order, the two failed ones left out
    np.testing.assert_allclose(init[["x_0", "x_1"]].to_numpy()[:4], design[2:6], rtol=0, atol=1e-12)
    assert history["y"].notna().all() and len(history) == 9
    opt.write(tmp_path)
    assert records.read_sidecar(tmp_path / "seed0.parquet")["failed_evaluations"][0]["step"] is None
    with pytest.raises(ValueError, match="the first 5 evaluations all failed") as raised:
        oscbo.optimize(lambda x: 1 / 0, [(0, 1)], budget=2, n_init=5, progress=False, on_fault="continue")
    assert isinstance(raised.value.__cause__, ZeroDivisionError)


def test_a_noisy_botorch_problem_reads_regret_from_its_noiseless_value_and_repeats_by_seed():
    """Branin with noise_std = 1: y is the observation, f the noiseless value (the regret reads f, so
    it is never negative); the noise comes from the run's own stream, so one seed gives the same
    history whatever torch's global generator did; the best is the evaluated point of highest
    posterior mean, whose noiseless value lies within the noise of the best noiseless value, with
    the best observation beside it."""

    def run(global_seed: int):
        torch.manual_seed(global_seed)  # the global generator: nothing of the run may depend on it
        return oscbo.optimize(Branin(noise_std=1.0), method="gp-ucb-mll", seed=3, budget=8, n_init=6, progress=False)

    opt, again = run(0), run(12345)
    history = opt.history
    pd.testing.assert_frame_equal(history.drop(columns=TIMING), again.history.drop(columns=TIMING))
    assert (history["y"] != history["f"]).all() and (history["simple_regret"] >= 0).all()
    f_true = Branin()(torch.as_tensor(history[["natural_x0", "natural_x1"]].to_numpy())).numpy()
    np.testing.assert_allclose(history["f"], f_true, rtol=0, atol=1e-12)
    best = opt.best
    assert opt.noisy and best.by == "posterior mean" and best.best_observed == history["y"].min()
    assert best.f <= history["f"].min() + 2.0  # within twice the noise of the best noiseless value
    quiet = oscbo.optimize(Branin(), method="gp-ucb-mll", seed=3, budget=2, n_init=6, progress=False)
    assert not quiet.noisy and quiet.best.by == "observed" and quiet.best.y == quiet.history["y"].min()


def test_the_exceptions_a_user_catches_are_importable_from_oscbo():
    """What a user's code may catch, from the package itself, and what the API raises is it."""
    with pytest.raises(oscbo.ObjectiveValueError):
        oscbo.optimize(lambda x: [1.0, 2.0], [(0, 1)], budget=1, n_init=2, progress=False, on_fault="raise")
    with pytest.raises(oscbo.UnknownMethodError):
        oscbo.Optimizer([(0, 1)], method="no-such-method", budget=1)
    assert issubclass(oscbo.NonFiniteObjectiveError, RuntimeError) and issubclass(oscbo.ConfigError, ValueError)
    assert {"MethodOutputError", "MethodUnavailableError", "UnknownTaskError"} <= set(oscbo.__all__)
