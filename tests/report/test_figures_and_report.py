"""Figures and the HTML report: the plan, the answer first, honest statistics, legible figures."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest
from helpers import experiment, render, run_table, synthetic_summaries, write_run, write_study
from markupsafe import escape

from oscbo import analysis as aggregate
from oscbo import figures, paper
from oscbo.analysis import readings
from oscbo.figures import colours, style
from oscbo.figures import draw as drawing
from oscbo.figures.draw import DRAWERS, draw
from oscbo.findings import catalogue
from oscbo.report import blocks, sections
from oscbo.report.outline import SECTIONS
from oscbo.report.render import render_report
from oscbo.study import config as study_config
from oscbo.study import protocol

HOSTILE = "<script>alert('x')</script>"
REPO = Path(__file__).resolve().parents[2]
METHODS = ["oscbo", "oscbo-l1", "gp-ucb-mll", HOSTILE]
CONFIG = {
    "results": "results",
    "readings": {},
    "experiments": {"main": experiment(["t1", "t2"], METHODS, description="a test study")},
}
#: The report's content width in CSS pixels (template: 1200 px less 2 x 1.5 rem of padding).
REPORT_WIDTH = 1152


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """'main': 2 tasks x 4 methods x 2 seeds, one label hostile HTML; and A-GP-UCB, one seed (7) on
    t1, which reaches zero regret."""
    root = tmp_path_factory.mktemp("study")
    paths = write_study(root / "runs", methods=tuple(METHODS), experiment="main")
    regret = [1, 1, 1, 0.5, 0.1, 0, 0, 0, 0]
    paths.append(
        write_run(root / "runs", run_table("main", "t1", "a-gp-ucb", 7, n_init=3, n_bo=6, simple_regret=regret))
    )
    not_run = [
        {
            "experiment": "main",
            "task": "t1",
            "method": "tabicl",
            "seeds": [0, 1],
            "reason": "checkpoint data/checkpoints/x.ckpt is missing",
        }
    ]
    # what a config's not_run entry leaves out (oscbo.study.config.not_run): 2 tasks x 2 methods
    not_run += [
        {
            "experiment": "timing",
            "task": task,
            "method": method,
            "seeds": list(range(10)),
            "reason": "compute: a study of its own",
        }
        for task in ("t1", "t2")
        for method in ("oscbo", "scgp")
    ]
    return {"root": root, **render(root, paths, CONFIG, not_run)}


def section(page: str, id: str) -> str:
    return page.split(f'<section id="{id}">')[1].split("</section>")[0]


def test_the_plan_follows_the_paper_and_leaves_out_what_carries_nothing() -> None:
    config = study_config.load(REPO / "config" / "config.yaml")
    planned, omitted = figures.plan(config)
    ids = [figure.id for figure in planned]
    sections = [figure.section for figure in planned]
    order = [id for id, _, _ in SECTIONS]
    assert sections == sorted(sections, key=order.index), "figures come in the paper's order"
    # Fig. 2 draws the paper's methods; the headline reading's curves (its stand-ins under their
    # methods' names) come beside them, folded in the report
    assert ids[:4] == ["fig2-curves", "fig2-curves-lambda0-0.433", "fig2-final-top3", "fig2-ranks"]
    stand_in_tasks = {task for reading in readings.from_config(config) for task in reading.tasks}
    assert stand_in_tasks == {"material5-max"}
    main_tasks = [task for task in config["experiments"]["main"]["tasks"] if task not in stand_in_tasks]
    assert [i for i in ids if i.startswith("figS3-")] == [f"figS3-{task}" for task in main_tasks]
    assert {"figS2-ard", "figS2-logei", "figS2-smoothness-nu0.5", "figS2-oscbo-vs-l1", "figS4-timing"} <= set(ids)
    assert not any(i.startswith(("figS2-timing", "figS2-dual", "figS2-main")) for i in ids)
    assert omitted == []
    # a small study: two methods, one task, no timing
    small = {"experiments": {"main": experiment(["t1"], ["oscbo", "gp-ucb-mll"])}}
    planned, omitted = figures.plan(small)
    assert [figure.id for figure in planned] == ["fig2-curves", "figS1-curves", "figS3-t1"]
    assert any("no top-3" in line for line in omitted) and any("one task" in line for line in omitted)
    assert any("Fig. S4" in line for line in omitted)


def test_every_figure_kind_has_a_drawer_and_every_drawer_a_figure() -> None:
    """The catalogue checks itself: the kinds the shipped studies plan are exactly the drawers."""
    kinds = {
        figure.kind
        for name in ("config", "quick", "reference")
        for figure in figures.plan(study_config.load(REPO / "config" / f"{name}.yaml"))[0]
    }
    assert kinds == set(DRAWERS)


def test_every_planned_figure_is_a_legible_svg_with_its_description(study: dict[str, Any]) -> None:
    manifest = study["figures"]
    assert manifest["figures"], "the study plans figures"
    for item in manifest["figures"]:
        svg = Path(item["path"]).read_text(encoding="utf-8")
        assert svg.startswith("<?xml") and "<svg" in svg
        assert item["title"] and item["caption"] and item["producer"].startswith("oscbo.figures.")
        assert all(Path(source).is_file() for source in item["sources"])
        assert smallest_font_px(svg) >= 9.0, item["id"]
        assert "font-size" in svg and "$" not in re.sub(r"<metadata>.*</metadata>", "", svg, flags=re.S)


def test_figures_drawn_in_several_processes_are_those_drawn_in_one(
    study: dict[str, Any], tmp_path: Path, processes
) -> None:
    """The workflow draws a figure per process: each SVG and its numbers the same bytes as drawn
    one after the other in this process, and the manifest in the plan's order."""
    one = study["figures"]
    many = draw(CONFIG, study["summary"], tmp_path, "0123456789ab", processes=3)
    assert [item["id"] for item in many["figures"]] == [item["id"] for item in one["figures"]]
    assert many["omitted"] == one["omitted"] and many["sections"] == one["sections"]
    for alone, pooled in zip(one["figures"], many["figures"]):
        for file in ("path", "numbers"):
            assert Path(pooled[file]).parent == tmp_path
            assert Path(pooled[file]).read_bytes() == Path(alone[file]).read_bytes(), (alone["id"], file)
        assert {key: value for key, value in pooled.items() if key not in ("path", "numbers")} == {
            key: value for key, value in alone.items() if key not in ("path", "numbers")
        }


def smallest_font_px(svg: str) -> float:
    """The smallest font of an SVG as the report displays it (CSS px), at its width or the
    report's, whichever is smaller."""
    width_pt = float(re.search(r'width="([\d.]+)pt"', svg).group(1))
    shown = min(width_pt * 4 / 3, REPORT_WIDTH)
    sizes = [float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg)]
    return min(sizes) * shown / width_pt


def test_the_report_opens_with_the_answer_and_a_table_of_contents(study: dict[str, Any]) -> None:
    """What the study is (2 seeds: a demonstration, linked to the reference), the one-sentence
    answer, one row per claim in plain words, then the contents; claim ids wait for the claims."""
    page = study["html"]
    ids = re.findall(r'<section id="([^"]+)">', page)
    assert ids[:3] == ["answer", "claims", "summary"]
    assert ids[-4:] == ["final-regret", "statistics", "protocol", "provenance"]
    answer = section(page, "answer")
    findings = aggregate.load(study["summary"], ["findings"])["findings"].set_index("id")["text"]
    demo = re.search(r'<p class="demo">(.*?)<a href="([^"]+)">', answer, re.S)
    assert demo and "A demonstration at 2 seeds" in demo.group(1)
    assert (Path(study["html_path"]).parent / demo.group(2)).resolve() == sections.REFERENCE_REPORT
    assert answer.index('class="demo"') < answer.index('class="lead"') < answer.index('class="answer"')
    assert answer.index('class="answer"') < answer.index("<nav>")
    assert answer.count('<p class="lead">') == 1 and escape(findings["answer"]) in answer
    assert len(catalogue.CLAIMS) > 20  # the loop below checks every claim, not none
    shown = re.sub(r"<[^>]*>", "", answer)  # what a reader sees: no claim ids
    for claim in catalogue.CLAIMS:
        # the link lands on the claim's words above the figures that are its evidence, else on its test
        target = f"evidence-{claim.id}" if f'id="evidence-{claim.id}"' in page else f"claim-{claim.id}"
        assert f'<td><a href="#{target}">{escape(claim.plain)}</a></td>' in answer and claim.id not in shown
        assert f'id="{target}"' in page and f'id="claim-{claim.id}"' in page
    # grouped by the paper's figure, in the paper's order, each group linked to a section that shows it
    rows = re.findall(
        r'<tr class="group"><td colspan="\d+">(?:<a href="(#[^"]*)">)?([^<]*)', answer.split('class="answer"')[1]
    )
    groups = [name for _, name in rows if name]
    assert len(groups) == len(set(groups)) > 1, groups  # one heading a figure, over its claims
    order = list(paper.FIGURES.values())
    assert groups == sorted(groups, key=lambda name: order.index(name) if name in order else len(order))
    assert {href for href, _ in rows if href} <= {f"#{id}" for id in ids}
    for id in ids[1:]:
        assert f'href="#{id}"' in answer
    assert "too few to confirm or refute" in findings["verdict"]  # 2 seeds, 6 rounds


def test_every_claim_names_the_paper_figure_it_tests_and_each_figure_lists_its_claims(study: dict[str, Any]) -> None:
    """paper.CLAIM_FIGURES and paper.EVIDENCE cover the catalogue, each claim's sections are report
    sections, and both ways link: a claim to the sections that show its evidence and to its test's
    code; a section, above its figures, to exactly the claims it is evidence for, with the paper's
    words and the verdict."""
    assert set(paper.CLAIM_FIGURES) == set(paper.EVIDENCE) == {claim.id for claim in catalogue.CLAIMS}
    outline = {id for id, _, _ in SECTIONS}
    assert all(sections and set(sections) <= outline for sections in paper.EVIDENCE.values())
    page = study["html"]
    claims = section(page, "claims")
    entry = claims.split('id="claim-main-strongest"')[1].split("</details>")[0]
    assert '<a href="#fig2">' in entry and "findings/catalogue.py" in entry
    fig2, figS1 = section(page, "fig2"), section(page, "figS1")
    head = fig2.split('class="tested"')[1].split("</table>")[0]
    assert fig2.index('class="tested"') < fig2.index("<figure")  # the claims first, then the figures
    assert '<td id="evidence-main-strongest"><a href="#claim-main-strongest">' in head
    assert "“OSCBO is consistently among the strongest methods" in head and "(7.1; Fig. 2 caption)" in head
    # exactly its claims: a cumulative-regret claim is Fig. S1's, a theory claim the known-truth section's
    assert "claim-main-l1-best-cumulative" not in fig2 and "claim-theory-sublinear-regret" not in fig2
    assert 'id="evidence-main-l1-best-cumulative"' in figS1
    # a claim shown in two sections is a link's target in the first alone
    assert 'href="#claim-main-robust-cumulative"' in fig2 and 'href="#claim-main-robust-cumulative"' in figS1
    assert page.count('id="evidence-main-robust-cumulative"') == 1 and 'id="evidence-main-robust' in fig2


def test_figures_are_inline_svg_with_links_to_their_code_tables_and_numbers(study: dict[str, Any]) -> None:
    """Each figure is markup in the page (its text searchable), under an id, with relative links
    that resolve: the function that drew it, the tables it read, its numbers as CSV."""
    page, folder = study["html"], Path(study["html_path"]).parent
    items = study["figures"]["figures"]
    assert page.count("<svg ") == len(items) and "<img" not in page  # a heatmap's pixels may sit inside its SVG
    for item in items:
        assert f'<figure id="figure-{item["id"]}">' in page and f'<h3 id="{item["id"]}">' in page
        links = re.search(rf'<figure id="figure-{re.escape(item["id"])}">.*?<p class="source">(.*?)</p>', page, re.S)
        hrefs = dict((label, href) for href, label in re.findall(r'<a href="([^"]+)">([^<]+)</a>', links.group(1)))
        module, function = item["producer"].rsplit(".", 1)
        code = (folder / hrefs[f"drawn by {item['producer']}"]).resolve()
        assert code == (REPO / "src" / Path(*module.split("."))).with_suffix(".py") and f"def {function}(" in (
            code.read_text()
        )
        assert {(folder / hrefs[f"from {Path(s).name}"]).resolve() for s in item["sources"]} == {
            Path(s).resolve() for s in item["sources"]
        }
        numbers = pd.read_csv(folder / hrefs["its numbers (CSV)"])
        assert len(numbers) and numbers.equals(pd.read_csv(item["numbers"]))
    curves = pd.read_csv(folder / "index-numbers" / "fig2-curves.csv")
    assert {"task", "method", "step", "mean", "se"} <= set(curves.columns)
    assert "<link" not in page and 'src="http' not in page and 'href="http' not in page


def test_captions_count_exact_zeros_instead_of_drawing_them_at_a_fixed_floor(study: dict[str, Any]) -> None:
    captions = {item["id"]: item["caption"] for item in study["figures"]["figures"]}
    assert "exactly zero" in captions["fig2-curves"] and "1e-12" not in captions["fig2-curves"]
    assert "1–2 seeds" in captions["fig2-curves"]  # a-gp-ucb's seed 7 ran on t1 only


def test_a_task_without_a_known_optimum_shows_the_best_reward_found(tmp_path: Path) -> None:
    paths = []
    for method in ("oscbo", "gp-ucb-mll"):
        for seed in (0, 1):
            best = np.maximum.accumulate(np.linspace(-50, 150 + 10 * seed, 9))
            paths.append(
                write_run(
                    tmp_path / "runs",
                    run_table(
                        "main",
                        "lunar12",
                        method,
                        seed,
                        n_init=3,
                        n_bo=6,
                        f=best,
                        best_f=best,
                        y=best,
                        simple_regret=np.full(9, np.nan),
                        cumulative_regret=np.full(9, np.nan),
                    ),
                )
            )
    config = {"readings": {}, "experiments": {"main": experiment(["lunar12"], ["oscbo", "gp-ucb-mll"])}}
    made = render(tmp_path, paths, config)
    caption = made["figures"]["figures"][0]["caption"]
    assert "show the best reward found instead, on a linear axis" in caption
    svg = Path(made["figures"]["figures"][0]["path"]).read_text()
    assert "best reward found (f* unknown)" in svg and "simple regret" not in svg


def test_regret_captions_say_what_is_averaged_what_an_ablation_changes_and_what_is_absent(
    study: dict[str, Any],
) -> None:
    """A regret figure's caption: the mean of the regret (not of its log), a band of one standard
    error, the methods not run (TabICLv2 here, with the reason); an ablation's, what it changes."""
    described = {item["id"]: item for item in study["figures"]["figures"]}
    caption = described["fig2-curves"]["caption"]
    assert "the mean of the regret, not of its logarithm" in caption and "one standard error of that mean" in caption
    assert "Not run here: TabICLv2 (checkpoint data/checkpoints/x.ckpt is missing)." in caption
    pair = described["figS2-oscbo-vs-l1"]["caption"]
    assert "Not run here" not in pair  # OSCBO against OSCBO-L1: TabICLv2 is none of its methods
    assert paper.ablation_change("smoothness-nu0.5") == (
        "every GP method's Matérn kernel at smoothness ν = 0.5 (the main experiment's: 5/2)"
    )
    assert "LogEI in place of UCB" in paper.ablation_change(paper.LOGEI) and paper.ablation_change("dual") == ""
    assert len({paper.ablation_change(name) for name in ("smoothness-nu0.5", "smoothness-nu1.5", "logei", "ard")}) == 4


def test_the_growth_figure_draws_each_quantity_per_round_against_the_round_on_log_spaced_rounds() -> None:
    """The theory's figure (known truth): R_t / t and Vₜ⁺ / t from the curves' seed means, t = 1 at
    the first BO round, the initial design left out, and the rounds evenly spaced in log t."""
    from oscbo.figures import curves as drawers
    from oscbo.figures.plan import Figure

    horizon, n_init = 300, 10
    t = np.arange(1, horizon + 1)
    frames = []
    for method, power in (("oscbo", 0.5), ("gp-ucb-true", 0.8)):
        quantities = {"cumulative_regret": 2.0 * t**power, "violation_positive": np.clip(t - 50.0, 0, None) ** power}
        for metric, values in quantities.items():
            for phase, steps, mean in (
                ("init", np.arange(n_init), np.full(n_init, 99.0)),
                ("bo", n_init + t - 1, values),
            ):
                frames.append(
                    pd.DataFrame(
                        {
                            "experiment": "known-truth",
                            "task": "gp2",
                            "method": method,
                            "metric": metric,
                            "phase": phase,
                            "step": steps,
                            "mean": mean,
                            "se": 0.1 * mean,
                            "n": 20,
                        }
                    )
                )
    style.PLOTTED.clear()
    fig, title, caption = drawers.growth_curves(
        {"curves": pd.concat(frames)},
        Figure("known-truth-growth", "growth_curves", "known-truth", "known-truth"),
        style.Styles(["oscbo", "gp-ucb-true"]),
    )
    drawn = pd.concat(style.PLOTTED)
    style.PLOTTED.clear()
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()] == [
        "GP sample 2D: R_t / t",
        "GP sample 2D: Vₜ⁺ / t",
    ]  # the paper's names
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in fig.axes if ax.get_visible())
    for (metric, method), line in drawn.groupby(["metric", "method"]):
        rounds = line["step"].to_numpy()
        assert rounds[0] == 1 and rounds[-1] == horizon and len(rounds) <= drawers.MAX_POINTS
        assert set(range(1, 11)) <= set(rounds)  # the first decade as densely as the last two
        power = 0.5 if method == "oscbo" else 0.8
        expected = (
            2.0 * rounds ** (power - 1)
            if metric == "cumulative_regret"
            else np.clip(rounds - 50.0, 0, None) ** power / rounds
        )
        np.testing.assert_allclose(line["mean"], expected, rtol=1e-12)
        np.testing.assert_allclose(line["se"], 0.1 * expected, rtol=1e-12)
    assert "exactly zero" in caption and "GP-UCB at the true kernel" in caption and "known-truth" in title


def test_a_figure_of_several_experiments_keeps_the_numbers_of_those_it_draws() -> None:
    """Fig. 3 top's CSV: the mean ranks of its experiments (main and the ablations), not the
    known-truth or dual rows the same table holds."""
    from oscbo.figures.draw import numbers_of
    from oscbo.figures.plan import Figure

    mean_ranks = pd.DataFrame({"experiment": ["main", "logei", "known-truth"], "rank_mean": [1.0, 2.0, 3.0]})
    figure = Figure("fig3-mean-rank", "mean_rank", "fig3-top", options={"experiments": ["main", "logei"]})
    style.PLOTTED.clear()
    numbers = numbers_of({"mean_ranks": mean_ranks}, figure, ("mean_ranks",))
    assert numbers["experiment"].tolist() == ["main", "logei"] and set(numbers["table"]) == {"mean_ranks"}


def test_statistics_only_where_the_seeds_can_reach_the_level(study: dict[str, Any], tmp_path: Path) -> None:
    assert "Too few seeds: with at most 2 paired seeds the smallest attainable p is 0.5" in section(
        study["html"], "statistics"
    )
    paths = []
    for seed in range(6):
        for method, regret in (("oscbo", 0.1), ("gp-ucb-mll", 0.5)):
            values = np.geomspace(1, regret * (1 + 0.1 * seed), 9)
            paths.append(
                write_run(
                    tmp_path / "runs", run_table("main", "t1", method, seed, n_init=3, n_bo=6, simple_regret=values)
                )
            )
    config = {"readings": {}, "experiments": {"main": experiment(["t1"], ["oscbo", "gp-ucb-mll"], seeds=6)}}
    shown = section(render(tmp_path, paths, config)["html"], "statistics")
    # six seeds, every difference of one sign: p = 2 / 2^6 = 0.03125 < 0.05, and one test per family
    assert "<td>6</td>" in shown and "<td><strong>0.0312</strong></td>" in shown
    assert "[–, –]" in shown  # no bootstrap interval below 10 pairs


def test_report_escapes_labels(study: dict[str, Any]) -> None:
    page = study["html"]
    assert HOSTILE not in page and "<script" not in page
    assert "&lt;script&gt;alert(" in page


def test_report_tables_show_the_numbers(study: dict[str, Any]) -> None:
    page = study["html"]
    assert "shrunk for the test" in page and "Departures (1): budget" in page  # the protocol
    assert "0123456789ab" in page  # the config hash
    assert "budget: 6" in page  # the resolved config, as YAML
    ranks = aggregate.load(study["summary"], ["ranks"])["ranks"]
    best = ranks[(ranks["task"] == "t1") & (ranks["rank_simple"] == 1)].iloc[0]
    assert f"<strong>{blocks.mean_se(best['simple_regret_mean'], best['simple_regret_se'])}</strong>" in page


def test_the_protocol_shows_the_baselines_cross_check_when_the_study_has_one(
    study: dict[str, Any], tmp_path: Path
) -> None:
    """Without a ``crosscheck`` table the protocol says how to add one; with the reference's (a
    real run of benchmarks/crosscheck.py) it shows its every row, numbers as the report formats them."""
    assert "crosscheck.py --table SUMMARY/crosscheck.parquet adds" in section(study["html"], "protocol")
    import shutil

    summary = shutil.copytree(study["summary"], tmp_path / "summary")
    checked = aggregate.load(REPO / "reference" / "summary", ["crosscheck"])["crosscheck"]
    shutil.copyfile(aggregate.table_path(REPO / "reference" / "summary", "crosscheck"), summary / "crosscheck.parquet")
    page = render_report(summary, study["figures"], CONFIG, tmp_path / "index.html").read_text(encoding="utf-8")
    shown = section(page, "protocol").split('id="protocol-crosscheck"')[1]
    assert "adds that check here" not in shown and str(escape(checked["command"].iloc[0])) in shown
    assert f"{checked['seeds'].iloc[0]} seeds, {checked['budget'].iloc[0]} BO rounds" in shown
    rows = shown.split("<tbody>")[1].split("</tbody>")[0].split("</tr>")[:-1]
    assert len(rows) == len(checked)
    for row, r in zip(rows, checked.itertuples()):
        cells = re.findall(r"<td>(?:<strong>)?(.*?)(?:</strong>)?</td>", row)
        assert cells[:3] == [paper.task_name(r.task), paper.shown_name(r.method), r.implementation]
        if r.implementation == "engine":  # its medians and seconds, nothing compared
            assert cells[3:9] == [""] * 6 and cells[9] == blocks.number(r.median_sr)
            continue
        assert cells[3] == blocks.number(r.p_sr) and cells[8] == f"{r.within_1pct}/{r.seeds}"
        assert cells[10] == blocks.number(r.median_ls) and cells[12] == str(r.fit_retries)


def test_summary_flags_counts_and_lists_what_did_not_run(study: dict[str, Any]) -> None:
    summary = section(study["html"], "summary")
    assert "<td>a test study</td><td>t1, t2</td>" in summary
    assert "<td><strong>1–2 (config: 2)</strong></td>" in summary  # a-gp-ucb's one seed
    assert "Not run" in summary and "<td>TabICLv2</td>" in summary and "x.ckpt is missing" in summary
    assert "Not run (42 runs)" in summary  # 2 of tabicl and 40 left out: runs, not rows of the table (5)
    # a left-out cross product is one row, and the opening paragraph counts its runs
    assert (
        "<td>timing</td><td>t1, t2</td><td>OSCBO, SCGP</td><td>10</td><td>compute: a study of its own</td>" in summary
    )
    assert "2 runs of TabICLv2 on t1 in main (checkpoint data/checkpoints/x" in summary
    assert "40 runs of OSCBO, SCGP on t1, t2 in timing (compute: a study of its own)" in summary


def test_provenance_comes_from_the_sidecars_and_says_when_commits_differ(tmp_path: Path) -> None:
    paths = write_study(tmp_path / "runs", tasks=("t1",), methods=("oscbo", "gp-ucb-mll"), experiment="main")
    commits = ["c0", "1234567890abcdef+dirty"]  # two commits among the runs, one of a modified tree
    paths_run = [
        '{"pinned": true, "summary": "pinned: MKL COMPATIBLE, torch AVX2, OpenBLAS Haswell, NumPy X86_V3"}',
        '{"pinned": false, "summary": "not pinned (runs on cuda:0: CUDA\'s kernels): MKL COMPATIBLE"}',
    ]
    for index, path in enumerate(paths):
        side = path.with_suffix(".json")
        side.write_text(
            side.read_text().replace(
                '"seed"', f'"git_commit": "{commits[index % 2]}", "code_path": {paths_run[index == 0]}, "seed"'
            )
        )
    config = {"readings": {}, "experiments": {"main": experiment(["t1"], ["oscbo", "gp-ucb-mll"])}}
    page = render(tmp_path, paths, config)["html"]
    shown = section(page, "provenance")
    assert "The runs come from 2 commits" in shown and "<td>c0</td><td>2</td>" in shown
    assert "runs from commits 1234567890ab+dirty, c0" in page.split("</header>")[0]  # shortened, +dirty kept
    assert f"1 of {len(paths)} runs did not run on the pinned numerical code path" in shown
    assert "<td>not pinned (runs on cuda:0: CUDA&#39;s kernels): MKL COMPATIBLE</td><td>1</td>" in shown


def test_claims_carry_a_verdict_per_reading_and_each_its_test_folded(study: dict[str, Any]) -> None:
    detail = section(study["html"], "claims")
    assert len(catalogue.CLAIMS) > 20  # the loop below checks every claim, not none
    for claim in catalogue.CLAIMS:
        assert f"<td>{claim.id}</td>" in detail  # the grid of every reading
        folded = detail.split(f'<details id="claim-{claim.id}">')[1].split("</details>")[0]
        assert f"<summary>{escape(claim.plain)} — {claim.id}: " in folded and f"({claim.source})" in folded
    # the paper's open choices in the grid; a reading of one claim's words folded apart, in a grid of its own
    assert "<tr><th>claim</th><th>default</th></tr>" in detail
    folded = detail.split("<summary>Verdicts under the readings of a baseline&#39;s settings or of one claim&#39;s")[1]
    other = folded.split("</details>")[0]
    assert "<th>scgp-calibration-only</th>" in other and "<th>fig1c-seven-task-average</th>" in other
    assert "<th>scgp-calibration-only</th>" not in detail.split("<summary>Verdicts under the readings of")[0]
    assert "held" in detail and "seed resamples" in detail
    assert "each read one way by every claim that has it" in detail  # the vocabulary table
    assert "not registered yet" in detail or "were registered on" in detail  # the registration


def test_duplicate_ids_are_refused(study: dict[str, Any], tmp_path: Path) -> None:
    """Two sections of one id, or a figure of its section's id (its heading's anchor), are refused."""
    clash = {
        **study["figures"],
        "sections": [["summary", "clash", ""]],
        "figures": [{**study["figures"]["figures"][0], "section": "summary"}],
    }
    with pytest.raises(ValueError, match="summary"):
        render_report(study["summary"], clash, CONFIG, tmp_path / "r.html")
    figure = study["figures"]["figures"][0]
    named = {**study["figures"], "figures": [{**figure, "id": figure["section"]}, *study["figures"]["figures"][1:]]}
    with pytest.raises(ValueError, match=f"share ids .*{figure['section']}"):
        render_report(study["summary"], named, CONFIG, tmp_path / "r.html")


def test_styles_are_stable_distinct_and_fixed_for_the_main_methods() -> None:
    few = style.Styles(["oscbo", "b", "a"])
    many = style.Styles(["b", "a", "gp-ucb-mll", "oscbo", "z", *[f"arm{i}" for i in range(10)]])
    assert few["oscbo"] == many["oscbo"] and few["oscbo"].color == style.FIXED["oscbo"]
    assert few["b"] == many["b"] and few["a"] == many["a"]
    pairs = [(s.color, s.marker) for s in many.styles.values()]
    assert len(set(pairs)) == len(pairs) and len({s.color for s in many.styles.values()}) == len(pairs)


def test_colours_as_seen_match_published_cielab_and_each_vision_keeps_white() -> None:
    """style.seen against the published CIELAB (D65) of sRGB's primaries and grey, and each
    simulated vision maps white to white; red and green, 170 apart for most readers, are 28 for
    the reader who tells them apart least."""
    published = {
        "#ff0000": (53.24, 80.09, 67.20),
        "#00ff00": (87.73, -86.18, 83.18),
        "#0000ff": (32.30, 79.19, -107.86),
    }
    for color, lab in {**published, "#808080": (53.59, 0.0, 0.0)}.items():
        assert np.allclose(colours.seen(color, "normal vision"), lab, atol=0.05), color
    for vision in colours.VISIONS:
        assert np.allclose(colours.seen("#ffffff", vision), (100, 0, 0), atol=0.05), vision
    assert 27 < colours.gap("#ff0000", "#00ff00") < 29


def test_the_methods_colours_stay_apart_for_every_reader() -> None:
    """The full study's main experiment: its eight methods' colours at least colours.APART (15) CIE76
    units apart for every pair, under normal vision and simulated deuteranopia, protanopia and
    tritanopia; every pair of its labels (stand-ins included) tells apart by marker or line. The
    previous palette (tab10) put its orange and green 4.6 apart under protanopia."""
    config = study_config.load(REPO / "config" / "config.yaml")
    main = [spec.label for spec in study_config.method_specs(config["experiments"]["main"])]
    stand_ins = {label for reading in readings.from_config(config) for label in reading.methods}
    styles = style.Styles(sorted(main), stand_ins)
    methods = [label for label in main if label not in stand_ins]
    assert len(methods) == 8
    for a, b in itertools.combinations(methods, 2):
        assert colours.gap(styles[a].color, styles[b].color) >= colours.APART, (a, b)
    looks = [(styles[label].marker, styles[label].line) for label in main]
    assert len(set(looks)) == len(looks)
    old = ["#d62728", "#1f77b4", *(matplotlib.colors.to_hex(c) for c in matplotlib.colormaps["tab10"].colors)]
    assert colours.gap(old[3], old[4]) < colours.APART  # the test can fail


@pytest.fixture(scope="module")
def reference_figures() -> Any:
    """Every figure of the published reference, drawn from its tables (and not saved), with the
    study's styles and stamp: ``(styles, footer, [(figure id, matplotlib figure)])``."""
    config = study_config.load(REPO / "reference" / "config.yaml")
    drawing._start(config, REPO / "reference" / "summary", "0123456789ab")
    try:
        study = drawing._STUDY[0]
        drawn = [(figure.id, drawing.drawn(figure)[0]) for figure in figures.plan(config)[0]]
    finally:
        drawing._STUDY.clear()
    yield study.styles, study.note, drawn
    for _, image in drawn:
        matplotlib.pyplot.close(image)


def test_every_two_lines_drawn_together_are_apart_for_every_reader(reference_figures: Any) -> None:
    """Every figure of the published reference, drawn from its tables: in each panel, every two
    lines (guide lines aside) at least colours.APART apart under the four visions. Assigned without
    knowing which lines meet (no ``together``), random search took a blue 13.1 from GP-UCB-MLL's
    under tritanopia, in the theory's three figures."""
    styles, _, drawn = reference_figures
    checked = 0
    for id, image in drawn:
        for ax in image.axes:
            colors = {line.get_color() for line in ax.lines if line.get_label() != style.GUIDE}
            for a, b in itertools.combinations(sorted(map(matplotlib.colors.to_hex, colors)), 2):
                assert colours.gap(a, b) >= colours.APART, (id, ax.get_title(), a, b)
                checked += 1
    assert checked > 1000
    blind = style.Styles(styles.styles, {label for label, look in styles.styles.items() if look.stand_in})
    assert colours.gap(blind["gp-ucb-mll"].color, blind["random-search"].color) < colours.APART  # the test can fail


def test_every_figure_s_stamp_lies_whole_inside_it_over_no_text(reference_figures: Any) -> None:
    """Every figure of the published reference with its stamp (its runs from some 26 commits): on the
    drawn extents, the stamp lies inside the figure and overlaps nothing else drawn (a panel with its
    title, labels and the ticks it draws; a legend; the figure's other text)."""
    _, footer, drawn = reference_figures
    commits = pd.read_parquet(REPO / "reference" / "summary" / "provenance.parquet")["git_commit"].nunique()
    assert commits > 20 and f"from {commits} commits" in footer
    for id, image in drawn:
        stamp = style.stamp(image, footer)
        renderer = image.canvas.get_renderer()
        box, page = stamp.get_window_extent(renderer), image.bbox
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, (id, box, page)
        others = [(ax.get_title(), ax.get_tightbbox(renderer)) for ax in image.axes if ax.get_visible()]
        others += [("legend", legend.get_window_extent(renderer)) for legend in image.legends]
        others += [(text.get_text(), text.get_window_extent(renderer)) for text in image.texts if text is not stamp]
        assert len(others) > 1, id
        for what, extent in others:
            assert extent is None or not box.overlaps(extent), (id, what)


def test_no_legend_or_panel_runs_into_the_provenance_stamp() -> None:
    """A figure of one row and of four, with a legend as wide as the page (12 labels, 6 a row): the
    stamp (top right) overlaps neither the legend nor any panel (titles included). In the bottom
    left corner, where it was, the one-row figure's legend ran into it."""
    labels = [f"a-method-label-{i:02d}" for i in range(12)]
    styles = style.Styles(labels)

    def drawn(count: int) -> tuple[list, Any, Any]:
        figure, axes = style.grid(count)
        for ax in axes:
            ax.set_title("a panel's title")
            for label in labels:
                ax.plot([0, 1], [0, 1], color=styles[label].color, label=label)
        style.legend(figure, *styles.handles(labels))
        stamp = style.stamp(figure, "config 0123456789ab · 5,770 runs, commit 0123456")
        old = figure.text(0.003, 0.003, stamp.get_text(), fontsize=style.MIN_FONT, ha="left", va="bottom")
        renderer = figure.canvas.get_renderer()
        extents = [figure.legends[0].get_window_extent(renderer), *(ax.get_tightbbox(renderer) for ax in axes)]
        found = stamp.get_window_extent(renderer), old.get_window_extent(renderer)
        matplotlib.pyplot.close(figure)
        return extents, *found

    for count in (1, 16):
        extents, stamp, old = drawn(count)
        assert not any(extent.overlaps(stamp) for extent in extents), count
    extents, _, old = drawn(1)
    assert extents[0].overlaps(old)  # the old corner: on the legend


def test_a_full_scale_study_renders_legibly_under_twenty_megabytes(tmp_path: Path) -> None:
    """Synthetic summary tables shaped like config/config.yaml's study: 8 experiments, 8 tasks in
    main, 13 arms in dual, 20 seeds, 100 rounds."""
    config = study_config.load(REPO / "config" / "config.yaml")
    assert len(config["experiments"]) == 8 and len(config["experiments"]["dual"]["methods"]) == 13
    summary = synthetic_summaries(config, tmp_path / "summary")
    manifest = draw(config, summary, tmp_path / "figures", "h")
    assert len(manifest["figures"]) == len(figures.plan(config)[0])
    for item in manifest["figures"]:
        svg = Path(item["path"]).read_text(encoding="utf-8")
        assert smallest_font_px(svg) >= 9.0, item["id"]
        assert len(svg) < 1_500_000, item["id"]
    # A reading's figure (Fig. 2's and 3's ranks at lambda_0 = 0.433) lists that reading's numbers.
    planned = {figure.id: figure for figure in figures.plan(config)[0]}
    of_readings = [item for item in manifest["figures"] if planned[item["id"]].options.get("reading")]
    assert of_readings
    for item in of_readings:
        numbers = pd.read_csv(item["numbers"])
        assert set(numbers["reading"]) == {planned[item["id"]].options["reading"]}, item["id"]
    # Fig. 2 draws the paper's methods and tasks; the reading's figure its stand-ins under their names
    stand_ins = {label for reading in readings.from_config(config) for label in [*reading.methods, *reading.tasks]}
    by_id = {item["id"]: pd.read_csv(item["numbers"]) for item in manifest["figures"]}
    default, under = by_id["fig2-curves"], by_id["fig2-curves-lambda0-0.433"]
    assert not stand_ins & (set(default["method"]) | set(default["task"])) and "oscbo" in set(default["method"])
    assert not stand_ins & set(under["method"]) and "oscbo" in set(under["method"])
    protocol.write_table(protocol.rows(config), aggregate.table_path(summary, "protocol"))
    html = render_report(summary, manifest, config, tmp_path / "index.html", "h")
    assert html.stat().st_size < 20_000_000
    page = html.read_text(encoding="utf-8")
    assert "These verdicts rest on" not in page and "20 seeds of 100 BO rounds" in page


#: The published reference report's most (bytes): what a clone downloads and git keeps per publish.
REFERENCE_WEIGHT = 3_500_000


def test_the_published_reference_report_is_light() -> None:
    page = REPO / "reference" / "report.html"
    assert page.stat().st_size <= REFERENCE_WEIGHT
    html = page.read_text(encoding="utf-8")
    # no <img>: every figure is markup (a heatmap's pixels may sit inside its SVG)
    assert "<img" not in html and html.count("<svg ") == html.count("<figure id=")


@pytest.mark.slow
def test_the_reference_report_renders_from_its_tables_the_same_twice(tmp_path: Path) -> None:
    """reference/summary's findings, figures and report made twice from scratch: byte-identical
    pages (no wall-clock time in them), at most REFERENCE_WEIGHT. A few minutes."""
    import shutil

    from oscbo import findings

    config = study_config.load(REPO / "reference" / "config.yaml")
    pages = []
    for name in ("one", "two"):
        summary = shutil.copytree(REPO / "reference" / "summary", tmp_path / name / "summary")
        findings.write(summary)
        manifest = draw(config, summary, tmp_path / name / "figures", "h")
        pages.append(render_report(summary, manifest, config, tmp_path / name / "report.html", "h").read_bytes())
    assert len(pages[0]) <= REFERENCE_WEIGHT
    assert pages[0].replace(b"/one/", b"/two/") == pages[1]


def test_the_published_answer_says_in_a_line_what_each_verdict_rests_on_and_folds_the_rest() -> None:
    """The reference report's answer: each row's "what it rests on" names the paper's words its test
    reads (as the answer table's basis quotes them) and flags a constant within a step of flipping the
    verdict; the whole basis is folded under it, word for word; a long direction is folded the same way."""
    root = Path(__file__).resolve().parents[2]
    page = (root / "reference" / "report.html").read_text(encoding="utf-8")
    table = page.split('<table class="answer">')[1].split("</table>")[0]
    answer = pd.read_parquet(root / "reference" / "summary" / "answer.parquet").set_index("id")
    checked = 0
    for claim_id, row in answer.iterrows():
        cells = re.search(rf'href="#evidence-{claim_id}">.*?</tr>', table, re.S).group(0)
        folds = dict(re.findall(r"<details><summary>(.*?)</summary>(.*?)</details>", cells, re.S))
        if not row["basis"]:
            continue
        line, whole = next((s, w) for s, w in folds.items() if escape(row["basis"]) in w)
        words = re.findall(r"(?:^|(?<=[\s;(]))'([^']+)':", row["basis"])
        assert words == [] or all(escape(f"'{word}'") in line for word in words), (claim_id, line)
        assert ("near a constant" in line) == ("within one step" in row["basis"]), (claim_id, line)
        checked += 1
    assert checked >= 15
    strongest = re.search(r'href="#evidence-main-strongest">.*?</tr>', table, re.S).group(0)
    assert "near a constant · another reading</summary>" in strongest  # 6 of 7 tasks; SCGP's beta flips it


@pytest.mark.parametrize(
    "step, words",
    [
        (2, "every other round"),
        (3, "every 3rd round"),
        (11, "every 11th round"),
        (12, "every 12th round"),
        (21, "every 21st round"),
        (22, "every 22nd round"),
        (104, "every 104th round"),
    ],
)
def test_a_thinned_curve_s_rounds_read_as_english(step: int, words: str) -> None:
    """Not "every 2th round": the caption's ordinal, as a reader says it."""
    from oscbo.figures.curves import _every

    assert _every(step) == words


def test_legends_name_the_methods_as_the_paper_does_in_its_order(study: dict[str, Any]) -> None:
    """Every figure's legend says OSCBO-L1, GP-UCB-MLL, never the code's labels; a variant reads
    with its setting in symbols, and the paper's methods come in the paper's order."""
    svg = "".join(re.findall(r"<svg.*?</svg>", study["html"], re.S))
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "OSCBO" in texts and "GP-UCB-MLL" in texts
    raw = [t for t in texts if t in {label for label in METHODS if label != paper.name(label)}]
    assert not raw, [texts[max(0, texts.index(raw[0]) - 3) : texts.index(raw[0]) + 3]]
    assert style.shown_name("oscbo-l1-lambda0=0.433") == "OSCBO-L1, λ₀ = 0.433"
    assert style.shown_name("scgp-multiplier=two-sided") == "SCGP, multiplier = two-sided"
    _, names = style.Styles(["scgp", "gp-ucb-mll", "oscbo-l1", "oscbo"]).handles(
        ["scgp", "gp-ucb-mll", "oscbo-l1", "oscbo"]
    )
    assert names == ["OSCBO", "OSCBO-L1", "GP-UCB-MLL", "SCGP"]


def test_a_legend_reads_by_rows_in_order_and_its_rows_are_as_full_as_each_other() -> None:
    """Seven entries, six of which fit a row: two rows of 4 and 3, read left to right, top to bottom,
    in the order given (matplotlib alone fills columns first: 6 and a lone 7th under the first)."""
    labels = [f"method {i}" for i in range(7)]

    def rows(legend_of) -> list[list[str]]:
        figure, axes = style.grid(2)
        for label in labels:
            axes[0].plot([0, 1], [0, 1], label=label)
        legend_of(figure, *axes[0].get_legend_handles_labels())
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        placed = [
            (-round(t.get_window_extent(renderer).y0), t.get_window_extent(renderer).x0, t.get_text())
            for t in figure.legends[0].get_texts()
        ]
        matplotlib.pyplot.close(figure)
        found: dict[int, list] = {}
        for y, _, text in sorted(placed):
            found.setdefault(y, []).append(text)
        return list(found.values())

    assert rows(style.legend) == [labels[:4], labels[4:]]
    plain = rows(lambda figure, handles, names: figure.legend(handles, names, loc="outside lower center", ncol=6))
    assert [len(row) for row in plain] == [6, 1] and plain[1] == ["method 1"]  # the test can fail


def test_a_task_s_diagnostics_come_in_the_order_of_fig_s3_s_columns(reference_figures: Any) -> None:
    """Fig. S3's columns: simple regret, cumulative regret, coverage, width, V_t^+, the
    sharpness-calibration trajectory, the lengthscale; the multiplier λ (not in the paper) last;
    V_t^+'s axis labelled where its scale changes."""
    _, _, drawn = reference_figures
    image = dict(drawn)["figS3-levy5"]
    assert [ax.get_ylabel() for ax in image.axes] == [
        "simple regret",
        "cumulative regret",
        "coverage p̂ₜ",
        "mean interval half-width",
        "Vₜ⁺ (symlog)",
        "coverage gap |p̂ₜ − 0.9|",
        "lengthscale (geometric mean)",
        "multiplier λₜ₋₁",
    ]
    # V_t^+ on its symmetric-log axis: labelled at 0 and 1, not at the data's maximum (it read "0.533932")
    violation = image.axes[4]
    image.canvas.draw()
    assert [label.get_text() for label in violation.get_yticklabels() if label.get_text()] == ["0", "1"]


def test_the_header_counts_many_commits_and_says_how_many_were_modified_trees() -> None:
    from oscbo.report.render import _runs_from

    commits = ["a" * 40, "b" * 40 + "+dirty", "c" * 40 + "+dirty", "d" * 40]
    assert _runs_from(commits) == (
        "4 commits (2 of them a tree with uncommitted changes; listed under Provenance: compare them before "
        "comparing numbers)"
    )
    assert _runs_from(commits[:2]) == "commits aaaaaaaaaaaa, bbbbbbbbbbbb+dirty"
