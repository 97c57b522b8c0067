# SPDX-License-Identifier: MIT
"""`motet run DEVICE.toml --app APP.toml`: a description given on the
command line, compiled on the fly, runs on the device's programs; and a
load that fails, on a device or on a module alone, says why on the console
(task by name, module, program, error and meaning) and fails the run."""

import re
import subprocess

from conftest import ROOT, RUN_TIMEOUT_S
from device_run import DEVICES, PING, PONG, env, run_device

TWO = DEVICES / "two-module.toml"

# pingpong with the ponger on module 0 and a 25 ms period: what only this
# file says, so that the run shows it was this file that was loaded.
LOCAL_PINGPONG = """
[app]
name = "local"

[programs]
pinger = 1
ponger = 2

[[task]]
name = "pinger"
program = "pinger"
priority = 2
module = 0
routes = ["ponger:0"]
init = [{ u32 = 25000 }, { u32 = 4 }]

[[task]]
name = "ponger"
program = "ponger"
priority = 3
module = 0
routes = ["pinger:0"]
"""

# A task on module 1 running a program no module registers.
PHANTOM = """
[app]
name = "phantom"

[programs]
pinger = 1
phantom = 42

[[task]]
name = "pinger"
program = "pinger"
priority = 2
module = 0

[[task]]
name = "spectre"
program = "phantom"
priority = 2
module = 1
"""


def test_a_description_given_with_app_runs_on_the_device(build_dir, tmp_path):
    app = tmp_path / "local.toml"
    app.write_text(LOCAL_PINGPONG)
    run = run_device(build_dir, tmp_path, TWO, "--app", app, "--until", 0.3)
    pings = run.module_lines(PING)
    pongs = run.module_lines(PONG)
    # Four pings, 25 ms apart, every one answered on module 0 itself.
    assert [int(t) for _, t, _ in pings] == [25, 50, 75, 100], run.stdout
    assert {m for m, _, _ in pongs} == {0} and len(pongs) == 4, run.stdout
    assert "MT_ERR" not in run.stdout


def run_local_pingpong(build_dir, tmp_path, costs=""):
    """LOCAL_PINGPONG for 0.3 s on the two-module device, with `costs`
    (TOML lines) in place of its handler_us = 0."""
    device = tmp_path / "costed.toml"
    device.write_text(TWO.read_text().replace("handler_us = 0", costs or "handler_us = 0"))
    app = tmp_path / "local.toml"
    app.write_text(LOCAL_PINGPONG)
    return run_device(build_dir, tmp_path, device, "--app", app, "--until", 0.3)


def test_handler_runs_are_charged_the_device_files_costs(build_dir, tmp_path):
    """handler_us and task_us: the native port charges every handler run
    simulated time, per task by its name. The ponger (1000 us) preempts
    the pinger (100 us) at its send and answers at once, so each ping's
    round trip is the ponger's run and the rest of the pinger's: 1100 us,
    where at zero cost it is 0."""
    run = run_local_pingpong(build_dir, tmp_path, "handler_us = 100\ntask_us = { ponger = 1000 }")
    rtts = [int(m.group(2)) for _, _, m in run.module_lines(PING)]
    assert rtts == [1100] * 4, run.stdout
    # Without costs the same run takes no time at all.
    run = run_local_pingpong(build_dir, tmp_path)
    assert [int(m.group(2)) for _, _, m in run.module_lines(PING)] == [0] * 4


UNMATCHED = re.compile(r"warning: --task-us (\S+) matched no task")


def test_a_task_us_naming_no_task_is_named_when_the_modules_halt(build_dir, tmp_path):
    """A misspelt task_us costs nothing, so each native module names it at
    its halt; ponger, which runs on module 0 only, is named by neither."""
    run = run_local_pingpong(build_dir, tmp_path,
                             "handler_us = 0\ntask_us = { ponger = 1000, pnoger = 500 }")
    said = sorted((m, found.group(1)) for m, _, found in run.module_lines(UNMATCHED))
    assert said == [(0, "pnoger=500"), (1, "pnoger=500")], run.stdout
    assert "nor any task of the application 'local'" in run.stdout


def test_a_task_us_naming_a_task_gives_no_warning(build_dir, tmp_path):
    """ponger runs on module 0 only: module 1 knows it from the
    application and does not warn either."""
    run = run_local_pingpong(build_dir, tmp_path,
                             "handler_us = 0\ntask_us = { ponger = 0, pinger = 100 }")
    assert len(run.module_lines(PING)) == 4, run.stdout
    assert "warning:" not in run.stdout, run.stdout


def test_a_bad_description_given_with_app_names_its_task_and_fails(build_dir, tmp_path):
    app = tmp_path / "phantom.toml"
    app.write_text(PHANTOM)
    run = run_device(build_dir, tmp_path, TWO, "--app", app, "--until", 0.1, status=1)
    said = [line for line in run.lines if line.startswith("m1| ") and "ERR MT_ERR_NO_PROGRAM "
            "(no program with that id is registered on this module): the application" in line]
    assert len(said) == 1, run.stdout
    assert "cannot load: task 'spectre' (relative pid 1) on module 1" in said[0]
    assert "run: error: the application did not load (m1: MT_ERR_NO_PROGRAM" in run.stdout


def test_an_app_that_does_not_compile_is_refused_before_anything_runs(build_dir, tmp_path):
    app = tmp_path / "broken.toml"
    app.write_text(PHANTOM.replace('program = "phantom"', 'program = "nothing"'))
    cmd = ["./motet", "run", str(TWO), "--no-build", "--build-dir", str(build_dir),
           "--app", str(app)]
    res = subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2
    assert "task 'spectre': unknown program 'nothing'" in res.stderr
    assert "run: error: --app" in res.stderr


def test_app_is_refused_when_the_loader_is_an_emulated_module(build_dir, tmp_path):
    """--app reaches the native modules' command lines; an AVR loader loads
    the description built into its image, so the run is refused, naming it."""
    dev = tmp_path / "avr-loader.toml"
    dev.write_text((DEVICES / "mixed-avr.toml").read_text().replace("loader = 0", "loader = 1"))
    cmd = ["./motet", "run", str(dev), "--no-build", "--build-dir", str(build_dir),
           "--app", str(ROOT / "apps/pingpong/mcast.toml")]
    res = subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2
    assert "the loader, module 1, is an emulated module (avr)" in res.stderr


def test_a_module_alone_says_why_its_load_failed_and_exits_1(build_dir, tmp_path):
    """The hello program alone, given a description one of whose tasks is
    on a module it does not have: the error on its console, status 1."""
    app = tmp_path / "far.toml"
    app.write_text((ROOT / "apps/hello/hello.toml").read_text()
                   .replace('name = "radio"\nprogram = "radio"\npriority = 2',
                            'name = "radio"\nprogram = "radio"\npriority = 2\nmodule = 3'))
    binary = tmp_path / "far.bin"
    subprocess.run(["./motet", "appc", str(app), "-o", str(binary), "--names"], cwd=ROOT,
                   check=True)
    res = subprocess.run([str(build_dir / "apps/hello/hello"), "--sim", "--until", "1",
                          "--app-file", str(binary)], capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    assert res.returncode == 1, res.stdout
    assert ("ERR MT_ERR_NO_MODULE (a task placed on a module the device does not have): the "
            "application '" in res.stdout)
    assert "cannot load: task 'radio' (relative pid 2) on module 3" in res.stdout
    assert "hello: cannot load '" in res.stdout and "': MT_ERR_NO_MODULE" in res.stdout
    assert "Hello World" not in res.stdout
