"""A tiny randomly initialised TabICL checkpoint, for tests and CI: ``python tests/tabicl_checkpoint.py PATH``.

tabicl cannot fetch its real checkpoint here; this one has the real one's format
(``{"config", "state_dict"}``) and output (999 quantiles), so it goes through the same loading
(``TabICLRegressor(model_path=...)``) and prediction code, in milliseconds. Its predictions are
meaningless.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from tabicl._model.tabicl import TabICL

from oscbo.settings import Settings

#: The smallest network of the real one's shape: one block of each kind, two heads.
CONFIG = {
    "max_classes": 0,
    "num_quantiles": 999,
    "embed_dim": 16,
    "col_num_blocks": 1,
    "col_nhead": 2,
    "col_num_inds": 8,
    "row_num_blocks": 1,
    "row_nhead": 2,
    "row_num_cls": 2,
    "icl_num_blocks": 1,
    "icl_nhead": 2,
    "ff_factor": 2,
    "zero_init": False,  # zero_init would make every block an identity
}


#: Adam steps on x per BO round where a test runs the tiny network (Table S1's: 50). Its
#: acquisition is meaningless, so its maximiser is too; five steps run the same code (a step
#: through the network and back, the projection, the best point kept) in a tenth of the time.
TINY_STEPS = 5


def tiny_settings(checkpoint: str | Path) -> Settings:
    """The defaults with TabICLv2 on the tiny checkpoint at ``checkpoint`` and :data:`TINY_STEPS`."""
    return Settings(tabicl_checkpoint=str(checkpoint), tabicl_steps=TINY_STEPS)


def write_tiny_checkpoint(path: str | Path, seed: int = 0) -> Path:
    """Write the tiny regressor's checkpoint to ``path`` (its folder created), its weights drawn
    from ``seed`` without touching the caller's random state; returns the path."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        network = TabICL(**CONFIG)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"config": CONFIG, "state_dict": network.state_dict()}, path)
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {sys.argv[0]} PATH")
    print(write_tiny_checkpoint(sys.argv[1]))
