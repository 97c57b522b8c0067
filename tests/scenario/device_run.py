# SPDX-License-Identifier: MIT
"""Helpers for the multi-module scenarios: run `motet run` on a device and
read back what happened.

`motet run` is tools/motetlib/run_device.py (the `motet` command line
hands `run` to it); the tests call it as a module so that they do not
depend on how the command line is wired, with --no-build because the
session's build fixture has built everything already.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, RUN_TIMEOUT_S

DEVICES = ROOT / "devices"
TOOLS = ROOT / "tools"
sys.path.insert(0, str(TOOLS))

from motetlib import eventlog  # noqa: E402

LINE = re.compile(r"^m(\d+)\| \[\s*(\d+\.\d{3}) ms\] (.*)$")
PONG = re.compile(r"pong 0x[0-9a-f]+: seq (\d+) sent (\d+\.\d{3}) (in order|OUT OF ORDER)")
PING = re.compile(r"ping: seq (\d+) rtt (\d+) us")
MEMBER = re.compile(r"member 0x([0-9a-f]+) prio (\d+): seq (\d+) sent (\d+\.\d{3}) "
                    r"(in order|OUT OF ORDER)")
CAST = re.compile(r"cast: seq (\d+)")


def motet_run_cmd(build_dir, device, *args, extra=()):
    cmd = [sys.executable, "-m", "motetlib.run_device", str(device), "--no-build",
           "--build-dir", str(build_dir), *map(str, args)]
    return cmd + (["--", *extra] if extra else [])


def env():
    return dict(os.environ, PYTHONPATH=str(TOOLS))


def build_device_programs(build_dir, device):
    """Build what `device`'s modules run (native programs and the tools in
    the session's tree, port images in the trees of their ports beside
    it); fails the test with the build's output if that fails."""
    res = subprocess.run([sys.executable, "-c",
                          "import sys; from motetlib import device, run_device; "
                          "sys.exit(run_device.build_programs(sys.argv[1], "
                          "device.load(sys.argv[2])))", str(build_dir), str(device)],
                         cwd=ROOT, env=env(), capture_output=True, text=True, timeout=1800)
    if res.returncode != 0:
        pytest.fail(f"building the programs of {device.name} failed:\n{res.stdout[-4000:]}"
                    f"{res.stderr[-4000:]}", pytrace=False)


class Run:
    """A finished run: its output lines and its report."""

    def __init__(self, stdout, report):
        self.stdout = stdout
        self.report = report
        self.lines = stdout.splitlines()

    def module_lines(self, regex):
        """(module, time_ms, match) for every module line matching regex."""
        out = []
        for line in self.lines:
            m = LINE.match(line)
            if m:
                found = regex.search(m.group(3))
                if found:
                    out.append((int(m.group(1)), float(m.group(2)), found))
        return out

    def hub_notes(self, text):
        return [line for line in self.lines if line.startswith("hub|") and text in line]

    def kernel(self, module):
        return self.report["modules"][str(module)]["kernel"]

    def module(self, module):
        return self.report["modules"][str(module)]


def run_device(build_dir, tmp_path, device, *args, extra=(), log_dir=None, status=0,
               timeout=RUN_TIMEOUT_S):
    """Run a device to the end; fails the test unless it exits with
    `status` (`timeout`: a guard against a hung run, in wall seconds)."""
    report_path = tmp_path / f"report-{len(list(tmp_path.glob('report-*')))}.json"
    more = ["--report", report_path]
    if log_dir is not None:
        more += ["--log-dir", log_dir]
    cmd = motet_run_cmd(build_dir, device, *args, *more, extra=extra)
    res = subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=timeout)
    assert res.returncode == status, (f"{' '.join(map(str, cmd))} exited with {res.returncode}:\n"
                                 f"{res.stdout[-4000:]}{res.stderr[-2000:]}")
    return Run(res.stdout, json.loads(report_path.read_text()))


def events(log_dir, module):
    """The event-log records of one module (--log-dir)."""
    return [r for r in eventlog.read(Path(log_dir) / f"m{module}.log")
            if isinstance(r, eventlog.Event)]


def run_until_chip_reset(build_dir, device, until_s, tmp_path):
    """Run `device`, whose module 1 ("sense") hangs in "spin" and is reset
    by its chip's watchdog (apps/stuck); check that the hub stopped the run
    naming it, `motet run` exited 1 and module 0 stopped cleanly. Returns
    the output, stdout and stderr together."""
    report_path = tmp_path / "report.json"
    cmd = motet_run_cmd(build_dir, device, "--until", until_s, "--report", report_path)
    res = subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    out = res.stdout + res.stderr
    assert res.returncode == 1, f"motet run exited with {res.returncode}:\n{out[-3000:]}"
    assert "m1| [" in out and "spin 0x10: looping" in out, out[-3000:]
    notes = [line for line in res.stdout.splitlines()
             if line.startswith("hub|") and "reset by its watchdog" in line]
    assert len(notes) == 1 and "m1 (sense)" in notes[0], out[-3000:]
    assert "stopped: watchdog reset" in out
    report = json.loads(report_path.read_text())
    assert report["reason"] == "watchdog reset"
    assert report["chip_reset"]["module"] == 1 and report["chip_reset"]["name"] == "sense"
    assert report["modules"]["1"]["state"] == "exited"
    assert report["modules"]["1"]["note"].startswith("was reset by its watchdog")
    # The other module was stopped cleanly: it printed its counters.
    assert "m0| bus: module 0 sent" in out
    # Device time is consistent at the stop: the reset module's cycles and
    # the other module's time reach no further than the stop time reported.
    for mid, m in report["modules"].items():
        assert m["busy_s"] + m["sleep_s"] + m["off_s"] <= report["end_s"] + 1e-9, (mid, m)
    return out
