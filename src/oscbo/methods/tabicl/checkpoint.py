"""TabICLv2's checkpoint: where it is, and the errors when it is absent or damaged (the wrapper that
loads it: :mod:`~oscbo.methods.tabicl.regressor`). No tabicl import here: a run without the
checkpoint stops before tabicl and scikit-learn load (2 s)."""

from __future__ import annotations

from pathlib import Path

from oscbo.methods.base import MethodUnavailableError
from oscbo.settings import Settings

#: The checkpoint of Table S1 and where it comes from.
CHECKPOINT_FILE = "tabicl-regressor-v2-20260212.ckpt"
CHECKPOINT_REPOSITORY = "jingang/TabICL"


class CheckpointMissingError(MethodUnavailableError, FileNotFoundError):
    """The TabICL checkpoint is not on disk and downloading it is not allowed."""


class CheckpointError(RuntimeError):
    """The TabICL checkpoint is on disk but cannot be loaded (truncated, or not a weights file)."""


def checkpoint_path(settings: Settings) -> Path:
    """The checkpoint's path; a relative one is relative to the working directory (the repository
    root, where the workflow's jobs run)."""
    return Path(settings.tabicl_checkpoint).absolute()


def require_checkpoint(settings: Settings) -> Path:
    """The checkpoint's path, checked to exist unless a download is allowed.

    Raises:
        CheckpointMissingError: naming the file, its repository and how to fetch it.
    """
    path = checkpoint_path(settings)
    if not path.is_file() and not settings.tabicl_allow_download:
        raise CheckpointMissingError(
            f"TabICL checkpoint not found: {path}. It is {CHECKPOINT_FILE} from the Hugging Face "
            f"repository {CHECKPOINT_REPOSITORY}; fetch it with\n"
            f"  hf download {CHECKPOINT_REPOSITORY} {CHECKPOINT_FILE} --local-dir {path.parent}\n"
            "or set tabicl_checkpoint to its path (tabicl_allow_download: true lets the run fetch it)."
        )
    return path
