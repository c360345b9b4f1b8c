"""How every figure looks: sizes, fonts, one colour and marker per method, the provenance footer.

Figures are SVG with their text kept as text, drawn at the width the report shows them
(:data:`WIDTH` inches, 1104 CSS pixels): no font is smaller than :data:`MIN_FONT` points, 9.3
pixels as displayed. A method label has the same colour and marker in every figure of a study
(:class:`Styles`, built once from every label the study ran), OSCBO red and GP-UCB-MLL blue.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never open a window, even where a display exists

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import LogFormatter  # noqa: E402

from oscbo import records  # noqa: E402
from oscbo.paper import GP_UCB_MLL, OSCBO  # noqa: E402

#: The report's figure width (inches; 1 in = 72 pt = 96 CSS px).
WIDTH = 11.5
#: Height of a row of panels (inches).
ROW_HEIGHT = 2.6
#: The smallest font of any figure (points); 7 pt is 9.3 CSS px at the report's width. Labels
#: write sub- and superscripts as Unicode characters (λₜ₋₁), not mathtext, whose scripts are
#: set at 70 % of the font.
MIN_FONT = 7.0
FONTS = {
    "font.size": 8.5,
    "axes.titlesize": 9.0,
    "axes.labelsize": 8.5,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "legend.fontsize": 8.5,
    "figure.titlesize": 10.5,
    "svg.fonttype": "none",  # text stays text: sharp at any zoom, and small files
    "svg.hashsalt": "oscbo",  # the same figure is the same file
}
plt.rcParams.update(FONTS)

#: The paper's method and its main baseline keep the same colours in every figure.
FIXED = {OSCBO: "#d62728", GP_UCB_MLL: "#1f77b4"}
#: Distinct colours (tab10, then Dark2 and the darker half of tab20b), fixed ones left out.
PALETTE = [
    matplotlib.colors.to_hex(color)
    for color in (
        *matplotlib.colormaps["tab10"].colors,
        *matplotlib.colormaps["Dark2"].colors,
        *matplotlib.colormaps["tab20b"].colors[::2],
    )
    if matplotlib.colors.to_hex(color) not in FIXED.values()
]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "d"]


@dataclass(frozen=True)
class Style:
    color: str
    marker: str


class Styles:
    """One :class:`Style` per label, for the whole study, so a label keeps its style in every
    figure: the fixed ones, then the others in the order given (the most distinct colours first;
    give the main experiment's labels first)."""

    def __init__(self, labels: Iterable[str]) -> None:
        others = [label for label in dict.fromkeys(labels) if label not in FIXED]
        self.styles = {
            label: Style(PALETTE[i % len(PALETTE)], MARKERS[(i + 2) % len(MARKERS)]) for i, label in enumerate(others)
        }
        self.styles.update({label: Style(color, MARKERS[i]) for i, (label, color) in enumerate(FIXED.items())})

    def __getitem__(self, label: str) -> Style:
        return self.styles.get(label, Style("0.3", "o"))

    def handles(self, labels: Iterable[str]) -> tuple[list[Line2D], list[str]]:
        labels = sorted(set(labels))
        return [
            Line2D([], [], color=self[label].color, marker=self[label].marker, lw=1.6, ms=5) for label in labels
        ], labels


class PlainLogFormatter(LogFormatter):
    """matplotlib's log-axis labels (which minor ticks to label, by the axis' span) written as
    plain numbers, ``0.01`` and ``1e-05``, not as powers with superscripts: a superscript is set
    at 70 % of the tick font, below :data:`MIN_FONT`."""

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return f"{x:g}"


def log_axis(ax: Axes, which: str = "y", **scale: float) -> None:
    """Put axis ``which`` of ``ax`` on a log scale (``symlog`` when ``scale`` has ``linthresh``),
    labelled with :class:`PlainLogFormatter`."""
    getattr(ax, f"set_{which}scale")("symlog" if "linthresh" in scale else "log", **scale)
    axis = getattr(ax, f"{which}axis")
    axis.set_major_formatter(PlainLogFormatter(labelOnlyBase=False))
    axis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))


def grid(count: int, columns: int = 4, row_height: float = ROW_HEIGHT) -> tuple[Figure, list]:
    """A constrained-layout figure of the report's width with ``count`` panels, ``columns`` a row;
    a strip at the bottom stays free for the legend and the footer."""
    columns = max(1, min(columns, count))
    rows = -(-count // columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(WIDTH, row_height * rows + 0.9), squeeze=False, layout="constrained"
    )
    figure.get_layout_engine().set(rect=(0, 0.03, 1, 0.97))
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return figure, flat[:count]


def legend(figure: Figure, handles: list, labels: list[str], columns: int | None = None) -> None:
    """The figure's legend below its panels, as many entries a row as fit."""
    if not labels:
        return
    fits = int(WIDTH / (0.55 + 0.075 * max(map(len, labels))))
    figure.legend(
        handles, labels, loc="outside lower center", ncol=max(1, min(len(labels), columns or 6, fits)), frameon=False
    )


#: Coordinates in path data and in x/y attributes: to a tenth of a point (0.13 CSS px).
_COORDINATES = re.compile(r'( d="[^"]*"| (?:x|y)="[-\d.]+")')
_DECIMALS = re.compile(r"(\d\.\d)\d+")


def compact(svg: str) -> str:
    """``svg`` with its coordinates rounded to a tenth of a point and path data on one line: a
    quarter of matplotlib's size, no visible change."""

    def shorten(match: re.Match) -> str:
        return _DECIMALS.sub(r"\1", match.group(0)).replace(" \n", " ").replace("\n", " ")

    return _COORDINATES.sub(shorten, svg)


def save(figure: Figure, path: str | Path, footer: str) -> None:
    """Write ``figure`` as compact SVG (:func:`compact`), atomically, with the provenance
    ``footer`` in its corner."""
    figure.text(0.003, 0.003, footer, fontsize=MIN_FONT, color="0.4", ha="left", va="bottom")
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(figure)
    with records.atomic_path(path) as tmp:
        tmp.write_text(compact(buffer.getvalue()), encoding="utf-8")
