"""MKL's strict reproducible mode: asked for on import, reported, and warned about when lost."""

import subprocess
import sys

from oscbo import run as engine
from oscbo.reproducibility import mkl_mode


def test_importing_oscbo_first_makes_mkl_strict():
    assert mkl_mode() == "strict"  # conftest imports oscbo before torch computes anything


def test_a_run_records_the_mode():
    meta = engine.run("hartmann3", "gp-ucb-mll", [0], budget=1, n_init=3).meta
    assert meta["mkl_reproducibility"] == "strict"


def test_mkl_started_before_oscbo_is_reported_and_warned_about():
    code = (
        "import warnings, torch\n"
        "a = torch.randn(20, 20, dtype=torch.float64); a @ a\n"  # MKL starts without the mode
        "from oscbo import reproducibility\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    print(reproducibility.warn_unless_strict(), len(caught))\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "MKL_CBWR"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["not", "strict", "1"]
