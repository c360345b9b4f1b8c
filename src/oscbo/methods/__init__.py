"""The method registry: each method declared in one entry (:class:`oscbo.registry.Entry`); data only.

An entry names the class (``"module:Class"``, imported only when the method runs), the settings
that define the method (OSCBO-L1 is OSCBO with ``calibration_power = 1``), the conda environment
its jobs need and what it needs of the machine. Its rows of the report's protocol, what the project
read where the paper (D.1, Table S1) leaves room, are data in ``oscbo/study/protocol.yaml``
(:mod:`oscbo.study.protocol`). Adding a method is one new file with a
:class:`~oscbo.methods.base.Method` subclass, one entry here, and its protocol rows there. This file
holds entries only (:func:`oscbo.methods.base.build_method` builds one): a job depends on its own
method's entry, not on this file (:mod:`oscbo.imports`), so adding a method re-runs no other.
"""

from __future__ import annotations

from oscbo.registry import Entry, Registry, UnknownNameError

#: The parameters every method's class takes first; its own settings (``options``) come after them.
METHOD_ARGUMENTS = ("settings", "budget", "seeds")

REGISTRY = Registry(
    "method",
    {
        "oscbo": Entry("oscbo.methods.oscbo:OSCBO", {"calibration_power": 2}),
        "oscbo-l1": Entry("oscbo.methods.oscbo:OSCBO", {"calibration_power": 1}),
        "gp-ucb-mll": Entry("oscbo.methods.gp_ucb_mll:GPUCBMLL"),
        "gp-ucb-true": Entry("oscbo.methods.gp_ucb_true:GPUCBTrue"),
        "random-search": Entry("oscbo.methods.random_search:RandomSearch"),
        "ocbo": Entry("oscbo.methods.ocbo:OCBO"),
        "a-gp-ucb": Entry("oscbo.methods.a_gp_ucb:AGPUCB", {"lengthscale_bounds": (1e-4, 1e1)}),
        "lb-gp-ucb": Entry("oscbo.methods.lb_gp_ucb:LBGPUCB", {"lengthscale_bounds": (1e-4, 1e1)}),
        "scgp": Entry("oscbo.methods.scgp:SCGP"),
        "vanilla-bo": Entry("oscbo.methods.vanilla_bo:VanillaBO", {"ard": True, "lengthscale_bounds": (1e-2, 1e2)}),
        "tabicl": Entry(
            "oscbo.methods.tabicl.method:TabICL", environment="tabicl", gpu=True, inputs=("tabicl_checkpoint",)
        ),
    },
)


#: The registered names, in registration order.
names = REGISTRY.names
UnknownMethodError = UnknownNameError

__all__ = ["REGISTRY", "names", "UnknownMethodError"]
