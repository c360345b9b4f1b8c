# Configuration checks and the helpers that expand the study grid.
import os
import sys
from pathlib import Path

from oscbo import analysis, findings, imports, provenance, records
from oscbo.figures import lambda0_study, plan
from oscbo.report.sections import numbers_dir
from oscbo.study import config as study_config
from oscbo.study import jobs as study_jobs
from oscbo.study import protocol as study_protocol
from oscbo.study import sources as study_sources
from oscbo.study.job import COMPLETE, NOT_RUN, Manifest
from oscbo.tasks import tables


# The rules list the package's sources as inputs, so the package must be the one in src/.
if imports.SOURCE_ROOT.parent != Path(workflow.basedir, "src").resolve():
    raise WorkflowError(
        f"oscbo is imported from {imports.SOURCE_ROOT}, not from this checkout's src/: "
        "install it with `pip install -c envs/constraints.txt -e .` from the repository root"
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
if config["summaries"] and analysis.missing(SUMMARY, analysis.PUBLISHED):
    raise WorkflowError(
        f"summaries: {SUMMARY} lacks the summary table(s) {analysis.missing(SUMMARY, analysis.PUBLISHED)} "
        "(rules aggregate and protocol write them)"
    )
#: What findings, figures and the report read: the aggregate's tables, or the published ones.
SUMMARY_FILES = [
    str(analysis.table_path(SUMMARY, table))
    for table in (analysis.PUBLISHED if config["summaries"] else analysis.TABLES)
    if table != analysis.PROTOCOL
]
#: The tables a study may add beside those (analysis.OPTIONAL), which the report shows: those there.
OPTIONAL_FILES = [str(analysis.table_path(SUMMARY, table)) for table in analysis.present(SUMMARY)]
#: The study's protocol as it runs (rule protocol), or as the published study ran.
PROTOCOL_FILE = str(analysis.table_path(SUMMARY, analysis.PROTOCOL))
FINDINGS_TABLES = findings.OUTPUTS
RAW = Path("data", "raw")
PREPARED = RESULTS / "data"
SCRIPTS = Path(workflow.basedir, "workflow", "scripts")
#: Every figure of the study and its numbers, planned from the config before anything runs.
FIGURE_FILES = [str(FIGURES / f"{figure.id}.{kind}") for figure in plan(config)[0] for kind in ("svg", "csv")]


def script_sources(script):
    """The oscbo sources a rule's script executes (its imports, read from the code): editing one
    re-runs that rule and what follows it, nothing upstream. Relative to the working directory, as
    every other input is: a study moved or copied whole (a clone restored from the store) has the
    same inputs, and re-runs nothing for its new place."""
    return [os.path.relpath(path) for path in study_sources.script_sources(SCRIPTS / script)]


def protocol_rows():
    """The protocol rows of this study, computed now: a param of rule protocol, so that its table is
    rewritten when a row changes (an entry's row, a setting), and only then."""
    return study_protocol.rows(config)


def prepared_table(task):
    """The oracle table a tabular task's jobs read, made by rule prepare_table (None for others)."""
    return str(PREPARED / f"{task}.parquet") if task in tables.TABLES else None


#: Every BO job an experiment asks for: (experiment, task, method label, chunk name) -> oscbo.study.jobs.Job.
JOBS = study_jobs.jobs(config, prepared_table)
#: Each job -> the job that runs it: itself, or an earlier experiment's job computing the same run.
OWNERS = study_jobs.owners(JOBS)
#: The jobs that run: each distinct run once.
RUN = {key: job for key, job in JOBS.items() if OWNERS[key] == key}
#: The experiments with pack_methods: (experiment, task, chunk name) -> its jobs, run by one process.
PACKS = study_jobs.packs(config, RUN)


def job_manifest(key):
    """The manifest of the job that runs ``key``'s run (its owner's: oscbo.study.jobs.owners)."""
    owner = OWNERS[key]
    return str(RUNS / owner[0] / owner[1] / JOBS[owner].manifest_name)


def pack_manifest(key):
    experiment, task, chunk = key
    return str(RUNS / experiment / task / f"pack-seeds{chunk}.json")


def output_of(key):
    """The workflow output that finishes ``key``'s run: its owner's manifest, or its owner's pack's."""
    experiment, task, _, chunk = OWNERS[key]
    return pack_manifest((experiment, task, chunk)) if (experiment, task, chunk) in PACKS else job_manifest(key)


def manifests(experiments, tasks=None):
    """What the BO jobs of ``experiments`` (on ``tasks``, default all) write last: a job's manifest,
    or a pack's (listing its jobs'); a run another experiment's job computes is that job's."""
    return list(
        dict.fromkeys(output_of(key) for key in JOBS if key[0] in experiments and (tasks is None or key[1] in tasks))
    )


def asked_runs():
    """Each run's manifest -> the (experiment, method label) pairs that ask for it: the aggregate
    reads a shared run once for each (a param, so that a new sharing re-aggregates)."""
    asked = {}
    for key in JOBS:
        asked.setdefault(job_manifest(key), []).append([key[0], key[2]])
    return asked


def shared_runs():
    """One line on the runs experiments share: each runs once (oscbo.study.jobs.owners)."""
    shared = {}
    for key, owner in OWNERS.items():
        if owner != key:
            pair = (key[0], owner[0])
            shared[pair] = shared.get(pair, 0) + len(JOBS[key].seeds)
    runs = sum(len(job.seeds) for job in RUN.values())
    if not shared:
        alone = len(config["experiments"]) == 1
        return "" if alone else f"Shared runs: none; each of the {runs} runs the experiments ask for is distinct."
    each = ", ".join(f"{n} of {asker}'s are {owner}'s" for (asker, owner), n in shared.items())
    return (
        f"Shared runs: {sum(shared.values())} runs the experiments ask for are the same run as an earlier "
        f"experiment's (same method, settings, task, seeds, budget and design) and run once: {each}. "
        f"Distinct runs: {runs}."
    )


def all_job_manifests(wildcards):
    return manifests(config["experiments"])


def experiment_manifests(wildcards):
    """One experiment's manifests: what a part of a study built in parts runs."""
    if wildcards.experiment not in config["experiments"]:
        raise WorkflowError(f"no experiment {wildcards.experiment!r} in this config; "
                            f"its experiments: {list(config['experiments'])}")
    return manifests([wildcards.experiment])


def experiment_task_manifests(wildcards):
    """One experiment's manifests on one task: a part of an experiment, a task at a time."""
    experiment_manifests(wildcards)  # names a missing experiment
    if wildcards.task not in config["experiments"][wildcards.experiment]["tasks"]:
        raise WorkflowError(f"experiment {wildcards.experiment!r} has no task {wildcards.task!r}; "
                            f"its tasks: {config['experiments'][wildcards.experiment]['tasks']}")
    return manifests([wildcards.experiment], [wildcards.task])


def write_part(experiment, manifests, output, log):
    """A part's manifest: its experiment and its jobs' manifests (relative to RUNS)."""
    jobs = [os.path.relpath(path, RUNS) for path in manifests]
    records.write_json(output, {"experiment": experiment, "jobs": jobs})
    Path(log).write_text(f"{len(jobs)} job manifests of {experiment}\n")


def job_of(wildcards):
    key = (wildcards.experiment, wildcards.task, wildcards.method, wildcards.chunk)
    if key in JOBS and key not in RUN:
        raise WorkflowError(f"{key} is the run of {OWNERS[key]}, which runs it once for both: ask for {job_manifest(key)}")
    return RUN[key]


def pack_of(wildcards):
    return PACKS[(wildcards.experiment, wildcards.task, wildcards.chunk)]


def pack_params(wildcards):
    return [job.to_dict() for job in pack_of(wildcards)]


def pack_code(wildcards):
    """Each packed job's :func:`job_code`, by label: the pack re-runs when one changes, and inside it
    only the jobs whose code changed run (oscbo.study.sources.finished)."""
    return {job.method.label: study_sources.code_digest(job) for job in pack_of(wildcards)}


def pack_data(wildcards):
    return sorted({path for job in pack_of(wildcards) for path in study_sources.input_files(job)})


def pack_threads(wildcards):
    return study_jobs.pack_placement(pack_of(wildcards), config).threads


def pack_gpu(wildcards):
    return study_jobs.pack_placement(pack_of(wildcards), config).gpu


def pack_env(wildcards):
    return f"../../envs/{study_jobs.pack_environment(pack_of(wildcards))}.yaml"


def job_threads(wildcards):
    """Cores a job declares (oscbo.study.jobs.placement): Lunar Lander's, its simulator processes."""
    return study_jobs.placement(job_of(wildcards), config).threads


def job_priority(wildcards):
    """A job's expected cost (oscbo.study.jobs.expected_cost): the longest start first."""
    return study_jobs.placement(job_of(wildcards), config).priority


def pack_priority(wildcards):
    return study_jobs.pack_placement(pack_of(wildcards), config).priority


def job_gpu(wildcards):
    """1 for a GPU method's job when the study uses GPUs (TabICLv2), else 0: the device policy."""
    return study_jobs.placement(job_of(wildcards), config).gpu


def job_params(wildcards):
    """The job as plain data: Snakemake compares it between runs to decide what re-runs."""
    return job_of(wildcards).to_dict()


def job_code(wildcards):
    """The code this job executes (its sources read from the imports, without docstrings or
    comments): a param, so that changing what one of them computes re-runs exactly the jobs using
    it, and mending its prose re-runs none."""
    return study_sources.code_digest(job_of(wildcards))


def job_data(wildcards):
    """A tabular task's prepared table; files its method's entry names (TabICLv2's checkpoint) once on disk.

    A missing checkpoint is no input (its jobs finish as 'not run'); when it appears, the
    jobs' input files change and Snakemake re-runs them.
    """
    return study_sources.input_files(job_of(wildcards))


def run_env(wildcards):
    """A BO job's conda env: envs/bo.yaml, or lunar.yaml / tabicl.yaml for the jobs that need more."""
    job = job_of(wildcards)
    return f"../../envs/{study_jobs.environment(job.task.name, job.method.name)}.yaml"


def raw_table(wildcards):
    return str(RAW / tables.TABLES[wildcards.task].file)


def table_sign(wildcards):
    return config["task_options"].get(wildcards.task, {}).get("sign")


def job_message(message):
    """A job's one line in the terminal: what it does and its log, in place of Snakemake's block of
    its inputs (a BO job's list every source file it runs); OSCBO_JOB_BLOCKS=1 shows the blocks."""
    return None if os.environ.get("OSCBO_JOB_BLOCKS") == "1" else message


def closing_lines():
    """What the terminal says when the workflow finishes: where the report is, and each kind of
    job that did not run (once, with its count and its whole reason), or whose seeds failed."""
    lines = [f"Report: {Path(config['report']).resolve()}"] if Path(config["report"]).is_file() else []
    not_run, failed = {}, 0
    for key in JOBS:
        try:
            done = Manifest.read(job_manifest(key))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if done.status == NOT_RUN:
            not_run.setdefault((key[2], done.reason), []).append(key[0])
        failed += len(done.failed) if key in RUN else 0
    for (method, reason), experiments in not_run.items():
        indented = reason.strip().replace("\n", "\n    ")
        where = ", ".join(sorted(set(experiments)))
        lines.append(f"Not run: {method}, {len(experiments)} job{'s' * (len(experiments) != 1)} in {where}:\n    {indented}")
    if failed:
        lines.append(f"Failed runs: {failed} seed{'s' * (failed != 1)} ended at an objective fault (the report lists them).")
    return "\n".join(lines)


def pack_state(job, manifest):
    """What a pack does with one of its jobs if it runs (oscbo.run.job.run_pack): ``kept`` (finished
    from the same job, sources and inputs), ``run`` (new or changed), or ``tried`` (it did not run
    here, e.g. TabICLv2 without its checkpoint, and nothing it depends on changed: tried again)."""
    try:
        done = Manifest.read(manifest)
    except (OSError, ValueError, KeyError, TypeError):
        return "run"
    same = done.job.to_dict() == job.to_dict() and done.sources == study_sources.digest(job)
    if done.status == COMPLETE:
        return "kept" if same else "run"
    return "tried" if same and not study_sources.entry_inputs(job) else "run"


def packs_to_run():
    """One line on what the packs will run: a pack is one workflow job, but inside it only its new
    or changed methods run, so the dry run's job count says little; this says which, and how many
    runs. A pack runs when one of its jobs is new or changed."""
    runs, tried, packs = {}, {}, 0
    for key, pack in PACKS.items():
        folder = Path(pack_manifest(key)).parent
        states = [(job, pack_state(job, folder / job.manifest_name)) for job in pack]
        if not any(state == "run" for _, state in states):
            continue
        packs += 1
        for job, state in states:
            if state == "run":
                runs[job.method.label] = runs.get(job.method.label, 0) + len(job.seeds)
            elif state == "tried":
                tried[job.method.label] = tried.get(job.method.label, 0) + 1
    if not runs:
        return ""
    shown = ", ".join(f"{method} {n} run{'s' * (n != 1)}" for method, n in runs.items())
    again = "".join(f"; {method}'s {n} job{'s' * (n != 1)} that did not run are tried again" for method, n in tried.items())
    return f"Packs: {packs} of {len(PACKS)} will run; inside them only these methods run (the others are kept): {shown}.{again}"


for line in (shared_runs(), packs_to_run()) if workflow.is_main_process else ():
    if line:
        print(line, file=sys.stderr)
