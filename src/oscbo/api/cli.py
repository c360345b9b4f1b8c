"""Command line: ``oscbo list``, ``oscbo run TASK METHOD --seed S ...``, ``oscbo optimize MODULE:FUNCTION ...``,
``oscbo publish CONFIG SUMMARY OUT``, ``oscbo check-config PATH``."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from oscbo import methods, records, tasks
from oscbo.settings import ConfigError, Settings
from oscbo.study import config as study_config


def _parse_assignment(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--set expects KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    return key, yaml.safe_load(value)


def _experiments() -> list[str]:
    default = Path("config/config.yaml")
    if not default.exists():
        return []
    return list((yaml.safe_load(default.read_text()) or {}).get("experiments", {}))


def cmd_list(args: argparse.Namespace) -> int:
    print("tasks:      " + ", ".join(tasks.names()))
    print("methods:    " + ", ".join(methods.names()))
    experiments = _experiments()
    print("experiments: " + (", ".join(experiments) if experiments else "(no config/config.yaml here)"))
    return 0


def earlier_records(out: Path, seeds: list[int]) -> list[Path]:
    """The records (and sidecars) of ``seeds`` that a run would overwrite in ``out``."""
    return [
        path
        for seed in seeds
        for path in (records.record_path(out, seed), records.sidecar_path(records.record_path(out, seed)))
        if path.exists()
    ]


def cmd_run(args: argparse.Namespace) -> int:
    from oscbo.run import run, write

    settings = Settings.from_dict(dict(args.set or []))
    existing = earlier_records(args.out, args.seed)
    if existing and not args.overwrite:
        raise ValueError(
            f"{args.out} holds an earlier run's {', '.join(p.name for p in existing)}; give another "
            "--out, or --overwrite to replace them"
        )
    tic = time.perf_counter()
    result = run(
        args.task,
        args.method,
        args.seed,
        args.budget,
        args.n_init,
        settings,
        noise_std=args.noise_std,
        task_options=dict(args.task_option or []),
        device=args.device,
        threads=args.threads,
        method_options=dict(args.method_option or []),
    )
    paths = write(result, args.out)
    elapsed = time.perf_counter() - tic
    for path in paths:
        table = result.tables[int(path.stem.removeprefix("seed"))]
        print(f"{path}  final simple regret {table['simple_regret'].iloc[-1]:.4g}")
    print(f"{len(paths)} seed(s) in {elapsed:.1f} s")
    return 0


def load_function(spec: str) -> Callable:
    """The function ``MODULE:FUNCTION`` names: a module importable from here (the current folder
    first) or a ``.py`` file, e.g. ``objectives:branin`` or ``path/to/objectives.py:branin`` (its
    folder first on the path, so that the modules beside it, a method it registers among them,
    import as they would for ``python path/to/objectives.py``)."""
    module_name, _, name = spec.rpartition(":")
    if not module_name or not name:
        raise ValueError(f"expected MODULE:FUNCTION (e.g. objectives:branin), got {spec!r}")
    if module_name.endswith(".py"):
        if not Path(module_name).is_file():
            raise ValueError(f"no file {module_name}")
        folder = str(Path(module_name).resolve().parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # as `python file.py` would: its own modules import beside it
        loader = importlib.util.spec_from_file_location(Path(module_name).stem, module_name)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())  # as `python -m` would; console scripts do not
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            raise ValueError(
                f"cannot import module {module_name!r} ({error}); run from its folder or give a .py path"
            ) from None
    function = getattr(module, name, None)
    if not callable(function):
        raise ValueError(f"{module_name} has no function {name!r}")
    return function


def _bounds(text: str) -> list:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        value = None
    if not isinstance(value, list):
        raise argparse.ArgumentTypeError(
            f"--bounds expects a list of [lower, upper] pairs, e.g. '[[-5, 10], [0, 15]]', got {text!r}"
        )
    return value


def cmd_optimize(args: argparse.Namespace) -> int:
    """Optimise a function of the user's module; a failed evaluation after the first keeps the
    evaluations before it in a record of status failed, names the failure, and exits 1."""
    from oscbo.api.optimize import optimize
    from oscbo.run.lockstep import NonFiniteObjectiveError

    function = load_function(args.function)
    settings = dict(args.set or [])
    Settings.from_dict(settings)  # an unknown key is named here, not taken for an argument of optimize
    out = args.out or Path("runs") / function.__name__
    existing = earlier_records(out, args.seed or [0])
    if existing and not args.overwrite:
        raise ValueError(
            f"{out} holds an earlier run's {', '.join(p.name for p in existing)}; give another "
            "--out, or --overwrite to replace them"
        )
    for seed in args.seed or [0]:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*the run stopped there")  # said below, as an error
            try:
                optimizer = optimize(
                    function,
                    args.bounds,
                    bounds_layout=args.bounds_layout,
                    budget=args.budget,
                    method=args.method,
                    seed=seed,
                    progress=not args.no_progress,
                    n_init=args.n_init,
                    minimize=args.minimize,
                    optimal_value=args.optimal_value,
                    name=function.__name__,
                    device=args.device,
                    threads=args.threads,
                    method_options=dict(args.method_option or []),
                    on_fault=args.on_fault,
                    **settings,
                )
            except NonFiniteObjectiveError as error:  # the first evaluation: nothing to keep
                raise ValueError(f"{args.function}: {error}") from None
            except KeyboardInterrupt as stop:  # Ctrl-C: the evaluations made are written, then 130 (a shell's)
                if getattr(stop, "optimizer", None) is not None and (stopped := stop.optimizer).evaluations:
                    done = f"interrupted at evaluation {stopped.interrupted}; its {stopped.evaluations} evaluations"
                    print(
                        f"oscbo: {args.function}: {done} are in {stopped.write(out)} (status: interrupted)",
                        file=sys.stderr,
                    )
                return 130
        path = optimizer.write(out)
        if optimizer.fault:
            print(
                f"oscbo: {args.function}: evaluation {optimizer.fault['step']} failed: {optimizer.fault['reason']}; "
                f"the {optimizer.evaluations} evaluations before it are in {path} (status: failed)",
                file=sys.stderr,
            )
            return 1
        best = optimizer.best
        print(f"{path}  best y {best.y:.6g} at x = {best.x.tolist()}")
    return 0


def cmd_check_config(args: argparse.Namespace) -> int:
    study_config.load(args.path)
    print(f"{args.path}: valid")
    return 0


def cmd_store(args: argparse.Namespace) -> int:
    """Save a part's finished jobs into a record store, or restore a store into a results folder."""
    from oscbo.study import store

    config = study_config.load(args.config)
    results = Path(config["results"])
    if args.action == "save":
        experiments = args.experiments or list(config["experiments"])
        unknown = sorted(set(experiments) - set(config["experiments"]))
        if unknown:
            raise ValueError(
                f"--experiments: {unknown} not in {args.config}; its experiments: {list(config['experiments'])}"
            )
        saved = store.save(results, args.store, args.part, experiments, store.run_code(config), args.restart)
        print(
            f"{args.store}: part {args.part}, {saved.jobs} jobs, {saved.records} records of "
            f"{', '.join(experiments)} in {saved.bytes / 1e6:.1f} MB"
        )
    elif args.action == "check":
        store.check_run_code(args.store, store.run_code(config))
        declared = f", or a change declared since in {store.CHANGES}" if (args.store / store.CHANGES).is_file() else ""
        held = ", ".join(store.parts(args.store))
        print(f"{args.store}: this checkout runs the code its parts ran on{declared} ({held})")
    else:
        written = store.restore(args.store, results)
        print(f"{results}: {written} files restored from {args.store} ({', '.join(store.parts(args.store))})")
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    """Copy a finished study's published tables (every summary table but ``steps``) and its config
    into a folder, from which the workflow renders its report alone (see reference/README.md)."""
    from oscbo import analysis

    config = study_config.load(args.config)
    absent = analysis.missing(args.summary, analysis.PUBLISHED)
    if absent:
        raise ValueError(f"{args.summary} lacks the summary table(s) {absent}: run the study's workflow first")
    if args.experiments:
        unknown = sorted(set(args.experiments) - set(config["experiments"]))
        if unknown:
            raise ValueError(
                f"--experiments: {unknown} not in {args.config}; its experiments: {list(config['experiments'])}"
            )
        earlier = analysis.missing(args.out / "summary", analysis.PUBLISHED)
        if earlier:
            raise ValueError(f"--experiments adds a part to a publication: {args.out / 'summary'} lacks {earlier}")
        analysis.add_part(args.out / "summary", args.summary, args.experiments)
        shutil.copyfile(args.config, args.out / "config.yaml")
        print(f"{args.out}: the rows of {', '.join(args.experiments)} added to its summary tables; config.yaml")
        return 0
    (args.out / "summary").mkdir(parents=True, exist_ok=True)
    names = analysis.PUBLISHED + analysis.present(args.summary)
    for name in names:
        shutil.copyfile(analysis.table_path(args.summary, name), analysis.table_path(args.out / "summary", name))
    shutil.copyfile(args.config, args.out / "config.yaml")
    print(f"{args.out}: {len(names)} summary tables and config.yaml")
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    """Print the answer of a finished study (its findings' ``claims``) as Markdown: the README's
    "Does the paper replicate?" is this, of reference/summary."""
    from oscbo import analysis
    from oscbo.findings import answer

    tables = analysis.load(args.summary, ["claims", "final", "readings", "findings"])
    print(answer.markdown(tables["claims"], tables, args.report))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare two finished studies of one protocol (their summary folders): the final results'
    means and Mann-Whitney p per (experiment, task, method), and the claims' verdicts. Prints
    Markdown; ``--out`` also writes both tables as Parquet."""
    from oscbo import analysis
    from oscbo.findings import compare

    new, old = (analysis.load(folder, ["final", "claims"]) for folder in (args.new, args.old))
    finals = compare.finals(new["final"], old["final"], args.new_code)
    verdicts = compare.verdicts(new["claims"], old["claims"])
    print(compare.markdown(finals, verdicts))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        finals.to_parquet(args.out / "compare_finals.parquet", index=False)
        verdicts.to_parquet(args.out / "compare_verdicts.parquet", index=False)
    return 0


#: One meaning of "budget" everywhere in oscbo: the config, run(), Optimizer, optimize() and here.
BUDGET_HELP = "BO rounds T after the initial design (T + n_init evaluations in all)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="oscbo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="list tasks, methods and experiments").set_defaults(func=cmd_list)

    # what running a method takes, the same for a registered task (run) and the user's function (optimize)
    running = argparse.ArgumentParser(add_help=False)
    running.add_argument("--n-init", type=int, default=10, help="initial design size (default 10)")
    running.add_argument("--overwrite", action="store_true", help="replace an earlier run's records of these seeds")
    running.add_argument("--device", default="auto", help="auto, cpu or cuda[:i] (default auto)")
    running.add_argument("--threads", type=int, default=1, help="torch/BLAS threads (default 1)")
    running.add_argument(
        "--method-option",
        type=_parse_assignment,
        action="append",
        metavar="KEY=VALUE",
        help="a setting of the method's own (a keyword argument of its class), e.g. --method-option shrink=0.8",
    )

    run = sub.add_parser("run", parents=[running], help="run one method on one task for one or more seeds (batched)")
    run.add_argument("task", help=f"one of: {', '.join(tasks.names())}")
    run.add_argument("method", help=f"one of: {', '.join(methods.names())}")
    run.add_argument("--seed", type=int, action="append", required=True, help="repeat for several seeds")
    run.add_argument("--budget", type=int, default=100, help=BUDGET_HELP + " (default 100)")
    run.add_argument("--noise-std", type=float, default=0.0, help="observation noise std (default 0)")
    run.add_argument("--out", type=Path, default=Path("runs"), help="output folder (default ./runs)")
    run.add_argument(
        "--set",
        type=_parse_assignment,
        action="append",
        metavar="KEY=VALUE",
        help="override a setting, e.g. --set nu=1.5 (see config/README.md)",
    )
    run.add_argument(
        "--task-option",
        type=_parse_assignment,
        action="append",
        metavar="KEY=VALUE",
        help="an option of the task, e.g. --task-option episodes=10 for lunar12",
    )
    run.set_defaults(func=cmd_run)

    opt = sub.add_parser(
        "optimize", parents=[running], help="optimise your own Python function (writes the same record as run)"
    )
    opt.add_argument(
        "function",
        help="MODULE:FUNCTION or path/to/file.py:FUNCTION; it takes a point (a NumPy array) and returns one number",
    )
    opt.add_argument(
        "--bounds",
        type=_bounds,
        required=True,
        help="one [lower, upper] pair per dimension, e.g. '[[-5, 10], [0, 15]]'",
    )
    opt.add_argument(
        "--bounds-layout",
        choices=["pairs", "botorch"],
        help="pairs: one [lower, upper] pair per dimension; botorch: BoTorch's 2 x d, a list of lower "
        "bounds then a list of upper bounds; unset, read from the shape as in Python (pairs where d != 2; "
        "a 2 x 2 box that BoTorch's layout also reads is refused until this names one)",
    )
    opt.add_argument("--budget", type=int, required=True, help=BUDGET_HELP)
    opt.add_argument("--method", default="oscbo", help=f"one of: {', '.join(methods.names())} (default oscbo)")
    opt.add_argument(
        "--seed", type=int, action="append", help="repeat for several seeds, run one after another (default 0)"
    )
    opt.add_argument("--minimize", action="store_true", help="minimise (the default is to maximise)")
    opt.add_argument("--optimal-value", type=float, help="the known optimum, for the regret columns")
    opt.add_argument("--out", type=Path, help="output folder (default ./runs/FUNCTION)")
    opt.add_argument("--no-progress", action="store_true", help="no progress bar")
    opt.add_argument(
        "--on-fault",
        choices=["stop", "continue"],
        default="stop",
        help="a failed evaluation stops the run, its evaluations kept (stop, the default), or is told at "
        "the worst value so far and the run goes on (continue); docs/api.md",
    )
    opt.add_argument(
        "--set",
        type=_parse_assignment,
        action="append",
        metavar="KEY=VALUE",
        help="override a setting, e.g. --set lambda0=0.433 (see config/README.md)",
    )
    opt.set_defaults(func=cmd_optimize)

    publish = sub.add_parser(
        "publish",
        help="copy a finished study's summary tables and config into a folder "
        "(e.g. reference/) that its report renders from alone",
    )
    publish.add_argument("config", type=Path, help="the study's configuration file")
    publish.add_argument("summary", type=Path, help="the study's summary folder (RESULTS/summary)")
    publish.add_argument("out", type=Path, help="the folder to publish into (e.g. reference)")
    publish.add_argument(
        "--experiments",
        nargs="+",
        help="add these experiments (a part run since) to an earlier publication in OUT, replacing their rows",
    )
    publish.set_defaults(func=cmd_publish)

    keep = sub.add_parser(
        "store",
        help="save a part's finished jobs into a record store (committed with the repository), or restore "
        "a store into the config's results folder so that the workflow runs only what is not there",
    )
    keep.add_argument(
        "action", choices=["save", "restore", "check"], help="check: this checkout runs the store's run code"
    )
    keep.add_argument("config", type=Path, help="the study's configuration file (its results folder)")
    keep.add_argument("store", type=Path, help="the store folder (e.g. reference/store)")
    keep.add_argument("--part", default="part", help="save: the part's name (its files' stem)")
    keep.add_argument("--experiments", nargs="+", help="save: the part's experiments (default: every one)")
    keep.add_argument(
        "--restart", action="store_true", help="save: drop the store's parts and start it over on this run code"
    )
    keep.set_defaults(func=cmd_store)

    answer = sub.add_parser("answer", help="print a finished study's answer (its claims' verdicts) as Markdown")
    answer.add_argument("summary", type=Path, help="the study's summary folder (e.g. reference/summary)")
    answer.add_argument("--report", default="reference/report.html", help="the link to its report")
    answer.set_defaults(func=cmd_answer)

    versus = sub.add_parser(
        "compare", help="compare two finished studies of one protocol: final results and verdicts, as Markdown"
    )
    versus.add_argument("new", type=Path, help="the new study's summary folder")
    versus.add_argument("old", type=Path, help="the earlier study's summary folder (e.g. a previous reference)")
    versus.add_argument(
        "--new-code",
        nargs="+",
        default=[],
        metavar="METHOD",
        help="methods whose code or settings changed between them",
    )
    versus.add_argument("--out", type=Path, help="also write the two comparison tables (Parquet) into this folder")
    versus.set_defaults(func=cmd_compare)

    check = sub.add_parser("check-config", help="validate a study configuration file")
    check.add_argument("path", type=Path)
    check.set_defaults(func=cmd_check_config)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, tasks.UnknownTaskError, methods.UnknownMethodError, ValueError) as error:
        print(f"oscbo: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
