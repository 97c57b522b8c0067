# SPDX-License-Identifier: MIT
"""Progress of long commands (tools/motetlib/progress.py): without a
terminal, a line at each tenth of the work and none in between; every
result comes back under its key."""

import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import progress  # noqa: E402


def test_a_log_gets_a_line_per_tenth_of_the_work():
    out = io.StringIO()
    with progress.Progress("sweep", 40, stream=out) as p:
        for _ in range(40):
            p.step()
    lines = out.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        f"sweep: {4 * k}/40 ({10 * k} %)" for k in range(11)]


def test_run_all_returns_every_result_under_its_key(capsys):
    res = progress.run_all("squares", {k: (pow, k, 2) for k in range(12)}, jobs=2)
    assert res == {k: k * k for k in range(12)}
    assert "squares: 12/12 (100 %)" in capsys.readouterr().err
