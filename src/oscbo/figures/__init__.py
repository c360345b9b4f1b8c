"""The report's figures: planned from the configuration (:mod:`oscbo.figures.plan`, no
matplotlib: the workflow reads the plan when it starts), drawn from the summary tables as SVG
(:func:`oscbo.figures.draw.draw`)."""

from oscbo.figures.plan import Figure, lambda0_study, plan

__all__ = ["Figure", "lambda0_study", "plan"]
