"""The claims' tests, registered before the evidence: a digest of their code and constants, taken
before the reference's first run, and every later change declared as an amendment.

The tests are the code of :data:`MODULES` (the claims, the measures they compare, their constants,
the resampling, the rule that turns resamples into a verdict's word, and the evaluator that bounds a
missing task and applies the negative control): their digest is of their
code without docstrings or comments (:func:`oscbo.imports.code`), so that prose may be mended and a
change of what a test computes may not. ``registration.yaml`` beside this file holds the
registration (its date, the commit whose tests it registers, the digest) and the amendments, each
with its date, its reason, the claims it changes, their verdicts under the registered test and the
amended one, and the digest after it. ``tests/findings/test_registration.py`` fails when today's
digest is neither the registered one nor the last amendment's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from oscbo import imports

#: The modules whose code is the claims' tests and constants.
MODULES = (
    "oscbo.findings.catalogue",
    "oscbo.findings.claims",
    "oscbo.findings.evaluate",
    "oscbo.findings.measures",
    "oscbo.findings.sampling",
    "oscbo.findings.thresholds",
)
RECORD = Path(__file__).with_name("registration.yaml")


class UnregisteredChange(RuntimeError):
    """The tests' code differs from the registered one and no amendment declares the difference."""


def digest(sources: Mapping[str, str] | None = None) -> str:
    """SHA-256 of the code of :data:`MODULES` (``sources``: module -> source text, in place of the
    files; a test changes a constant so)."""
    sources = dict(sources or {})
    sha = hashlib.sha256()
    for module in MODULES:
        text = sources.get(module)
        if text is None:
            text = imports.module_file(module).read_text(encoding="utf-8")
        sha.update(module.encode() + b"\0" + imports.code(text).encode() + b"\0")
    return sha.hexdigest()


@dataclass(frozen=True)
class Registration:
    """The registration and its amendments, as ``registration.yaml`` holds them."""

    date: str
    commit: str
    digest: str
    amendments: tuple[dict[str, Any], ...]

    @classmethod
    def read(cls, path: str | Path = RECORD) -> Registration | None:
        """The registration, or None while the tests are not registered yet."""
        found = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        registered = found.get("registered")
        if not registered:
            return None
        for amendment in found.get("amendments") or []:
            missing = {"date", "reason", "claims", "before", "after", "digest"} - set(amendment)
            if missing:
                raise ValueError(f"{path}: an amendment lacks {sorted(missing)}: {amendment}")
        return cls(
            str(registered["date"]),
            str(registered["commit"]),
            str(registered["digest"]),
            tuple(found.get("amendments") or ()),
        )

    @property
    def in_force(self) -> str:
        """The digest of the tests as registered and amended."""
        return self.amendments[-1]["digest"] if self.amendments else self.digest

    def check(self, current: str | None = None) -> None:
        """Raise :class:`UnregisteredChange` unless ``current`` (default: today's :func:`digest`) is
        the registered tests' or the last amendment's."""
        current = current or digest()
        if current != self.in_force:
            raise UnregisteredChange(
                f"the claims' tests ({', '.join(MODULES)}) changed since they were registered on {self.date} "
                f"(digest {self.in_force[:12]}, now {current[:12]}) and no amendment in {RECORD.name} declares it: "
                "add one, with its date, reason, the claims it changes and their verdicts before and after"
            )

    def runs(self, provenance: pd.DataFrame | None) -> str:
        """A sentence on when a study's runs started (``provenance``'s ``started``) against the
        registration ("" without those times)."""
        if provenance is None or "started" not in provenance or provenance.empty:
            return ""
        started = pd.to_datetime(provenance["started"], utc=True, errors="coerce")
        before = int((started < pd.Timestamp(self.date).tz_convert("UTC")).sum())
        if before == 0:
            if len(started) == 1:
                return " The study's one run started after it."
            return f" Every one of this study's {len(started):,} runs started after it."
        return (
            f" {before:,} of this study's {len(started):,} runs started before it: their numbers were known when "
            "the tests were written, so those verdicts are not the registered test of a prediction."
        )

    def sentence(self) -> str:
        """The registration in a sentence, for the report and the reference's README."""
        text = (
            f"The claims' tests and constants were registered on {self.date} at commit {self.commit[:10]} "
            f"(digest {self.digest[:12]} of their code)"
        )
        if not self.amendments:
            return text + "; no amendment since."
        parts = [f"{a['date']}: {a['reason']} ({_verdicts(a)})" for a in self.amendments]
        return text + f"; amended {len(parts)} time{'s' * (len(parts) != 1)} since: " + "; ".join(parts) + "."


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
