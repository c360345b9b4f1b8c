# Configuration checks and the helpers that expand the study grid.
import os
from pathlib import Path

import oscbo
from oscbo import analysis, provenance, records
from oscbo.analysis import findings
from oscbo.figures import plan
from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.tasks import tables


# The rules list the package's sources as inputs, so the package must be the one in src/.
if Path(oscbo.__file__).resolve().parents[1] != Path(workflow.basedir, "src").resolve():
    raise WorkflowError(
        f"oscbo is imported from {oscbo.__file__}, not from this checkout's src/: "
        "install it with `pip install -e .` from the repository root"
    )

study_config.validate(config)

# Jobs import oscbo from this checkout's src/ too, whatever their interpreter: a conda env
# (--sdm conda) holds the third-party packages only. `envvars` passes it on to remote jobs.
os.environ["PYTHONPATH"] = os.pathsep.join(
    filter(None, [str(Path(workflow.basedir, "src")), os.environ.get("PYTHONPATH")])
)


envvars:
    "PYTHONPATH",


RESULTS = Path(config["results"])
RUNS = RESULTS / "runs"
#: The summary tables: made by rule aggregate from the runs, or published ones (config `summaries`,
#: e.g. reference/summary) that findings, figures and the report are made from alone.
SUMMARY = Path(config["summaries"]) if config["summaries"] else RESULTS / "summary"
FIGURES = RESULTS / "figures"
LOGS = RESULTS / "logs"
SUMMARY_TABLES = analysis.TABLES
if config["summaries"] and analysis.missing(SUMMARY, analysis.PUBLISHED):
    raise WorkflowError(f"summaries: {SUMMARY} lacks the summary table(s) {analysis.missing(SUMMARY, analysis.PUBLISHED)} "
                        "(rule aggregate writes them)")
SUMMARY_FILES = [str(analysis.table_path(SUMMARY, table))
                 for table in (analysis.PUBLISHED if config["summaries"] else SUMMARY_TABLES)]
FINDINGS_TABLES = findings.OUTPUTS
RAW = Path("data", "raw")
PREPARED = RESULTS / "data"
SOURCE = provenance.SOURCE_ROOT
#: Every figure file of the study, planned from the config before anything runs.
FIGURE_FILES = [str(FIGURES / f"{figure.id}.svg") for figure in plan(config)[0]]


def package_sources(*names):
    """The source files of the package's modules and folders ``names`` (a rule's inputs: editing
    one re-runs that rule and what follows it, nothing upstream)."""
    files = []
    for name in names:
        path = SOURCE / name
        files += sorted(path.rglob("*.py")) + sorted(path.rglob("*.j2")) if path.is_dir() else [path]
    return [str(path) for path in files]


def prepared_table(task):
    """The oracle table a tabular task's jobs read, made by rule prepare_table (None for others)."""
    return str(PREPARED / f"{task}.parquet") if task in tables.TABLES else None


#: Every BO job: (experiment, task, method label, chunk name) -> oscbo.study.jobs.Job.
JOBS = study_jobs.jobs(config, prepared_table)
#: The experiments with pack_methods: (experiment, task, chunk name) -> its jobs, run by one process.
PACKS = study_jobs.packs(config, JOBS)


def job_manifest(key):
    experiment, task, method, chunk = key
    return str(RUNS / experiment / task / method / f"seeds{chunk}.json")


def pack_manifest(key):
    experiment, task, chunk = key
    return str(RUNS / experiment / task / f"pack-seeds{chunk}.json")


def manifests(experiments):
    """What the BO jobs of ``experiments`` write last: a job's manifest, or a pack's (listing its jobs')."""
    alone = [job_manifest(key) for key in JOBS if key[0] in experiments and (key[0], key[1], key[3]) not in PACKS]
    return alone + [pack_manifest(key) for key in PACKS if key[0] in experiments]


def all_job_manifests(wildcards):
    return manifests(config["experiments"])


def experiment_manifests(wildcards):
    """One experiment's manifests: what a part of a study built in parts runs."""
    if wildcards.experiment not in config["experiments"]:
        raise WorkflowError(f"no experiment {wildcards.experiment!r} in this config; "
                            f"its experiments: {list(config['experiments'])}")
    return manifests([wildcards.experiment])


def write_part(experiment, manifests, output, log):
    """A part's manifest: its experiment and its jobs' manifests (relative to RUNS)."""
    jobs = [os.path.relpath(path, RUNS) for path in manifests]
    records.write_json(output, {"experiment": experiment, "jobs": jobs})
    Path(log).write_text(f"{len(jobs)} job manifests of {experiment}\n")


def job_of(wildcards):
    return JOBS[(wildcards.experiment, wildcards.task, wildcards.method, wildcards.chunk)]


def pack_of(wildcards):
    return PACKS[(wildcards.experiment, wildcards.task, wildcards.chunk)]


def pack_params(wildcards):
    return [job.to_dict() for job in pack_of(wildcards)]


def pack_sources(wildcards):
    return sorted({str(p) for job in pack_of(wildcards) for p in study_jobs.sources(job.task, job.method_name)})


def pack_data(wildcards):
    return sorted({path for job in pack_of(wildcards) for path in job_inputs(job)})


def pack_threads(wildcards):
    return study_jobs.pack_placement(pack_of(wildcards), config).threads


def pack_gpu(wildcards):
    return study_jobs.pack_placement(pack_of(wildcards), config).gpu


def pack_env(wildcards):
    """The env of the widest job (TabICLv2's holds Lunar's packages, Lunar's the BO stage's)."""
    names = {study_jobs.environment(job.task, job.method_name) for job in pack_of(wildcards)}
    widest = next(name for name in ("tabicl", "lunar", "bo") if name in names)
    return f"../../envs/{widest}.yaml"


def job_threads(wildcards):
    """Cores a job declares (oscbo.study.jobs.placement): Lunar Lander's, its simulator processes."""
    return study_jobs.placement(job_of(wildcards), config).threads


def job_gpu(wildcards):
    """1 for a GPU method's job when the study uses GPUs (TabICLv2), else 0: the device policy."""
    return study_jobs.placement(job_of(wildcards), config).gpu


def job_params(wildcards):
    """The job as plain data: Snakemake compares it between runs to decide what re-runs."""
    return job_of(wildcards).to_dict()


def job_sources(wildcards):
    """The oscbo sources this job executes: editing one re-runs exactly the jobs using it."""
    job = job_of(wildcards)
    return [str(path) for path in study_jobs.sources(job.task, job.method_name)]


def job_data(wildcards):
    """A tabular task's prepared table; TabICLv2's checkpoint once it is on disk.

    A missing checkpoint is no input (its jobs finish as 'not run'); when it appears, the
    jobs' input files change and Snakemake re-runs them.
    """
    return job_inputs(job_of(wildcards))


def job_inputs(job):
    files = [prepared_table(job.task)] if job.task in tables.TABLES else []
    if job.method_name == "tabicl":
        weights = Path(workflow.basedir, job.settings["tabicl_checkpoint"])  # not `checkpoint`: a keyword
        if weights.is_file():
            files.append(str(weights))
    return files


def run_env(wildcards):
    """A BO job's conda env: envs/bo.yaml, or lunar.yaml / tabicl.yaml for the jobs that need more."""
    job = job_of(wildcards)
    return f"../../envs/{study_jobs.environment(job.task, job.method_name)}.yaml"


def raw_table(wildcards):
    return str(RAW / tables.TABLES[wildcards.task].file)


def table_sign(wildcards):
    return config["task_options"].get(wildcards.task, {}).get("sign")


def closing_lines():
    """What the terminal says when the workflow finishes: where the report is, and each kind of
    job that did not run (once, with its count), or whose seeds failed."""
    import json

    lines = [f"Report: {Path(config['report']).resolve()}"] if Path(config["report"]).is_file() else []
    not_run, failed = {}, 0
    for key in JOBS:
        manifest = Path(job_manifest(key))
        if not manifest.is_file():
            continue
        job = json.loads(manifest.read_text())
        if job.get("status") == "not run":
            reason = job["reason"].splitlines()[0]
            not_run.setdefault((job["method"], reason), []).append(job["experiment"])
        failed += len(job.get("failed", []))
    for (method, reason), experiments in not_run.items():
        lines.append(f"Not run: {method}, {len(experiments)} job{'s' * (len(experiments) != 1)} in "
                     f"{', '.join(sorted(set(experiments)))}: {reason}")
    if failed:
        lines.append(f"Failed runs: {failed} seed{'s' * (failed != 1)} ended at an objective fault (the report lists them).")
    return "\n".join(lines)
