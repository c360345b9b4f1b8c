"""Figures and the HTML report, drawn from a small hand-built study."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_aggregate import run_table, write_run, write_study

from oscbo import aggregate, claims, figures, report

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


KINDS = [
    "simple-regret",
    "final-distribution",
    "cumulative-regret",
    "rank",
    "lengthscale",
    "diagnostics",
    "sharpness-calibration",
    "wallclock",
]


def test_every_figure_is_a_non_empty_png_with_its_description(study: dict[str, Any]) -> None:
    described = study["figures"]
    assert [item["id"] for item in described] == [f"exp-{kind}" for kind in KINDS] + ["study-mean-rank"]
    assert figures.figure_ids(["exp"]) == [item["id"] for item in described]
    for item in described:
        data = Path(item["path"]).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000
        assert item["experiment"] == (None if item["id"].startswith("study-") else "exp")
        assert item["title"] and item["caption"]
        assert item["sources"] and all(Path(source).is_file() for source in item["sources"])
    sources = {item["id"]: [Path(source).name for source in item["sources"]] for item in described}
    assert sources["exp-final-distribution"] == ["final.parquet", "ranks.parquet"]
    assert sources["study-mean-rank"] == ["mean_ranks.parquet"]


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


def test_single_seed_single_task_study_draws_without_bands(tmp_path: Path) -> None:
    paths = write_study(tmp_path / "runs", tasks=("t1",), seeds=(0,))
    aggregate.aggregate(paths, tmp_path / "summary")
    described = figures.make_figures(tmp_path / "summary", tmp_path / "figures", PROVENANCE)
    assert [item["id"] for item in described] == [f"exp-{kind}" for kind in KINDS] + ["study-mean-rank"]
    assert all(Path(item["path"]).read_bytes().startswith(PNG_MAGIC) for item in described)
    assert "A single seed" in described[0]["caption"]
    assert "(1 seed)" in described[1]["caption"]


def test_timing_gets_the_wallclock_figure_and_no_rank_panel(tmp_path: Path) -> None:
    """With a 'timing' experiment, Fig. S4 is drawn for it alone; the mean-rank figure has a
    panel per other experiment plus OSCBO vs OSCBO-L1."""
    paths = write_study(tmp_path / "runs", tasks=("t1",), methods=("oscbo", "oscbo-l1"), seeds=(0,), experiment="main")
    paths += write_study(tmp_path / "runs", tasks=("t1", "t2"), methods=("oscbo", "gp-ucb-mll"), experiment="timing")
    aggregate.aggregate(paths, tmp_path / "summary")
    drawn = figures.make_figures(tmp_path / "summary", tmp_path / "figures", PROVENANCE)
    described = {item["id"]: item for item in drawn}
    assert list(described) == figures.figure_ids(["timing", "main"])  # main's figures first
    assert "timing-wallclock" in described and "main-wallclock" not in described
    assert "main-sharpness-calibration" in described and "timing-sharpness-calibration" in described
    caption = described["study-mean-rank"]["caption"]
    assert "Not drawn: timing" in caption and "Last panel: oscbo vs oscbo-l1 in 'main'" in caption
    assert Path(described["study-mean-rank"]["path"]).read_bytes().startswith(PNG_MAGIC)


def test_report_has_every_section_and_embeds_every_figure(study: dict[str, Any]) -> None:
    page = study["html"]
    for section_id in ["summary", "claims", "final-regret", "statistics", "protocol", "provenance"]:
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


def test_report_lists_every_claim_with_a_coloured_verdict(study: dict[str, Any]) -> None:
    section = study["html"].split('<section id="claims">')[1].split("</section>")[0]
    for claim in claims.CLAIMS:
        assert f"<td>{claim.id}</td>" in section
    # The test study has no 'main', 'ard', ... experiment: nothing can be evaluated.
    assert section.count('<td class="not-evaluated"><strong>not evaluated</strong></td>') == len(claims.CLAIMS)
    assert f"0 held, 0 not held, {len(claims.CLAIMS)} not evaluated" in section


def test_claims_section_shows_computed_verdicts(tmp_path: Path) -> None:
    paths = write_study(tmp_path / "runs", tasks=("t1", "t2"), methods=("oscbo", "gp-ucb-mll"), experiment="main")
    aggregate.aggregate(paths, tmp_path / "summary")
    page = report.render_report(tmp_path / "summary", [], CONFIG, PROVENANCE, PROTOCOL, tmp_path / "r.html")
    section = page.read_text().split('<section id="claims">')[1].split("</section>")[0]
    # Both methods have identical records: OSCBO ties GP-UCB-MLL for the best mean rank.
    expected = claims.evaluate(aggregate.load(tmp_path / "summary", claims.TABLES)).set_index("id")
    assert expected.loc["main-strongest", "verdict"] == "held"
    assert '<td class="held"><strong>held</strong></td>' in section
    assert "oscbo 1.50 ± 0.00 (place 1/2)" in section
