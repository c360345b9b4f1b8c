"""What several test modules need: hand-built records, and a study rendered end to end from them."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest

from oscbo import analysis as aggregate
from oscbo import findings, records, reproducibility
from oscbo.analysis import dual, ranks, statistics, summaries
from oscbo.analysis import readings as readings_
from oscbo.figures.draw import draw
from oscbo.report.render import render_report
from oscbo.study import protocol as study_protocol

#: Whether this CPU can run the pinned code path (oscbo.reproducibility), and if not why.
PINNED_PATH_SUPPORTED, _WHY_NOT_PINNED = reproducibility.cpu_supports_pinned_path()
#: Skips a test on a CPU that cannot run the pinned code path, saying why.
needs_pinned_path = pytest.mark.skipif(
    not PINNED_PATH_SUPPORTED, reason=f"this CPU cannot run the pinned path: {_WHY_NOT_PINNED}"
)
#: What oscbo sets on import (the pinned code path), and how other CPUs are simulated.
PATH_VARIABLES = (*reproducibility.pinned_environment(), reproducibility.OPT_OUT[0], "MKL_ENABLE_INSTRUCTIONS")


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without :data:`PATH_VARIABLES`, with ``extra``: a fresh process
    started with it imports oscbo as on a machine where nothing was set by hand."""
    return {**{k: v for k, v in os.environ.items() if k not in PATH_VARIABLES}, **extra}


#: The protocol rows a hand-built study's report shows.
PROTOCOL = [
    {"setting": "budget", "value": "6", "paper": "100", "kind": "departure", "note": "shrunk for the test"},
    {"setting": "score", "value": "UCB", "paper": "UCB", "kind": "as stated", "note": ""},
]


def run_table(
    experiment: str = "exp",
    task: str = "t1",
    method: str = "m1",
    seed: int = 0,
    n_init: int = 2,
    n_bo: int = 3,
    **columns: Any,
) -> pd.DataFrame:
    """A record of ``n_init + n_bo`` oracle calls; ``columns`` override the defaults."""
    n = n_init + n_bo
    step = np.arange(n)
    bo = np.arange(n) >= n_init

    def nan_init(values: Any) -> np.ndarray:
        """Diagnostics and fit times exist for BO rounds only."""
        return np.where(bo, values, np.nan)

    regret = 1.0 / (step + 1.0) / (seed + 1.0)
    table = {
        "experiment": experiment,
        "task": task,
        "method": method,
        "seed": seed,
        "step": step,
        "phase": np.where(bo, "bo", "init"),
        "x_0": np.linspace(0.0, 1.0, n),
        "y": -regret,
        "f": -regret,
        "best_f": -regret,
        "simple_regret": regret,
        "cumulative_regret": np.where(bo, np.cumsum(np.where(bo, regret, 0.0)), 0.0),
        "lengthscale_0": np.full(n, 0.5),
        "mu": nan_init(0.0),
        "sigma": nan_init(1.0),
        "halfwidth": nan_init(2.0),
        "covered": nan_init(1.0),
        "loss_sharpness": nan_init(0.1),
        "loss_sharpness_true": np.full(n, np.nan),  # a task without a true lengthscale
        "loss_calibration": nan_init(-0.5),
        "violation": nan_init(-0.5 * np.cumsum(bo)),
        "lambda": nan_init(1.0),
        "rm_phase": np.where(bo, "play", ""),
        "fit_seconds": nan_init(0.01),
        "acq_seconds": nan_init(0.02),
        "oracle_seconds": np.full(n, 0.001),
        "jitter_events": np.zeros(n, dtype=int),
    }
    table.update(columns)
    return pd.DataFrame(table)


def write_run(root: Path, table: pd.DataFrame, status: str = "complete") -> Path:
    """Write ``table`` as a record under ``root``; return the record's path."""
    run = table.iloc[0]
    # Numbered folders keep labels out of the file system (a label may hold any character).
    path = records.record_path(root / f"run{len(list(root.glob('run*')))}", int(run["seed"]))
    meta = {"status": status, "seed": int(run["seed"]), "experiment": run["experiment"], "method": run["method"]}
    records.write_record(path, table, meta)
    return path


def write_study(
    root: Path,
    tasks: tuple[str, ...] = ("t1", "t2"),
    methods: tuple[str, ...] = ("m1", "m2"),
    seeds: tuple[int, ...] = (0, 1),
    experiment: str = "exp",
) -> list[Path]:
    """A small study: every (task, method, seed); the second method has no ``lambda``."""
    paths = []
    for task in tasks:
        for index, method in enumerate(methods):
            for seed in seeds:
                extra = {"lambda": np.nan} if index == 1 else {}
                table = run_table(experiment, task, method, seed, n_init=3, n_bo=6, **extra)
                paths.append(write_run(root, table))
    return paths


def render(
    root: Path, paths: list[Path], config: dict[str, Any], not_run: list[dict] = (), protocol: list[dict] = PROTOCOL
) -> dict[str, Any]:
    """The analysis, figures and report of a study's records, as the workflow makes them, under
    ``root``: ``{"summary", "figures" (the manifest), "html", "html_path"}``."""
    aggregate.aggregate(paths, root / "summary", not_run, readings=readings_.from_config(config))
    study_protocol.write_table(protocol, aggregate.table_path(root / "summary", "protocol"))
    findings.write(root / "summary")
    manifest = draw(config, root / "summary", root / "figures", "0123456789ab")
    out = render_report(root / "summary", manifest, config, root / "report" / "index.html", "0123456789ab")
    return {"summary": root / "summary", "figures": manifest, "html": out.read_text(encoding="utf-8"), "html_path": out}


def experiment(
    tasks: list[str], methods: list[str], seeds: int = 2, budget: int = 6, n_init: int = 3, description: str = ""
) -> dict[str, Any]:
    """An experiment block as a validated config holds it."""
    return {
        "description": description,
        "tasks": list(tasks),
        "methods": list(methods),
        "seeds": seeds,
        "seeds_per_job": seeds,
        "budget": budget,
        "n_init": n_init,
        "settings": {},
    }


def synthetic_summaries(config: dict[str, Any], out_dir: Path, seeds: int = 20, resamples: int = 50) -> Path:
    """Summary tables shaped like a full study of ``config`` (every experiment, task and method
    label, ``seeds`` seeds, its budget), with made-up numbers, written to ``out_dir`` as the
    aggregate stage writes them; then the findings, on ``resamples`` seed resamples (made-up
    numbers' verdicts mean nothing: the protocol's 1,000 would only cost time). Fast: no record
    is written or read."""
    rng = np.random.default_rng(0)
    frames, finals, provenance = [], [], []
    unknown = {"lunar12"}
    for name, block in config["experiments"].items():
        labels = [entry if isinstance(entry, str) else entry["label"] for entry in block["methods"]]
        n_init, budget = block["n_init"], block["budget"]
        n = n_init + budget
        step = np.arange(n)
        bo = step >= n_init
        for task in block["tasks"]:
            for index, label in enumerate(labels):
                scale = 1.0 + 0.3 * index
                regret = scale * np.geomspace(5.0, 0.01 + 0.01 * index, n)
                metrics = {
                    "simple_regret": regret,
                    "cumulative_regret": np.where(bo, np.cumsum(np.where(bo, regret, 0)), 0),
                    "best_f": -regret,
                    "average_f": np.where(bo, -regret * 2, np.nan),
                    "wallclock": 0.05 * step,
                    "lengthscale": np.where(bo, 0.3 * scale, np.nan),
                    "coverage": np.where(bo, 0.85, np.nan),
                    "coverage_gap": np.where(bo, 0.05, np.nan),
                    "mean_halfwidth": np.where(bo, 1.5, np.nan),
                    "violation_positive": np.where(bo, np.maximum(0, np.cumsum(bo) - 60) / 10, np.nan),
                    "cumulative_sharpness": np.where(bo, np.cumsum(bo) * 0.2, np.nan),
                }
                if label.startswith("oscbo"):
                    metrics["lambda"] = np.where(bo, 1.0 - 0.0005 * np.cumsum(bo), np.nan)
                    metrics["lambda_relative"] = metrics["lambda"]
                for metric, values in metrics.items():
                    keep = np.isfinite(values)
                    rows = int(keep.sum())
                    frames.append(
                        {
                            "experiment": np.full(rows, name, dtype=object),
                            "task": np.full(rows, task, dtype=object),
                            "method": np.full(rows, label, dtype=object),
                            "step": step[keep],
                            "phase": np.where(bo, "bo", "init")[keep].astype(object),
                            "metric": np.full(rows, metric, dtype=object),
                            "mean": values[keep],
                            "se": 0.1 * np.abs(values[keep]),
                            "n": np.full(rows, seeds),
                        }
                    )
                for seed in range(seeds):
                    value = regret[-1] * rng.lognormal(0, 0.3)
                    finals.append(
                        {
                            "experiment": name,
                            "task": task,
                            "method": label,
                            "seed": seed,
                            "oracle_calls": n,
                            "n_init": n_init,
                            "bo_rounds": budget,
                            "best_f": -value,
                            "lengthscale": 0.3 * scale,
                            "simple_regret": value,
                            "cumulative_regret": 10 * value * scale,
                            "f_star_known": task not in unknown,
                            "wallclock": 0.05 * n,
                            "reachable_regret": np.nan,
                        }
                    )
                    provenance.append(
                        {
                            "experiment": name,
                            "task": task,
                            "method": label,
                            "seed": seed,
                            "git_commit": "abc123",
                            "versions": json.dumps({"torch": "2.13.0"}),
                            "device": "cpu",
                            "device_note": "",
                            "hardware": "a test machine",
                            "threads": 1,
                            "code_path": "pinned: MKL COMPATIBLE, torch AVX2, OpenBLAS Haswell, NumPy X86_V3",
                            "started": "2026-01-01T00:00:00+00:00",
                            "finished": "2026-01-01T01:00:00+00:00",
                        }
                    )
    # one array per column, not a concat of the frames: pandas' strings are Arrow arrays, and a
    # concat of 40,000 frames leaves 40,000 chunks that every later selection walks
    curves = pd.DataFrame({column: np.concatenate([frame[column] for frame in frames]) for column in frames[0]})
    final = pd.DataFrame(finals)
    study = readings_.from_config(config)
    ranked = ranks.reading_ranks(final, study)
    all_tasks = sorted({t for block in config["experiments"].values() for t in block["tasks"]})
    tables = {
        "curves": curves,
        "final": final,
        "ranks": ranked,
        "mean_ranks": ranks.per_reading(ranked, ranks.mean_ranks_table),
        "tracking": pd.concat(
            [ranks.tracking_table(readings_.apply(curves, r, study)).assign(reading=r.name) for r in study],
            ignore_index=True,
        )[ranks.TRACKING_COLUMNS],
        "tests": statistics.tests_table(final[final["experiment"] == "main"]),
        # none kept, as in a study published before they were: the claims resample the curves instead
        "trajectories": pd.DataFrame(columns=[*summaries.TRAJECTORY_KEYS, *ranks.TRACKED_METRICS]),
        "tasks": pd.DataFrame(
            {
                "task": all_tasks,
                "dim": 5,
                "optimal_value": [np.nan if t in unknown else 0.0 for t in all_tasks],
                "true_lengthscale": np.nan,
                "true_lengthscale_standardised": np.nan,
                "reachable_value": np.nan,
            }
        ),
        "readings": readings_.to_table(study),
        "lengthscales": final.assign(
            dimension=0, n=seeds, log10_mean=np.log10(final["lengthscale"]), log10_se=0.05
        ).drop_duplicates(["experiment", "task", "method"])[summaries.LENGTHSCALE_COLUMNS],
        "provenance": pd.DataFrame(provenance, columns=summaries.PROVENANCE_COLUMNS),
        "not_run": pd.DataFrame(columns=summaries.NOT_RUN_COLUMNS),
        "failed": pd.DataFrame(columns=summaries.FAILED_COLUMNS),
    }
    settings = dual.run_settings(
        [
            {
                "experiment": name,
                "method": label,
                "method_name": (entry if isinstance(entry, str) else entry["method"]),
                "settings": {
                    "lambda0": (entry["settings"].get("lambda0", 1.0) if isinstance(entry, dict) else 1.0),
                    "omega": (entry["settings"].get("omega", 0.001) if isinstance(entry, dict) else 0.001),
                    "calibration_power": 2,
                    "beta": 2.0,
                    "noise_var": 0.01,
                },
            }
            for name, block in config["experiments"].items()
            for entry in block["methods"]
            for label in [entry if isinstance(entry, str) else entry["label"]]
        ]
    )
    dual_ranked = (
        tables["ranks"]
        .query("reading == 'default' and experiment == 'dual'")
        .drop(columns=["reading", "label", "task_run"])
    )
    lambda_curves = curves[(curves["experiment"] == "dual") & (curves["metric"] == "lambda")]
    steps = lambda_curves.rename(columns={"metric": "_", "mean": "lambda"}).assign(seed=0)
    tables["dual"] = dual.dual_table(steps, final, dual_ranked, curves, settings)
    tables["dual_ranks"] = dual.dual_ranks_table(final, tables["dual"])
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        table.to_parquet(aggregate.table_path(out_dir, name), index=False)
    study_protocol.write_table(PROTOCOL, aggregate.table_path(out_dir, "protocol"))
    findings.write(out_dir, resamples)
    return out_dir


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Appended to a copy of a report (the report itself has no script): on ``load`` it records
#: JavaScript and console errors, whether every image decoded, and where the verdict and the
#: table of contents sit in the first screen, in a ``<pre id="probe">`` of the dumped DOM.
PROBE = """
<script>
window.__errors = [];
window.addEventListener("error", (event) => window.__errors.push("error: " + event.message));
const consoleError = console.error;
console.error = (...args) => { window.__errors.push("console: " + args.join(" ")); consoleError(...args); };
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const broken = images.filter((image) => !(image.complete && image.naturalWidth > 0)).length;
  const box = (selector) => { const e = document.querySelector(selector); if (!e) return "none";
    const r = e.getBoundingClientRect(); return `${Math.round(r.top)},${Math.round(r.bottom)}`; };
  const overflow = (selector) => { const e = document.querySelector(selector); const box = e && e.closest(".scroll");
    return box ? box.scrollWidth - box.clientWidth : 0; };  // what a reader must scroll sideways to see, px
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = `images=${images.length} broken=${broken} errors=${window.__errors.length} ` +
    `height=${window.innerHeight} page=${document.documentElement.scrollHeight} lead=${box("p.lead")} ` +
    `toc=${box("nav")} answer=${box("table.answer")} demo=${box("p.demo")} ` +
    `figures=${document.querySelectorAll("figure[id] svg").length} over=${overflow("table.answer")} ` +
    window.__errors.join(" | ");
  document.body.appendChild(probe);
});
</script>
"""


def open_in_chromium(page: Path, scratch: Path, width: int = 1280, height: int = 800) -> dict[str, Any]:
    """Load a copy of ``page`` with :data:`PROBE` in headless Chromium at ``width x height``:
    ``{"images", "broken", "errors", "height" (the window's), "page" (the page's, in px), "figures" (inline
    SVG under an id), "over" (how far the answer's table runs past its box, in px), "lead", "toc",
    "answer", "demo" (top and bottom in px, None if absent), "log", "probe"}``."""
    result = _dumped(page, scratch, PROBE, width, height)
    probe = re.search(r'<pre id="probe">(.*?)</pre>', result.stdout, re.S)
    assert probe, "the page never finished loading"
    fields = dict(re.findall(r"(\w+)=(\S+)", probe.group(1)))
    boxes = ("lead", "toc", "answer", "demo")
    box = {key: tuple(map(int, fields[key].split(","))) if fields[key] != "none" else None for key in boxes}
    return {
        "images": int(fields["images"]),
        "broken": int(fields["broken"]),
        "errors": int(fields["errors"]),
        "height": int(fields["height"]),
        "page": int(fields["page"]),
        "figures": int(fields["figures"]),
        "over": int(fields["over"]),
        **box,
        "log": result.stderr,
        "probe": probe.group(1),
    }


#: Appended to a copy of a report: on ``load`` it follows each link of the answer's table to a
#: claim, one navigation each (the fragment set, as a click sets it), and records where it landed:
#: ``link|target|shown`` per line, ``shown`` 1 where the target is rendered and open (no closed
#: <details> hides it, and it is none), lies in the window and holds the link's words.
FOLLOW = """
<script>
window.addEventListener("load", () => {
  const lines = [];
  for (const a of document.querySelectorAll("table.answer tr:not(.group) td > a[href^='#']")) {
    const id = a.getAttribute("href").slice(1);
    location.hash = id;
    const target = document.getElementById(id);
    let shown = 0;
    if (target) {
      const r = target.getBoundingClientRect();
      const closed = target.tagName === "DETAILS" && !target.open;  // its summary alone shows
      shown = !closed && target.checkVisibility() && r.height > 0 && r.top > -1 && r.top < window.innerHeight &&
        target.textContent.includes(a.textContent) ? 1 : 0;
    }
    lines.push(`${a.textContent}|${id}|${shown}`);
  }
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = lines.join("\\n");
  document.body.appendChild(probe);
});
</script>
"""


def follow_claim_links(page: Path, scratch: Path, width: int = 1440, height: int = 900) -> list[tuple[str, str, bool]]:
    """Each link of ``page``'s answer table to a claim, followed in headless Chromium (:data:`FOLLOW`):
    ``(its words, its target's id, whether the target shows them in the window)``."""
    result = _dumped(page, scratch, FOLLOW, width, height)
    probe = re.search(r'<pre id="probe">(.*?)</pre>', result.stdout, re.S)
    assert probe, "the page never finished loading"
    return [
        (words, id, shown == "1") for words, id, shown in (line.rsplit("|", 2) for line in probe.group(1).splitlines())
    ]


def _dumped(page: Path, scratch: Path, script: str, width: int, height: int) -> subprocess.CompletedProcess:
    """A copy of ``page`` with ``script`` before its end, loaded in headless Chromium at ``width x
    height``: its DOM once loaded (stdout)."""
    probed = scratch / f"probed-{page.name}"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8")
    result = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            f"--window-size={width},{height}",
            "--virtual-time-budget=20000",
            "--dump-dom",
            probed.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


# ----------------------------------------------------------------------------- comparing two builds of a study

#: Columns and curves that hold wall-clock times.
TIMED_COLUMNS = [*records.SECONDS_COLUMNS, "wallclock"]
#: Summary tables of where and when the runs ran, which two runs of one study need not share.
MACHINE_TABLES = {"provenance"}
#: Report sections computed from the records alone (no figure, no date).
SECTIONS = ["summary", "claims", "final-regret", "statistics", "protocol"]


def untimed(table: pd.DataFrame) -> pd.DataFrame:
    """A record or summary table without its wall-clock values, in a canonical row order."""
    table = table.drop(columns=[c for c in TIMED_COLUMNS if c in table.columns])
    if "metric" in table.columns:
        table = table[table["metric"] != "wallclock"]
    return table.sort_values(list(table.columns[:4])).reset_index(drop=True) if len(table) else table


def assert_same_tables(summary: Path, reference: Path, roots: tuple[Path, Path] | None = None) -> None:
    """Every summary table equal but for wall-clock times (and, between two copies of the
    workflow, the copy's folder in a not-run job's reason)."""
    for name in sorted(set(aggregate.TABLES) - MACHINE_TABLES):
        left, right = (aggregate.load(folder, [name])[name] for folder in (summary, reference))
        for root in roots or () if name == "not_run" else ():  # a restored job's reason names its first copy
            left["reason"] = left["reason"].str.replace(str(root), "ROOT")
            right["reason"] = right["reason"].str.replace(str(root), "ROOT")
        pd.testing.assert_frame_equal(untimed(left), untimed(right), check_exact=True, obj=name)


def sections(html: str, root: Path | None = None, keys: list[str] = SECTIONS) -> dict[str, str]:
    """A report's sections ``keys`` (default those computed from the records alone), by id."""
    html = html.replace(str(root), "ROOT") if root else html
    return {key: html.split(f'<section id="{key}">')[1].split("</section>")[0] for key in keys}


#: The benchmark scripts' folder (not a package: a script imports its siblings by name).
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def benchmark_module(name: str):
    """A module-scoped fixture named ``name``: ``benchmarks/<name>.py`` imported as its script
    runs, with ``benchmarks/`` first on ``sys.path`` while the test module's tests run."""

    @pytest.fixture(scope="module", name=name)
    def module() -> Iterator[ModuleType]:
        with pytest.MonkeyPatch.context() as patch:
            patch.syspath_prepend(str(BENCHMARKS))
            yield importlib.import_module(name)

    return module
