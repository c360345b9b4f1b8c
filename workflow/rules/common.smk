# Configuration checks and the helpers that expand the study grid.
import os
from pathlib import Path

import oscbo
from oscbo import aggregate
from oscbo import config as study_config
from oscbo import figures as study_figures
from oscbo import findings as study_findings
from oscbo import provenance
from oscbo.tasks import tabular


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
SUMMARY = RESULTS / "summary"
FIGURES = RESULTS / "figures"
LOGS = RESULTS / "logs"
GPU_PER_JOB = 1 if config["use_gpu"] else 0
SUMMARY_TABLES = aggregate.TABLES
RAW = Path("data", "raw")
PREPARED = RESULTS / "data"
FINDINGS_TABLES = study_findings.OUTPUTS
FINDINGS_SOURCES = [
    str(provenance.SOURCE_ROOT / name) for name in ("claims.py", "dual.py", "findings.py", "readings.py")
]
#: Every figure file of the study, planned from the config before anything runs.
FIGURE_FILES = [str(study_figures.path(FIGURES, figure)) for figure in study_figures.plan(config)[0]]


def figure_sources(wildcards):
    """The figures package: editing a figure redraws the figures, nothing upstream."""
    return sorted(str(path) for path in (provenance.SOURCE_ROOT / "figures").glob("*.py"))


def report_sources(wildcards):
    """The report package, its template and the protocol it shows."""
    package = provenance.SOURCE_ROOT / "report"
    return sorted(str(path) for path in [*package.glob("*.py"), *package.glob("templates/*.j2")]) + [
        str(provenance.SOURCE_ROOT / "protocol.py")
    ]


def prepared_table(task):
    """The oracle table a tabular task's jobs read, made by rule prepare_table."""
    return str(PREPARED / f"{task}.parquet")


def chunk_name(seeds):
    """seeds 0..9 -> '0-9'; a non-contiguous chunk lists its seeds: '3+7+9'."""
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return "+".join(str(seed) for seed in seeds)


def study_jobs():
    """Every BO job of the study: (experiment, task, method label, chunk name) -> job.

    A job holds what determines its records; runtime choices (device, threads) are not part
    of it, so changing them re-runs nothing.
    """
    jobs = {}
    for name, experiment in config["experiments"].items():
        chunks = study_config.seed_chunks(
            study_config.experiment_seeds(experiment), experiment["seeds_per_job"]
        )
        for spec in study_config.method_specs(experiment):
            settings = study_config.method_settings(experiment, spec).to_dict()
            for task in experiment["tasks"]:
                for seeds in chunks:
                    jobs[(name, task, spec.label, chunk_name(seeds))] = {
                        "experiment": name,
                        "task": task,
                        "method": spec.label,
                        "method_name": spec.name,
                        "seeds": seeds,
                        "budget": experiment["budget"],
                        "n_init": experiment["n_init"],
                        "noise_std": experiment["noise_std"].get(task, 0.0),
                        "task_options": {
                            **config["task_options"].get(task, {}),
                            **({"table": prepared_table(task)} if task in tabular.TABLES else {}),
                        },
                        "settings": settings,
                    }
    return jobs


JOBS = study_jobs()


def job_manifest(key):
    experiment, task, method, chunk = key
    return str(RUNS / experiment / task / method / f"seeds{chunk}.json")


def all_job_manifests(wildcards):
    return [job_manifest(key) for key in JOBS]


def job_of(wildcards):
    return JOBS[(wildcards.experiment, wildcards.task, wildcards.method, wildcards.chunk)]


def job_sources(wildcards):
    """The oscbo sources this job executes: editing one re-runs exactly the jobs using it."""
    job = job_of(wildcards)
    return [str(path) for path in provenance.run_sources(job["task"], job["method_name"])]


def job_data(wildcards):
    """A tabular task's prepared table; TabICLv2's checkpoint once it is on disk.

    A missing checkpoint is no input (its jobs finish as 'not run'); when it appears, the
    jobs' input files change and Snakemake re-runs them.
    """
    job = job_of(wildcards)
    files = [prepared_table(job["task"])] if job["task"] in tabular.TABLES else []
    if job["method_name"] == "tabicl":
        weights = Path(workflow.basedir, job["settings"]["tabicl_checkpoint"])  # not `checkpoint`: a keyword
        if weights.is_file():
            files.append(str(weights))
    return files


def run_env(wildcards):
    """A BO job's conda env: envs/bo.yaml, or lunar.yaml / tabicl.yaml for the jobs that need more."""
    job = job_of(wildcards)
    return f"../../envs/{provenance.run_environment(job['task'], job['method_name'])}.yaml"


def raw_table(wildcards):
    return str(RAW / tabular.TABLES[wildcards.task].file)


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
