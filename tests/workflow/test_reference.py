"""The published reference (``reference/``) is what ``config/reference.yaml`` computes.

A sample of its small jobs, rerun by the real workflow on a copy of the repository, gives the
records its record store holds, bit for bit (timing aside), on any CPU the pinned numerical path
covers; and the known-truth part's jobs give its published rows of the per-run table (``final``)
and of the curves. Minutes on two cores, so behind the ``slow`` marker:
``pytest -m slow tests/workflow/test_reference.py``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from helpers import needs_pinned_path, untimed
from snakemake_copy import REPO, copy_workflow, snakemake

from oscbo import findings
from oscbo.analysis import PUBLISHED, aggregate, load, readings
from oscbo.findings import compare
from oscbo.findings.registration import Registration
from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study import store
from oscbo.study.job import Manifest

REFERENCE = REPO / "reference"
#: The rerun's record store: its finished parts, restored into a fresh clone (docs/user-guide.md).
STORE = REFERENCE / "store"
KEYS = ["experiment", "task", "method"]


def test_the_published_reference_is_the_shipped_config_s_whole_study_run_after_the_registration() -> None:
    """reference/ is its config's study, whole: every experiment's tasks, each (task, method label)
    with the configured seeds; every run on the pinned numerical path, started after the claims'
    tests were registered; and the record store holding every one of those runs (its parts' records,
    each file a run's). The config as published is config/reference.yaml, or, while parts of a
    registered extension are running, a part of it: every published experiment, label and task is
    there with the same definition (the extension only adds)."""
    published_config = study_config.load(REFERENCE / "config.yaml")
    shipped = study_config.load(REPO / "config" / "reference.yaml")
    for name, experiment in published_config["experiments"].items():
        extended = shipped["experiments"][name]
        assert set(experiment["tasks"]) <= set(extended["tasks"]), name
        assert [spec for spec in extended["methods"] if spec in experiment["methods"]] == experiment["methods"], name
        assert {k: v for k, v in experiment.items() if k not in ("tasks", "methods")} == {
            k: v for k, v in extended.items() if k not in ("tasks", "methods")
        }, name
    assert published_config["readings"] == {
        k: v for k, v in shipped["readings"].items() if k in published_config["readings"]
    }
    config = published_config
    published = sorted(path.stem for path in (REFERENCE / "summary").glob("*.parquet"))
    assert published == sorted({*PUBLISHED, *findings.OUTPUTS, "crosscheck"})
    tables = load(REFERENCE / "summary", ["final", "provenance"])
    final, provenance = tables["final"], tables["provenance"]
    assert set(final["experiment"]) == set(config["experiments"])
    seeds = final.groupby(["experiment", "task", "method"])["seed"].nunique()
    for name, experiment in config["experiments"].items():
        assert set(seeds.loc[name].index.get_level_values("task")) == set(experiment["tasks"]), name
        wanted = len(experiment["seeds"]) if isinstance(experiment["seeds"], list) else experiment["seeds"]
        assert (seeds.loc[name] == wanted).all(), name
    assert provenance["code_path"].str.startswith("pinned").all()
    assert provenance["started"].min() > Registration.read().date
    stored = pd.concat(
        [pd.read_parquet(STORE / f"{part}.records.parquet", columns=["file"]) for part in store.parts(STORE)]
    )["file"].unique()
    # a run two experiments ask for runs once, in its owner's folder (dual's arms that main holds)
    found = study_jobs.jobs(config, lambda task: None)
    distinct = {owner for owner in study_jobs.owners(found).values()}
    # (the store may hold more: the parts of a registered extension, run before it is published)
    assert len(stored) >= sum(len(found[key].seeds) for key in distinct) == 9790


def test_the_record_store_s_parts_ran_on_this_checkout_s_run_code() -> None:
    """The reference runs on one run code: every part in reference/store ran on the code this
    checkout's BO jobs execute (docstrings and comments aside), or on code a declared change since
    leaves every record of (reference/store/run-code-changes.yaml, with its evidence). An undeclared
    change of run code fails here, naming the files: the published reference would no longer be
    what this checkout computes."""
    store.check_run_code(STORE, store.run_code(study_config.load(REPO / "config" / "reference.yaml")))


def test_the_reference_readme_states_its_files_dates_and_comparison_as_they_are() -> None:
    """reference/README.md's sizes, dates, row counts and its comparison with the previous reference,
    each computed here from the files (the comparison from reference/compare, `oscbo compare`'s
    tables)."""
    readme = (REFERENCE / "README.md").read_text()
    text = " ".join(readme.split())

    def megabytes(paths: list[Path]) -> str:
        return f"{sum(path.stat().st_size for path in paths) / 1e6:.1f} MB"

    summary = sorted((REFERENCE / "summary").glob("*.parquet"))
    assert f"| {megabytes(summary)} (`curves` {megabytes([REFERENCE / 'summary' / 'curves.parquet'])}," in text
    assert f"inline SVG | {megabytes([REFERENCE / 'report.html'])} |" in text
    assert f"under the figure | {megabytes(sorted((REFERENCE / 'report-numbers').glob('*')))} |" in text
    assert f"the run code they ran on | {megabytes(sorted(STORE.glob('*')))} |" in text
    tables = load(REFERENCE / "summary", ["provenance", "trajectories", "final"])
    first, last = tables["provenance"]["started"].min(), tables["provenance"]["finished"].max()
    assert f"from {first[:10]} {first[11:16]} to {last[:10]} {last[11:16]}" in text
    assert f"commits: the sidecars name {tables['provenance']['git_commit'].nunique()}," in text
    assert f"the known-truth tasks: {len(tables['trajectories']):,} rows)" in text
    block = readme[readme.index("\n", readme.index("<!-- compare:")) + 1 : readme.index("<!-- /compare -->")]
    finals, verdicts = (
        pd.read_parquet(REFERENCE / "compare" / f"compare_{name}.parquet") for name in ("finals", "verdicts")
    )
    assert block.strip() == compare.markdown(finals, verdicts)
    assert set(finals["experiment"]) <= set(tables["final"]["experiment"])


def test_the_published_cross_check_ran_the_full_protocol_and_finds_gp_ucb_mll_faithful() -> None:
    """reference/summary/crosscheck.parquet (benchmarks/crosscheck.py at its defaults): 20 seeds of
    100 rounds, GP-UCB-MLL on Hartmann3, Hartmann6 and Levy5, VanillaBO on Hartmann6 beside both
    BoTorch models. GP-UCB-MLL beside BoTorch's own loop of the same protocol: no final metric apart
    at the 5 % level (two-sided Mann-Whitney), seed-mean lengthscales within 0.05 decades."""
    checked = load(REFERENCE / "summary", ["crosscheck"])["crosscheck"]
    assert (checked[["seeds", "budget", "n_init"]] == [20, 100, 10]).all(axis=None)
    assert checked["command"].str.startswith("python benchmarks/crosscheck.py").all()
    cases = set(zip(checked["task"], checked["method"], checked["implementation"]))
    assert {(task, "gp-ucb-mll", "botorch-loop") for task in ("hartmann3", "hartmann6", "levy5")} <= cases
    assert {("hartmann6", "vanilla-bo", reference) for reference in ("botorch-default", "botorch-study")} <= cases
    loop = checked[checked["implementation"] == "botorch-loop"]
    assert (loop[["p_sr", "p_cr", "p_ls"]] > 0.05).all(axis=None) and (loop["gap_ls"] < 0.05).all()


def rerun(
    tmp_path: Path, sample: list[tuple[str, str, str, str]], env: dict[str, str], complete: list[str]
) -> list[str]:
    """The ``sample``'s jobs run again by the workflow on a copy of the repository (``env`` added to
    its environment), aggregated, against the published tables: their ``final`` rows, and the
    curves of ``complete`` (experiment, task, method; both its seed chunks in the sample). Returns
    the columns of today's ``final`` the published runs predate (left out of the comparison)."""
    (tmp_path / "clone").mkdir()
    root = copy_workflow(tmp_path / "clone")
    config = study_config.load(root / "config" / "reference.yaml")
    results = root / config["results"]
    targets = [str(Path(config["results"], "runs", *key[:3], f"seeds{key[3]}.json")) for key in sample]
    result = snakemake(root, "--cores", "2", *targets, "--configfile", "config/reference.yaml", env_extra=env)
    assert result.returncode == 0, result.stdout[-5000:]

    aggregate(
        sorted((results / "runs").glob("*/*/*/seed*.parquet")),
        tmp_path / "summary",
        readings=readings.from_config(config),
    )
    again, published = (load(folder, ["final", "curves"]) for folder in (tmp_path / "summary", REFERENCE / "summary"))
    runs = again["final"].set_index([*KEYS, "seed"]).index
    assert len(runs) == 10 * len(sample)
    rows = published["final"][published["final"].set_index([*KEYS, "seed"]).index.isin(runs)]
    assert len(rows) == len(runs)
    # the columns the published runs predate (empty there, filled by today's code) are left out
    newer = [c for c in again["final"] if c not in rows or (rows[c].isna().all() and again["final"][c].notna().any())]
    kept = [c for c in again["final"] if c not in newer]
    pd.testing.assert_frame_equal(untimed(again["final"][kept]), untimed(rows[kept]), check_exact=True)
    curves = [table["curves"][(table["curves"][KEYS] == complete).all(axis=1)] for table in (again, published)]
    assert len(curves[0]) > 0
    pd.testing.assert_frame_equal(untimed(curves[0]), untimed(curves[1]), check_exact=True)
    return newer


#: (experiment, task, method label, seed chunk): small jobs of the stored parts, on known-optimum
#: tasks: both chunks of one method, a stand-in's job, and OCBO's (whose code changed since the
#: parts ran: reference/store/run-code-changes.yaml).
STORED_SAMPLE = [
    ("main", "hartmann3", "gp-ucb-mll", "0-9"),
    ("main", "hartmann3", "gp-ucb-mll", "10-19"),
    ("main", "levy5", "oscbo-lambda0=0.433", "10-19"),
    ("main", "hartmann3", "ocbo", "0-9"),
]


@pytest.mark.slow
@needs_pinned_path
def test_a_sample_of_the_stored_jobs_gives_their_records_on_any_pinned_cpu(tmp_path: Path) -> None:
    """The store restored into a copy of the repository, the sample's jobs run again there by the
    workflow: every record the same as the store's, value for value (timing aside), with nothing set
    by hand, on any CPU the pinned path supports. About a minute and a half."""
    root = copy_workflow(tmp_path / "clone")
    results = root / study_config.load(root / "config" / "reference.yaml")["results"]
    store.restore(STORE, results)
    stored, targets = {}, []
    for experiment, task, label, chunk in STORED_SAMPLE:
        manifest = results / "runs" / experiment / task / label / f"seeds{chunk}.json"
        for name in Manifest.read(manifest).records:
            stored[manifest.parent / name] = untimed(pd.read_parquet(manifest.parent / name))
        manifest.unlink()  # the job is not finished: the workflow runs it again and writes its records anew
        targets.append(str(manifest.relative_to(root)))
    assert len(stored) == 10 * len(STORED_SAMPLE)
    result = snakemake(root, "--cores", "2", *targets, "--configfile", "config/reference.yaml")
    assert result.returncode == 0, result.stdout[-5000:]
    assert "run_bo" in result.stdout and f"{len(STORED_SAMPLE)} of {len(STORED_SAMPLE)} steps" in result.stdout
    for record, table in stored.items():
        pd.testing.assert_frame_equal(untimed(pd.read_parquet(record)), table, check_exact=True)


#: Both seed chunks of a known-truth job, on the pinned code path (src/oscbo/reproducibility.py,
#: IEEE 754's square root: oscbo.model.rounding).
PINNED_SAMPLE = [("known-truth", "gp2", "gp-ucb-true", "0-9"), ("known-truth", "gp2", "gp-ucb-true", "10-19")]


@pytest.mark.slow
@needs_pinned_path
def test_the_known_truth_part_s_jobs_give_the_published_rows_on_any_pinned_cpu(tmp_path: Path) -> None:
    """The known-truth part ran under the pinned code path that ``oscbo`` takes by default: a rerun
    through the workflow and the aggregate, with nothing set by hand, on any CPU the path supports,
    gives its published rows of ``final`` and ``curves`` value for value. Minutes."""
    assert rerun(tmp_path, PINNED_SAMPLE, {}, list(PINNED_SAMPLE[0][:3])) == []  # every column compared
