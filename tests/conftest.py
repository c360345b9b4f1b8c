"""Test-wide settings, and the order the test modules start in."""

# isort: off
import oscbo  # noqa: F401  (first of all: it pins the numerical code path before torch and NumPy start)

# isort: on
import csv
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import tiny_study
import torch
from threadpoolctl import threadpool_limits

from oscbo import provenance

#: The processes a test started (the audit hook below fills it while a test runs).
STARTED: list[str] = []
_WATCHING = [False]
#: Audit events that start a process (sys.audit's table: subprocess, os.exec*, os.spawn*, os.fork ...).
PROCESS_EVENTS = {"subprocess.Popen", "os.exec", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system"}


def _audit(event: str, args: tuple) -> None:
    if _WATCHING[0] and event in PROCESS_EVENTS:
        what = args[1] if event == "subprocess.Popen" else args[0] if args else ""  # os.fork has none
        STARTED.append(f"{event}: {str(what)[:120]}")


sys.addaudithook(_audit)


@pytest.fixture(autouse=True, scope="session")
def asked_once_per_process():
    """What a process asks the system once and keeps, asked before any test runs: the checkout's
    commit (``git``; the sidecars cache it, as one workflow job does), the processor's name
    (:func:`platform.processor` runs ``uname -p``) and scikit-learn's count of physical cores
    (joblib runs ``lscpu``). No unit test starts a process for them."""
    provenance.git_commit()
    provenance.hardware()
    try:
        from joblib import cpu_count
    except ImportError:
        return
    cpu_count(only_physical_cores=True)


@pytest.fixture(scope="session")
def tiny_config() -> dict[str, Any]:
    """The tiny study's config (tests/tiny_study.py), read by the workflow's tests and by those of
    what an edit re-runs; a test that changes it copies it."""
    return tiny_study.tiny_config()


@pytest.fixture
def processes() -> list[str]:
    """For a test that starts processes on purpose (a fresh interpreter, a pool, a browser, a job
    per device): what it started so far, to assert on. Using it puts the test in the e2e tier."""
    return STARTED


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tier",
        choices=("unit", "e2e", "all"),
        default=None,
        help="unit: the tests that start no process (plain `pytest`); e2e: those that do (tests/workflow, and any "
        "test that uses the `processes` fixture); all: both (the default where paths or a mark choose the tests)",
    )
    parser.addoption(
        "--reverse",
        action="store_true",
        help="run the tests in reverse order (each module's long-first place kept): no test may lean on one "
        "run before it (the README's test command runs the e2e tier so)",
    )


#: The project's mark expression (``addopts``): what a plain ``pytest`` runs.
DEFAULT_MARKS = "not slow and not slurm"


def tier(config: pytest.Config) -> str:
    """The tier to run: ``--tier``'s; else ``unit`` for a plain ``pytest`` (no paths, the project's
    marks), and ``all`` where paths or a mark (``-m slow``, ``-m slurm``) choose the tests."""
    chosen = config.getoption("--tier")
    if chosen:
        return chosen
    plain = config.args_source == pytest.Config.ArgsSource.TESTPATHS and config.option.markexpr == DEFAULT_MARKS
    return "unit" if plain else "all"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A test module that can hold no test of the tier asked for is not imported (each test process
    would otherwise import the whole suite to run a tier): tests/workflow is all end-to-end, and a
    module elsewhere holds an end-to-end test only where it names the ``processes`` fixture."""
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    chosen = tier(config)
    workflow = "tests/workflow/" in collection_path.as_posix()
    if chosen == "unit" and workflow:
        return True
    if chosen == "e2e" and not workflow and "processes" not in collection_path.read_text(encoding="utf-8"):
        return True
    return None


def e2e(item: pytest.Item) -> bool:
    """End-to-end by where it lives (tests/workflow: the real Snakemake DAG, kills, SLURM) or what it
    uses (the ``processes`` fixture, directly or through another fixture)."""
    return "tests/workflow/" in item.path.as_posix() or "processes" in getattr(item, "fixturenames", ())


@pytest.fixture(autouse=True)
def no_process_in_the_unit_tier(request: pytest.FixtureRequest):
    """The unit tier starts no process: a test that does is end-to-end, and says so by where it lives
    or what it uses (``e2e``, :func:`pytest_collection_modifyitems`); one that is not marked fails."""
    STARTED.clear()
    _WATCHING[0] = True
    yield
    _WATCHING[0] = False
    if STARTED and request.node.get_closest_marker("e2e") is None:
        pytest.fail(f"a unit-tier test started {len(STARTED)} process(es): {STARTED[:3]}", pytrace=False)


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """One torch and BLAS thread, as the workflow's BO jobs run: on two busy cores the
    default thread pools make these small problems up to ten times slower."""
    threads = torch.get_num_threads()
    with threadpool_limits(limits=1):
        torch.set_num_threads(1)
        yield
    torch.set_num_threads(threads)


def measured_order(table: Path = Path(__file__).parents[1] / "benchmarks" / "measurements.csv") -> list[str]:
    """The test modules the latest ``benchmarks/suite_time.py`` measurement (the measurements table)
    found costliest, costliest first, by their CPU seconds at the commit it measured last."""
    with table.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    runs = [row for row in rows if row["command"].startswith("python benchmarks/suite_time.py")]
    if not runs:
        return []
    latest = [row for row in runs if row["date"] == runs[-1]["date"]]
    ratios = (re.fullmatch(r"test suite CPU time, (\w+) / \w+", row["figure"]) for row in latest)
    after = next(match for match in ratios if match)
    pattern = re.compile(rf"test suite at {after.group(1)}, CPU of tests/([^:]+\.py) \(its processes included\)")
    seconds = {match.group(1): float(row["value"]) for row in latest if (match := pattern.fullmatch(row["figure"]))}
    return sorted(seconds, key=seconds.get, reverse=True)


#: The costliest modules, costliest first (:func:`measured_order`). pytest-xdist's ``--dist loadfile
#: --no-loadscope-reorder`` (the project's ``addopts``) hands whole modules to its processes in
#: collection order, the next to whichever process runs short: started first, longest first, they
#: run beside each other and beside the short modules instead of after them (left to reorder,
#: pytest-xdist starts the modules with the most tests first, and the kill test last).
FIRST = measured_order()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked with its tier (``e2e`` or ``unit``) and those of another tier (:func:`tier`)
    left out; the modules of :data:`FIRST` first, in its order; the rest as collected (a stable
    sort), or each module's tests and the modules after them in reverse with ``--reverse``."""
    chosen = tier(config)
    kept, left = [], []
    for item in items:
        item.add_marker("e2e" if e2e(item) else "unit")
        (kept if chosen == "all" or item.get_closest_marker(chosen) else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
    if config.getoption("--reverse"):
        items.reverse()

    def order(item: pytest.Item) -> int:
        path = item.path.as_posix()
        return next((index for index, name in enumerate(FIRST) if path.endswith(f"tests/{name}")), len(FIRST))

    items.sort(key=order)
