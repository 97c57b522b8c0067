# SPDX-License-Identifier: MIT
"""A small SVG line-chart writer for benchmark plots (no third-party
packages): one or more series of (x, y) points, drawn as lines with
markers, axes with round ticks, a title and a legend.

    svgplot.write("docs/plots/x.svg", "Latency", "bytes", "ms",
                  [("measured", [(0, 1.2), (1024, 8.0)]), ("paper", [...])])
"""

import math
from pathlib import Path
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 55
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
DASHES = ("", "6,4", "2,3", "8,3,2,3")


def nice_ticks(lo, hi, count=6):
    """Round tick values covering lo..hi."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks, t = [], start
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(t, 10))
    return ticks


def _fmt(v):
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.3g}"


def render(title, xlabel, ylabel, series, dashed=()):
    """The SVG text of a chart; `series` is [(name, [(x, y), ...]), ...];
    names in `dashed` are drawn dashed (reference lines)."""
    xs = [x for _, pts in series for x, _ in pts]
    ys = [y for _, pts in series for _, y in pts]
    xt, yt = nice_ticks(min(xs), max(xs)), nice_ticks(min(0, min(ys)), max(ys))
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x):
        return LEFT + (x - xt[0]) / (xt[-1] - xt[0]) * pw

    def py(y):
        return TOP + ph - (y - yt[0]) / (yt[-1] - yt[0]) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15">'
           f'{escape(title)}</text>']
    for t in xt:
        out.append(f'<line x1="{px(t):.1f}" y1="{TOP}" x2="{px(t):.1f}" y2="{TOP + ph}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{px(t):.1f}" y="{TOP + ph + 16}" text-anchor="middle">{_fmt(t)}</text>')
    for t in yt:
        out.append(f'<line x1="{LEFT}" y1="{py(t):.1f}" x2="{LEFT + pw}" y2="{py(t):.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{HEIGHT - 12}" text-anchor="middle">'
               f'{escape(xlabel)}</text>')
    out.append(f'<text transform="translate(16,{TOP + ph / 2}) rotate(-90)" '
               f'text-anchor="middle">{escape(ylabel)}</text>')
    for i, (name, pts) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        dash = DASHES[1] if name in dashed else ""
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in sorted(pts))
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"'
                   + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        if name not in dashed:
            for x, y in pts:
                out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>')
        ly = TOP + 14 + 16 * i
        out.append(f'<line x1="{LEFT + 12}" y1="{ly - 4}" x2="{LEFT + 36}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"'
                   + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        out.append(f'<text x="{LEFT + 42}" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write(path, title, xlabel, ylabel, series, dashed=()):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(title, xlabel, ylabel, series, dashed))
    return path
