"""Figures and the HTML report, drawn from a small hand-built study."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_aggregate import run_table, write_run, write_study

from oscbo import aggregate, figures, report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HOSTILE = "<script>alert('x')</script>"
PROVENANCE = {
    "date": "2025-01-01T00:00:00+00:00",
    "git_commit": "abc1234",
    "config_hash": "0123456789ab",
    "versions": {"oscbo": "0.1.0", "numpy": np.__version__},
    "hardware": {"machine": "x86_64", "cuda": False},
}
CONFIG = {
    "results": "results",
    "experiments": {"exp": {"description": "a test study", "seeds": 2, "n_init": 3, "budget": 6}},
}
PROTOCOL = [
    {"setting": "budget", "value": "6", "paper": "100", "note": "shrunk for the test"},
    {"setting": "score", "value": "UCB", "paper": "UCB", "note": ""},
]


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """2 tasks x 2 methods x 2 seeds; one label is hostile HTML. A third method has one seed,
    on one task, that reaches zero regret."""
    root = tmp_path_factory.mktemp("study")
    paths = write_study(root / "runs", methods=("oscbo", HOSTILE))
    regret = [1, 1, 1, 0.5, 0.1, 0, 0, 0, 0]
    zero = run_table("exp", "t1", "gp-ucb-mll", 7, n_init=3, n_bo=6, simple_regret=regret)
    paths.append(write_run(root / "runs", zero))
    aggregate.aggregate(paths, root / "summary")
    described = figures.make_figures(root / "summary", root / "figures", PROVENANCE)
    out_html = root / "report" / "index.html"
    out = report.render_report(root / "summary", described, CONFIG, PROVENANCE, PROTOCOL, out_html)
    return {"root": root, "figures": described, "html": out.read_text(encoding="utf-8")}


def test_every_figure_is_a_non_empty_png_with_its_description(study: dict[str, Any]) -> None:
    described = study["figures"]
    kinds = ["simple-regret", "cumulative-regret", "rank", "lengthscale", "diagnostics", "wallclock"]
    assert [item["id"] for item in described] == [f"exp-{kind}" for kind in kinds]
    for item in described:
        data = Path(item["path"]).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000
        assert item["experiment"] == "exp"
        assert item["title"] and item["caption"]
        assert item["sources"] and all(Path(source).is_file() for source in item["sources"])


def test_captions_say_how_values_are_drawn(study: dict[str, Any]) -> None:
    captions = {item["id"]: item["caption"] for item in study["figures"]}
    assert "means below 1e-12" in captions["exp-simple-regret"]  # the zero-regret run
    assert "Mean ± standard error over 1–2 seeds" in captions["exp-simple-regret"]
    assert "1e-12" not in captions["exp-cumulative-regret"]


def test_method_colours_are_stable_and_fixed_for_the_main_methods() -> None:
    few = figures.method_colors(["oscbo", "b", "a"])
    many = figures.method_colors(["a", "b", "gp-ucb-mll", "oscbo", "z"])
    assert few["oscbo"] == many["oscbo"] == figures.FIXED_COLORS["oscbo"]
    assert few["a"] == many["a"] and few["b"] == many["b"]
    assert len(set(many.values())) == len(many)


def test_single_seed_study_draws_without_bands(tmp_path: Path) -> None:
    paths = write_study(tmp_path / "runs", tasks=("t1",), seeds=(0,))
    aggregate.aggregate(paths, tmp_path / "summary")
    described = figures.make_figures(tmp_path / "summary", tmp_path / "figures", PROVENANCE)
    assert all(Path(item["path"]).stat().st_size > 0 for item in described)
    assert "A single seed" in described[0]["caption"]


def test_report_has_every_section_and_embeds_every_figure(study: dict[str, Any]) -> None:
    page = study["html"]
    for section_id in ["summary", "final-regret", "statistics", "protocol", "provenance"]:
        assert f'<section id="{section_id}">' in page
    for item in study["figures"]:
        assert f'<section id="{item["id"]}">' in page
    assert page.count('src="data:image/png;base64,') == len(study["figures"])
    assert "curves.parquet" in page and "ranks.parquet" in page
    assert "<link" not in page and "http" not in page.replace("http-equiv", "")


def test_report_escapes_labels(study: dict[str, Any]) -> None:
    page = study["html"]
    assert HOSTILE not in page
    assert "<script" not in page
    assert "&lt;script&gt;alert(" in page


def test_report_tables_show_the_numbers(study: dict[str, Any]) -> None:
    page = study["html"]
    assert "shrunk for the test" in page  # protocol rows
    assert "0123456789ab" in page and "abc1234" in page  # provenance
    assert "budget: 6" in page  # the resolved config, as YAML
    ranks = aggregate.load(study["root"] / "summary", ["ranks"])["ranks"]
    best = ranks[(ranks["task"] == "t1") & (ranks["rank_simple"] == 1)].iloc[0]
    shown = report.mean_se(best["simple_regret_mean"], best["simple_regret_se"])
    assert f"<strong>{shown}</strong>" in page


def test_duplicate_section_ids_are_refused(study: dict[str, Any], tmp_path: Path) -> None:
    clash = [{**study["figures"][0], "id": "summary"}]
    with pytest.raises(ValueError, match="summary"):
        report.render_report(study["root"] / "summary", clash, CONFIG, PROVENANCE, PROTOCOL, tmp_path / "r.html")


def test_summary_flags_counts_that_differ_from_the_config(study: dict[str, Any]) -> None:
    summary = study["html"].split('<section id="summary">')[1].split("</section>")[0]
    assert "<td>a test study</td><td>t1, t2</td>" in summary
    assert "<td>3</td><td>6</td>" in summary  # initial design and BO rounds as configured
    assert "<strong>1–2 (config: 2)</strong>" in summary  # gp-ucb-mll ran one seed
    assert "<dt>results</dt><dd>results</dd>" in summary


def test_jobs_that_could_not_run_are_listed_with_their_reason(tmp_path: Path) -> None:
    paths = write_study(tmp_path / "runs", tasks=("t1",), seeds=(0,))
    missing = {"experiment": "exp", "task": "t1", "method": "tabicl", "seeds": [0, 1],
               "reason": "checkpoint data/checkpoints/x.ckpt is missing"}
    aggregate.aggregate(paths, tmp_path / "summary", [missing])
    assert aggregate.load(tmp_path / "summary", ["not_run"])["not_run"].to_dict("records") == [
        {**missing, "seeds": 2}
    ]
    page = report.render_report(tmp_path / "summary", [], CONFIG, PROVENANCE, PROTOCOL, tmp_path / "r.html")
    summary = page.read_text().split('<section id="summary">')[1].split("</section>")[0]
    assert "Not run" in summary and "<td>tabicl</td>" in summary and "x.ckpt is missing" in summary
