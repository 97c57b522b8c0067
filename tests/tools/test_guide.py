# SPDX-License-Identifier: MIT
"""docs/guide.md cannot rot: every command of its `console` blocks (the
lines starting `$ `) runs, in order, in a fresh copy of the repository,
and what the guide shows after a command must be what it prints: the
shown lines, in the order shown, each one a whole line of the output
(`...` stands for any number of lines left out; without a `...` at the
end, the last line shown is the last line printed)."""

import re
import subprocess

from repo_copy import ROOT, clone, user_env

GUIDE = ROOT / "docs" / "guide.md"
BLOCK = re.compile(r"^```console\n(.*?)^```$", re.S | re.M)
STEP_TIMEOUT_S = 1200  # a step may build from nothing


def steps(text):
    """(command, expected lines) in the guide's order."""
    out = []
    for block in BLOCK.findall(text):
        for line in block.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
    return out


def mismatch(expected, lines):
    """Why `lines` does not show `expected`, or None."""
    at = 0
    gap = False
    for want in expected:
        if want == "...":
            gap = True
            continue
        if gap:
            try:
                at = lines.index(want, at) + 1
            except ValueError:
                return f"missing (in order): {want!r}"
        else:
            if at >= len(lines) or lines[at] != want:
                got = lines[at] if at < len(lines) else "the end of the output"
                return f"expected {want!r}, got {got!r}"
            at += 1
        gap = False
    if expected and not gap and at != len(lines):
        return f"more output than shown, from {lines[at]!r}"
    return None


def test_the_guide_has_commands_with_their_output():
    found = steps(GUIDE.read_text())
    assert len(found) >= 8
    assert found[0][0] == "./motet new monitor --modules 2"
    assert all(expected for _, expected in found[1:] if "sed " not in _)


def test_matching_allows_gaps_only_where_the_guide_shows_them():
    assert mismatch(["a", "...", "c"], ["a", "b", "c"]) is None
    assert mismatch(["a", "c"], ["a", "b", "c"]) is not None
    assert mismatch(["...", "b"], ["a", "b", "c"]) is not None
    assert mismatch(["...", "b", "..."], ["a", "b", "c"]) is None


def test_every_command_of_the_guide_prints_what_the_guide_shows(tmp_path):
    repo = clone(tmp_path / "motet")
    for command, expected in steps(GUIDE.read_text()):
        res = subprocess.run(["bash", "-c", command], cwd=repo, env=user_env(),
                             capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
        # What the user sees: standard output, then errors (motet run
        # prints its errors on standard output, the build its notes).
        lines = (res.stdout + res.stderr).splitlines()
        why = mismatch(expected, lines)
        assert why is None, (f"docs/guide.md: `{command}`: {why}\n"
                             + "\n".join(lines[-60:]))
        if not any(e.startswith("exit status") for e in expected):
            assert res.returncode == 0, f"`{command}` exited with {res.returncode}"
