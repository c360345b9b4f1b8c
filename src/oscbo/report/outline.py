"""The report's figure sections, in the paper's order: the one place their ids and titles live.

:mod:`oscbo.figures.plan` files each figure under one of them, and the report shows them in
this order (:mod:`oscbo.report.sections`); it imports only the paper's vocabulary, so that both can.
"""

from __future__ import annotations

from oscbo.paper import KNOWN_TRUTH

#: The dual study's section: the report adds its paragraph and table to the figures.
DUAL = "what-sets-the-lengthscale"
#: The λ₀ study's section: the paper's claims and OSCBO's regret against λ₀.
LAMBDA0 = "lambda0-study"

#: (id, title, what the paper calls it), in page order.
SECTIONS = [
    ("fig2", "Simple regret (paper Fig. 2)", "Fig. 2"),
    ("figS1", "Cumulative regret (paper Fig. S1)", "Fig. S1"),
    ("fig3-top", "Mean rank per ablation (paper Fig. 3, top)", "Fig. 3 top"),
    ("figS2", "Ablation curves (paper Fig. S2)", "Fig. S2"),
    ("figS3", "Diagnostics per task (paper Fig. 3, bottom, and Fig. S3)", "Fig. 3 bottom, Fig. S3"),
    ("figS4", "Computation time (paper Fig. S4)", "Fig. S4"),
    ("lengthscales-under-ard", "ARD lengthscales per dimension (not in the paper)", ""),
    (DUAL, "What sets OSCBO's lengthscale: the dual study (not in the paper)", ""),
    (LAMBDA0, "For which λ₀ the paper replicates: the λ₀ study (not in the paper)", ""),
    (KNOWN_TRUTH, "Known-truth tasks (not in the paper)", ""),
]
