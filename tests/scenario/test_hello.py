# SPDX-License-Identifier: MIT
"""The hello application end to end, in simulated time.

hello greets over its radio every 125 ms of module time; each greeting is a
line `[   125.000 ms] radio: Hello World` stamped with the simulated time.
Other lines may appear and are ignored.
"""

import re
import subprocess
import sys

import pytest

from conftest import MOTET, ROOT, RUN_TIMEOUT_S

HELLO = "apps/hello/hello"
GREETING = re.compile(rb"^\[\s*(\d+\.\d{3}) ms\] radio: Hello World$")
PERIOD_MS = 125.0


def greetings(stdout):
    """Simulated times (ms) of the greetings in a run's output."""
    stamps = []
    for line in stdout.splitlines():
        m = GREETING.match(line.rstrip(b"\r"))
        if m:
            stamps.append(float(m.group(1)))
    return stamps


@pytest.mark.parametrize("seconds, expected", [(1, 8), (3, 24)])
def test_hello_greets_eight_times_a_second(run_program, seconds, expected):
    res = run_program(HELLO, "--sim", "--until", seconds)
    stamps = greetings(res.stdout)
    assert len(stamps) == expected, (
        f"expected {expected} greetings in {seconds} s, got {len(stamps)}:\n"
        + res.stdout.decode(errors="replace"))
    assert all(0 <= t <= seconds * 1000.0 for t in stamps), stamps


def test_hello_greetings_are_125_ms_apart(run_program):
    stamps = greetings(run_program(HELLO, "--sim", "--until", 3).stdout)
    assert len(stamps) >= 2
    assert 0 <= stamps[0] <= PERIOD_MS, f"first greeting at {stamps[0]} ms"
    gaps = [round(b - a, 3) for a, b in zip(stamps, stamps[1:])]
    assert gaps == [PERIOD_MS] * len(gaps), f"gaps between greetings (ms): {gaps}"


def test_hello_same_seed_same_output(run_program):
    first = run_program(HELLO, "--sim", "--seed", 7, "--until", 1)
    second = run_program(HELLO, "--sim", "--seed", 7, "--until", 1)
    assert first.stdout == second.stdout
    assert len(greetings(first.stdout)) == 8


def test_motet_run_hello(build_dir):
    """The same scenario through the command line: `motet run-hello --until 1`."""
    res = subprocess.run([sys.executable, str(MOTET), "run-hello", "--until", "1", "--seed", "3",
                          "--build-dir", str(build_dir)],
                         cwd=ROOT, capture_output=True, timeout=RUN_TIMEOUT_S)
    assert res.returncode == 0, res.stderr.decode(errors="replace")
    assert len(greetings(res.stdout)) == 8, res.stdout.decode(errors="replace")
