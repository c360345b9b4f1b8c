"""The pinned numerical code path: set on import, recorded, warned about when lost, and the same
records whatever CPU the libraries think they run on (other CPUs simulated on this one, and an AMD
EPYC emulated in software)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from helpers import PINNED_PATH_SUPPORTED, clean_environment, needs_pinned_path

from oscbo import records, reproducibility
from oscbo import run as engine

#: One small job: a GP (MKL), BoTorch's L-BFGS-B (OpenBLAS), torch's elementwise kernels (ATen).
JOB = """
import sys
import oscbo
from oscbo import reproducibility
from oscbo.run import run
result = run("hartmann3", "oscbo", [0, 1], budget=6, n_init=5)
import pandas as pd
pd.concat(result.tables.values()).to_parquet(sys.argv[1])
print(reproducibility.code_path()["summary"])
"""


def run_job(path: Path, **env: str) -> tuple[pd.DataFrame, str]:
    """The small job in a fresh process whose environment has ``env`` and none of :data:`PATH_VARIABLES`."""
    out = subprocess.run(
        [sys.executable, "-c", JOB, str(path)], capture_output=True, text=True, env=clean_environment(**env), check=True
    )
    return pd.read_parquet(path).drop(columns=records.SECONDS_COLUMNS), out.stdout.strip().splitlines()[-1]


@needs_pinned_path
def test_importing_oscbo_first_pins_the_code_path() -> None:
    path = reproducibility.code_path()  # conftest imports oscbo before torch or NumPy compute anything
    assert path["pinned"], path
    assert path["summary"] == "pinned: MKL COMPATIBLE, torch AVX2, OpenBLAS Haswell, NumPy X86_V3"
    assert {k: os.environ[k] for k in reproducibility.pinned_environment()} == reproducibility.pinned_environment()


def test_a_run_records_its_code_path() -> None:
    meta = engine.run("hartmann3", "gp-ucb-mll", [0], budget=1, n_init=3).meta
    assert meta["code_path"] == reproducibility.code_path()
    assert meta["code_path"]["pinned"] is PINNED_PATH_SUPPORTED
    assert not reproducibility.code_path("cuda:0")["pinned"]
    assert reproducibility.code_path("cuda:0")["summary"].startswith("not pinned (runs on cuda:0")


@needs_pinned_path
def test_libraries_started_before_oscbo_are_reported_and_warned_about(processes) -> None:
    code = (
        "import warnings, torch, numpy\n"
        "a = torch.randn(20, 20, dtype=torch.float64); a @ a\n"  # MKL starts without the pin
        "from oscbo import reproducibility\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    path = reproducibility.warn_unless_pinned()\n"
        "print(path['mkl'], path['pinned'], sum('numerical code path' in str(w.message) for w in caught))\n"
        "print(path['summary'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=clean_environment(), check=True
    ).stdout.splitlines()
    assert out[0] == "off False 1"
    assert out[1].startswith("not pinned (MKL")  # ATen and OpenBLAS: this machine's own kernels, maybe the same
    assert "started before oscbo was imported" in out[1]


def test_native_leaves_the_environment_as_it_is(processes) -> None:
    code = "import os, oscbo; print(os.environ.get('MKL_CBWR'), os.environ.get('ATEN_CPU_CAPABILITY'))"
    env = clean_environment(OSCBO_NUMERICS="native", ATEN_CPU_CAPABILITY="default")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["None", "default"]


def torch_capabilities() -> list[str]:
    """The ATen CPU capabilities this machine can run (the variable would otherwise pick its best)."""
    flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")).split()
    return ["default", "avx2"] + (["avx512"] if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags) else [])


@needs_pinned_path
def test_records_are_the_same_on_every_simulated_cpu(tmp_path: Path, processes) -> None:
    """The small job natively and on simulated CPUs: MKL told the CPU has AVX2 or SSE4.2 at most
    (as MKL runs on an AVX2-only Intel CPU, or an older one), each torch CPU capability of this
    machine, OpenBLAS's Sandy Bridge kernels, NumPy's AVX2 loops off: every column but timing
    equal. The machine's own kernels with ATen's scalar ones and OpenBLAS's Sandy Bridge ones,
    unpinned, give other records: the check can fail."""
    capabilities = torch_capabilities()
    simulated = [
        {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ATEN_CPU_CAPABILITY": capabilities[0], "OPENBLAS_CORETYPE": "Sandybridge"},
        {
            "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
            "ATEN_CPU_CAPABILITY": capabilities[1],
            "NPY_DISABLE_CPU_FEATURES": "X86_V3",
        },
        *({"ATEN_CPU_CAPABILITY": capability} for capability in capabilities[2:]),
    ]
    unpinned = {"OSCBO_NUMERICS": "native", "ATEN_CPU_CAPABILITY": "default", "OPENBLAS_CORETYPE": "Sandybridge"}
    environments = [{}, *simulated, unpinned]
    with ThreadPoolExecutor(max_workers=2) as pool:  # one process each, two at a time
        runs = list(
            pool.map(lambda i: run_job(tmp_path / f"run{i}.parquet", **environments[i]), range(len(environments)))
        )
    (reference, summary), *rest, (other, other_summary) = runs
    assert summary.startswith("pinned: ")
    for env, (table, summary) in zip(simulated, rest):
        assert summary.startswith("pinned: "), (env, summary)
        pd.testing.assert_frame_equal(table, reference, check_exact=True, obj=f"records under {env}")
    assert other_summary.startswith("not pinned (OSCBO_NUMERICS=native)")
    assert (other["y"] != reference["y"]).any()


#: A software x86-64: QEMU emulates exactly every instruction whose result IEEE 754 fixes, and
#: differently from the hardware those it leaves to the chip (approximate reciprocals and square
#: roots), as an AMD CPU does from an Intel one.
QEMU = shutil.which("qemu-x86_64")


@pytest.mark.slow
@needs_pinned_path
@pytest.mark.skipif(QEMU is None, reason="needs qemu-x86_64 (apt-get install qemu-user)")
def test_records_are_the_same_on_a_software_cpu(tmp_path: Path) -> None:
    """The small job on this CPU and emulated on an AMD EPYC (QEMU): every column but timing equal.
    With torch's own square root (``OSCBO_NUMERICS=native`` and the other settings of the pinned
    path by hand) the emulated records differ: the check can fail. Minutes (QEMU is ~20x slower)."""
    by_hand = {**reproducibility.pinned_environment(), "OSCBO_NUMERICS": "native"}

    def emulated(path: Path, **env: str) -> pd.DataFrame:
        command = [QEMU, "-cpu", "EPYC-Milan", sys.executable, "-c", JOB, str(path)]
        subprocess.run(command, capture_output=True, text=True, env=clean_environment(**env), check=True)
        return pd.read_parquet(path).drop(columns=records.SECONDS_COLUMNS)

    reference, summary = run_job(tmp_path / "native.parquet")
    assert summary.startswith("pinned: ")
    pd.testing.assert_frame_equal(emulated(tmp_path / "emulated.parquet"), reference, check_exact=True)
    torch_sqrt, _ = run_job(tmp_path / "torch-sqrt.parquet", **by_hand)
    assert not emulated(tmp_path / "torch-sqrt-emulated.parquet", **by_hand).equals(torch_sqrt)
