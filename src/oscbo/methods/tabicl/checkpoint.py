"""TabICLv2's checkpoint: where it is, the errors when it is absent or damaged, and the wrapper that
loads it once per run (tabicl 2.2 re-reads it at every ``fit``)."""

from __future__ import annotations

from pathlib import Path

from tabicl import TabICLRegressor
from tabicl._model.tabicl import TabICL as TabICLNetwork

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


class Regressor(TabICLRegressor):
    """tabicl's wrapper that takes an already loaded network (``loaded``) instead of reading the
    checkpoint again at each ``fit``; without one it loads as tabicl does."""

    loaded: tuple[TabICLNetwork, dict, Path] | None = None

    def _load_model(self) -> None:
        if self.loaded is None:
            try:  # tabicl's loader: torch.load(..., weights_only=True)
                super()._load_model()
            except Exception as error:  # torch raises several types for a damaged or unsafe file
                raise CheckpointError(
                    f"TabICL checkpoint {self.model_path} cannot be loaded ({type(error).__name__}: "
                    f"{str(error).splitlines()[0] if str(error) else ''}). It should be {CHECKPOINT_FILE} from "
                    f"{CHECKPOINT_REPOSITORY}: fetch it again (docs/user-guide.md, 'TabICLv2 and its checkpoint')."
                ) from error
        else:
            self.model_, self.model_config_, self.model_path_ = self.loaded
