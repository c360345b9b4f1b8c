"""End to end: the real Snakemake workflow, on a copy of the repository, with a tiny study.

The quick study shrunk to 2 seeds and 2 BO rounds (every task, every method) is built once per
session in a copy of the workflow (``tiny_study``, tests/workflow/conftest.py), which the tests
read and leave as built; a test that edits or runs anything works in a copy of its own
(``Built.copy``). They ask Snakemake about it: the outputs, what an edit re-runs (decided by the
jobs' code digest, every edit checked in-process by tests/study/test_reruns.py), a published
study, a store (bad configurations, lint and the device policy: test_workflow_dag.py).
A copy's ``src/`` is put first on ``PYTHONPATH`` so that the workflow imports (and lists
as inputs) the copy's sources, never the checkout's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from helpers import CHROMIUM, SECTIONS, assert_same_tables, open_in_chromium, sections
from snakemake_copy import (
    NOTHING_TO_DO,
    REPO,
    Built,
    assert_left_as_built,
    copy_workflow,
    fingerprint,
    scheduled_jobs,
    snakemake,
)
from tiny_study import (
    CODE_EDIT,
    DOWNSTREAM,
    EDITS,
    expected_jobs,
    packed_labels,
    reworded,
    rules_listing,
    study_jobs_of,
)

from oscbo import figures, imports, records
from oscbo.analysis import PUBLISHED, aggregate, readings, table_path
from oscbo.api import cli
from oscbo.study import config as study_config
from oscbo.study import store


def test_the_tiny_study_runs_to_a_complete_report(tiny_study: Built, tiny_config: dict[str, Any]) -> None:
    root, result = tiny_study.root, tiny_study.result
    assert result.returncode == 0, result.stdout[-5000:]
    # The jobs ran the copy's sources (the Snakefile refuses any other oscbo).
    assert str(REPO / "src") not in result.stdout
    # The terminal: a line per job (what it does, its log) in place of Snakemake's block of its
    # inputs (a BO job's list every source file); the progress kept.
    assert "steps (100%) done" in result.stdout
    terse = snakemake(root, "-n", "--forcerun", "aggregate", "--configfile", "config/tiny.yaml", blocks=False)
    assert "input:" not in terse.stdout and "Job " in terse.stdout, terse.stdout[-3000:]
    assert "the records into summary tables; log: results/logs/aggregate.log" in terse.stdout
    assert len(terse.stdout.splitlines()) < 120, terse.stdout

    html = (root / "report" / "index.html").read_text(encoding="utf-8")
    planned = [figure.id for figure in figures.plan(tiny_config)[0]]
    described = json.loads((root / "results" / "figures" / "figures.json").read_text())["figures"]
    assert [item["id"] for item in described] == planned
    assert all((root / "results" / "figures" / f"{id}.svg").is_file() for id in planned)  # declared outputs
    in_page = re.findall(r'<section id="([^"]+)">', html)
    assert in_page[:3] == ["answer", "claims", "summary"]
    assert in_page[-4:] == ["final-regret", "statistics", "protocol", "provenance"]
    assert {item["section"] for item in described} <= set(in_page)
    assert html.count("<svg ") == len(planned) and all(f'<figure id="figure-{id}">' in html for id in planned)
    for href in re.findall(r'<p class="source">.*?</p>', html, re.S):
        for target in re.findall(r'<a href="([^"#]+)">', href):  # the code, the tables, the numbers
            assert (root / "report" / target).is_file(), target
    assert all((root / "report" / "index-numbers" / f"{id}.csv").is_file() for id in planned)
    # The terminal's closing lines: where the report is, and what did not run (once).
    assert f"Report: {root / 'report' / 'index.html'}" in result.stdout
    assert result.stdout.count("Not run: tabicl, ") == 1 and "TabICL checkpoint not found" in result.stdout
    assert "6 runs of OSCBO, SCGP on Levy 5D in paper-only (compute (left out by the test))" in html

    summary = html.split('<section id="summary">')[1].split("</section>")[0]
    _, owners = study_jobs_of(tiny_config)
    for experiment_name, experiment in tiny_config["experiments"].items():
        rows = experiment["budget"] + experiment["n_init"]
        for task in experiment["tasks"]:
            for method in [spec.label for spec in study_config.method_specs(experiment)]:
                owner = owners[(experiment_name, task, method, "0-1")]
                folder = root / "results" / "runs" / owner[0] / task / owner[2]
                if owner[0] != experiment_name:  # a run another experiment holds: not run twice
                    assert not (root / "results" / "runs" / experiment_name / task / method).exists()
                    continue
                manifest = json.loads((folder / "seeds0-1.json").read_text())
                if method == "tabicl":  # no checkpoint in the copy: not run, and said so
                    assert manifest["status"] == "not run" and manifest["records"] == []
                    assert "TabICL checkpoint not found" in manifest["reason"]
                    assert "<td>TabICLv2</td>" in summary and "jingang/TabICL" in summary
                    continue
                assert manifest["records"] == ["seed0.parquet", "seed1.parquet"]
                for seed in range(experiment["seeds"]):
                    record = records.record_path(folder, seed)
                    table = pd.read_parquet(record)
                    assert len(table) == rows, record
                    assert set(table["task"]) == {task} and set(table["method"]) == {method}
                    assert set(table["seed"]) == {seed}
                    assert table["step"].tolist() == list(range(rows))
                    sidecar = json.loads(records.sidecar_path(record).read_text())
                    assert sidecar["status"] == "complete" and sidecar["seed"] == seed
                    assert sidecar["budget"] == experiment["budget"]

    # The claims tables: a verdict under the default reading and under each of the config's, the
    # paper's open choices (OSCBO's lambda0) in the first grid, a baseline's settings and one claim's
    # words in the folded second.
    claims_html = html.split('<section id="claims">')[1].split("</section>")[0]
    first, second = (part.split("</thead>")[0] for part in claims_html.split("<thead>")[1:3])
    kept = ["default", "lambda0=0.433", "scgp-conditioning=regression", "scgp-multiplier=two-sided"]
    assert list(tiny_config["readings"]) == kept[1:]
    assert first.endswith("".join(f"<th>{name}</th>" for name in kept[:2]) + "</tr>"), first
    shown = [*kept[2:], "scgp-calibration-only", "fig1c-seven-task-average"]  # the last two: readings of claims' words
    assert second.endswith("".join(f"<th>{name}</th>" for name in shown) + "</tr>"), second
    assert "verdict changes with the reading" in claims_html or "No claim&#39;s verdict changes" in claims_html


def test_a_run_two_experiments_ask_for_runs_once_and_counts_in_both(
    tiny_study: Built, tiny_config: dict[str, Any]
) -> None:
    """The tiny dual experiment asks for three of main's runs on hartmann3 (OSCBO at lambda_0 = 1
    and 0.433 with the default omega, and GP-UCB-MLL: same method, settings, task, seeds, budget
    and design): they run once, in main's pack, the terminal says so, and dual's tables hold them
    under dual's labels, value for value main's."""
    root = tiny_study.root
    assert tiny_study.result.returncode == 0, "the study run failed (see the first test)"
    shared = {
        "oscbo-lambda0=1-omega=0.001": "oscbo",
        "oscbo-lambda0=0.433-omega=0.001": "oscbo-lambda0=0.433",
        "gp-ucb-mll": "gp-ucb-mll",
    }
    _, owners = study_jobs_of(tiny_config)
    asked = {key[2]: owner for key, owner in owners.items() if key[0] == "dual" and owner != key}
    assert asked == {label: ("main", "hartmann3", held, "0-1") for label, held in shared.items()}
    assert (
        "Shared runs: 6 runs the experiments ask for are the same run as an earlier experiment's"
        in (tiny_study.result.stdout)
        and "6 of dual's are main's" in tiny_study.result.stdout
    )
    dual_pack = json.loads((root / "results" / "runs" / "dual" / "hartmann3" / "pack-seeds0-1.json").read_text())
    assert {Path(name).parent.name for name in dual_pack["jobs"]}.isdisjoint(shared)
    final = pd.read_parquet(root / "results" / "summary" / "final.parquet")
    for label, held in shared.items():
        in_dual = final[(final["experiment"] == "dual") & (final["method"] == label)]
        in_main = final[(final["experiment"] == "main") & (final["task"] == "hartmann3") & (final["method"] == held)]
        assert len(in_dual) == 2
        values = [c for c in final.columns if c not in ("experiment", "method") and final[c].dtype.kind == "f"]
        pd.testing.assert_frame_equal(
            in_dual.sort_values("seed")[values].reset_index(drop=True),
            in_main.sort_values("seed")[values].reset_index(drop=True),
        )


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_the_report_answers_in_its_first_screen(tiny_study: Built, tmp_path: Path) -> None:
    """The tiny study's report (the quick study's sections, smaller) in Chromium at 1400 x 900: in
    the first screen, that it is a demonstration (linked to the reference), the one-sentence answer
    naming λ₀, the table of claims; every figure drawn under an id; no error; the page within 25
    screens."""
    assert tiny_study.result.returncode == 0, "the study run failed (see the first test)"
    page = tiny_study.root / "report" / "index.html"
    seen = open_in_chromium(page, tmp_path, width=1400, height=900)
    assert seen["broken"] == 0 and seen["errors"] == 0 and "Uncaught" not in seen["log"], seen["probe"]
    assert seen["demo"][1] <= seen["lead"][0] < seen["lead"][1] <= seen["answer"][0] < seen["height"], seen["probe"]
    html = page.read_text(encoding="utf-8")
    lead = re.search(r'<p class="lead">(.*?)</p>', html, re.S).group(1)
    assert "λ₀" in lead and "reference/report.html" in html.split('<p class="lead">')[0]
    assert seen["figures"] == html.count("<figure id=") > 0
    assert seen["page"] <= 25 * seen["height"], seen["probe"]


def test_a_study_built_in_parts_equals_one_built_from_all_records_at_once(
    tiny_study: Built, tiny_config: dict[str, Any], tmp_path: Path
) -> None:
    root, part, result = tiny_study.root, tiny_study.part, tiny_study.result
    assert part.returncode == 0, part.stdout[-5000:]
    assert result.returncode == 0, "the study run failed (see the first test)"
    first, rest = scheduled_jobs(part.stdout), scheduled_jobs(result.stdout)
    assert {w.get("experiment") for rule, w in first if rule.startswith("run_")} == {"main"}
    assert {rule for rule, _ in first} <= {"run_bo", "run_pack", "prepare_table", "experiment"}
    assert "main" not in {w.get("experiment") for rule, w in rest if rule.startswith("run_")}
    assert tiny_study.kept and all(path.stat().st_mtime_ns == mtime for path, mtime in tiny_study.kept.items())

    # The same tables from every record at once, in this process, each read for every job asking for it.
    runs = root / "results" / "runs"
    found, owners = study_jobs_of(tiny_config)
    asked, not_run = {}, []
    for key, owner in owners.items():
        manifest = json.loads((runs / owner[0] / owner[1] / found[owner].manifest_name).read_text())
        if manifest["status"] == "not run":
            not_run.append({**manifest, "experiment": key[0], "method": key[2]})
        for name in manifest["records"]:
            asked.setdefault(runs / owner[0] / owner[1] / owner[2] / name, []).append((key[0], key[2]))
    assert sorted(asked) == sorted(runs.glob("*/*/*/seed*.parquet"))  # every record, once
    aggregate(
        list(asked),
        tmp_path / "summary",
        not_run + study_config.not_run(tiny_config),
        readings=readings.from_config(tiny_config),
        asked=asked,
    )
    assert_same_tables(root / "results" / "summary", tmp_path / "summary")


def without_config_hash(svg: str) -> str:
    """A figure's SVG with the config hash of its footer (oscbo.figures.draw.footer) left out."""
    return re.sub(r">config [0-9a-f]+ · ", ">config · ", svg)


def test_a_published_study_renders_its_report_from_its_tables_alone(tiny_study: Built, tmp_path: Path) -> None:
    """`oscbo publish` copies the tables and config (as reference/ holds them); with an overlay
    naming them as `summaries`, the workflow renders the report with the runs out of reach."""
    assert tiny_study.result.returncode == 0, "the study run failed (see the first test)"
    root = tiny_study.copy(tmp_path / "study")
    assert (
        cli.main(
            ["publish", str(root / "config" / "tiny.yaml"), str(root / "results" / "summary"), str(root / "published")]
        )
        == 0
    )
    assert sorted(path.stem for path in (root / "published" / "summary").iterdir()) == sorted(PUBLISHED)
    overlay = {"summaries": "published/summary", "results": "render", "report": "published/report.html"}
    (root / "published" / "render.yaml").write_text(yaml.safe_dump(overlay))
    render = ["--cores", "1", "--configfile", "published/config.yaml", "published/render.yaml"]
    (root / "results").rename(root / "away")  # no run, record or summary of the study's own
    try:
        rendered = snakemake(root, *render)
        again = snakemake(root, "-n", *render)
        first = (root / "published" / "report.html").read_bytes()
        redone = snakemake(root, "--forcerun", "report", *render)
    finally:
        (root / "away").rename(root / "results")
    assert rendered.returncode == 0, rendered.stdout[-5000:]
    assert sorted(rule for rule, _ in scheduled_jobs(rendered.stdout)) == ["all", "figures", "findings", "report"]
    assert NOTHING_TO_DO in again.stdout
    # A re-render of unchanged tables writes the same bytes: re-publishing adds to git only what
    # changed. The figures drawn from the published tables are the study's own, byte for byte but
    # the config's hash in their footers (the overlay is part of the config); the page drawn
    # again from them is the same page.
    drawn = sorted((root / "results" / "figures").glob("*.svg"))
    assert [path.name for path in drawn] == sorted(path.name for path in (root / "render" / "figures").glob("*.svg"))
    for path in drawn:
        redrawn = (root / "render" / "figures" / path.name).read_text(encoding="utf-8")
        assert without_config_hash(redrawn) == without_config_hash(path.read_text(encoding="utf-8")), path.name
    assert redone.returncode == 0 and (root / "published" / "report.html").read_bytes() == first
    page, original = (
        (root / path).read_text(encoding="utf-8") for path in ("published/report.html", "report/index.html")
    )
    keys = ["answer", *SECTIONS]
    assert sections(page, keys=keys) == sections(original, keys=keys)


def dry_run(root: Path) -> str:
    result = snakemake(root, "-n", "--configfile", "config/tiny.yaml")
    assert result.returncode == 0, result.stdout[-5000:]
    return result.stdout


def bo_jobs(jobs: list[tuple[str, dict[str, str]]]) -> set[tuple]:
    return {
        (rule, w["experiment"], w["task"], *([w["method"]] if rule == "run_bo" else []))
        for rule, w in jobs
        if rule in ("run_bo", "run_pack")
    }


def test_snakemake_reruns_what_the_code_digest_says(
    tiny_study: Built, tiny_config: dict[str, Any], tmp_path: Path
) -> None:
    """On the real DAG of the finished study, in a copy of its own, four edits at once: a change of
    what GP-UCB-MLL's module computes, prose mended in the engine's loop and a model module, a new
    method and its registry entry, a source touched with its content unchanged. The dry run lists
    exactly the BO jobs whose code digest the first changed (GP-UCB-MLL's, and OCBO's, its subclass)
    and what follows them: prose is no code, a new method is no job that exists, and a newer
    modification time alone re-runs nothing (Snakemake compares the checksums it recorded). Which
    jobs each edit's digest changes: tests/study/test_reruns.py. Then main's hartmann3 pack runs,
    and inside it only those two methods write new manifests: every other method's finished runs
    are kept."""
    assert tiny_study.result.returncode == 0, "the study run failed (see the first test)"
    root = tiny_study.copy(tmp_path / "study")
    package = root / "src" / "oscbo"
    edited = package / "methods" / "gp_ucb_mll.py"
    edited.write_text(edited.read_text() + CODE_EDIT)
    for path in (package / "run" / "loop.py", package / "model" / "kernel.py"):
        path.write_text(reworded(path.read_text()))
    registry = package / "methods" / "__init__.py"
    (package / "methods" / "fixed_lengthscale.py").write_text(
        '"""GP-UCB at theta_0 throughout."""\n\nfrom oscbo.methods.base import Method\n\n\n'
        'class FixedLengthscale(Method):\n    name = "fixed-lengthscale"\n'
    )
    entry = '        "fixed-lengthscale": Entry("oscbo.methods.fixed_lengthscale:FixedLengthscale"),\n'
    marker = '        "gp-ucb-mll": Entry('
    assert marker in registry.read_text()
    registry.write_text(registry.read_text().replace(marker, entry + marker, 1))
    os.utime(package / "model" / "posterior.py")

    output = dry_run(root)
    jobs = scheduled_jobs(output)
    assert bo_jobs(jobs) == expected_jobs(tiny_config, EDITS["methods/gp_ucb_mll.py"])
    # what follows the BO jobs, and the rules that list an edited file among their inputs (prose is
    # content: their inputs' checksums changed)
    edits = ["methods/gp_ucb_mll.py", "run/loop.py", "model/kernel.py", "methods/__init__.py"]
    listing = rules_listing({imports.SOURCE_ROOT / name for name in edits})
    assert {rule for rule, _ in jobs} - {"run_bo", "run_pack"} == DOWNSTREAM | listing
    labels = re.search(r"Packs: \d+ of \d+ will run; [^:]*: (.*?)\.(?:;|$)", output, flags=re.M)
    assert labels, output[-3000:]
    ran = {part.rsplit(" ", 2)[0] for part in labels.group(1).split(", ")}
    assert ran == packed_labels(tiny_config, EDITS["methods/gp_ucb_mll.py"])

    pack = root / "results" / "runs" / "main" / "hartmann3"
    main = {**tiny_config, "experiments": {"main": tiny_config["experiments"]["main"]}}
    assert main["experiments"]["main"]["pack_methods"] and "hartmann3" in main["experiments"]["main"]["tasks"]
    manifests = {
        path: path.stat().st_mtime_ns
        for path in pack.glob("*/seeds*.json")
        if json.loads(path.read_text())["status"] == "complete"
    }  # a 'not run' is tried again
    target = str((pack / "pack-seeds0-1.json").relative_to(root))
    rerun = snakemake(root, "--cores", "2", target, "--configfile", "config/tiny.yaml")
    assert rerun.returncode == 0, rerun.stdout[-5000:]
    assert {w["task"] for rule, w in scheduled_jobs(rerun.stdout) if rule == "run_pack"} == {"hartmann3"}
    rewritten = {path.parent.name for path, mtime in manifests.items() if path.stat().st_mtime_ns != mtime}
    assert rewritten == packed_labels(main, EDITS["methods/gp_ucb_mll.py"])


def test_a_test_that_leaves_the_built_study_changed_fails(tiny_study: Built, tmp_path: Path) -> None:
    """The guard after every test of the built study (tests/workflow/conftest.py) fails on a source
    left edited and on a result rewritten, naming the file: no test can leave an edit behind for
    the next (shown on a copy, whose sources and results are the built study's)."""
    root = tiny_study.copy(tmp_path / "study")
    copy = dataclasses.replace(tiny_study, root=root, as_built=fingerprint(root))
    assert_left_as_built(copy, "this test")
    source = root / "src" / "oscbo" / "methods" / "gp_ucb_mll.py"
    source.write_text(source.read_text() + CODE_EDIT)
    with pytest.raises(AssertionError, match="gp_ucb_mll.py"):
        assert_left_as_built(dataclasses.replace(copy, as_built=fingerprint(root)), "this test")
    source.write_bytes((REPO / "src" / "oscbo" / "methods" / "gp_ucb_mll.py").read_bytes())
    assert_left_as_built(dataclasses.replace(copy, as_built=fingerprint(root)), "this test")
    summary = root / "results" / "summary" / "final.parquet"
    summary.unlink()  # a rewrite: a new file in its place (the hard link to the built study's is gone)
    summary.write_bytes((tiny_study.root / "results" / "summary" / "final.parquet").read_bytes())
    with pytest.raises(AssertionError, match="final.parquet"):
        assert_left_as_built(copy, "this test")


#: The experiment a fresh clone runs itself in the store's test (one pack of two methods on one
#: task: the cheapest); every other experiment is restored from the store.
LEFT_TO_RUN = "logei"


def test_a_store_resumes_the_study_in_a_fresh_clone(
    tiny_study: Built, tiny_config: dict[str, Any], tmp_path: Path
) -> None:
    """The finished study saved into a store in two parts, 'main' and every other experiment but
    logei; a fresh copy of the repository, with no results and no Snakemake metadata, restores
    both: its dry run schedules the jobs of logei and of no other experiment, and once logei has
    run, its summary tables equal the first study's value for value (wall-clock times aside)."""
    root = tiny_study.root
    assert tiny_study.result.returncode == 0, "the study run failed (see the first test)"
    code = store.run_code(tiny_config)
    rest = [name for name in tiny_config["experiments"] if name not in ("main", LEFT_TO_RUN)]
    saved = [
        store.save(root / "results", tmp_path / "store", "main", ["main"], code),
        store.save(root / "results", tmp_path / "store", "rest", rest, code),
    ]
    assert saved[0].files == (tmp_path / "store" / "main.records.parquet", tmp_path / "store" / "main.files.parquet")
    fresh = copy_workflow(tmp_path / "fresh")
    (fresh / "config" / "tiny.yaml").write_text(yaml.safe_dump(tiny_config, sort_keys=False))
    assert store.restore(tmp_path / "store", fresh / "results") > sum(part.records for part in saved)
    scheduled = {(rule, w["experiment"]) for rule, w in scheduled_jobs(dry_run(fresh)) if rule.startswith("run_")}
    assert {experiment for _, experiment in scheduled} == {LEFT_TO_RUN}, scheduled
    tables = str(table_path(Path("results") / "summary", "final"))  # the aggregate step's
    result = snakemake(fresh, "--cores", "2", tables, "--configfile", "config/tiny.yaml")
    assert result.returncode == 0, result.stdout[-5000:]
    ran = {(rule, w["experiment"]) for rule, w in scheduled_jobs(result.stdout) if rule.startswith("run_")}
    assert ran == scheduled, ran  # the BO jobs the dry run listed, no more and no fewer
    assert_same_tables(fresh / "results" / "summary", root / "results" / "summary", roots=(fresh, root))
