"""The claims on the registered seed sets: main's claims judged again on unseen seeds (an experiment
of their own, main-seeds20-39), alone, beside the seeds the tests were written on, and pooled."""

from __future__ import annotations

import pandas as pd
from test_claims import MAIN_TASKS, SUPPORTING, TRACKING, final_rows, study, trajectory_rows

from oscbo.findings import registration, seeds
from oscbo.paper import MAIN, REPLICATES

UNSEEN = next(name for name, own in REPLICATES.items() if own == MAIN)
#: OSCBO the worst method on every task: "among the strongest" cannot hold on these seeds.
WORST = {**SUPPORTING, "oscbo": (0.95, 9.0)}


def with_unseen(values: dict) -> dict[str, pd.DataFrame]:
    """main on seeds 0-19 (every claim of main holds), and ``values`` on seeds 20-39 as its replicate."""
    tables = study(seeds=20)
    unseen = pd.DataFrame(final_rows(UNSEEN, values, MAIN_TASKS, 20)).assign(experiment=UNSEEN)
    unseen["seed"] += 20
    paths = pd.DataFrame(trajectory_rows(MAIN_TASKS, TRACKING, 20)).assign(experiment=UNSEEN)
    paths["seed"] += 20
    tables["final"] = pd.concat([tables["final"], unseen], ignore_index=True)
    tables["trajectories"] = pd.concat([tables["trajectories"], paths], ignore_index=True)
    return tables


def test_a_set_sees_its_seeds_of_the_experiment_and_its_replicate_under_one_name() -> None:
    tables = with_unseen(WORST)
    cut = seeds.view(tables, [MAIN], 20, 39)
    assert set(cut["final"]["experiment"]) == {MAIN} and set(cut["final"]["seed"]) == set(range(20, 40))
    assert cut["final"].loc[cut["final"]["method"] == "oscbo", "simple_regret"].mean() > 0.9
    pooled = seeds.view(tables, [MAIN], 0, 39)
    assert pooled["final"].groupby(["task", "method"])["seed"].nunique().eq(40).all()
    assert cut["curves"].empty


def test_the_confirmatory_seeds_can_overturn_a_verdict_and_the_sentence_counts_it() -> None:
    """On seeds 0-19 OSCBO is the strongest method (held); on 20-39 the weakest (not held): the
    confirmatory verdict differs, the pooled one sits between, and the sentence names the flip."""
    declared = registration.seed_sets()
    assert declared["sets"] == {"exploratory": [0, 19], "confirmatory": [20, 39], "pooled": [0, 39]}
    sets = seeds.evaluate_sets(with_unseen(WORST), resamples=50)
    strongest = sets[(sets["id"] == "main-strongest") & (sets["reading"] == "default")].set_index("seeds")
    assert strongest.loc["exploratory", "verdict"] == "held" and strongest.loc["confirmatory", "verdict"] == "not held"
    assert strongest["n_seeds"].to_dict() == {"exploratory": 20, "confirmatory": 20, "pooled": 40}
    assert set(sets["id"]) <= set(seeds.claims_on([MAIN, "known-truth"]))
    sentence = seeds.sentence(sets)
    assert sentence.startswith("Of the ") and "on seeds 20-39, run after the tests were registered" in sentence
    assert "main-strongest" in sentence.split("come out the other way")[1]
    # the same methods on the unseen seeds: main-strongest comes out the same
    same = seeds.evaluate_sets(with_unseen(SUPPORTING), resamples=50)
    kept = same[(same["id"] == "main-strongest") & (same["reading"] == "default")].set_index("seeds")["verdict"]
    assert kept.to_dict() == {"exploratory": "held", "confirmatory": "held", "pooled": "held"}
    assert "main-strongest" not in seeds.sentence(same)


def test_before_the_unseen_seeds_run_only_the_seeds_that_ran_are_a_set() -> None:
    """The published reference today: seeds 0-19 alone, whose verdicts are the study's own; the
    pooled set would be the same seeds and the confirmatory set has none: no table, no sentence."""
    sets = seeds.evaluate_sets(study(seeds=20), resamples=50)
    assert sets.empty and list(sets.columns) == seeds.COLUMNS
    assert seeds.sentence(sets) == ""


def test_the_report_folds_each_claim_s_verdict_per_seed_set_under_its_sentence(tmp_path) -> None:
    """The Claims section's folded table: one row per claim, one column per seed set that ran (its
    seeds in the header), the verdict cells as elsewhere; the sentence above it."""
    from oscbo.report.sections import verdicts
    from oscbo.report.sections.inputs import ReportInputs

    sets = seeds.evaluate_sets(with_unseen(WORST), resamples=50)
    findings = pd.DataFrame([("seed_sets", seeds.sentence(sets))], columns=["id", "text"])
    inputs = ReportInputs(tmp_path, {"seed_sets": sets, "findings": findings}, {}, {})
    (folded,) = verdicts._seed_sets(inputs)
    shown, table = folded["blocks"]
    assert shown["text"] == seeds.sentence(sets)
    assert table["columns"] == [
        "the paper's claim",
        "exploratory (seeds 0-19)",
        "confirmatory (seeds 20-39)",
        "pooled (seeds 0-39)",
    ]
    row = next(row for row in table["rows"] if row[0]["href"] == "#claim-main-strongest")
    assert [cell["text"].split(" ·")[0] for cell in row[1:3]] == ["held", "not held"]
    alone = seeds.evaluate_sets(study(seeds=20), resamples=50)
    assert verdicts._seed_sets(ReportInputs(tmp_path, {"seed_sets": alone, "findings": findings}, {}, {})) == []


def test_a_set_ranks_the_experiment_s_methods_not_another_reading_s_stand_ins() -> None:
    """A reading the sets are not judged under (not the headline) has a stand-in in main that beats
    every method on seeds 0-19: the sets leave it out, as the study's own verdicts do, so OSCBO stays
    first of main's methods and "among the strongest" holds there. Found on the reference, where the
    λ₀ grid's fourteen stand-ins and Material 5D (maximised) were ranked as main's methods and
    task, and then, that task left out, TabICLv2's not-run row for it made every main claim "not
    evaluated"."""
    from oscbo.analysis import readings as readings_

    tables = with_unseen(SUPPORTING)
    grid = readings_.Reading("lambda0=0.2", "a reading of the grid", methods={"oscbo-lambda0=0.2": "oscbo"})
    maximised = readings_.Reading("t1-max", "a task read another way", tasks={"t1-max": "t1"})
    tables["readings"] = readings_.to_table([*readings_.from_table(tables["readings"]), grid, maximised])
    stand_in = pd.DataFrame(final_rows(MAIN, {"oscbo-lambda0=0.2": (0.001, 0.5)}, MAIN_TASKS, 20))
    tables["final"] = pd.concat([tables["final"], stand_in], ignore_index=True)
    # a method that did not run the other reading's task: not a task of main's, so nothing missing
    absent = {"experiment": MAIN, "task": "t1-max", "method": "tabicl", "seeds": 20, "reason": "no checkpoint"}
    tables["not_run"] = pd.concat([tables["not_run"], pd.DataFrame([absent])], ignore_index=True)
    sets = seeds.evaluate_sets(tables, resamples=50)
    strongest = sets[(sets["id"] == "main-strongest") & (sets["reading"] == "default")].set_index("seeds")
    assert strongest.loc["exploratory", "verdict"] == "held"
    assert f"place 1 of {len(SUPPORTING)}" in strongest.loc["exploratory", "direction"]
    assert "lambda0=0.2" not in " ".join(sets["numbers"].dropna())
