# SPDX-License-Identifier: MIT
"""The benchmark plots (tools/motetlib/plot.py, matplotlib): every series
has a colour and a marker of its own, the legend lies outside the axes,
reference lines are dashed, and the same data give the same file."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import plot  # noqa: E402

pytest.importorskip("matplotlib", reason="`motet setup` installs matplotlib")

NINE = [(f"series {k}", [(n, k + n / 10) for n in range(1, 9)]) for k in range(9)]


def svg(tmp_path, name="p.svg", **kw):
    kw.setdefault("series", NINE)
    path = plot.write(tmp_path / name, "Idle <time> & more", "tree position n", "pp", **kw)
    return path.read_text()


def test_nine_series_get_nine_colours_and_nine_markers(tmp_path):
    text = svg(tmp_path)
    strokes = {c for c in re.findall(r"stroke: ?(#[0-9a-f]{6})", text) if c in plot.COLOURS}
    assert len(strokes) == 9
    assert len(set(plot.MARKERS)) == len(plot.MARKERS) == len(plot.COLOURS)
    for name, _ in NINE:
        assert f">{name}<" in text  # in the legend, as text
    assert "Idle &lt;time&gt; &amp; more" in text


def test_more_series_than_can_be_told_apart_is_an_error(tmp_path):
    many = NINE + [("a", [(0, 1)]), ("b", [(0, 2)])]
    with pytest.raises(ValueError, match="can be told apart"):
        svg(tmp_path, series=many)


def test_the_legend_is_outside_the_axes(tmp_path):
    """The legend's text starts right of the plotting area: it can cover
    no data point."""
    text = svg(tmp_path)
    axes = re.search(r'<g id="patch_2">\s*<path d="M ([\d.]+) ([\d.]+) \s*L ([\d.]+)', text)
    assert axes, text[:2000]
    right = max(float(axes.group(1)), float(axes.group(3)))
    xs = [float(x) for x in re.findall(r'<text[^>]*x="([\d.]+)"[^>]*>series \d<', text)]
    assert len(xs) == 9 and min(xs) > right


def test_reference_lines_are_dashed_and_unmarked(tmp_path):
    text = svg(tmp_path, series=NINE[:2] + [("paper", [(1, 0), (8, 2)])], dashed=("paper",))
    assert "stroke-dasharray" in text
    assert ">paper<" in text


def test_the_same_data_give_the_same_file(tmp_path):
    assert svg(tmp_path, "a.svg") == svg(tmp_path, "b.svg")
