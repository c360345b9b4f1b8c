"""Seed resamples of a study's tables: every claim's test evaluated at once on the study as it ran,
on paired bootstrap resamples of its seeds, and with each task left out.

A :class:`Samples` holds, for one experiment under one reading, ``S`` samples of its seeds:

* sample 0: the study as it ran (every seed once);
* samples 1..B: each task's seeds drawn with replacement, one draw per task shared by every method
  (the same seed gives every method the same initial design, so the comparison stays paired);
* then one sample per task of the claim's task universe, that task left out (the study's seeds).

Statistics come back with the samples first (``S x ...``): the resampled seed means of a final
metric (``S x T x M``), of a method's trajectory (``S x T x rounds``), the per-task ranks (ties
share the average rank) and the mean ranks as exact fractions (:class:`Exact`), so that no
rounding decides a verdict at a boundary. Per-seed values come from ``final`` and ``trajectories``;
a study published before a column or a trajectory was kept has only its seed means and standard
errors (``curves``), and there each sample is mean + s.e. x z, one z ~ N(0, 1) per (sample, task,
method) shared by every round (the rounds fully correlated, the methods unpaired: wider than the
seed bootstrap, not narrower), as :attr:`Samples.approximate` says.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd

from oscbo.seeding import stable_seed

#: Paired seed resamples per verdict: 1,000 gives a share to about +-1.5 points at 50 %.
RESAMPLES = 1000
#: A final-table column at the first BO round rather than the last (``lengthscale_first``).
FIRST = "_first"


@dataclass(frozen=True)
class Exact:
    """Fractions ``num / den`` of integer arrays (one per sample), compared exactly. A fraction
    over ``den == 0`` (a mean over no task: the method has no seed mean in that sample) is
    undefined, and every comparison with it is false, as with NaN."""

    num: np.ndarray
    den: np.ndarray

    def __sub__(self, other: Exact) -> Exact:
        return Exact(self.num * other.den - other.num * self.den, self.den * other.den)

    def _cross(self, other: Exact | Fraction | int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Both sides over the common denominator, and where both are defined."""
        if isinstance(other, Exact):
            return self.num * other.den, other.num * self.den, (self.den != 0) & (other.den != 0)
        other = Fraction(other)
        return self.num * other.denominator, other.numerator * self.den, self.den != 0

    def __lt__(self, other):  # noqa: D105
        left, right, defined = self._cross(other)
        return defined & (left < right)

    def __le__(self, other):  # noqa: D105
        left, right, defined = self._cross(other)
        return defined & (left <= right)

    def __gt__(self, other):  # noqa: D105
        left, right, defined = self._cross(other)
        return defined & (left > right)

    def __ge__(self, other):  # noqa: D105
        left, right, defined = self._cross(other)
        return defined & (left >= right)

    def __eq__(self, other):  # noqa: D105
        left, right, defined = self._cross(other)
        return defined & (left == right)

    __hash__ = None

    def at(self, sample: int = 0) -> Fraction:
        return Fraction(int(self.num[sample]), int(self.den[sample]))

    def float(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.den != 0, self.num / np.where(self.den != 0, self.den, 1), np.nan)


@dataclass
class Samples:
    """The samples of one experiment under one reading (module docstring).

    Attributes:
        experiment: its name; tasks, methods: as the reading names them, in table order.
        final: its rows of ``final``; tables: the reading's tables, whose ``trajectories`` and
            ``curves`` are cut to the experiment when first read.
        n_boot: bootstrap samples B; universe: the tasks of the leave-one-out samples.
        weights: task -> ``S x k`` weights of its k seeds (each row sums to 1).
        task_in: ``S x T``: whether a task counts in a sample.
        approximate: the statistics drawn from the curves' s.e. (module docstring), by name.
    """

    experiment: str
    tasks: list[str]
    methods: list[str]
    final: pd.DataFrame
    tables: dict[str, pd.DataFrame]
    n_boot: int
    universe: list[str]
    weights: dict[str, np.ndarray]
    seeds: dict[str, list[int]]
    task_in: np.ndarray
    resampled_seeds: int | None = None
    approximate: set[str] = field(default_factory=set)
    _cache: dict = field(default_factory=dict)
    #: the experiment's rows and values as arrays (independent of the samples' weights), shared by
    #: its samples
    panel: dict = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        tables: dict[str, pd.DataFrame],
        experiment: str,
        reading: str,
        n_boot: int = RESAMPLES,
        universe: Sequence[str] = (),
        seeds_per_task: int | None = None,
        panel: dict | None = None,
    ) -> Samples:
        """The samples of ``experiment`` in ``tables`` (one reading's ``final``, ``trajectories`` and
        ``curves``, stand-ins applied). ``seeds_per_task``: draw that many seeds per task instead
        of the task's own count (how many seeds would decide a verdict), with no leave-one-out.
        ``panel``: the experiment's arrays, shared with its other samples (filled on first use)."""
        panel = {} if panel is None else panel
        if "final" not in panel:
            final = tables["final"][tables["final"]["experiment"] == experiment]
            panel["final"] = final
            panel["tasks"] = list(final["task"].unique())  # in order of appearance
            panel["methods"] = list(final["method"].unique())
            task_of, seed = final["task"].to_numpy(dtype=object), final["seed"].to_numpy()
            panel["seeds"] = {task: sorted(set(seed[task_of == task].tolist())) for task in panel["tasks"]}
        final, tasks, seeds = panel["final"], panel["tasks"], panel["seeds"]
        universe = [] if seeds_per_task else list(universe or tasks)
        n_samples = 1 + n_boot + len(universe)
        weights = {}
        for task in tasks:
            k = len(seeds[task])
            draws = seeds_per_task or k
            rng = np.random.default_rng(stable_seed("claims", reading, experiment, task, draws))
            counts = np.zeros((n_samples, k))
            counts[0] = draws / k  # the study itself: every seed once (with ``seeds_per_task``, as often)
            picks = rng.integers(0, k, size=(n_boot, draws))
            np.add.at(counts, (np.repeat(np.arange(1, n_boot + 1), draws), picks.ravel()), 1.0)
            counts[1 + n_boot :] = draws / k
            weights[task] = counts / draws
        task_in = np.ones((n_samples, len(tasks)), dtype=bool)
        for i, task in enumerate(universe):
            if task in tasks:
                task_in[1 + n_boot + i, tasks.index(task)] = False
        return cls(
            experiment,
            tasks,
            panel["methods"],
            final,
            tables,
            n_boot,
            universe,
            weights,
            seeds,
            task_in,
            seeds_per_task,
            panel=panel,
        )

    @property
    def trajectories(self) -> pd.DataFrame:
        """The experiment's rows of the reading's ``trajectories``."""
        return self._rows("trajectories")

    @property
    def curves(self) -> pd.DataFrame:
        """The experiment's rows of the reading's ``curves``."""
        return self._rows("curves")

    def _rows(self, name: str) -> pd.DataFrame:
        """The experiment's rows of table ``name``, cut once (checks that read only ``final``: never)."""
        if name not in self.panel:
            table = self.tables[name]
            self.panel[name] = table[table["experiment"] == self.experiment]
        return self.panel[name]

    @property
    def n_samples(self) -> int:
        return self.task_in.shape[0]

    @property
    def bootstrap(self) -> slice:
        return slice(1, 1 + self.n_boot)

    def left_out(self) -> list[tuple[str, int]]:
        """(task, sample index) of each leave-one-task-out sample."""
        return [(task, 1 + self.n_boot + i) for i, task in enumerate(self.universe)]

    def _z(self, key: str, shape: tuple[int, ...]) -> np.ndarray:
        """Standard normal draws for the s.e. fallback: 0 for the study itself and the left-out samples."""
        rng = np.random.default_rng(stable_seed("claims-z", self.experiment, key, self.resampled_seeds or 0))
        z = np.zeros((self.n_samples, *shape))
        z[self.bootstrap] = rng.standard_normal((self.n_boot, *shape))
        return z

    def final_means(self, metric: str) -> np.ndarray:
        """``S x T x M`` seed means of a final metric (NaN where a method did not run a task)."""
        key = ("final", metric)
        if key not in self._cache:
            if metric in self.final and self.final[metric].notna().any():
                self._cache[key] = self._resampled(self.final, metric)
            else:
                self._cache[key] = self._end_from_curves(metric)
                self.approximate.add(metric)
        return self._cache[key]

    def trajectory(self, metric: str, method: str) -> np.ndarray:
        """``S x T x R``: ``method``'s seed means of a metric over the BO rounds (NaN where none)."""
        key = ("trajectory", metric, method)
        if key not in self._cache:
            m = self.methods.index(method)
            kept = self.trajectories
            if metric in kept and kept[metric].notna().any():  # kept for some methods: the others have none
                values, steps = self._per_seed_trajectories(metric)
                out = np.full((self.n_samples, len(self.tasks), len(steps)), np.nan)
                for t, task in enumerate(self.tasks):
                    out[:, t] = _weighted_mean(self.weights[task], values[task][:, m, :])
            else:
                mean, se, _ = self._curve_panel(metric)
                z = self._z(metric, mean.shape[:2])[:, :, m]
                out = mean[None, :, m, :] + se[None, :, m, :] * z[..., None]
                self.approximate.add(metric)
            self._cache[key] = out
        return self._cache[key]

    def across_rounds(self, metric: str, reduce: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``S x T x M``: the seed mean of a per-seed statistic of a trajectory (``reduce``: ``k x M x
        R -> k x M``, NaN where a seed has none), e.g. a lengthscale's corrections; NaN without
        per-seed trajectories of ``metric``."""
        key = ("across", metric, reduce)
        if key not in self._cache:
            out = np.full((self.n_samples, len(self.tasks), len(self.methods)), np.nan)
            if metric in self.trajectories and self.trajectories[metric].notna().any():
                values, _ = self._per_seed_trajectories(metric)
                for t, task in enumerate(self.tasks):
                    out[:, t, :] = _weighted_mean(self.weights[task], reduce(values[task]))
            self._cache[key] = out
        return self._cache[key]

    def _per_seed(self, metric: str) -> dict[str, np.ndarray]:
        """task -> its seeds' final values, ``k x M`` (NaN: no run)."""
        key = ("final", metric)
        if key not in self.panel:
            self.panel[key] = self._grid("final").spread(self.final[metric])
        return self.panel[key]

    def _resampled(self, table: pd.DataFrame, metric: str) -> np.ndarray:
        values = self._per_seed(metric)
        out = np.full((self.n_samples, len(self.tasks), len(self.methods)), np.nan)
        for t, task in enumerate(self.tasks):
            out[:, t, :] = _weighted_mean(self.weights[task], values[task])
        return out

    def _per_seed_trajectories(self, metric: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """task -> its seeds' values over the BO rounds, ``k x M x R`` (NaN: none), and the rounds (steps)."""
        key = ("trajectory", metric)
        if key not in self.panel:
            grid = self._grid("trajectories")
            self.panel[key] = grid.spread(self.trajectories[metric]), grid.steps
        return self.panel[key]

    def _grid(self, name: str) -> _Grid:
        """The :class:`_Grid` of the experiment's rows of ``final`` or ``trajectories`` (by step)."""
        key = ("grid", name)
        if key not in self.panel:
            table = self.final if name == "final" else self.trajectories
            steps = None if name == "final" else np.unique(table["step"].to_numpy())
            self.panel[key] = _Grid.of(table, self.tasks, self.seeds, self.methods, steps)
        return self.panel[key]

    def _curve_panel(self, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A metric's seed means and standard errors over the BO rounds, ``T x M x R`` each, and the rounds."""
        key = ("curves", metric)
        if key not in self.panel:
            rows = self.curves[(self.curves["metric"] == metric) & (self.curves["phase"] == "bo")]
            steps = np.array(sorted(set(rows["step"]))) if len(rows) else np.array([], dtype=int)
            index = pd.MultiIndex.from_product([self.tasks, self.methods])
            found = []
            for column in ("mean", "se"):
                wide = rows.pivot_table(index=["task", "method"], columns="step", values=column, aggfunc="first")
                shape = (len(self.tasks), len(self.methods), len(steps))
                found.append(wide.reindex(index=index, columns=steps).to_numpy(dtype=float).reshape(shape))
            self.panel[key] = found[0], np.nan_to_num(found[1]), steps
        return self.panel[key]

    def _end_from_curves(self, metric: str) -> np.ndarray:
        """``S x T x M``: each (task, method)'s last BO round drawn from its seed mean and s.e. (its
        first for a ``*_first`` metric, e.g. ``lengthscale_first``)."""
        first = metric.endswith(FIRST)
        mean, se, _ = self._curve_panel(metric.removesuffix(FIRST))
        if mean.shape[-1] == 0:  # not in the curves either
            return np.full((self.n_samples, len(self.tasks), len(self.methods)), np.nan)
        present = ~np.isnan(mean)
        index = (present.argmax(-1) if first else present.cumsum(-1).argmax(-1))[..., None]
        mean, se = np.take_along_axis(mean, index, -1)[..., 0], np.take_along_axis(se, index, -1)[..., 0]
        return mean[None] + se[None] * self._z(metric + "-last", mean.shape)

    def ranks(self, metric: str, among: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Each method's rank on each task among ``among`` (default: every method), ``S x T x M`` in
        :attr:`methods`' order (1 = lowest mean; ties share the average rank, a half-integer, exact
        in floating point; NaN where a method has no value or is not among them), and ``S x T x M``:
        where it counts.

        A method counts on a task in a sample where it has a seed mean there: a method that lacks
        some of the task's seeds (a failed run, uneven seeds) is absent from the bootstrap samples
        that draw none of its seeds, and the others are ranked without it."""
        twice, present = self._twice_ranks(metric, among)
        return np.where(present, twice / 2, np.nan), present

    def _twice_ranks(self, metric: str, among: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`ranks` doubled, as integers (0 where a method does not count), for exact sums."""
        key = ("ranks", metric, tuple(among or ()))
        if key not in self._cache:
            means = self.final_means(metric)
            present = ~np.isnan(means)
            if among is not None:
                present &= np.isin(self.methods, list(among))[None, None]
            filled = np.where(present, means, np.inf)[..., None]  # after every method that counts
            # Twice the average rank, in integers: 2 x (methods strictly lower) + (methods tied, itself
            # included) + 1, which is scipy.stats.rankdata(method="average") x 2 without a float.
            lower = (filled.swapaxes(-1, -2) < filled).sum(-1)
            tied = (filled.swapaxes(-1, -2) == filled).sum(-1)
            self._cache[key] = np.where(present, 2 * lower + tied + 1, 0), present
        return self._cache[key]

    def ranked_tasks(self, metric: str, method: str, among: Sequence[str] | None = None) -> np.ndarray:
        """``S x T``: the tasks of each sample where ``method`` is ranked (:meth:`ranks`)."""
        return self.task_in & self._twice_ranks(metric, among)[1][..., self.methods.index(method)]

    def mean_rank(self, metric: str, method: str, among: Sequence[str] | None = None) -> Exact:
        """A method's mean rank over the tasks of each sample (Fig. 3's aggregate), exactly."""
        twice, _ = self._twice_ranks(metric, among)
        counted = self.ranked_tasks(metric, method, among)
        return Exact(np.where(counted, twice[..., self.methods.index(method)], 0).sum(-1), 2 * counted.sum(-1))

    def place(self, metric: str, method: str, among: Sequence[str] | None = None) -> np.ndarray:
        """1 + the number of methods (of ``among``) with a strictly lower mean rank, per sample."""
        own = self.mean_rank(metric, method, among)
        others = [m for m in (among or self.methods) if m != method and m in self.methods]
        lower = [self.mean_rank(metric, other, among) < own for other in others]
        return 1 + np.sum(lower, axis=0).astype(np.int64) if lower else np.ones(self.n_samples, dtype=np.int64)

    def task_gaps(self, metric: str, method: str, reference: str, log: bool = True, floor: float = 1e-8) -> np.ndarray:
        """``S x T``: per task the mean over BO rounds of ``|log10 m(t) - log10 m_ref(t)|`` (``log``;
        else ``|m(t) - m_ref(t)|``), m the seed mean (raised to ``floor`` before the log)."""

        def scaled(name: str) -> np.ndarray:
            key = ("scaled", metric, name, log, floor)
            if key not in self._cache:
                values = self.trajectory(metric, name)
                self._cache[key] = np.log10(np.clip(values, floor, None)) if log else values
            return self._cache[key]

        key = ("gaps", metric, method, reference, log, floor)
        if key not in self._cache:
            own, ref = scaled(method), scaled(reference)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a task without rounds on either side: NaN
                self._cache[key] = np.nanmean(np.abs(own - ref), axis=-1)
        return self._cache[key]

    def require(self, *methods: str) -> None:
        missing = [method for method in methods if method not in self.methods]
        if missing:
            raise KeyError(missing)


@dataclass(frozen=True)
class _Grid:
    """Where a table's rows go in each task's ``k x M`` array (``k x M x R`` by ``steps``): its seeds
    (in ``seeds[task]``'s order) by methods (and steps); rows of another task, seed, method or step go nowhere."""

    tasks: list[str]
    rows: list[np.ndarray]  # per task: the table's rows that go in its array
    cells: list[np.ndarray]  # per task: where each of them goes in the flattened array
    seeds: list[int]  # per task: k
    shape: tuple[int, ...]  # the array's shape after its k seeds
    steps: np.ndarray | None

    @classmethod
    def of(
        cls,
        table: pd.DataFrame,
        tasks: Sequence[str],
        seeds: dict[str, list[int]],
        methods: Sequence[str],
        steps: np.ndarray | None = None,
    ) -> _Grid:
        task_of, cell = _positions(table["task"], tasks), _positions(table["method"], methods)
        shape: tuple[int, ...] = (len(methods),)
        if steps is not None:
            step = table["step"].to_numpy()
            step_of = np.clip(np.searchsorted(steps, step), 0, len(steps) - 1)
            cell = np.where((cell >= 0) & (steps[step_of] == step), cell * len(steps) + step_of, -1)
            shape = (len(methods), len(steps))
        seed, width = table["seed"].to_numpy(), int(np.prod(shape))
        rows, cells = [], []
        for t, task in enumerate(tasks):
            own = np.asarray(seeds[task])
            seed_of = np.clip(np.searchsorted(own, seed), 0, len(own) - 1)
            (found,) = np.nonzero((task_of == t) & (own[seed_of] == seed) & (cell >= 0))
            rows.append(found)
            cells.append(seed_of[found] * width + cell[found])
        return cls(list(tasks), rows, cells, [len(seeds[task]) for task in tasks], shape, steps)

    def spread(self, column: pd.Series) -> dict[str, np.ndarray]:
        """task -> ``column``'s values in its array: each cell's first value that is not NaN in the
        table's order, NaN where there is none (a pivot table of ``aggfunc="first"``, reindexed)."""
        values = column.to_numpy(dtype=float, na_value=np.nan)
        found = {}
        for task, rows, cells, k in zip(self.tasks, self.rows, self.cells, self.seeds):
            own = values[rows]
            kept = ~np.isnan(own)
            _, first = np.unique(cells[kept], return_index=True)  # each cell's first row, in the table's order
            out = np.full(k * int(np.prod(self.shape)), np.nan)
            out[cells[kept][first]] = own[kept][first]
            found[task] = out.reshape(k, *self.shape)
        return found


def _positions(column: pd.Series, names: Sequence[str]) -> np.ndarray:
    """``pd.Index(names).get_indexer`` of ``column`` (-1: absent or missing), once per distinct value."""
    codes, uniques = pd.factorize(column)
    return np.where(codes >= 0, pd.Index(names).get_indexer(np.asarray(uniques, dtype=object))[codes], -1)


def _weighted_mean(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Rows of ``weights`` (``S x k``) applied to ``values`` (``k x ...``), NaN values left out."""
    flat = values.reshape(values.shape[0], -1)
    present = ~np.isnan(flat)
    total = weights @ np.where(present, flat, 0.0)
    count = weights @ present.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)
    return mean.reshape(weights.shape[0], *values.shape[1:])
