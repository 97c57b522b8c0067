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

from conftest import ROOT, RUN_TIMEOUT_S
from device_run import DEVICES, PONG, env, events, run_device

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
