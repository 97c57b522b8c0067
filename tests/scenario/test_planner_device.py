# SPDX-License-Identifier: MIT
"""`motet profile` and `motet plan` against the running SSL device
(devices/ssl-device.toml): the checked-in profile is what the command in its
header produces, and the planner's placement, compiled and loaded on the
device, runs the application and puts its tasks where the plan says."""

import re
import subprocess
import sys

import pytest

from conftest import ROOT, RUN_TIMEOUT_S
from device_run import DEVICES, env, events, run_device

from motetlib import appplace  # noqa: E402 (device_run put tools/ on the path)

pytest.importorskip("scipy.optimize", reason="`motet setup` installs scipy")

# Both tests' sanitized runs repeat lines test_ssl_device.py's reach (tests/conftest.py).
pytestmark = pytest.mark.sanitize_repeat

APP = ROOT / "apps" / "ssl" / "ssl_device.toml"
PROFILE = ROOT / "apps" / "ssl" / "ssl_device.profile.toml"
DEVICE = DEVICES / "ssl-device.toml"
FIRST_APP_PID = 0x10


def motet(build_dir, *args):
    cmd = [sys.executable, str(ROOT / "tools" / "motet"), *map(str, args)]
    res = subprocess.run(cmd, cwd=ROOT, env=dict(env(), MOTET_BUILD_DIR=str(build_dir)),
                         capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert res.returncode == 0, f"{' '.join(cmd)}: {res.stdout[-3000:]}{res.stderr[-3000:]}"
    return res


def figures(text):
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_the_checked_in_profile_is_what_its_command_produces(build_dir, tmp_path):
    header = PROFILE.read_text().splitlines()[1]
    cmd = re.fullmatch(r"# Produced by: \./motet (profile .*) -o (\S+)", header)
    assert cmd, header
    out = tmp_path / "again.toml"
    motet(build_dir, *cmd.group(1).split(), "--no-build", "-o", out)
    assert figures(out.read_text()) == figures(PROFILE.read_text())


def test_the_plan_runs_on_the_device_where_it_says(build_dir, tmp_path):
    placed = tmp_path / "placed.toml"
    motet(build_dir, "plan", APP, DEVICE, "--deadline", "radio=200", "-o", placed)
    app = appplace.load(placed)
    assert any(t.module != appplace.load(APP).task(t.name).module for t in app.tasks)
    blob = tmp_path / "placed.bin"
    motet(build_dir, "appc", placed, "-o", blob)
    logs = tmp_path / "logs"
    run = run_device(build_dir, tmp_path, DEVICE, "--until", "3", log_dir=logs,
                     extra=["--desc", blob])
    found = [line for line in run.lines if "radio: ssl block=" in line]
    assert len(found) >= 4, run.stdout[-3000:]
    for module in {t.module for t in app.tasks}:
        created = {r.pid for r in events(logs, module) if r.type == "CREATE"}
        for t in app.tasks:
            if t.module == module:
                assert FIRST_APP_PID + t.pid in created, (t.name, module)
