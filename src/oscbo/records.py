"""The run record: one tidy table per (experiment, task, method, seed), plus a JSON sidecar.

A record has one row per oracle call (the report's protocol, "What every run records"). Its columns:

======================  ==================================================================
column                  meaning
======================  ==================================================================
experiment, task,       identifiers (the method column holds the method *label*, e.g.
method, seed            ``oscbo`` or ``oscbo-lambda0=0.433`` in an ablation)
step                    0-based oracle call
phase                   ``init`` (initial design) or ``bo``
x_0 .. x_{d-1}          the query, normalised to [0, 1]^d
y                       the observed value (f plus noise, if the task is noisy)
f                       the noise-free value
best_f                  best f observed so far (of the points queried, noise-free)
simple_regret           f* - best_f
cumulative_regret       sum of f* - f over BO rounds (0 on the initial design)
lengthscale_0 ..        the lengthscale(s) of the posterior that chose x_t (one column when
                        the kernel is isotropic, d columns with ARD)
mu, sigma               that posterior's latent mean and std at x_t, in units of y
                        standardised with the data seen before x_t
halfwidth               the method's own interval half-width at x_t (observation level)
covered                 1.0 when the standardised y_t lies inside that interval, else 0.0
loss_sharpness          L^s_t, eq. (6)
loss_sharpness_true     L^s_t at the task's true lengthscale: eq. (6) at x_t under the shared
                        GP on the same data with theta the known-truth task's own (Lemma 6.2's
                        comparator); NaN on a task that declares none
loss_calibration        L^c_t, eq. (7), raw (not clipped)
violation               V_t: the running sum of L^c clipped to [-1, 1] (raw with
                        ``calibration_clip: false``)
lambda                  the multiplier lambda_{t-1} in force when x_t was chosen (OSCBO)
rm_phase                ``play`` or ``recovery`` (OSCBO), empty otherwise
fit_seconds,            wall-clock of the lengthscale update, the acquisition optimisation
acq_seconds,            and the oracle call; a batched job's time divided by its seeds
oracle_seconds
jitter_events           Cholesky jitter escalations while building this round's posterior
======================  ==================================================================

Per-step columns that do not apply to a row (``mu`` on the initial design, ``lambda`` for
GP-UCB-MLL, ...) hold NaN. Files are written atomically: a temporary file in the same folder,
flushed to disk, then renamed, so a killed job never leaves a file that looks finished.

The sidecar's ``status`` is ``complete``, or ``failed`` for a seed that ended at an objective
fault (its record then holds the oracle calls before the fault; ``reason`` and ``failed_step``
say what happened). :func:`read_record` reads complete records only, and names the file of
any record that is missing, unfinished, damaged or lacks a column.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

#: Columns every record has, in order; ``x_*`` and ``lengthscale_*`` follow the task's
#: dimension and the kernel's lengthscale count and are inserted where they belong.
ID_COLUMNS = ["experiment", "task", "method", "seed"]
STEP_COLUMNS = ["step", "phase"]
VALUE_COLUMNS = ["y", "f", "best_f", "simple_regret", "cumulative_regret"]
DIAGNOSTIC_COLUMNS = [
    "mu",
    "sigma",
    "halfwidth",
    "covered",
    "loss_sharpness",
    "loss_sharpness_true",
    "loss_calibration",
    "violation",
    "lambda",
    "rm_phase",
]
SECONDS_COLUMNS = ["fit_seconds", "acq_seconds", "oracle_seconds"]
TIMING_COLUMNS = SECONDS_COLUMNS + ["jitter_events"]

RECORD_SUFFIX = ".parquet"
_UMASK = os.umask(0)
os.umask(_UMASK)
SIDECAR_SUFFIX = ".json"


def x_columns(dim: int) -> list[str]:
    return [f"x_{i}" for i in range(dim)]


def lengthscale_columns(count: int) -> list[str]:
    return [f"lengthscale_{i}" for i in range(count)]


def record_columns(dim: int, lengthscale_count: int) -> list[str]:
    """The ordered column list of a record for a task of dimension ``dim``."""
    return (
        ID_COLUMNS
        + STEP_COLUMNS
        + x_columns(dim)
        + VALUE_COLUMNS
        + lengthscale_columns(lengthscale_count)
        + DIAGNOSTIC_COLUMNS
        + TIMING_COLUMNS
    )


def record_path(directory: str | Path, seed: int) -> Path:
    """``DIR/seed{S}.parquet``; its sidecar is the same path with ``.json``."""
    return Path(directory) / f"seed{seed}{RECORD_SUFFIX}"


def sidecar_path(record: str | Path) -> Path:
    return Path(record).with_suffix(SIDECAR_SUFFIX)


@contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` on success.

    The rename is atomic on POSIX file systems, so readers see either the old file, or
    none, or the complete new one. On an exception the temporary file is removed.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp makes 0600 files; give the usual permissions
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def write_json(path: str | Path, payload: dict[str, Any]) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")


def write_record(path: str | Path, table: pd.DataFrame, sidecar: dict[str, Any]) -> None:
    """Write a record and then its sidecar, each atomically.

    The sidecar is written last and carries ``status``: a record without a sidecar is an
    interrupted write and is ignored by :func:`read_record`.
    """
    path = Path(path)
    with atomic_path(path) as tmp:
        table.to_parquet(tmp, index=False)
    write_json(sidecar_path(path), sidecar)


class RecordError(ValueError):
    """A record or its sidecar cannot be read back: damaged, or without a column of the schema."""


#: What to do about a damaged record: its job's manifest tells the workflow the job is done.
REDO_HINT = "delete it, its sidecar and its job's manifest (seeds*.json beside it), then run the workflow again"


def read_sidecar(path: str | Path) -> dict[str, Any]:
    side = sidecar_path(path)
    try:
        meta = json.loads(side.read_text())
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
        raise RecordError(f"sidecar {side} is damaged ({error}); {REDO_HINT}") from None
    if not isinstance(meta, dict):
        raise RecordError(f"sidecar {side} is damaged (not a JSON object); {REDO_HINT}")
    return meta


def read_record(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read a finished record and its sidecar.

    Raises:
        FileNotFoundError: the record or its sidecar is missing (an interrupted write).
        ValueError: the sidecar's status is not ``complete`` (e.g. a failed run).
        RecordError: either file is damaged, or the record lacks a column of the schema;
            the message names the file.
    """
    path = Path(path)
    side = sidecar_path(path)
    if not path.exists() or not side.exists():
        raise FileNotFoundError(f"record {path} is incomplete: need both {path.name} and {side.name}")
    meta = read_sidecar(path)
    if meta.get("status") != "complete":
        raise ValueError(f"record {path} has status {meta.get('status')!r}, not 'complete'")
    try:
        table = pd.read_parquet(path)
    except Exception as error:  # pyarrow raises several types for a damaged file
        raise RecordError(f"record {path} is damaged ({type(error).__name__}: {error}); {REDO_HINT}") from None
    missing = [column for column in record_columns(0, 0) if column not in table.columns]
    if missing or not any(column.startswith("x_") for column in table.columns):
        raise RecordError(f"record {path} lacks column(s) {missing or ['x_0']} of the schema; {REDO_HINT}")
    return table, meta
