"""Test-wide settings, and the order the test modules start in."""

# isort: off
import oscbo  # noqa: F401  (first of all: it pins the numerical code path before torch and NumPy start)

# isort: on
import sys

import pytest
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


@pytest.fixture
def processes() -> list[str]:
    """For a test that starts processes on purpose (a fresh interpreter, a pool, a browser, a job
    per device): what it started so far, to assert on. Using it puts the test in the e2e tier."""
    return STARTED


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tier",
        choices=("unit", "e2e", "all"),
        default="all",
        help="unit: the tests that start no process; e2e: those that do (tests/workflow, and any test that "
        "uses the `processes` fixture); all (the default): both",
    )


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


#: The longest modules (``pytest --durations=0``: from about 6 minutes down to half a minute,
#: most of the suite's time), longest first. pytest-xdist's ``--dist loadfile
#: --no-loadscope-reorder`` (the project's ``addopts``) hands whole modules to its processes in
#: collection order, the next to whichever process runs short: started first, longest first, they
#: run beside each other and beside the short modules instead of after them (left to reorder,
#: pytest-xdist starts the modules with the most tests first, and the kill test last).
FIRST = [
    "workflow/test_workflow.py",
    "report/test_figures_and_report.py",
    "workflow/test_workflow_dag.py",
    "workflow/test_kill_resume.py",
    "run/test_reproducibility.py",
    "methods/test_tabicl.py",
    "run/test_lockstep.py",
    "analysis/test_dual.py",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked with its tier (``e2e`` or ``unit``) and those of another ``--tier`` left out;
    the modules of :data:`FIRST` first, in its order; the rest as collected (a stable sort)."""
    tier = config.getoption("--tier")
    kept, left = [], []
    for item in items:
        item.add_marker("e2e" if e2e(item) else "unit")
        (kept if tier == "all" or item.get_closest_marker(tier) else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept

    def order(item: pytest.Item) -> int:
        path = item.path.as_posix()
        return next((index for index, name in enumerate(FIRST) if path.endswith(f"tests/{name}")), len(FIRST))

    items.sort(key=order)
