"""The documentation's examples run as written and do what they say, its links resolve, and the
README's answer is the published reference's.

docs/api.md's examples ("Use it on your own objective", "Adding a method", "Adding a task") run
here; the README's "Does the paper replicate?" block is compared with ``oscbo answer``.
"""

from __future__ import annotations

import re
import shlex
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import benchmark_module

from oscbo import records
from oscbo.api import cli
from oscbo.paper import name, task_name
from oscbo.registry import Entry

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
API = REPO / "docs" / "api.md"
SECTION = "## Use it on your own objective"


def section(heading: str) -> str:
    """The text of docs/api.md's section ``heading`` (a ``## `` line), up to the next one."""
    text = API.read_text()
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def section_blocks() -> list[tuple[str, str]]:
    """``(language, code)`` of each fenced block of "Use it on your own objective", in order."""
    return re.findall(r"```(\w+)\n(.*?)```", section(SECTION), flags=re.S)


def test_the_section_has_the_four_kinds_of_example():
    blocks = section_blocks()
    code = "\n".join(body for _, body in blocks)
    for call in ("oscbo.optimize(", "oscbo.Optimizer(", "oscbo.OSCBOLengthscale(", "oscbo optimize "):
        assert call in code, call


def run_the_blocks(folder: Path, namespace: dict) -> None:
    """Run docs/api.md's blocks of :data:`SECTION` in ``folder`` (see test_the_examples_run),
    each Python block's names added to ``namespace``."""
    for language, body in section_blocks():
        first = body.splitlines()[0]
        if language == "python" and re.fullmatch(r"# \w+\.py", first):
            (folder / first[2:]).write_text(body)
        elif language == "python":
            own: dict = {}
            exec(compile(body, f"docs/{API.name}:{SECTION}", "exec"), own)
            namespace.update(own)
        else:
            for line in body.strip().splitlines():
                argv = shlex.split(line)
                assert argv[0] == "oscbo"
                assert cli.main(argv[1:]) == 0, line


def test_the_examples_run(tmp_path, monkeypatch, capsys):
    """Each Python block runs on its own, in a namespace of its own (a block that leans on another's
    names fails), in order, and warns of nothing; a block whose first line is ``# NAME.py`` is
    written as that file; shell lines ``oscbo ...`` run through the CLI; all in a scratch folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict = {}  # every block's names, for the checks below
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        run_the_blocks(tmp_path, namespace)
    assert not said, [f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}" for w in said]

    # one call: the record is written and read back; Branin's minimum is approached
    table, meta = records.read_record(tmp_path / "runs" / "branin" / "seed0.parquet")
    pd.testing.assert_frame_equal(table, namespace["result"].record())
    assert len(table) == 30 and meta["status"] == "complete" and meta["task"]["minimize"]  # 10 + 20 rounds
    assert namespace["result"].best.y < 1.0  # f* = 0.398; the initial design's best is far worse
    # ask/tell: the setting reached the method
    assert namespace["opt"].method.settings.lambda0 == 0.433 and len(namespace["opt"].history) == 25
    # lambda_0 on Ackley 4-D: the printed lines are what the block computes
    printed = capsys.readouterr().out
    for line in re.findall(r"^# (lambda0 = .*)$", section(SECTION), flags=re.M):
        assert line in printed, line
    # the BoTorch loop: 15 rounds learned from (the last observation is never needed)
    played = namespace["rule"].history.dropna(subset=["lengthscale_0"])
    assert len(played) == 14
    assert played["lengthscale_0"].between(1e-2, 10).all()
    assert played["lengthscale_0"].nunique() > 1  # FTPL moves it every round
    assert float(namespace["Y"].max()) > float(namespace["Y"][:10].max())  # BO improved on the design
    # the command line: the same record from a function on the path
    table, meta = records.read_record(tmp_path / "runs" / "branin-cli" / "seed0.parquet")
    assert len(table) == 25 and table["task"].iloc[0] == "branin" and table["best_f"].iloc[-1] < 5
    assert "best y" in printed


@pytest.mark.parametrize("name", ["Optimizer", "optimize", "OSCBOLengthscale"])
def test_the_names_are_exported(name):
    import oscbo

    assert name in oscbo.__all__ and callable(getattr(oscbo, name))


def test_the_adding_a_task_example_builds_a_task():
    (body,) = re.findall(r"```python\n(.*?)```", section("## Adding a task"), flags=re.S)
    namespace: dict = {}
    exec(compile(body, f"docs/{API.name}:Adding a task", "exec"), namespace)
    task = namespace["ackley4"]()
    assert task.dim == 4 and task.optimal_value == 0.0 and task.name == "ackley4"


def test_a_method_of_the_user_s_own_module_registers_at_run_time(tmp_path, monkeypatch, capsys):
    """The "Adding a method" class saved as my_method.py on the path, registered from the user's
    process as docs/api.md says: optimize runs it, and its lengthscale is 0.9 of the refit's."""
    from oscbo import methods

    method, registration = re.findall(r"```python\n(.*?)```", section("## Adding a method"), flags=re.S)
    (tmp_path / "my_method.py").write_text(method)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(methods.REGISTRY, "shrinking", methods.REGISTRY["oscbo"])  # restored after the test
    namespace: dict = {}
    exec(compile(registration, f"docs/{API.name}:Adding a method (registration)", "exec"), namespace)
    history = namespace["run"].history
    assert set(history["method"]) == {"shrinking"} and len(history) == 15
    assert namespace["run"].method.__class__.__module__ == "my_method"
    assert "lengthscale_0" in capsys.readouterr().out


def test_the_adding_a_method_example_runs_and_keeps_seeds_apart(monkeypatch):
    """The "Adding a method" class, registered as docs/api.md says, runs and gives a seed the
    same queries alone and in a batch."""
    from oscbo import methods
    from oscbo import run as engine

    body = re.findall(r"```python\n(.*?)```", section("## Adding a method"), flags=re.S)[0]
    namespace: dict = {"__name__": "api_method"}
    exec(compile(body, f"docs/{API.name}:Adding a method", "exec"), namespace)
    monkeypatch.setattr(sys.modules[__name__], "ApiShrinking", namespace["Shrinking"], raising=False)
    monkeypatch.setitem(methods.REGISTRY, "shrinking", Entry(f"{__name__}:ApiShrinking"))
    alone = engine.run("hartmann3", "shrinking", [3], budget=4, n_init=5).tables[3]
    together = engine.run("hartmann3", "shrinking", [0, 3], budget=4, n_init=5).tables[3]
    x = [f"x_{i}" for i in range(3)]
    pd.testing.assert_frame_equal(alone[x], together[x])
    assert alone["lengthscale_0"].notna().sum() == 4


def test_the_answer_is_the_published_reference_s(capsys):
    """The README's "Does the paper replicate?" block is what ``oscbo answer reference/summary``
    prints from the published tables: a number or count that disagrees with them fails here (a
    re-published reference regenerates the block)."""
    text = README.read_text()
    start = text.index("<!-- answer:")
    block = text[text.index("\n", start) + 1 : text.index("<!-- /answer -->")].strip()
    assert cli.main(["answer", str(REPO / "reference" / "summary")]) == 0
    assert block == capsys.readouterr().out.strip()


def test_the_baselines_cross_check_is_the_published_one():
    """The README's cross-check table is reference/summary/crosscheck.parquet (benchmarks/crosscheck.py's
    run), each comparison's row rebuilt here from the table with the report's number format."""
    from oscbo.report.blocks import number

    text = README.read_text()
    start = text.index("<!-- crosscheck:")
    block = text[text.index("\n", start) + 1 : text.index("<!-- /crosscheck -->")]
    shown = [line for line in block.splitlines() if line.startswith("| ") and not line.startswith("| task")]
    checked = pd.read_parquet(REPO / "reference" / "summary" / "crosscheck.parquet")
    engine = checked[checked["implementation"] == "engine"].set_index(["task", "method"])
    expected = []
    for r in checked[checked["implementation"] != "engine"].itertuples():
        ours = engine.loc[(r.task, r.method)]
        cells = [r.task, r.method, r.implementation, *(number(v) for v in (r.p_sr, r.p_cr, r.p_ls, r.gap_ls))]
        cells += [f"{r.within_1pct}/{r.seeds}", f"{number(ours.median_sr)} / {number(r.median_sr)}"]
        cells += [f"{number(ours.median_ls)} / {number(r.median_ls)}"]
        expected.append("| " + " | ".join(cells) + " |")
    assert shown == expected


def test_the_theory_numbers_are_the_published_claims():
    """The README's sentence on the reference's known-truth experiment quotes the published theory
    claims: OSCBO's slope of log R_t against log t with its resampling interval on each known-truth
    task, the other methods' slopes (the negative control's too), and the round from which OSCBO's
    V_t+ is 0 in every seed."""
    claims = pd.read_parquet(REPO / "reference" / "summary" / "claims.parquet").set_index(["id", "reading"])
    slopes = {}  # (task, method) -> "slope [low, high]"
    tasks = {task_name(task): task for task in ("gp2", "gp5")}  # the claims' text names them as the paper does
    methods = ("oscbo", "gp-ucb-true", "gp-ucb-mll", "random-search")
    for part in claims.loc[("theory-sublinear-regret", "default"), "numbers"].split(" | "):
        task = tasks[re.search(r"([\w ]+): slope", part).group(1).split("rounds: ")[-1].strip()]
        for method in methods:
            found = re.search(re.escape(name(method)) + r" (\d\.\d\d \[\d\.\d\d, \d\.\d\d\])", part)
            if found:
                slopes[task, method] = found.group(1)
    point = {key: value.split(" ")[0] for key, value in slopes.items()}
    known = pd.read_parquet(REPO / "reference" / "summary" / "trajectories.parquet")
    known = known[(known["experiment"] == "known-truth") & (known["method"] == "oscbo")]
    zero_from = set()
    for _, task in known.groupby("task"):
        mean = task.groupby("step")["violation_positive"].mean().to_numpy()
        zero_from.add(int(np.flatnonzero(mean != 0)[-1]) + 2)  # round 1 is the first step
    assert "none: ends at or below 0" in claims.loc[("theory-sublinear-violation", "default"), "direction"]
    assert len(slopes) == 8 and len(zero_from) == 1  # oscbo, gp-ucb-true, gp-ucb-mll, random-search on two tasks
    text = " ".join(README.read_text().split())
    assert (
        f"slope of log R_t against log t {slopes['gp2', 'oscbo']} on gp2 and {slopes['gp5', 'oscbo']} on gp5), "
        f"but so does every GP method's (GP-UCB at the true kernel's {point['gp2', 'gp-ucb-true']} and "
        f"{point['gp5', 'gp-ucb-true']} and GP-UCB-MLL's {point['gp2', 'gp-ucb-mll']} and "
        f"{point['gp5', 'gp-ucb-mll']}), and random search, the negative control, grows linearly "
        f"({point['gp2', 'random-search']} and {point['gp5', 'random-search']})"
    ) in text
    assert f"is 0 in every seed from round {zero_from.pop()} on" in text


PAGES = [README, *sorted((REPO / "docs").glob("*.md")), REPO / "config" / "README.md", REPO / "reference" / "README.md"]


def anchors(page: Path) -> set[str]:
    """The ``#fragment`` of each heading of ``page``, as GitHub writes it."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", page.read_text(), flags=re.S), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("page", PAGES, ids=[page.relative_to(REPO).as_posix() for page in PAGES])
def test_every_relative_link_resolves(page):
    """Every relative Markdown link (outside code) names a file of the repository and, with a
    ``#fragment``, a heading of that file."""
    text = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", page.read_text(), flags=re.S))
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    broken = []
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue  # a URL
        path, _, fragment = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists() or (fragment and target.suffix == ".md" and fragment not in anchors(target)):
            broken.append(link)
    assert not broken, f"{page.relative_to(REPO)}: {broken}"


measurements = benchmark_module("measurements")


def test_the_pages_quote_the_measurements_table(measurements, tmp_path):
    """The README's figures, and docs/performance.md's latest row of every figure, are the
    latest rows of benchmarks/measurements.csv (``python benchmarks/measurements.py --pages``
    writes them); a newer row of one of them makes both stale."""
    for page, figures in measurements.PAGES.items():
        assert measurements.block(page) == measurements.quoted_rows(figures(measurements.TABLE)), page.name
    newer = tmp_path / "measurements.csv"
    row = measurements.latest(measurements.QUOTED[0])
    newer.write_text(
        measurements.TABLE.read_text()
        + ",".join(f'"{value}"' for value in {**row, "date": "9999-12-31T00:00:00+00:00", "value": "1e9"}.values())
        + "\n"
    )
    for page, figures in measurements.PAGES.items():
        assert measurements.quoted_rows(figures(newer), newer) != measurements.block(page), page.name


def test_the_reference_readme_s_seed_sets_are_the_published_ones():
    """reference/README.md's table of each claim's verdict on seeds 0-19, 20-39 and pooled is what
    oscbo.findings.seeds.markdown writes from the published summary/seed_sets.parquet."""
    from oscbo.findings import seeds

    text = (REPO / "reference" / "README.md").read_text()
    block = text.split("<!-- seed sets:")[1].split("\n", 1)[1].split("<!-- /seed sets -->")[0].strip()
    published = pd.read_parquet(REPO / "reference" / "summary" / "seed_sets.parquet")
    assert block == seeds.markdown(published) and block.count("\n") >= 20
