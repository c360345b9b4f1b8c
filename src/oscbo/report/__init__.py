"""The study report: one self-contained HTML file rendered from what the analysis and findings
stages wrote (:func:`oscbo.report.render.render_report`).

The page opens with the answer (does the paper replicate: the verdicts of the findings stage, the
study's size, a table of contents), then the figures in the paper's order, then the tables a reader
checks the answer against (:mod:`oscbo.report.sections`). :mod:`oscbo.report.outline` and
:mod:`oscbo.report.blocks` are what the figures stage shares with it; this module imports nothing,
so that importing them does not import the whole report.
"""
