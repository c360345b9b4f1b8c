"""Where a number came from: package versions, git commit, the machine, the config's hash, the time."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from datetime import datetime, timezone
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = ("torch", "botorch", "gpytorch", "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "snakemake")

#: The package's folder: the workflow lists the sources each rule executes as its inputs.
SOURCE_ROOT = Path(__file__).resolve().parent


def package_versions() -> dict[str, str]:
    import oscbo

    versions = {"oscbo": oscbo.__version__}  # from the source: a conda env runs src/ uninstalled
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    versions["python"] = platform.python_version()
    return versions


@cache
def git_commit() -> str:
    """The commit of the checkout holding the oscbo sources, with ``+dirty`` if modified."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=SOURCE_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=SOURCE_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def hardware() -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "system": f"{platform.system()} {platform.release()}",
        "cpu_count": __import__("os").cpu_count(),
        "cuda": torch.cuda.is_available(),
    }
    if info["cuda"]:
        info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return info


def machine() -> str:
    """The machine in one line, as a run's sidecar records it: ``"Intel(R) Xeon(R) Processor, 2 CPUs,
    x86_64, Linux 6.1"`` (and its GPUs where torch sees CUDA)."""
    info = hardware()
    model = info["processor"]
    try:
        with open("/proc/cpuinfo") as handle:
            model = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    gpus = f", GPUs: {', '.join(info['gpus'])}" if info.get("gpus") else ""
    return f"{model}, {info['cpu_count']} CPUs, {info['machine']}, {info['system']}{gpus}"


def config_hash(config: dict[str, Any]) -> str:
    """A short, order-independent hash of a (resolved) configuration."""
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
