"""The claims' tests are registered before the evidence: their digest reads their code, not their
prose, and a change of a test or a constant fails the suite until an amendment declares it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from oscbo import imports
from oscbo.findings import registration
from oscbo.findings.registration import Registration, UnregisteredChange

THRESHOLDS = "oscbo.findings.thresholds"
REFERENCE_CLAIMS = imports.SOURCE_ROOT.parents[1] / "reference" / "summary" / "claims.parquet"


def source(module: str) -> str:
    return imports.module_file(module).read_text(encoding="utf-8")


def test_prose_does_not_change_the_digest_and_a_constant_does() -> None:
    text = source(THRESHOLDS)
    assert 'TOP_K = Constant(\n    "TOP_K", 3,' in text
    reworded = text.replace('"""The constants the claims', '"""The thresholds the claims', 1) + "\n# a comment\n"
    assert registration.digest({THRESHOLDS: reworded}) == registration.digest()
    changed = text.replace('TOP_K = Constant(\n    "TOP_K", 3,', 'TOP_K = Constant(\n    "TOP_K", 4,', 1)
    assert registration.digest({THRESHOLDS: changed}) != registration.digest()


def test_an_undeclared_change_fails_and_an_amendment_declares_it(tmp_path) -> None:
    changed = registration.digest({THRESHOLDS: source(THRESHOLDS).replace('"TOP_K", 3,', '"TOP_K", 4,', 1)})
    registered = Registration("2026-12-04", "0" * 40, registration.digest(), ())
    registered.check()
    with pytest.raises(UnregisteredChange, match="no amendment"):
        registered.check(changed)
    amendment = {
        "date": "2026-12-05",
        "reason": "a test of the mechanism",
        "claims": ["main-strongest"],
        "before": {"main-strongest": "not held"},
        "after": {"main-strongest": "held"},
        "digest": changed,
    }
    amended = Registration("2026-12-04", "0" * 40, registration.digest(), (amendment,))
    amended.check(changed)
    assert (
        "amended 1 time since: 2026-12-05: a test of the mechanism (main-strongest: not held under the registered "
        "test, held amended)"
    ) in amended.sentence()
    refactor = {**amendment, "claims": ["main-strongest", "logei-competitive"], "after": amendment["before"]}
    refactor["before"] = refactor["after"] = {"main-strongest": "not held", "logei-competitive": "held"}
    assert (
        "(no verdict changed: the 2 claims it touches have the same verdicts)"
        in Registration("2026-12-04", "0" * 40, registration.digest(), (refactor,)).sentence()
    )
    one = {**amendment, "after": amendment["before"]}
    assert (
        "(no verdict changed: the claim it touches has the same verdict)"
        in Registration("2026-12-04", "0" * 40, registration.digest(), (one,)).sentence()
    )
    record = tmp_path / "registration.yaml"
    record.write_text("registered: {date: 2026-12-04, commit: abc, digest: d}\namendments: [{date: x}]\n")
    with pytest.raises(ValueError, match="an amendment lacks"):
        Registration.read(record)


def test_the_tests_in_force_are_the_registered_ones() -> None:
    """Today's tests are the registered ones, or the last amendment's (none registered yet: skipped)."""
    registered = Registration.read()
    if registered is None:
        pytest.skip("the claims' tests are not registered yet")
    registered.check()


def test_the_report_says_whether_the_runs_started_after_the_registration() -> None:
    registered = Registration("2026-12-04T21:00:00+00:00", "0" * 40, registration.digest(), ())
    before = pd.DataFrame({"started": ["2026-12-01T04:04:41+00:00", "2026-12-05T01:00:00+00:00"]})
    assert registered.runs(before).startswith(" 1 of this study's 2 runs started before it")
    assert registered.runs(before.iloc[1:]) == " The study's one run started after it."
    assert registered.runs(pd.concat([before.iloc[1:]] * 2)) == " Every one of this study's 2 runs started after it."
    assert registered.runs(None) == ""


def test_the_digest_covers_what_the_findings_stage_executes_and_the_readings() -> None:
    """A constant outside the claims' own modules (Fig. 3 bottom's task), an answer's word and a
    reading of the registered config each change the digest, and an unamended change fails."""
    assert {"oscbo.paper", "oscbo.findings.answer", "oscbo.analysis.readings"} <= set(registration.MODULES)
    paper = source("oscbo.paper")
    assert 'DIAGNOSTICS_TASK = "levy5"' in paper
    moved = registration.digest(
        {"oscbo.paper": paper.replace('DIAGNOSTICS_TASK = "levy5"', 'DIAGNOSTICS_TASK = "hartmann6"')}
    )
    assert moved != registration.digest()
    registered = Registration.read()
    with pytest.raises(UnregisteredChange, match="no amendment"):
        registered.check(moved)
    values = registration.config_values()
    values["readings"] = {**values["readings"], "lambda0=0.25": {"setting": {"lambda0": 0.25}}}
    assert registration.digest(config=values) != registration.digest()


def test_the_seed_sets_are_registered_before_their_runs_and_digested() -> None:
    """The confirmatory seeds (20-39 of main and known-truth) are declared, and digested: moving the
    confirmatory set to seeds the study had seen changes the digest, so it needs an amendment; the
    report's sentence names the sets."""
    declared = registration.seed_sets()
    assert declared["sets"][declared["confirmatory"]] == [20, 39]
    assert set(declared["experiments"]) == {"main", "known-truth"}
    seen = {**declared, "sets": {**declared["sets"], "confirmatory": [0, 19]}}
    assert registration.digest(seeds=seen) != registration.digest()
    with pytest.raises(UnregisteredChange):
        Registration.read().check(registration.digest(seeds=seen))
    assert "confirmatory, seeds 20-39" in Registration.read().sentence()


def test_a_broken_chain_or_a_tampered_verdict_fails() -> None:
    """Every amendment amends the digest in force before it; the last one's verdicts are the
    published reference's."""
    registered = Registration.read()
    registered.chain()
    last = dict(registered.amendments[-1])
    broken = Registration(
        registered.date,
        registered.commit,
        registered.digest,
        (*registered.amendments[:-1], {**last, "previous": "0" * 64}),
    )
    with pytest.raises(UnregisteredChange, match="chain of amendments is broken"):
        broken.check()
    claims = pd.read_parquet(REFERENCE_CLAIMS)
    assert registered.published(claims) == []
    claim, verdict = next(iter(last["after"].items()))
    other = "held" if verdict != "held" else "not held"
    tampered = Registration(
        registered.date,
        registered.commit,
        registered.digest,
        (*registered.amendments[:-1], {**last, "after": {**last["after"], claim: other}}),
    )
    assert tampered.published(claims) == [f"{claim}: declared {other}, published {verdict}"]


def test_a_verdict_an_amendment_moved_shows_the_registered_one_beside_it() -> None:
    """The first verdict under the registered test is kept where the amended one differs: a claim
    moved and moved back shows nothing; the README's answer prints it beside the amended verdict."""

    def amendment(date: str, before: dict[str, str], after: dict[str, str]) -> dict:
        claims = ["a", "b"]
        return {"date": date, "reason": "r", "claims": claims, "before": before, "after": after, "digest": date * 32}

    one = amendment("d1", {"a": "undecided", "b": "held"}, {"a": "premise fails", "b": "not held"})
    two = amendment("d2", {"a": "premise fails", "b": "not held"}, {"a": "premise fails", "b": "held"})
    record = Registration("2026-12-04", "0" * 40, "0" * 64, (one, two))
    assert record.amended() == {"a": "undecided"}
    published = Registration.read().amended()
    assert published == {"ard-due-to-lunar": "undecided", "theory-sublinear-violation": "not evaluable"}
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "premise fails (shown in 0%) (registered test: undecided)" in readme


@pytest.mark.slow
def test_the_last_amendment_s_verdicts_are_what_today_s_tests_compute_on_its_tables(tmp_path: Path) -> None:
    """The findings computed again, by today's code, from the tables the last amendment names (the
    published reference's summary, copied): every default verdict it declares after it is the one
    computed, and so is every verdict of the published claims table, under every reading."""
    import shutil

    from oscbo import findings

    last = Registration.read().amendments[-1]
    summary = imports.SOURCE_ROOT.parents[1] / last["tables"]
    shutil.copytree(summary, tmp_path / "summary")
    findings.write(tmp_path / "summary")
    computed = pd.read_parquet(tmp_path / "summary" / "claims.parquet")
    default = computed[computed["reading"] == "default"].set_index("id")["verdict"].to_dict()
    assert {claim: default[claim] for claim in last["after"]} == last["after"]
    published = pd.read_parquet(summary / "claims.parquet")
    columns = ["id", "reading", "verdict", "share"]
    pd.testing.assert_frame_equal(computed[columns], published[columns], check_exact=True)


REPO = imports.SOURCE_ROOT.parents[1]


def _declared_since_tables() -> list[tuple[int, dict]]:
    """The amendments that name the tables their verdicts were read on (the fourth on), numbered."""
    return [(i + 1, a) for i, a in enumerate(Registration.read().amendments) if a.get("tables")]


def _commit_of(digest: str) -> str:
    """The commit that declared ``digest``: the first whose registration.yaml holds it."""
    import subprocess

    found = subprocess.run(
        [
            "git",
            "log",
            "--format=%H",
            "--reverse",
            "-S",
            f"digest: {digest}",
            "--",
            "src/oscbo/findings/registration.yaml",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert found, f"no commit declares the digest {digest[:12]}"
    return found[0]


def _verdicts_at(commit: str, tables: Path, claims: list[str], work: Path) -> dict[str, str]:
    """The default verdicts of ``claims`` that the findings code of ``commit`` computes on a copy of
    ``tables`` (checked out apart, run in a fresh interpreter on that commit's sources alone)."""
    import os
    import shutil
    import subprocess
    import sys

    commit = subprocess.run(  # a full hash: "C~1" and C would name one folder below
        ["git", "rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    tree = work / commit[:12]
    if not tree.exists():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), commit], cwd=REPO, check=True, capture_output=True
        )
    copy = work / f"tables-{commit[:12]}"
    shutil.copytree(tables, copy, dirs_exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    subprocess.run(
        [sys.executable, "-c", f"from oscbo import findings; findings.write({str(copy)!r})"],
        env=env,
        check=True,
        cwd=tree,
    )
    computed = pd.read_parquet(copy / "claims.parquet")
    default = computed[computed["reading"] == "default"].set_index("id")["verdict"]
    return {claim: default[claim] for claim in claims}


@pytest.mark.slow
@pytest.mark.parametrize(
    "number, amendment", [pytest.param(n, a, id=f"amendment-{n}") for n, a in _declared_since_tables()]
)
def test_each_amendment_s_verdicts_are_recomputed_by_the_code_either_side_of_it(
    number, amendment, tmp_path: Path, processes
) -> None:
    """Each amendment that names its tables, recomputed where it was made: on the tables as its
    commit held them, the findings code of that commit gives its ``after`` verdicts, and the code of
    the commit before it (the tests it amends) its ``before`` ones. A verdict declared by hand, or a
    test changed since without an amendment, fails here."""
    import subprocess

    commit = _commit_of(amendment["digest"])
    tables = tmp_path / "published"
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, amendment["tables"]], cwd=REPO, check=True, capture_output=True
    ).stdout
    tables.mkdir()
    subprocess.run(["tar", "-x", "-C", str(tables)], input=archive, check=True)
    tables = tables / amendment["tables"]
    claims = list(amendment["after"])
    try:
        assert _verdicts_at(commit, tables, claims, tmp_path) == amendment["after"], f"amendment {number}: after"
        assert _verdicts_at(f"{commit}~1", tables, claims, tmp_path) == amendment["before"], (
            f"amendment {number}: before"
        )
    finally:  # the checkouts go, and git forgets them
        for tree in tmp_path.iterdir():
            if (tree / ".git").is_file():
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)
