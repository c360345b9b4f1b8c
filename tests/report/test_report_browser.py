"""The report as a person sees it: opened in headless Chromium (Debian's ``chromium``) at 1280 x 800.

Skipped when Chromium is not installed (``.ci/run`` installs it). The tiny study's report, which
has the quick study's sections, is opened the same way in ``tests/workflow/test_workflow.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CHROMIUM, experiment, follow_claim_links, open_in_chromium, render, write_study

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")


def test_report_renders_every_figure_without_errors_and_answers_in_the_first_screen(tmp_path: Path, processes) -> None:
    methods = ("oscbo", "oscbo-l1", "gp-ucb-mll", "ocbo")
    paths = write_study(tmp_path / "runs", methods=methods, experiment="main")
    config = {"readings": {}, "experiments": {"main": experiment(["t1", "t2"], list(methods))}}
    made = render(tmp_path, paths, config)

    seen = open_in_chromium(tmp_path / "report" / "index.html", tmp_path)
    # every figure is inline SVG markup the browser lays out, no <img> to break
    assert seen["figures"] == len(made["figures"]["figures"]) and seen["images"] == 0, seen["probe"]
    assert seen["errors"] == 0 and "Uncaught" not in seen["log"], seen["probe"]
    lead, answer, toc = seen["lead"], seen["answer"], seen["toc"]
    # the one-sentence answer, then the claims' table starting in the first screen, then the contents
    assert lead[1] <= answer[0] < seen["height"], (
        f"answer {lead} and its table {answer} in a {seen['height']} px screen"
    )
    assert answer[1] <= toc[0], f"the contents {toc} come after the answer's table {answer}"


def test_the_published_reference_report_is_at_most_twenty_five_screens_folded(tmp_path: Path, processes) -> None:
    """reference/report.html at 1440 x 900, as it opens (every <details> folded): at most 25 screens
    tall, with no broken figure, no script error and the answer's table within the page (it ran 38 px
    past it). What is not in the paper (the dual study, the figures drawn again under a reading,
    Fig. S3's other tasks) is folded, nothing removed."""
    page = Path(__file__).resolve().parents[2] / "reference" / "report.html"
    seen = open_in_chromium(page, tmp_path, width=1440, height=900)
    assert seen["broken"] == 0 and seen["errors"] == 0, seen["probe"]
    assert seen["page"] <= 25 * seen["height"], f"{seen['page'] / seen['height']:.1f} screens"
    assert seen["over"] == 0, f"the answer's table runs {seen['over']} px past the page: a reader scrolls sideways"


def test_each_claim_link_of_the_answer_lands_on_its_evidence_with_its_words_in_view(tmp_path: Path, processes) -> None:
    """reference/report.html in Chromium: each claim of the answer's table, followed once, lands on
    the claim's words in the window, open, above the figures that are its evidence. The report before
    this landed on each claim's closed block (its test and numbers a second click away)."""
    page = Path(__file__).resolve().parents[2] / "reference" / "report.html"
    followed = follow_claim_links(page, tmp_path)
    assert len(followed) >= 23, followed
    assert all(id.startswith("evidence-") for _, id, _ in followed), followed
    assert [(words, id) for words, id, shown in followed if not shown] == []
    before = page.read_text(encoding="utf-8").replace('href="#evidence-', 'href="#claim-')
    (tmp_path / "before.html").write_text(before, encoding="utf-8")
    assert not any(shown for _, _, shown in follow_claim_links(tmp_path / "before.html", tmp_path))
