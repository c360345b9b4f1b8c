"""The claims' tests, registered before the evidence: a digest of everything a verdict reads, taken
before the reference's first run, and every later change declared as an amendment.

A verdict reads the code the findings stage executes and the study's readings: the digest covers
the code of every module in the import closure of :mod:`oscbo.findings` (:data:`MODULES`, read as a
job's code identity is read, :func:`oscbo.imports.closure`; the claims, their measures and
constants, the resampling, the evaluator, the answer's words and :mod:`oscbo.paper`'s names such as
Fig. 3 bottom's task), without docstrings or comments (:func:`oscbo.imports.code`), so that prose
may be mended and a change of what a verdict computes may not; and the config values the claims
read (:data:`CONFIG_KEYS` of the registered study's config, :data:`CONFIG`: its readings, its
headline, what it does not run). ``registration.yaml`` beside this file holds the registration (its
date, the commit whose tests it registers, the digest), the amendments, each with its date, its
reason, the claims it changes, their verdicts under the registered test and the amended one, the
digest before it (``previous``) and after it, and the claims whose evidence was public before
their tests were registered. ``tests/findings/test_registration.py`` fails when today's digest is
not the last amendment's, when an amendment's ``previous`` breaks the chain, or when the last
amendment's verdicts are not the published ones.

The first three amendments predate the closure: their digests are of the six modules the claims
were first written in (:data:`FIRST_MODULES`), and the fourth moves the digest to the closure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from oscbo import imports
from oscbo.analysis.summaries import distinct_runs, runs_counted

#: The package whose import closure the findings stage executes (``workflow/scripts/findings.py``).
STAGE = "oscbo.findings"
#: The modules the first registration and its first three amendments digested.
FIRST_MODULES = (
    "oscbo.findings.catalogue",
    "oscbo.findings.claims",
    "oscbo.findings.evaluate",
    "oscbo.findings.measures",
    "oscbo.findings.sampling",
    "oscbo.findings.thresholds",
)
#: Every module the findings stage executes: the code the verdicts are computed by.
MODULES = tuple(sorted(imports.closure([STAGE])))
RECORD = Path(__file__).with_name("registration.yaml")
#: The registered study's config (the reference's), and the values of it that the claims read.
CONFIG = imports.SOURCE_ROOT.parents[1] / "config" / "reference.yaml"
CONFIG_KEYS = ("readings", "not_run")
#: The keys an amendment holds, and those one made since the digest covers the closure holds too.
AMENDMENT_KEYS = {"date", "reason", "claims", "before", "after", "digest"}
CHAINED_KEYS = {"previous", "tables"}


class UnregisteredChange(RuntimeError):
    """The tests' code differs from the registered one and no amendment declares the difference."""


def config_values(path: str | Path = CONFIG) -> dict[str, Any]:
    """The values of the registered study's config that the claims read (:data:`CONFIG_KEYS`)."""
    found = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    return {key: found.get(key) for key in CONFIG_KEYS}


def seed_sets(path: str | Path = RECORD) -> dict[str, Any]:
    """The seed sets the claims are judged on, as ``registration.yaml`` declares them (``{}`` if none):
    ``{"sets": {name: [first, last]}, "confirmatory": name, "experiments": [...], "registered": date}``."""
    found = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    return dict(found.get("seed_sets") or {})


def digest(
    sources: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
    seeds: Mapping[str, Any] | None = None,
) -> str:
    """SHA-256 of the code of :data:`MODULES`, of :func:`config_values` and of the registered
    :func:`seed_sets` (``sources``: module -> source text, in place of the files; ``config``: in
    place of the config's values; ``seeds``: in place of the seed sets; a test changes a constant so)."""
    sources = dict(sources or {})
    sha = hashlib.sha256()
    for module in MODULES:
        text = sources.get(module)
        if text is None:
            text = imports.module_file(module).read_text(encoding="utf-8")
        sha.update(module.encode() + b"\0" + imports.code(text).encode() + b"\0")
    values = config_values() if config is None else dict(config)
    sha.update(b"config\0" + json.dumps(values, sort_keys=True, default=str).encode())
    declared = seed_sets() if seeds is None else dict(seeds)
    if declared:  # absent before the sixth amendment, whose digests stay as they were
        sha.update(b"seed sets\0" + json.dumps(declared, sort_keys=True, default=str).encode())
    return sha.hexdigest()


@dataclass(frozen=True)
class Registration:
    """The registration and its amendments, as ``registration.yaml`` holds them."""

    date: str
    commit: str
    digest: str
    amendments: tuple[dict[str, Any], ...]
    #: claim -> why its evidence was public before its test was registered
    public_before: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, path: str | Path = RECORD) -> Registration | None:
        """The registration, or None while the tests are not registered yet."""
        found = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        registered = found.get("registered")
        if not registered:
            return None
        chained = False
        for amendment in found.get("amendments") or []:
            chained = chained or "previous" in amendment
            missing = (AMENDMENT_KEYS | (CHAINED_KEYS if chained else set())) - set(amendment)
            if missing:
                raise ValueError(f"{path}: an amendment lacks {sorted(missing)}: {amendment}")
        return cls(
            str(registered["date"]),
            str(registered["commit"]),
            str(registered["digest"]),
            tuple(found.get("amendments") or ()),
            dict(found.get("public_before") or {}),
        )

    @property
    def in_force(self) -> str:
        """The digest of the tests as registered and amended."""
        return self.amendments[-1]["digest"] if self.amendments else self.digest

    def chain(self) -> None:
        """Raise :class:`UnregisteredChange` where an amendment's ``previous`` is not the digest in
        force before it, or where it declares a change and names the same digest after it."""
        before = self.digest
        for number, amendment in enumerate(self.amendments, start=1):
            if "previous" in amendment and amendment["previous"] != before:
                raise UnregisteredChange(
                    f"amendment {number} ({amendment['date']}) amends digest {str(amendment['previous'])[:12]}, "
                    f"but the digest in force before it is {before[:12]}: the chain of amendments is broken"
                )
            if amendment["digest"] == before:
                raise UnregisteredChange(f"amendment {number} ({amendment['date']}) changes no digest")
            before = amendment["digest"]

    def check(self, current: str | None = None) -> None:
        """Raise :class:`UnregisteredChange` unless the chain holds and ``current`` (default: today's
        :func:`digest`) is the registered tests' or the last amendment's."""
        self.chain()
        current = current or digest()
        if current != self.in_force:
            raise UnregisteredChange(
                f"the code the findings stage executes ({len(MODULES)} modules, {STAGE} and its imports) or the "
                f"config values the claims read ({', '.join(CONFIG_KEYS)} of {CONFIG.name}) changed since the "
                f"tests were registered on {self.date} (digest {self.in_force[:12]}, now {current[:12]}) and no "
                f"amendment in {RECORD.name} declares it: add one, with its date, reason, the claims it changes, "
                "their verdicts before and after, the digest before and after it, and the tables they were read on"
            )

    def published(self, claims: pd.DataFrame, reading: str = "default") -> list[str]:
        """Where the last amendment's ``after`` verdicts differ from ``claims`` (a findings' claims
        table rendered under it, e.g. the reference's): ``"claim: declared X, published Y"``."""
        if not self.amendments:
            return []
        after = self.amendments[-1]["after"]
        shown = claims[claims["reading"] == reading].set_index("id")["verdict"]
        return [
            f"{claim}: declared {verdict}, published {shown.get(claim, 'absent')}"
            for claim, verdict in after.items()
            if shown.get(claim) != verdict
        ]

    def amended(self) -> dict[str, str]:
        """Each claim whose verdict under the tests in force differs from its verdict under the tests
        as first registered -> that first verdict (the default reading's, on the tables each
        amendment names): the first amendment that changed the claim's verdict holds it as
        ``before``, and the last one's ``after`` is the verdict now."""
        first: dict[str, str] = {}
        for amendment in self.amendments:
            before, after = amendment["before"], amendment["after"]
            for claim in amendment["claims"]:
                if claim not in first and before.get(claim) != after.get(claim):
                    first[claim] = before.get(claim)
        now = self.amendments[-1]["after"] if self.amendments else {}
        return {claim: verdict for claim, verdict in first.items() if now.get(claim) != verdict}

    def runs(self, provenance: pd.DataFrame | None) -> str:
        """A sentence on when a study's runs started (``provenance``'s ``started``) against the
        registration ("" without those times)."""
        if provenance is None or "started" not in provenance or provenance.empty:
            return ""
        started = pd.to_datetime(distinct_runs(provenance)["started"], utc=True, errors="coerce")
        before = int((started < pd.Timestamp(self.date).tz_convert("UTC")).sum())
        if before == 0:
            if len(started) == 1:
                return " The study's one run started after it."
            return f" Every one of this study's {runs_counted(provenance)} started after it."
        return (
            f" {before:,} of this study's {runs_counted(provenance)} started before it: their numbers were known when "
            "the tests were written, so those verdicts are not the registered test of a prediction."
        )

    def seeds(self) -> str:
        """The seed sets the claims are judged on, in a sentence ("" if none is registered)."""
        declared = seed_sets()
        if not declared:
            return ""
        sets = declared["sets"]
        named = "; ".join(f"{name}, seeds {first}-{last}" for name, (first, last) in sets.items())
        return (
            f" Registered on {declared['registered']}, before any of their runs: the seed sets the claims are "
            f"judged on ({named}); a claim that the runs of {' or '.join(declared['experiments'])} can decide is "
            f"decided on the {declared['confirmatory']} set alone, beside the others."
        )

    def public(self) -> str:
        """The claims whose evidence was public before their tests were registered, in a sentence."""
        if not self.public_before:
            return ""
        parts = [f"{claim} ({why})" for claim, why in self.public_before.items()]
        return (
            " The evidence of these claims was public before their tests were registered, so their verdicts "
            "test no prediction: " + "; ".join(parts) + "."
        )

    def sentence(self) -> str:
        """The registration in a sentence, for the report and the reference's README."""
        text = (
            f"The claims' tests and constants were registered on {self.date} at commit {self.commit[:10]} "
            f"(digest {self.digest[:12]} of their code)"
        )
        if not self.amendments:
            return text + "; no amendment since." + self.seeds() + self.public()
        parts = [f"{a['date']}: {a['reason']} ({_verdicts(a)})" for a in self.amendments]
        return (
            text
            + f"; amended {len(parts)} time{'s' * (len(parts) != 1)} since: "
            + "; ".join(parts)
            + "."
            + self.seeds()
            + self.public()
        )


def _verdicts(amendment: dict[str, Any]) -> str:
    """What an amendment did to the verdicts of the claims it touches: each changed one, before and after."""
    before, after = amendment["before"], amendment["after"]
    changed = [c for c in amendment["claims"] if before.get(c) != after.get(c)]
    if not changed:
        touched = len(amendment["claims"])
        if touched == 1:
            return "no verdict changed: the claim it touches has the same verdict"
        return f"no verdict changed: the {touched} claims it touches have the same verdicts"
    return ", ".join(
        f"{c}: {before.get(c, '?')} under the registered test, {after.get(c, '?')} amended" for c in changed
    )


def sentence(provenance: pd.DataFrame | None = None) -> str:
    """What the report says of the registration today, and of when the study's runs started
    (``provenance``: the summary table, its ``started`` column) against it."""
    registration = Registration.read()
    if registration is None:
        return "The claims' tests are not registered yet: their verdicts may still change with them."
    try:
        registration.check()
    except UnregisteredChange as changed:
        return f"Warning: {changed}."
    return registration.sentence() + registration.runs(provenance)


if __name__ == "__main__":
    print(digest())
