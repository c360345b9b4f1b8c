"""The record store's size: a finished study saved as one part, and the store of another study
projected from it, record row by record row.

    python benchmarks/store_size.py [--config config/quick.yaml] [--project config/reference.yaml]
        [--store reference/store] [--no-record]

Saves every experiment of ``--config``'s finished results folder (run the study first) as one
part of a store in a temporary folder (:func:`oscbo.study.store.save`), and measures its two
files beside the records folder they hold (records and sidecars). The store of ``--project`` is
projected from them: the records file's bytes per record row times the projected study's rows
(each distinct run's ``n_init + budget`` oracle calls, :func:`oscbo.study.jobs.owners`), plus
the other file's bytes per record times its records. A record's row is as wide as its study's:
the reference's hold more columns than the quick study's (Lunar Lander's 12 inputs, ARD's
lengthscale per dimension, the end-of-run diagnostics), so the projection leans low there.
``--store``: the projected study's store as saved, measured beside the projection. Prints the
figures and appends them to the measurements table (``benchmarks/measurements.py``).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pandas as pd

from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study import store
from oscbo.study.job import Job

MB = 1e6


def distinct_runs(config: dict) -> list[Job]:
    """The runs a study computes: each distinct run once."""
    found = study_jobs.jobs(config, lambda task: None)
    owners = study_jobs.owners(found)
    return [job for key, job in found.items() if owners[key] == key]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("config/quick.yaml"))
    parser.add_argument("--project", type=Path, default=Path("config/reference.yaml"))
    parser.add_argument("--store", type=Path, help="the projected study's store as saved, measured beside it")
    parser.add_argument("--no-record", action="store_true", help="print only; leave the measurements table as it is")
    args = parser.parse_args()
    config = study_config.load(args.config)
    results = Path(config["results"])
    with tempfile.TemporaryDirectory() as folder:
        saved = store.save(results, folder, "all", list(config["experiments"]), store.run_code(config))
        records_file, files_file = (path.stat().st_size for path in saved.files)
        rows = len(pd.read_parquet(saved.files[0], columns=["file"]))
    runs_folder = sum(path.stat().st_size for path in (results / "runs").rglob("seed*.*"))
    projected = distinct_runs(study_config.load(args.project))
    projected_rows = sum(len(job.seeds) * (job.n_init + job.budget) for job in projected)
    projected_records = sum(len(job.seeds) for job in projected)
    projection = records_file / rows * projected_rows + files_file / saved.records * projected_records
    figures = [
        (f"{args.config} store: records", saved.records, "records"),
        (f"{args.config} store: record rows", rows, "rows"),
        (f"{args.config} store: both files", saved.bytes / MB, "MB"),
        (f"{args.config} records and sidecars as written", runs_folder / MB, "MB"),
        (f"{args.config} store / records as written", saved.bytes / runs_folder, "ratio"),
        (f"{args.project} projected: distinct runs", projected_records, "records"),
        (f"{args.project} projected: record rows", projected_rows, "rows"),
        (f"{args.project} projected store", projection / MB, "MB"),
    ]
    if args.store:
        held = sum(path.stat().st_size for path in args.store.glob("*.parquet"))
        figures += [
            (f"{args.project} store as saved ({args.store})", held / MB, "MB"),
            (f"{args.project} projected store / as saved", projection / held, "ratio"),
        ]
    from measurements import report  # benchmarks/ is on the path of the scripts in it

    report(figures, keep=not args.no_record)


if __name__ == "__main__":
    main()
