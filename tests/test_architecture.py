"""The import rules of docs/architecture.md, checked on every module of src/oscbo/.

The table "Who may import whom" is read from the document itself, so the page and the code
cannot drift apart; every ``import`` (at any depth: a function-level import counts) of an
oscbo module must go to the importer's own stage or to one its row allows. The imports are read
by :mod:`oscbo.imports`, the reader the workflow takes each rule's sources from.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oscbo.imports import SOURCE_ROOT, imported, module_name

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "oscbo"
DOC = REPO / "docs" / "architecture.md"


def foundation() -> set[str]:
    """The foundation's modules, as the document names them ("The foundation is `settings`, ...")."""
    sentence = DOC.read_text().split("The foundation is", 1)[1].split(".\n", 1)[0]
    return {"__init__", *re.findall(r"`(\w+)`", sentence)}


FOUNDATION = foundation()


def rules() -> dict[str, set[str]]:
    """Stage -> the stages it may import, from the document's table."""
    text = DOC.read_text().split("## Who may import whom", 1)[1].split("\n## ", 1)[0]
    table = {}
    for stage, allowed in re.findall(r"^\| (\w+) \| ([^|]+) \|$", text, flags=re.M):
        if stage == "stage":
            continue
        table[stage] = {name.strip() for name in allowed.split(",") if name.strip() not in {"—", ""}}
    return table


def stage(module: str) -> str:
    """``oscbo.run.loop`` -> ``run``; a foundation module -> ``foundation``."""
    parts = module.split(".")
    assert parts[0] == "oscbo", module
    if len(parts) == 1 or parts[1] in FOUNDATION:
        return "foundation"
    return parts[1]


MODULES = sorted(SRC.rglob("*.py"))


def test_the_table_covers_every_package() -> None:
    table = rules()
    packages = {path.name for path in SRC.iterdir() if path.is_dir() and (path / "__init__.py").is_file()}
    assert set(table) == packages | {"foundation"}, "docs/architecture.md's table and src/oscbo/ disagree"
    modules = {path.stem for path in SRC.glob("*.py")}
    assert modules == FOUNDATION, f"top-level modules not in the foundation: {sorted(modules - FOUNDATION)}"
    for allowed in table.values():
        assert allowed <= set(table)


@pytest.mark.parametrize("path", MODULES, ids=[module_name(path) for path in MODULES])
def test_a_module_imports_only_what_its_stage_may(path: Path) -> None:
    table = rules()
    own = stage(module_name(path))
    wrong = [
        f"line {line}: {target} ({stage(target)})"
        for line, target in imported(path.read_text(), module_name(path))
        if stage(target) not in table[own] | {own}
    ]
    assert not wrong, f"{module_name(path)} ({own}) may import only {sorted(table[own])}: " + "; ".join(wrong)


def test_the_check_sees_a_violation() -> None:
    """The check itself: a model module importing the methods and run stages is caught."""
    table = rules()
    found = [target for _, target in imported("from oscbo import records, methods\nimport oscbo.run.loop\n")]
    assert found == ["oscbo.records", "oscbo.methods", "oscbo.run.loop"]
    assert [stage(target) for target in found if stage(target) not in table["model"] | {"model"}] == ["methods", "run"]


#: What the workflow's DAG and the steps after the runs import (workflow/rules/common.smk and the
#: scripts of the aggregate, findings, figures and report rules), and a config check.
DOWNSTREAM = """
import sys
from oscbo import analysis, findings, imports, provenance, records
from oscbo.figures import plan
from oscbo.report.render import render_report
from oscbo.study import config, jobs, protocol, sources
from oscbo.tasks import tables
config.load("config/config.yaml")
config.load("config/quick.yaml")
print(sorted(name for name in ("torch", "botorch", "gpytorch", "scipy.stats") if name in sys.modules))
"""


def test_the_dag_a_config_check_and_the_analysis_import_no_torch(processes) -> None:
    """docs/architecture.md's promise, in a fresh interpreter: every snakemake call and every step
    after the runs starts without torch (about 2 s each) or scipy.stats (about 1 s); matplotlib
    is the figures step's alone."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", DOWNSTREAM], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout


def test_a_task_s_options_are_read_from_its_source_as_its_signature_has_them() -> None:
    """:func:`oscbo.imports.defaults` (the source, not imported) against ``inspect.signature`` of
    the imported factory, for every registered task; a default that is not a literal is UNREAD,
    which sends the check to the import."""
    import inspect

    from oscbo import imports, tasks

    for name, entry in tasks.REGISTRY.items():
        read = imports.defaults(entry.target)
        signature = {key: p.default for key, p in inspect.signature(entry.load()).parameters.items()}
        assert read is not None and list(read) == list(signature), name
        for key, default in read.items():
            assert default is imports.UNREAD or (default == signature[key] and type(default) is type(signature[key]))
    assert imports.defaults("oscbo.methods.oscbo:OSCBO") is None  # a class: imported to check
    assert imports.defaults("oscbo.tasks.tabular:material5")["raw_dir"] is imports.UNREAD  # str(RAW_DIR)


def test_no_import_cycle_in_the_package() -> None:
    """No module of ``src/oscbo`` imports, directly or through others, a module that imports it
    (imports inside functions count: they run too)."""
    modules = {module_name(path): path for path in SOURCE_ROOT.rglob("*.py")}
    graph = {
        name: {m for _, m in imported(path.read_text(encoding="utf-8"), name) if m in modules and m != name}
        for name, path in modules.items()
    }
    cycles, state = [], {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                cycles.append(trail[trail.index(other) :] + [other])
            elif other not in state:
                visit(other, [*trail, other])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, cycles


#: Where the layout's tree column ends and its descriptions begin.
TREE_COLUMN = 31


def layout_blocks() -> list[tuple[Path, set[str]]]:
    """docs/architecture.md's layout read as a tree: per entry, the folder it sits in (a folder
    entry: that folder) and the file names its line and description name."""
    text = DOC.read_text().split("## Layout")[1].split("\n## ")[0]
    lines = [line[4:] for line in text.splitlines() if line.startswith("    ")]
    blocks: list[tuple[Path, set[str]]] = []
    folders: list[tuple[int, Path]] = [(-1, REPO)]
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if indent < TREE_COLUMN - 4:  # an entry: a folder (ends in /) or files, then its description
            entry = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
            while folders[-1][0] >= indent:
                folders.pop()
            folder = folders[-1][1]
            if entry.endswith("/"):
                folder = folder / entry
                folders.append((indent, folder))
            blocks.append((folder, set()))
        blocks[-1][1].update(re.findall(r"(?<![\w.*-])([\w.-]+\.(?:py|yaml|md|smk|j2))\b", line))
    return blocks


def test_the_layout_names_every_module_and_every_file_where_it_is() -> None:
    """docs/architecture.md's layout: every module of src/oscbo and every benchmark script, each in
    the block of a folder that holds it (a path, not a name anywhere), and every file it names
    under the folder it names it in."""
    blocks = layout_blocks()
    assert len(blocks) > 20 and any(folder == SRC / "findings" for folder, _ in blocks)
    misplaced = [
        f"{name} (under {folder.relative_to(REPO)})"
        for folder, names in blocks
        for name in names
        if not any(folder.rglob(name))
    ]
    assert not misplaced, misplaced

    def named(path: Path) -> bool:
        return any(path.name in names and folder in path.parents for folder, names in blocks)

    modules = [path for path in SRC.rglob("*.py") if path.name != "__init__.py"]
    scripts = list((REPO / "benchmarks").glob("*.py"))
    assert len(scripts) > 10 and len(modules) > 50
    unnamed = [path.relative_to(REPO).as_posix() for path in [*modules, *scripts] if not named(path)]
    assert not unnamed, unnamed  # every module, and every benchmark script with what it measures


def test_the_layout_reader_sees_a_file_named_in_the_wrong_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: loop.py moved from run/'s line to model/'s is misplaced."""
    text = DOC.read_text()
    moved = text.replace("run/                     loop.py (", "run/                     lap.py (").replace(
        "rounding.py (sqrt", "rounding.py, loop.py (sqrt"
    )
    assert moved != text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: moved if self == DOC else Path.open(self).read())
    folders = {folder for folder, names in layout_blocks() if "loop.py" in names}
    assert folders == {SRC / "model"}
    assert not any((SRC / "model").rglob("loop.py"))


#: docs/architecture.md's "Sizes": the longest a module may be, and the one module exempt.
MAX_LINES, EXEMPT = 450, {"findings/catalogue.py"}


def test_no_module_is_longer_than_the_document_allows() -> None:
    text = DOC.read_text().split("## Sizes", 1)[1]
    assert f"over {MAX_LINES} lines" in text and all(f"`{name}`" in text for name in EXEMPT)
    long = {
        path.relative_to(SRC).as_posix(): n
        for path in SRC.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert set(long) <= EXEMPT, f"modules over {MAX_LINES} lines: {long}"
