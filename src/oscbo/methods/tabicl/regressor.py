"""tabicl's regressor, loading the checkpoint once per run (tabicl 2.2 re-reads it at every ``fit``)."""

from __future__ import annotations

from pathlib import Path

from tabicl import TabICLRegressor
from tabicl._model.tabicl import TabICL as TabICLNetwork

from oscbo.methods.tabicl.checkpoint import CHECKPOINT_FILE, CHECKPOINT_REPOSITORY, CheckpointError


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
