"""Test-wide settings."""

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
