# SPDX-License-Identifier: MIT
"""The hub's watchdog (docs/bus.md, "The watchdog"): a module whose
simulated time stops, by a handler that never returns or by two tasks
exchanging messages for ever at zero cost, would hold the whole device
back; the hub must stop the run, name the module and the task on its
stack, and `motet run` must fail. apps/stuck hangs module 1 5 ms in.

The watchdog's bound is CPU time, set low here (--watchdog 0.5) so that the
runs end soon; the assertions are about what the run says and returns,
never about how long it took (the subprocess timeout only guards a hang).
"""

import json
import subprocess
from pathlib import Path

from conftest import ROOT, RUN_TIMEOUT_S
from device_run import env, motet_run_cmd

DEVICE = Path(__file__).with_name("stuck-device.toml")


def run_stuck(build_dir, tmp_path, app):
    report = tmp_path / "report.json"
    cmd = motet_run_cmd(build_dir, DEVICE, "--watchdog", "0.5", "--report", report,
                        extra=["--app", app])
    res = subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    notes = [line for line in res.stdout.splitlines() if line.startswith("hub|")
             and "watchdog:" in line]
    return res, notes, json.loads(report.read_text()) if report.exists() else None


def check_stopped(res, notes, report):
    out = res.stdout + res.stderr
    assert res.returncode == 1, f"motet run exited with {res.returncode}:\n{out[-3000:]}"
    assert len(notes) == 1, out[-3000:]
    assert "m1 (sense)" in notes[0] and "simulated time stopped at 0.005" in notes[0], notes[0]
    assert "hub| [" in out and "stopped: watchdog" in out
    assert report["reason"] == "watchdog"
    assert report["watchdog"]["module"] == 1
    assert report["modules"]["1"]["state"] == "killed"
    assert report["modules"]["1"]["note"] == "stopped by the watchdog"
    # The other module was stopped cleanly: it printed its counters.
    assert "m0| bus: module 0 sent" in out
    return report["watchdog"]["tasks"]


def test_handler_that_never_returns(build_dir, tmp_path):
    res, notes, report = run_stuck(build_dir, tmp_path, "stuck_spin")
    tasks = check_stopped(res, notes, report)
    # Every sample finds the looping handler: the first task, pid 0x10.
    assert list(tasks) == ["0x10 (program 'spin')"], tasks
    assert "on its stack: task 0x10 (program 'spin')" in notes[0]


def test_tasks_exchanging_messages_for_ever(build_dir, tmp_path):
    res, notes, report = run_stuck(build_dir, tmp_path, "stuck_pingpong")
    tasks = check_stopped(res, notes, report)
    # The samples land in one ball or the other (or between handlers), never
    # in another task.
    assert tasks and set(tasks) <= {"0x10 (program 'ball')", "0x11 (program 'ball')"}, tasks


def test_normal_run_is_not_stopped(build_dir, tmp_path):
    """A device that sleeps between its messages is never taken for stuck,
    even with the watchdog's bound this low."""
    report = tmp_path / "report.json"
    cmd = motet_run_cmd(build_dir, ROOT / "devices" / "two-module.toml", "--until", "0.5",
                        "--watchdog", "0.5", "--report", report)
    res = subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["reason"] == "time limit" and data["watchdog"] is None
