# SPDX-License-Identifier: MIT
"""Benchmark plots, drawn with matplotlib (Debian's python3-matplotlib,
installed by `motet setup`) into SVG files under docs/plots/.

Drawn to be read: every series has its own colour and its own marker (up
to ten series; more is an error rather than two look-alike lines), the
legend sits beside the axes so that it never covers data, reference lines
are dashed and unmarked, and the y axis fits the data (`zero=True` keeps 0
in view where the distance to it is the point). A quantity whose
differences matter more than its level (idle time, all near 90 %) is
plotted as its difference to a baseline by the caller.

    plot.write("docs/plots/x.svg", "Latency", "bytes", "ms",
               [("measured", [(0, 1.2), (1024, 8.0)]), ("paper", [...])],
               dashed=("paper",))

The SVG is reproducible: no date, fixed element ids.
"""

from pathlib import Path

# Ten colours that differ in hue and lightness (matplotlib's tab10) and ten
# marker shapes: series i gets colour i and marker i.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise RuntimeError("matplotlib is missing: run `./motet setup`") from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "motet"
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text
    import matplotlib.pyplot as plt
    return plt


def write(path, title, xlabel, ylabel, series, dashed=(), zero=False, hline=None):
    """Draw `series` ([(name, [(x, y), ...]), ...]) into the SVG file `path`
    (a PNG if it ends in .png);
    names in `dashed` are reference lines. `hline`: (y, label) of a
    horizontal reference. Returns the path."""
    solid = [s for s in series if s[0] not in dashed]
    if len(solid) > len(COLOURS):
        raise ValueError(f"{len(solid)} series: at most {len(COLOURS)} can be told apart")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    k = 0
    for name, pts in series:
        pts = sorted(pts)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        if name in dashed:
            ax.plot(xs, ys, linestyle="--", color="#444444", linewidth=1.3, label=name)
            continue
        ax.plot(xs, ys, color=COLOURS[k], marker=MARKERS[k], markersize=6, linewidth=1.6,
                label=name)
        k += 1
    if hline is not None:
        ax.axhline(hline[0], color="#444444", linestyle=":", linewidth=1.2, label=hline[1])
    if zero:
        lo, hi = ax.get_ylim()
        ax.set_ylim(min(lo, 0), max(hi, 0))
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, color="#dddddd", linewidth=0.8)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".png":  # a look at a plot in an image viewer
        fig.savefig(path, format="png", bbox_inches="tight", dpi=90)
    else:
        fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return path
