"""The words a claim's verdict can take, as the claims table writes them and the report reads them.

A claim the study tested is ``held`` or ``not held`` when its resamples agree (the findings'
rule, :mod:`oscbo.findings.claims`), else ``undecided``; one it could not test is ``not
evaluable`` (its statistic is undefined), ``not evaluated`` (a run it needs did not happen) or,
under a reading none of whose stand-ins ran in its experiment, ``not applicable``; a claim that
explains an effect the study does not show (the paper's premise fails as run) is ``premise fails``. Both the
findings and the report import them from here (the report does not import the findings' code).
"""

from __future__ import annotations

HELD, NOT_HELD, UNDECIDED = "held", "not held", "undecided"
NOT_EVALUABLE, NOT_EVALUATED, NOT_APPLICABLE = "not evaluable", "not evaluated", "not applicable"
PREMISE_FAILS = "premise fails"
#: The words of a claim the study tested: the seeds decided it, or left it undecided.
TESTED = (HELD, NOT_HELD, UNDECIDED)
VERDICTS = (*TESTED, PREMISE_FAILS, NOT_EVALUABLE, NOT_EVALUATED, NOT_APPLICABLE)
