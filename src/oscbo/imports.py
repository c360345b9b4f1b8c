"""What oscbo code executes, read from its source: the package's import graph.

A workflow rule re-runs when a file it executes changes, so a rule's sources are the oscbo
modules its code imports, transitively, read here with the AST (nothing is imported):
``import oscbo.x``, ``from oscbo import x`` (the submodule when there is one), ``from oscbo.x
import y``, relative imports, and imports inside functions (they run too). Importing a module
runs its packages' ``__init__``, so those count. A module's data files are the files of its
package folder that its source names (``"index.html.j2"``, ``"config.schema.yaml"``).

A *registry* (``oscbo.methods``, ``oscbo.tasks``: a package whose ``__init__`` holds only its
entries) can be named *opaque*: its file is left out and its imports are followed, and what
depends on an entry hashes that entry instead (a job its own method's and task's), so that
adding an entry re-runs nothing else. ``tests/test_architecture.py`` reads the import rules of
``docs/architecture.md`` with the same reader.

:func:`defaults` reads a factory's parameters the same way, so that a config's task options are
checked without importing the task (and torch).
"""

from __future__ import annotations

import ast
import inspect
import io
import operator
import tokenize
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import util
from pathlib import Path
from typing import Any

#: The package's folder.
SOURCE_ROOT = Path(__file__).resolve().parent
PACKAGE = SOURCE_ROOT.name


def module_file(name: str) -> Path | None:
    """The source file of module ``name`` (``oscbo.run.job`` -> ``.../run/job.py``; a package: its
    ``__init__.py``), or None when there is no such module. A module outside oscbo (a plug-in's,
    registered by a user or a test) is found where Python would import it from."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        try:
            spec = util.find_spec(name)
        except (ImportError, ValueError):
            return None
        return Path(spec.origin) if spec is not None and spec.origin and spec.origin.endswith(".py") else None
    path = SOURCE_ROOT.joinpath(*parts[1:])
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def module_name(path: Path) -> str:
    """``.../oscbo/run/job.py`` -> ``oscbo.run.job``; a package's ``__init__.py`` -> the package."""
    parts = Path(path).resolve().relative_to(SOURCE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, importer: str | None = None) -> list[tuple[int, str]]:
    """``(line, module)`` of every oscbo module that ``source`` imports, at any depth.

    ``from oscbo.x import y`` names ``oscbo.x.y`` when that is a module, else ``oscbo.x``; a
    relative import is resolved against ``importer`` (the importing module's name; a package's
    own name for its ``__init__``).
    """
    return _imports(ast.parse(source), importer)


def _statements(body: list) -> Iterator[ast.AST]:
    """The statements of ``body`` and, depth first, of every block inside them (an import is a
    statement: the expressions in between need no visit)."""
    for node in body:
        yield node
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            yield from _statements(getattr(node, block, ()))


def _imports(tree: ast.Module, importer: str | None) -> list[tuple[int, str]]:
    """:func:`imported` on a parsed source."""
    found = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == PACKAGE]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                if importer is None:
                    continue
                package = importer if _is_package(importer) else importer.rpartition(".")[0]
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            if base.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.append((node.lineno, candidate if module_file(candidate) else base))
    return found


def _is_package(name: str) -> bool:
    path = module_file(name)
    return path is not None and path.name == "__init__.py"


def parents(name: str) -> list[str]:
    """The oscbo packages whose ``__init__`` runs when ``name`` is imported: ``oscbo.a.b`` -> ``oscbo``, ``oscbo.a``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))] if parts[0] == PACKAGE else []


@cache
def _tree(path: Path) -> ast.Module:
    """The source file ``path``, parsed once (a workflow's DAG asks for each module's imports many times)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@cache
def _direct(name: str) -> tuple[str, ...]:
    path = module_file(name)
    if path is None:
        raise ModuleNotFoundError(f"no oscbo module {name!r} under {SOURCE_ROOT}")
    modules = {module for _, module in _imports(_tree(path), name)}
    return tuple(sorted(modules | set(parents(name))))


def direct(name: str) -> tuple[str, ...]:
    """The oscbo modules that module ``name`` imports (anywhere in it) and the packages above it."""
    return _direct(name)


def code(source: str) -> str:
    """What a module's source computes, without its prose: the source with every docstring
    (module, class, function) and comment taken out and its blank lines and trailing spaces
    dropped. Two sources with the same code and other docstrings or comments give the same text.

    It cuts the source itself (docstrings where the syntax tree places them, comments where the
    tokenizer finds them) rather than printing the tree, whose printed form (``ast.dump``'s node
    fields, ``ast.unparse``'s f-strings) differs between Python versions: the text, and a digest
    of it, is the same on every Python that parses the file."""
    data = source.encode("utf-8")
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    cuts = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                # the tree's columns are UTF-8 byte offsets
                cuts.append(
                    (starts[first.lineno - 1] + first.col_offset, starts[first.end_lineno - 1] + first.end_col_offset)
                )
    kept, at = [], 0
    for begin, end in sorted(cuts):
        kept.append(data[at:begin])
        at = end
    text = (b"".join(kept) + data[at:]).decode("utf-8")
    lines = text.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            row, column = token.start
            lines[row - 1] = lines[row - 1][:column]
    return "\n".join(line.rstrip() for line in lines if line.strip())


def closure(roots: Iterable[str], opaque: Iterable[str] = ()) -> set[str]:
    """Every oscbo module that importing ``roots`` runs; ``opaque`` modules are left out (module
    docstring), their imports followed."""
    opaque, seen, todo = set(opaque), set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [module for module in _direct(name) if module not in seen]
    return seen - opaque


@cache
def data_files(name: str) -> tuple[Path, ...]:
    """The files of ``name``'s package folder (not Python, not in a subpackage) that its source names."""
    path = module_file(name)
    if name.split(".")[0] != PACKAGE:
        return ()  # a plug-in's folder is not the project's
    files = _package_data(path.parent)
    if not files:
        return ()
    names = {
        node.value for node in ast.walk(_tree(path)) if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    return tuple(candidate for candidate in files if candidate.name in names)


@cache
def _package_data(folder: Path) -> tuple[Path, ...]:
    """The files under a package's ``folder`` that are not Python and not in a subpackage, sorted."""
    found = []
    for candidate in sorted(folder.rglob("*")):
        inside = candidate.relative_to(folder).parts
        if (
            candidate.is_file()
            and candidate.suffix not in (".py", ".pyc")
            and "__pycache__" not in inside
            and not any((folder.joinpath(*inside[:i]) / "__init__.py").is_file() for i in range(1, len(inside)))
        ):
            found.append(candidate)
    return tuple(found)


def source_files(roots: Iterable[str], opaque: Iterable[str] = ()) -> list[Path]:
    """The files that importing ``roots`` runs or reads: :func:`closure`'s modules and their
    :func:`data_files`, sorted."""
    return list(_source_files(tuple(roots), tuple(opaque)))


@cache
def _source_files(roots: tuple[str, ...], opaque: tuple[str, ...]) -> tuple[Path, ...]:
    """:func:`source_files`, once per process for each ``roots`` (a workflow's DAG asks once per job)."""
    files = set()
    for name in closure(roots, opaque):
        files.add(module_file(name))
        files.update(data_files(name))
    return tuple(sorted(files))


def script_imports(path: str | Path) -> list[str]:
    """The oscbo modules a script file (e.g. a workflow rule's) imports."""
    return sorted({module for _, module in imported(Path(path).read_text(encoding="utf-8"))})


#: A default :func:`defaults` cannot read from the source (not a literal, nor a module-level name
#: bound to one): what it is, only importing the module says.
UNREAD = object()


def defaults(target: str) -> dict[str, Any] | None:
    """The parameters of ``target`` (``"module:function"``, a module-level ``def``) with their
    defaults, read from its source (nothing is imported): a literal, or a module-level name bound to
    one (``episodes: int = EPISODES``); :data:`UNREAD` for any other expression,
    ``inspect.Parameter.empty`` where there is none. None when the source cannot say: no such
    ``def`` (a class, a plug-in outside oscbo), a decorated one, or ``*args``/``**kwargs``."""
    module, _, name = target.partition(":")
    path = module_file(module)
    if module.split(".")[0] != PACKAGE or path is None:
        return None
    tree = _tree(path)
    constants = {bound: _literal(value, {}) for bound, value in _bindings(tree).items()}
    defined = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    function = defined[-1] if defined else None  # the last, as the module leaves it
    if function is None or function.decorator_list or function.args.vararg or function.args.kwarg:
        return None  # a decorator may change the signature: only the import says
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    padded = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs = [*zip(positional, padded), *zip(arguments.kwonlyargs, arguments.kw_defaults)]
    return {
        argument.arg: inspect.Parameter.empty if default is None else _literal(default, constants)
        for argument, default in pairs
    }


def _bindings(tree: ast.Module) -> dict[str, ast.expr]:
    """The names a module binds at its top level by assignment (``X = ...``, ``X: int = ...``),
    each to the expression of its last binding, as the module leaves it."""
    bound = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    bound[target.id] = node.value
    return bound


def _literal(node: ast.expr, constants: dict[str, Any]) -> Any:
    """The value of a literal expression, or of a name in ``constants``; :data:`UNREAD` otherwise."""
    if isinstance(node, ast.Name):
        return constants.get(node.id, UNREAD)
    try:
        return ast.literal_eval(node)
    except ValueError:
        return UNREAD


#: The operators :func:`constant` evaluates between numbers.
_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow}


def constant(module: str, name: str) -> Any:
    """The value module ``module`` binds to its module-level ``name``, read from its source (nothing
    is imported): a literal, or arithmetic of literals (``2**16``). For a stage that may not import
    the module but shows its number (the report, the tabular tasks' dense search).

    Raises:
        LookupError: naming the module and the name, where the module binds no such name.
        ValueError: where the value is no literal nor arithmetic of literals.
    """
    path = module_file(module)
    value = None if path is None else _bindings(_tree(path)).get(name)
    if value is None:
        raise LookupError(f"module {module} binds no module-level {name}")
    return _arithmetic(value)


def _arithmetic(node: ast.expr) -> Any:
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_arithmetic(node.left), _arithmetic(node.right))
    return ast.literal_eval(node)
