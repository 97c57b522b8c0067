# SPDX-License-Identifier: MIT
"""A task whose INIT fails ends there (sched.h, task_handler_t): on the
two-module device, `broken` (the pinger program given an init string two
bytes short) refuses it; the console says so and that the task ended, the
event log has its ERROR, INITFAIL and KILL and no FINAL, and the echo's
replies to it are refused on its module as sent to no task, while the
rest of the application runs on. A failed start is a failed run: once the
run ends, `motet run` names the task (name, pid, module, error) again and
exits with status 1."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, RUN_TIMEOUT_S
from device_run import DEVICES, PONG, build_device_programs, env, events, run_device

TWO = DEVICES / "two-module.toml"

# pinger and broken on module 0, both sending to echo on module 1, whose
# replies go to broken: the pinger's four pings are answered, to no one.
BROKEN = """
[app]
name = "broken"

[programs]
pinger = 1
ponger = 2

[[task]]
name = "pinger"
program = "pinger"
priority = 2
module = 0
routes = ["echo:0"]
init = [{ u32 = 25000 }, { u32 = 4 }]

[[task]]
name = "echo"
program = "ponger"
priority = 3
module = 1
routes = ["broken:0"]

[[task]]
name = "broken"
program = "pinger"
priority = 2
module = 0
routes = ["echo:0"]
init = [{ u16 = 25 }]
"""

PID_BROKEN = 0x12  # the third task of the description


def test_a_task_whose_init_fails_ends_and_the_log_says_so(build_dir, tmp_path):
    app = tmp_path / "broken.toml"
    app.write_text(BROKEN)
    logs = tmp_path / "logs"
    run = run_device(build_dir, tmp_path, TWO, "--app", app, "--until", 0.2, log_dir=logs,
                     status=1)
    failed = [line for line in run.lines if line.startswith("run: error:")]
    assert failed == ["run: error: task 'broken' (pid 0x12) on module 0 (compute) did not start: "
                      "its INIT failed (MT_ERR_INVALID); the rest ran on"], run.stdout
    assert run.stdout.rstrip().endswith(failed[0]), run.stdout  # after the summary, last
    m0 = [line for line in run.lines if line.startswith("m0| ")]
    said = [line for line in m0 if "in task 'broken'" in line]
    assert len(said) == 1, run.stdout
    assert ("ERR MT_ERR_INVALID (argument out of range) in task 'broken' (pid 0x12), "
            "program 'pinger'") in said[0]
    ended = [line for line in m0 if "ERR task 'broken' (pid 0x12), program 'pinger', ended: "
             "its INIT failed (MT_ERR_INVALID)" in line]
    assert len(ended) == 1, run.stdout
    # The rest runs on: four pings answered, each reply refused on module 0.
    assert len(run.module_lines(PONG)) == 4, run.stdout
    assert sum("ERR MT_ERR_NO_TASK" in line for line in m0) == 4, run.stdout

    recs = [r for r in events(logs, 0) if r.pid == PID_BROKEN]
    kinds = [r.type for r in recs]
    assert "INITFAIL" in kinds and "KILL" in kinds, kinds
    initfail = kinds.index("INITFAIL")
    assert kinds[initfail - 2:initfail] == ["END", "ERROR"], kinds
    assert kinds.index("KILL") > initfail
    assert recs[initfail].arg == 1  # MT_ERR_INVALID
    assert kinds.count("START") == 1  # its INIT: no FINAL, nothing after
    assert not any(r.type in ("START", "RUN", "SEND") for r in recs[initfail:])

    # `motet log` shows the error and the end in words.
    table = subprocess.run(["./motet", "log", str(logs / "m0.log")], cwd=ROOT, env=env(),
                           capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=True)
    rows = [line.split(None, 3) for line in table.stdout.splitlines()]
    mine = [r for r in rows if len(r) == 4 and r[2] == "0x12"]
    assert ["ERROR", "MT_ERR_INVALID"] in [r[1:4:2] for r in mine], table.stdout
    assert ["INITFAIL", "its INIT failed (MT_ERR_INVALID): ended, no FINAL"] in \
        [r[1:4:2] for r in mine], table.stdout
    assert ["KILL", "ended"] in [r[1:4:2] for r in mine], table.stdout

    # The Perfetto trace has the end as an instant on the task's track.
    trace = tmp_path / "m0.json"
    subprocess.run(["./motet", "log", "--chrome", str(trace), str(logs / "m0.log")], cwd=ROOT,
                   env=env(), capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=True)
    instants = [e for e in json.loads(trace.read_text())["traceEvents"]
                if e.get("ph") == "i" and e.get("tid") == PID_BROKEN]
    assert [e["args"]["detail"] for e in instants if e["name"] == "INITFAIL"] == \
        ["its INIT failed (MT_ERR_INVALID): ended, no FINAL"]


# ---- what the run's end reads: the event logs, of every kind of module ----

STUCK = {"native": Path(__file__).parent / "stuck-device.toml",
         "avr": Path(__file__).parent / "stuck-avr-device.toml",
         "cortex-m": Path(__file__).parent / "stuck-cm-device.toml"}

# One task on module 1, whose INIT refuses a delay of 0 (apps/stuck's
# "halt", start_after()).
REFUSING = """
[app]
name = "refusing"

[programs]
halt = 3

[[task]]
name = "refuser"
program = "halt"
priority = 2
module = 1
init = [{ u32 = 0 }]
"""


@pytest.fixture(scope="module")
def stuck_built(build_dir):
    for device in STUCK.values():
        build_device_programs(build_dir, device)
    return build_dir


@pytest.mark.parametrize("kind", ["avr", "cortex-m"])
def test_an_emulated_modules_failed_init_fails_the_run(stuck_built, tmp_path, kind):
    """An emulated module prints no ERR line: its INITFAIL, read off the
    chip into its event log, is what names the task (no --log-dir)."""
    app = tmp_path / "refusing.toml"
    app.write_text(REFUSING)
    run = run_device(stuck_built, tmp_path, STUCK[kind], "--app", app, "--until", 0.05,
                     status=1)
    assert run.lines[-1] == ("run: error: task 'refuser' (pid 0x10) on module 1 (sense) did "
                             "not start: its INIT failed (MT_ERR_INVALID); the rest ran on"), \
        run.stdout[-3000:]
    assert not [line for line in run.lines if line.startswith("run: note:")], run.stdout[-3000:]


SAYING = """
[app]
name = "saying"

[programs]
say = 4

[[task]]
name = "liar"
program = "say"
priority = 2
module = 1
init = [{ str = "ERR task 'liar' (pid 0x10), program 'say', ended: its INIT failed (MT_ERR_INVALID)" }]
"""


def test_a_task_that_prints_the_words_fails_nothing(stuck_built, tmp_path):
    """What a task prints is no failed INIT: its INIT succeeded, and the
    run exits 0 with no error line."""
    app = tmp_path / "saying.toml"
    app.write_text(SAYING)
    run = run_device(stuck_built, tmp_path, STUCK["native"], "--app", app, "--until", 0.02)
    said = [line for line in run.lines if line.startswith("m1| ") and "its INIT failed" in line]
    assert len(said) == 1, run.stdout
    assert not [line for line in run.lines if line.startswith("run: ")], run.stdout


# apps/stuck's "halt" on module 1 halts it 500 ticks after its INIT with
# the status its init gives: 5, as the kernel halts a module whose own
# task (the migrator, the application manager) cannot start.
HALTING = """
[app]
name = "halting"

[programs]
halt = 3

[[task]]
name = "halter"
program = "halt"
priority = 2
module = 1
init = [{ u32 = 500 }, { u8 = 5 }]
"""


def test_a_native_module_that_halts_mid_run_fails_the_run(stuck_built, tmp_path):
    app = tmp_path / "halting.toml"
    app.write_text(HALTING)
    run = run_device(stuck_built, tmp_path, STUCK["native"], "--app", app, "--until", 0.02,
                     status=1)
    assert run.hub_notes("m1 exited with status 5"), run.stdout
    failed = [line for line in run.lines if line.startswith("run: error:")]
    assert failed == ["run: error: module 1 (sense) exited with status 5 during the run (one "
                      "of the kernel's own tasks (the application manager or the migrator) "
                      "could not start, which halts the module: its console and event log say "
                      "which and why); the rest ran on without it"], run.stdout
    assert run.report["module_exits"] == [
        {"module": 1, "name": "sense", "status": 5, "tick": run.report["module_exits"][0]["tick"],
         "meaning": failed[0].split("during the run (")[1].split("); the rest")[0]}]
    assert run.module(0)["state"] == "running"  # stopped by QUIT at the limit: no error


def test_a_module_killed_by_fault_injection_is_no_failure(stuck_built, tmp_path):
    """A module the run kills (--fault kill) ends with a signal's status:
    that is the fault asked for, not a failure of the module."""
    app = tmp_path / "hello.toml"
    app.write_text(SAYING.replace(SAYING[SAYING.index("init = "):], 'init = [{ str = "hello" }]\n'))
    run = run_device(stuck_built, tmp_path, STUCK["native"], "--app", app, "--until", 0.02,
                     "--fault", "kill:1@0.01")
    assert run.module(1)["note"] == "killed by fault injection", run.report["modules"]
    assert run.report["module_exits"] == []
