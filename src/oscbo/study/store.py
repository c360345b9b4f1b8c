"""The record store: a study's finished jobs in two compact files a part, which a repository can
commit, restored into a fresh clone's results folder so that the workflow runs only what is not
there (docs/user-guide.md, "Resuming a study on another machine").

A part (some experiments' jobs) is saved under the store folder as

* ``PART.records.parquet``: the rows of every record of its finished jobs, each with the file it
  came from (``file``, relative to the results folder): one columnar table, so that thousands of
  30-row records compress together;
* ``PART.files.parquet``: every other file the workflow wrote for those jobs, by path: the jobs',
  packs' and part's manifests and the records' sidecars (JSON text), the prepared tables the jobs
  read (bytes), and each record's columns and dtypes, so that it is restored as it was written.

:func:`restore` writes them back where they are missing, the prepared tables first and the
manifests last, so that each output is newer than what it was made from: Snakemake then takes
the restored jobs as done (it keeps an output with no metadata of its own when no input is newer).
A restored record is the frame that was written, column for column and dtype for dtype; the
aggregate reads the same values from it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from oscbo import records
from oscbo.study import sources
from oscbo.study.config import method_specs
from oscbo.study.job import Manifest

RECORDS, FILES = ".records.parquet", ".files.parquet"
#: The run code the store's parts ran on: file name -> SHA-256 of its code (its first part's).
RUN_CODE = "run-code.json"
#: Changes of run code since the parts ran, each declared to leave every record as it was
#: (:func:`held_run_code`).
CHANGES = "run-code-changes.yaml"
#: The order files are restored in: what jobs read, then records and sidecars, then manifests.
ORDER = {"data": 0, "record": 1, "sidecar": 1, "manifest": 2, "pack": 3, "part": 4}


def run_code(config: dict[str, Any]) -> dict[str, str]:
    """Every file the BO jobs of a validated study execute, by :func:`~oscbo.study.sources.name`,
    with the SHA-256 of its code (:func:`~oscbo.study.sources.code`): the run code a store holds
    its parts to."""
    pairs = {
        (spec.name, task)
        for experiment in config["experiments"].values()
        for spec in method_specs(experiment)
        for task in experiment["tasks"]
    }
    files = {path for method, task in pairs for path in sources.run_sources(method, task)}
    return {
        sources.name(path): hashlib.sha256(sources.code(path)).hexdigest() for path in sorted(files, key=sources.name)
    }


class RunCodeChanged(ValueError):
    """The study's run code is not the one the store's parts ran on; the message names the files."""


def held_run_code(store: str | Path) -> dict[str, str] | None:
    """The run code the store holds its parts to (None: a store without parts, which takes any):
    the code they ran on (:data:`RUN_CODE`), with each change declared since applied in order.

    A change is an entry of :data:`CHANGES`' ``changes``: ``{date, reason, evidence, files}``,
    ``files`` the SHA-256 of each file's code after it (null: the file is gone). It declares that
    the records stay as they were, which ``evidence`` says how it was shown (the golden records,
    and the stored jobs rerun by ``pytest -m slow tests/workflow/test_reference.py``); a change
    that moves a record is not declared, it starts the store over (``oscbo store save --restart``)."""
    path = Path(store) / RUN_CODE
    if not path.is_file():
        return None
    held = json.loads(path.read_text())
    declared = Path(store) / CHANGES
    changes = []
    if declared.is_file():
        changes = (yaml.safe_load(declared.read_text()) or {}).get("changes") or []
    for number, change in enumerate(changes, 1):
        missing = sorted({"date", "reason", "evidence", "files"} - set(change or {}))
        if missing:
            raise ValueError(f"{declared}: change {number} lacks {missing}")
        for name, digest in change["files"].items():
            if digest is None:
                held.pop(name, None)
            else:
                held[name] = digest
    return held


def check_run_code(store: str | Path, code: dict[str, str]) -> None:
    """Raise :class:`RunCodeChanged` unless ``code`` (:func:`run_code`) is the run code the store
    holds its parts to (:func:`held_run_code`; a store without parts takes any). The message names
    the files and gives, for a change that leaves every record as it was, the entry that declares it."""
    held = held_run_code(store)
    if held is None:
        return
    changed = sorted(name for name in held.keys() & code.keys() if held[name] != code[name])
    added, removed = sorted(code.keys() - held.keys()), sorted(held.keys() - code.keys())
    if changed or added or removed:
        parts_ = ", ".join(parts(store))
        files = {name: code.get(name) for name in [*changed, *added, *removed]}
        raise RunCodeChanged(
            f"{store} holds parts ({parts_}) run on other run code: changed {changed}, new {added}, gone {removed}. "
            "A reference runs on one run code: run the part on the code its store ran on, or start the store over "
            f"on purpose (oscbo store save --restart); or, if this change leaves every record as it was, declare "
            f"it in {Path(store) / CHANGES} with its date, reason, evidence and files: {json.dumps(files)}"
        )


@dataclass(frozen=True)
class Saved:
    """What :func:`save` wrote: the part's two files, its jobs and records, and their sizes."""

    files: tuple[Path, Path]
    jobs: int
    records: int
    bytes: int


def _job_files(manifest: Path) -> list[tuple[Path, str]]:
    """A finished job's files: its records and their sidecars, then its manifest."""
    done = Manifest.read(manifest)
    names = [*done.records, *(fault["record"] for fault in done.failed)]
    found = []
    for name in names:
        record = manifest.parent / name
        found += [(record, "record"), (records.sidecar_path(record), "sidecar")]
    return [*found, (manifest, "manifest")]


def finished_files(results: Path, experiments: list[str]) -> list[tuple[Path, str]]:
    """The files of the finished jobs of ``experiments`` under ``results`` (a job is finished when
    its manifest, which it writes last, is there), their packs' manifests and the parts' own."""
    runs = results / "runs"
    found = []
    for experiment in experiments:
        folder = runs / experiment
        for pack in sorted(folder.glob("*/pack-seeds*.json")):
            for manifest in (pack.parent / name for name in json.loads(pack.read_text())["jobs"]):
                found += _job_files(manifest)
            found.append((pack, "pack"))
        packed = {path for path, kind in found if kind == "manifest"}
        for manifest in sorted(folder.glob("*/*/seeds*.json")):
            if manifest not in packed:
                found += _job_files(manifest)
        if (runs / f"{experiment}.json").is_file():
            found.append((runs / f"{experiment}.json", "part"))
    return found


def save(
    results: str | Path,
    store: str | Path,
    part: str,
    experiments: list[str],
    code: dict[str, str],
    restart: bool = False,
) -> Saved:
    """Save the finished jobs of ``experiments`` under ``results`` as part ``part`` of ``store``,
    with the prepared tables under ``results/data`` (atomically; a part saved again is replaced),
    but for the files the store's other parts hold: an experiment run in several parts (its
    tasks a part at a time) is saved as each finishes, every file in one part.

    ``code`` is the study's run code (:func:`run_code`): the first part records
    it, and a later part on other code is refused (:class:`RunCodeChanged`) unless ``restart``,
    which removes the store's parts and starts it over on this code."""
    results, store = Path(results), Path(store)
    if restart:
        for name in parts(store):
            for suffix in (RECORDS, FILES):
                (store / f"{name}{suffix}").unlink(missing_ok=True)
        (store / RUN_CODE).unlink(missing_ok=True)
    check_run_code(store, code)
    held = held_files(store, but=part)
    rows, frames = [], []
    for path, kind in finished_files(results, experiments):
        name = path.relative_to(results).as_posix()
        if name in held:  # an earlier part's: a part of an experiment's jobs adds to the parts before it
            continue
        if kind == "record":
            frame = pd.read_parquet(path)
            frames.append(frame.assign(file=name))
            layout = {"columns": list(frame.columns), "dtypes": {c: str(t) for c, t in frame.dtypes.items()}}
            rows.append({"path": name, "kind": kind, "text": json.dumps(layout), "data": None})
        else:
            rows.append({"path": name, "kind": kind, "text": path.read_text(), "data": None})
    for table in sorted((results / "data").glob("*.parquet")):
        if table.relative_to(results).as_posix() in held:
            continue
        rows.append(
            {"path": table.relative_to(results).as_posix(), "kind": "data", "text": "", "data": table.read_bytes()}
        )
    if not frames:
        raise ValueError(
            f"no finished job of {experiments} under {results / 'runs'} that the store's other parts do not hold: "
            "nothing to save"
        )
    written = (store / f"{part}{RECORDS}", store / f"{part}{FILES}")
    with records.atomic_path(written[0]) as tmp:
        pd.concat(frames, ignore_index=True).to_parquet(tmp, index=False, compression="zstd")
    with records.atomic_path(written[1]) as tmp:
        pd.DataFrame(rows, columns=["path", "kind", "text", "data"]).to_parquet(tmp, index=False, compression="zstd")
    if not (store / RUN_CODE).is_file():
        records.write_json(store / RUN_CODE, code)
    jobs = sum(row["kind"] == "manifest" for row in rows)
    return Saved(written, jobs, len(frames), sum(path.stat().st_size for path in written))


def held_files(store: str | Path, but: str = "") -> set[str]:
    """The files (paths relative to the results folder) that the store's parts hold, but part ``but``."""
    return {
        path
        for name in parts(store)
        if name != but
        for path in pd.read_parquet(Path(store) / f"{name}{FILES}", columns=["path"])["path"]
    }


def parts(store: str | Path) -> list[str]:
    """The parts saved in ``store``, by name."""
    return sorted(path.name.removesuffix(FILES) for path in Path(store).glob(f"*{FILES}"))


def restore(store: str | Path, results: str | Path) -> int:
    """Write every file of every part of ``store`` under ``results`` where it is missing (what the
    results folder already holds is its own, newer work); the number of files written."""
    store, results = Path(store), Path(results)
    written = 0
    for part in parts(store):
        files = pd.read_parquet(store / f"{part}{FILES}")
        rows = pd.read_parquet(store / f"{part}{RECORDS}")
        by_file = dict(tuple(rows.groupby("file", sort=False)))
        for row in sorted(files.itertuples(), key=lambda r: ORDER[r.kind]):
            target = results / row.path
            if target.exists():
                continue
            with records.atomic_path(target) as tmp:
                if row.kind == "record":
                    layout = json.loads(row.text)
                    frame = by_file[row.path][layout["columns"]].reset_index(drop=True).astype(layout["dtypes"])
                    frame.to_parquet(tmp, index=False)
                elif row.kind == "data":
                    tmp.write_bytes(row.data)
                else:
                    tmp.write_text(row.text)
            written += 1
    return written
