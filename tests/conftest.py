"""Test-wide settings, and the order the test modules start in."""

# isort: off
import oscbo  # noqa: F401  (first of all: it pins the numerical code path before torch and NumPy start)

# isort: on
import pytest
import torch
from threadpoolctl import threadpool_limits


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
    """The modules of :data:`FIRST` first, in its order; the rest as collected (a stable sort)."""

    def order(item: pytest.Item) -> int:
        path = item.path.as_posix()
        return next((index for index, name in enumerate(FIRST) if path.endswith(f"tests/{name}")), len(FIRST))

    items.sort(key=order)
