"""What each workflow step executes: the files whose edit re-runs it, read from the imports.

A BO job runs :data:`RUNNER` (the loop, the lockstep engine, the record), its method's module and
its task's module (its registry entries' targets); every other rule runs its Snakemake script
(``workflow/scripts/``). Their sources are the transitive closure of the oscbo modules these
import (:mod:`oscbo.imports`), with the registries opaque: a job depends on its own entries
(``Job.entries``, a parameter), not on the registry files, so that adding a method re-runs nothing
that exists. Nothing lists source files by hand. A BO job is identified by the code of its
sources, not their bytes (:func:`code_digest`): fixing a docstring or a comment re-runs no job.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from oscbo import imports, methods, tasks
from oscbo.study.job import COMPLETE, Job, Manifest

#: The module that runs a BO job (:func:`oscbo.run.job.run_job`).
RUNNER = "oscbo.run.job"
#: The registries: packages whose ``__init__`` holds only entries.
REGISTRIES = (methods.__name__, tasks.__name__)


def run_sources(method: str, task: str) -> list[Path]:
    """The files a BO job of registered ``method`` on ``task`` executes: its runner, the method's
    and the task's modules, and all they import."""
    roots = [RUNNER, methods.REGISTRY[method].module, tasks.REGISTRY[task].module]
    return imports.source_files(roots, opaque=REGISTRIES)


def script_sources(script: str | Path) -> list[Path]:
    """The files a workflow script executes: the oscbo modules it imports, and all they import."""
    return imports.source_files(imports.script_imports(script), opaque=REGISTRIES)


def entry_inputs(job: Job, root: str | Path = ".") -> list[str]:
    """The files the job's method entry names (``Entry.inputs``: settings holding paths, relative to
    ``root``) that exist; a missing one is no input (the job finishes as 'not run')."""
    paths = [Path(root, job.method.settings[setting]) for setting in methods.REGISTRY[job.method.name].inputs]
    return [str(path) for path in paths if path.is_file()]


def input_files(job: Job, root: str | Path = ".") -> list[str]:
    """The files a job reads: its task's prepared table (option ``table``) and :func:`entry_inputs`;
    when a missing entry input appears, the job's inputs change and it runs again."""
    table = [str(Path(root, job.task.options["table"]))] if "table" in job.task.options else []
    return table + entry_inputs(job, root)


def code(path: Path) -> bytes:
    """What a source file computes: a module's code without docstrings or comments
    (:func:`oscbo.imports.code`), another file's bytes. Read once per version of the file: a DAG
    asks for every job's digest, and an edit in the same process is read anew."""
    status = path.stat()
    return _code(path, status.st_mtime_ns, status.st_size)


@cache
def _code(path: Path, mtime_ns: int, size: int) -> bytes:
    """:func:`code` of one version of ``path`` (its modification time and size are the cache key)."""
    if path.suffix == ".py":
        return imports.code(path.read_text(encoding="utf-8")).encode("utf-8")
    return path.read_bytes()


def name(path: Path) -> str:
    """A source file's name: relative to the package's folder, or its own name outside it."""
    return path.relative_to(imports.SOURCE_ROOT).as_posix() if path.is_relative_to(imports.SOURCE_ROOT) else path.name


def code_digest(job: Job) -> str:
    """SHA-256 of the code ``job`` executes (:func:`run_sources`, each by its :func:`name` and :func:`code`):
    a docstring or comment edit leaves it as it is, a change of what the code does does not. The
    workflow re-runs a job when this changes (a param of its rule)."""
    sha = hashlib.sha256()
    for path in run_sources(job.method.name, job.task.name):
        sha.update(name(path).encode() + b"\0" + code(path))
    return sha.hexdigest()


def digest(job: Job, root: str | Path = ".") -> str:
    """SHA-256 of what ``job`` executes and reads, in order: its code (:func:`code_digest`), its
    prepared table, and its entry inputs' names and sizes (a checkpoint: hundreds of MB). A pack
    re-runs a method whose digest changed and keeps the others."""
    sha = hashlib.sha256()
    sha.update(code_digest(job).encode())
    if "table" in job.task.options and Path(root, job.task.options["table"]).is_file():
        sha.update(b"table\0" + Path(root, job.task.options["table"]).read_bytes())
    for path in entry_inputs(job, root):
        sha.update(f"input\0{Path(path).name}\0{Path(path).stat().st_size}".encode())
    return sha.hexdigest()


def finished(job: Job, manifest: str | Path) -> bool:
    """Whether ``manifest`` holds this very job, complete, run from the sources and inputs it would
    run from now (:func:`digest`; a job that did not run, e.g. TabICLv2 before its checkpoint was
    fetched, is not finished)."""
    try:
        done = Manifest.read(manifest)
    except (OSError, ValueError, KeyError, TypeError):  # absent or damaged: run it again
        return False
    return done.status == COMPLETE and done.job.to_dict() == job.to_dict() and done.sources == digest(job)
