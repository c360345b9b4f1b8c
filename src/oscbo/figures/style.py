"""How every figure looks: sizes, fonts, one colour and marker per method, the provenance footer.

Figures are SVG with their text kept as text, drawn at the width the report shows them
(:data:`WIDTH` inches, 1104 CSS pixels): no font is smaller than :data:`MIN_FONT` points, 9.3
pixels as displayed. A method label has the same colour and marker in every figure of a study
(:class:`Styles`, built once from every label the study ran), OSCBO vermillion and GP-UCB-MLL blue;
lines drawn together are apart in colour for every reader (:mod:`oscbo.figures.colours`).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd

matplotlib.use("Agg")  # files only; never open a window, even where a display exists

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import LogFormatter  # noqa: E402

from oscbo import records  # noqa: E402
from oscbo.analysis import readings  # noqa: E402
from oscbo.figures.colours import APART, gap  # noqa: E402
from oscbo.paper import GP_UCB_MLL, OSCBO, paper_order, shown_name  # noqa: E402

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

#: The paper's method and its main baseline keep the same colours in every figure (Okabe and
#: Ito's vermillion and blue).
FIXED = {OSCBO: "#d55e00", GP_UCB_MLL: "#0072b2"}
#: The other labels' colours, in the order labels take them (:class:`Styles`). The first six, with
#: the fixed two, stay apart for every reader (Okabe and Ito's orange, sky blue and bluish green,
#: black, and Paul Tol's wine and indigo: CIE76 distances of at least 16 under normal vision and
#: simulated deuteranopia, protanopia and tritanopia; tests/report); then Tol's other dark colours
#: and Dark2. Every label also has its own marker.
PALETTE = [
    "#e69f00",
    "#56b4e9",
    "#009e73",
    "#000000",
    "#882255",
    "#332288",
    "#44aa99",
    "#aa4499",
    "#117733",
    "#661100",
    "#6699cc",
    "#999999",
    *(matplotlib.colors.to_hex(color) for color in matplotlib.colormaps["Dark2"].colors),
]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "d"]

#: The label of a guide line (where BO starts, a target, a marked λ₀): not a method's line, not in
#: a legend (its label starts with "_"), and not held to :data:`APART`.
GUIDE = "_guide"


def apart(count: int, taken: Iterable[str] = ()) -> list[str]:
    """``count`` colours of :data:`PALETTE`, in its order, each at least :data:`APART` from the others
    and from the colours ``taken`` (drawn beside them): a figure's own lines, one per task."""
    chosen: list[str] = []
    for color in PALETTE:
        if len(chosen) < count and all(gap(color, other) >= APART for other in [*chosen, *taken]):
            chosen.append(color)
    if len(chosen) < count:
        raise ValueError(f"only {len(chosen)} colours of the palette are apart, {count} asked for")
    return chosen


@dataclass(frozen=True)
class Style:
    color: str
    marker: str
    #: A reading's stand-in (not a method of the paper): dashed lines, hollow markers.
    stand_in: bool = False

    @property
    def line(self) -> str:
        return "--" if self.stand_in else "-"

    @property
    def face(self) -> str:
        return "none" if self.stand_in else self.color


class Styles:
    """One :class:`Style` per label, for the whole study, so a label keeps its style in every
    figure: the fixed ones, then the others in the order given, the readings' stand-ins
    (``stand_ins``) after every method, so that the methods take the most distinct colours (give
    the main experiment's labels first).

    A label takes the first colour of :data:`PALETTE` that no label took before it and that lies
    at least :data:`APART` from the colour of every label drawn beside it (``together``: the groups
    of labels one figure draws); where none is left, a taken one that does; where none does, the
    next in turn."""

    def __init__(
        self, labels: Iterable[str], stand_ins: Iterable[str] = (), together: Iterable[Iterable[str]] = ()
    ) -> None:
        stand_ins = set(stand_ins)
        given = [label for label in dict.fromkeys(labels) if label not in FIXED]
        others = [label for label in given if label not in stand_ins] + [label for label in given if label in stand_ins]
        beside: dict[str, set[str]] = {}
        for group in map(set, together):
            for label in group:
                beside.setdefault(label, set()).update(group - {label})
        colors = dict(FIXED)
        for i, label in enumerate(others):
            near = [colors[other] for other in beside.get(label, ()) if other in colors]
            fits = [color for color in PALETTE if all(gap(color, other) >= APART for other in near)]
            free = [color for color in fits if color not in colors.values()]
            turn = PALETTE[i % len(PALETTE) :] + PALETTE[: i % len(PALETTE)]
            colors[label] = (free or [color for color in turn if color in fits] or turn)[0]
        self.styles = {
            label: Style(colors[label], MARKERS[(i + 2) % len(MARKERS)], label in stand_ins)
            for i, label in enumerate(others)
        }
        self.styles.update({label: Style(color, MARKERS[i]) for i, (label, color) in enumerate(FIXED.items())})

    def __getitem__(self, label: str) -> Style:
        return self.styles.get(label, Style("0.3", "o"))

    def handles(self, labels: Iterable[str]) -> tuple[list[Line2D], list[str]]:
        """Legend entries for ``labels``, in the paper's order of its methods (each variant after its
        method), named as the paper names them (:func:`shown_name`)."""
        labels = sorted(set(labels), key=paper_order)
        return [
            Line2D(
                [],
                [],
                color=self[label].color,
                marker=self[label].marker,
                ls=self[label].line,
                markerfacecolor=self[label].face,
                lw=1.6,
                ms=5,
            )
            for label in labels
        ], [shown_name(label) for label in labels]


def reading_phrase(shown: str | None) -> str:
    """What a rank figure's caption says of its reading (``shown``: its few words, ``λ₀ = 0.433``)."""
    if not shown:
        return "the default reading: every stand-in left out"
    return (
        f"the reading {shown}: its stand-ins ranked under the names of what they replace, so "
        "OSCBO and OSCBO-L1 here are their runs at that reading"
    )


@dataclass(frozen=True)
class StandIns:
    """The readings' stand-ins (the ``readings`` table): method and task labels -> (what each
    replaces, the reading's description)."""

    methods: dict[str, tuple[str, str]]
    tasks: dict[str, tuple[str, str]]

    @classmethod
    def of(cls, readings: pd.DataFrame) -> StandIns:
        found: dict[str, dict[str, tuple[str, str]]] = {"method": {}, "task": {}}
        for row in readings.itertuples():
            if row.kind in found:
                found[row.kind].setdefault(row.stand_in, (row.replaces, row.description.split(" (")[0]))
        return cls(found["method"], found["task"])

    @staticmethod
    def _listed(labels: list[str], known: dict[str, tuple[str, str]]) -> str:
        by: dict[str, list[str]] = {}
        for label in labels:
            replaces, description = known[label]
            by.setdefault(description, []).append(f"{label} for {replaces}")
        return "; ".join(f"{', '.join(names)}: {description}" for description, names in by.items())

    def note(self, methods: Iterable[str] = (), tasks: Iterable[str] = ()) -> str:
        """The caption's sentence on the stand-ins a figure shows ("" for none)."""
        methods = sorted(set(methods) & set(self.methods))
        tasks = sorted(set(tasks) & set(self.tasks))
        parts = []
        if methods:
            parts.append(
                "Dashed, hollow markers: a reading's stand-in, not a method of the paper ("
                + self._listed(methods, self.methods)
                + ")."
            )
        if tasks:
            parts.append(f"A reading's stand-in task ({self._listed(tasks, self.tasks)}).")
        return readings.in_symbols(" ".join(parts))


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


#: The strip at the top of every figure that holds its provenance stamp alone, in its right corner
#: (inches; the stamp's text is :data:`MIN_FONT` points, 0.1 in): the panels stay below it, and the
#: legend, below the panels, as wide as it needs.
FOOTER_STRIP = 0.16


def grid(count: int, columns: int = 4, row_height: float = ROW_HEIGHT) -> tuple[Figure, list]:
    """A constrained-layout figure of the report's width with ``count`` panels, ``columns`` a row;
    a strip at the bottom stays free for the legend and the footer."""
    columns = max(1, min(columns, count))
    rows = -(-count // columns)
    height = row_height * rows + 0.9
    figure, axes = plt.subplots(rows, columns, figsize=(WIDTH, height), squeeze=False, layout="constrained")
    figure.get_layout_engine().set(rect=(0, 0, 1, 1 - FOOTER_STRIP / height))
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return figure, flat[:count]


def legend(figure: Figure, handles: list, labels: list[str], columns: int | None = None) -> None:
    """The figure's legend below its panels, read row by row in the order given: as few rows as the
    entries that fit a row allow (at most ``columns``, 6 unless told), each as full as the others
    (7 entries: 4 and 3, not 6 and 1)."""
    if not labels:
        return
    fits = int(WIDTH / (0.55 + 0.075 * max(map(len, labels))))
    rows = math.ceil(len(labels) / max(1, min(len(labels), columns or 6, fits)))
    across = math.ceil(len(labels) / rows)
    # matplotlib fills a legend column by column: hand it the entries so that they read by rows
    order = [i for column in range(across) for i in range(column, len(labels), across)]
    figure.legend(
        [handles[i] for i in order], [labels[i] for i in order], loc="outside lower center", ncol=across, frameon=False
    )


#: Coordinates in path data and in x/y attributes: to a tenth of a point (0.13 CSS px).
_COORDINATES = re.compile(r' (?:x|y)="[-\d.]+"')
_DECIMALS = re.compile(r"(\d\.\d)\d+")
_PATH = re.compile(r' d="([^"]*)"')
_TOKEN = re.compile(r"[MLCQZ]|-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?")
#: The coordinates each absolute command of matplotlib's SVG paths takes.
_ARITY = {"M": 2, "L": 2, "Q": 4, "C": 6, "Z": 0}


def _tenths(value: int) -> str:
    """A length in tenths of a point, shortest: 15 -> "1.5", 10 -> "1", -5 -> "-.5"."""
    sign, value = ("-" if value < 0 else ""), abs(value)
    whole, tenth = divmod(value, 10)
    return sign + (str(whole) if whole or not tenth else "") + (f".{tenth}" if tenth else "")


def relative_path(data: str) -> str:
    """matplotlib's absolute path data (``M x y L x y ... z``) as relative commands on a tenth of a
    point, the shortest way SVG writes them: about half the characters, the same drawing (each
    coordinate is rounded once, in absolute terms, so no error accumulates)."""
    tokens = _TOKEN.findall(data)
    out: list[str] = []
    last = ""  # the last number written: a separator is needed unless the next can't run into it
    command = written = None
    x = y = start_x = start_y = 0
    i = 0
    while i < len(tokens):
        if tokens[i] in _ARITY:
            command, i = tokens[i], i + 1
            if command == "Z":
                out.append("z")
                x, y, written, last = start_x, start_y, "z", ""
            continue
        numbers = [round(float(v) * 10) for v in tokens[i : i + _ARITY[command]]]
        i += _ARITY[command]
        letter = command.lower()
        if letter != written:
            out.append(letter)
            written, last = letter, ""
        for k, n in enumerate(numbers):
            part = _tenths(n - (x if k % 2 == 0 else y))
            glued = not last or part.startswith("-") or (part.startswith(".") and "." in last)
            out.append(part if glued else " " + part)
            last = part
        x, y = numbers[-2], numbers[-1]
        if command == "M":  # pairs after a move, and an explicit line after it, are relative lines
            start_x, start_y, command, written = x, y, "L", "l"
    return "".join(out)


#: A text's rotation by zero degrees, which matplotlib writes on every label.
_NO_ROTATION = re.compile(r' transform="rotate\(-?0 [^"]*\)"')
_STYLE = re.compile(r' style="([^"]*)"')


def shared_styles(svg: str) -> str:
    """Each distinct ``style`` attribute once, as a class rule of the SVG's style sheet (``.c0``,
    ``.c1``, ...), and a ``class`` on each element: matplotlib repeats a line's style on every
    marker and a font list on every label."""
    names: dict[str, str] = {}

    def name(match: re.Match) -> str:
        return f' class="{names.setdefault(match.group(1), f"c{len(names)}")}"'

    svg = _STYLE.sub(name, svg)
    rules = "".join(f".{short}{{{style}}}" for style, short in names.items())
    if "</style>" in svg:
        return svg.replace("</style>", rules + "</style>", 1)
    return svg.replace(">", f'><defs><style type="text/css">{rules}</style></defs>', 1)


def compact(svg: str) -> str:
    """``svg`` with its coordinates on a tenth of a point, its paths as relative commands
    (:func:`relative_path`), its styles shared (:func:`shared_styles`) and no zero rotations: about a
    tenth of matplotlib's size, no visible change."""
    svg = _PATH.sub(lambda match: f' d="{relative_path(match.group(1))}"', svg)
    svg = _COORDINATES.sub(lambda match: _DECIMALS.sub(r"\1", match.group(0)), svg)
    return shared_styles(_NO_ROTATION.sub("", svg))


#: The numbers the figure being drawn plots, as drawers report them (:func:`plotted`): its CSV.
PLOTTED: list[pd.DataFrame] = []
#: What names a panel in a figure's numbers, where the data have it.
PANEL = ("experiment", "task", "metric")


def plotted(panel: pd.Series, **columns: Any) -> None:
    """Record one plotted series (``columns``: equal-length arrays, or scalars) of the panel a row
    ``panel`` belongs to, for the figure's CSV."""
    names = {key: panel[key] for key in PANEL if key in panel.index}
    PLOTTED.append(pd.DataFrame({**names, **columns}))


def stamp(figure: Figure, footer: str) -> Any:
    """Lay ``figure`` out (once: with its engine kept, savefig would lay it out and draw it twice)
    and put the provenance ``footer`` in the strip above its panels, right-aligned
    (:data:`FOOTER_STRIP`); the footer's text artist."""
    engine = figure.get_layout_engine()
    if engine is not None:
        engine.execute(figure)
        figure.set_layout_engine(None)
    return figure.text(0.997, 0.997, footer, fontsize=MIN_FONT, color="0.4", ha="right", va="top")


def save(figure: Figure, path: str | Path, footer: str) -> None:
    """Write ``figure`` as compact SVG (:func:`compact`), atomically, with the provenance
    ``footer`` in its top right corner (:func:`stamp`)."""
    stamp(figure, footer)
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(figure)
    with records.atomic_path(path) as tmp:
        tmp.write_text(compact(buffer.getvalue()), encoding="utf-8")
