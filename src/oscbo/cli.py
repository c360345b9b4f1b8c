"""Command line: ``oscbo list`` and ``oscbo run TASK METHOD --seed S ...``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from oscbo import config as study_config
from oscbo import methods, tasks
from oscbo.config import ConfigError, Settings


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


def cmd_run(args: argparse.Namespace) -> int:
    from oscbo import engine

    settings = Settings.from_dict(dict(args.set or []))
    engine.limit_threads(args.threads)
    tic = time.perf_counter()
    result = engine.run(
        args.task,
        args.method,
        args.seed,
        args.budget,
        args.n_init,
        settings,
        noise_std=args.noise_std,
        task_options=dict(args.task_option or []),
        device=args.device,
    )
    paths = engine.write(result, args.out)
    elapsed = time.perf_counter() - tic
    for path in paths:
        table = result.tables[int(path.stem.removeprefix("seed"))]
        print(f"{path}  final simple regret {table['simple_regret'].iloc[-1]:.4g}")
    print(f"{len(paths)} seed(s) in {elapsed:.1f} s")
    return 0


def cmd_check_config(args: argparse.Namespace) -> int:
    study_config.load(args.path)
    print(f"{args.path}: valid")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="oscbo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="list tasks, methods and experiments").set_defaults(func=cmd_list)

    run = sub.add_parser("run", help="run one method on one task for one or more seeds (batched)")
    run.add_argument("task", help=f"one of: {', '.join(tasks.names())}")
    run.add_argument("method", help=f"one of: {', '.join(methods.names())}")
    run.add_argument("--seed", type=int, action="append", required=True, help="repeat for several seeds")
    run.add_argument("--budget", type=int, default=100, help="BO rounds after the initial design (default 100)")
    run.add_argument("--n-init", type=int, default=10, help="initial design size (default 10)")
    run.add_argument("--noise-std", type=float, default=0.0, help="observation noise std (default 0)")
    run.add_argument("--out", type=Path, default=Path("runs"), help="output folder (default ./runs)")
    run.add_argument("--device", default="auto", help="auto, cpu or cuda[:i] (default auto)")
    run.add_argument("--threads", type=int, default=1, help="torch/BLAS threads (default 1)")
    run.add_argument("--set", type=_parse_assignment, action="append", metavar="KEY=VALUE",
                     help="override a setting, e.g. --set nu=1.5 (see config/README.md)")
    run.add_argument("--task-option", type=_parse_assignment, action="append", metavar="KEY=VALUE",
                     help="an option of the task, e.g. --task-option episodes=10 for lunar12")
    run.set_defaults(func=cmd_run)

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
