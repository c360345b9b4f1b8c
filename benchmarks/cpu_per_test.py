"""A pytest plugin: each test's CPU seconds, the processes it waited for included, as JSON lines.

    OSCBO_CPU_PER_TEST=cpu.jsonl pytest -p cpu_per_test    (benchmarks/ on PYTHONPATH)

pytest's ``--durations`` are wall times, and with two pytest-xdist processes a test's wall time
holds the other process's load; this plugin counts the CPU each test used instead: this process's
(``RUSAGE_SELF``) and that of every process the test started and waited for (``RUSAGE_CHILDREN``:
a workflow test's Snakemake and its jobs). A test's setup and teardown count as its own: a
module's fixture, with the module's first test. Each pytest process (each xdist worker) appends a
line per test to the file ``OSCBO_CPU_PER_TEST`` names: ``{"test": nodeid, "cpu": seconds}``;
:func:`per_test` and :func:`per_module` read them (``benchmarks/suite_time.py``).
"""

from __future__ import annotations

import json
import os
import resource
from collections import Counter
from pathlib import Path

import pytest

VARIABLE = "OSCBO_CPU_PER_TEST"


def _cpu() -> float:
    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    start = _cpu()
    yield
    if os.environ.get(VARIABLE):
        with open(os.environ[VARIABLE], "a", encoding="utf-8") as handle:  # a line is one write: no interleaving
            handle.write(json.dumps({"test": item.nodeid, "cpu": _cpu() - start}) + "\n")


def per_test(path: str | Path) -> Counter:
    """CPU seconds per test (node id), from the file at ``path``."""
    total: Counter = Counter()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        total[row["test"]] += row["cpu"]
    return total


def per_module(tests: Counter) -> Counter:
    """:func:`per_test`'s seconds added up per test module."""
    total: Counter = Counter()
    for test, seconds in tests.items():
        total[test.split("::")[0]] += seconds
    return total
