# SPDX-License-Identifier: MIT
"""tools/motetlib/ctest_report.py and `motet test`'s ctest runs: the names
of the unit tests that failed, on the summary's line of the stage, from a
real ctest run on a small CMake project."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import build, ctest_report, stages  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ctest") is None,
                                reason="cmake and ctest are set up by `motet setup`")

# A pass, a failure, a timeout, a program that is not there, a test that
# skips itself (not a failure) and one expected to fail that does.
PROJECT = """\
cmake_minimum_required(VERSION 3.16)
project(fake NONE)
enable_testing()
add_test(NAME test_passes COMMAND true)
add_test(NAME test_fails COMMAND false)
add_test(NAME test_hangs COMMAND sleep 30)
set_tests_properties(test_hangs PROPERTIES TIMEOUT 1)
add_test(NAME test_missing COMMAND ${CMAKE_BINARY_DIR}/no-such-program)
add_test(NAME test_skips COMMAND sh -c "exit 77")
set_tests_properties(test_skips PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME test_fails_as_meant COMMAND false)
set_tests_properties(test_fails_as_meant PROPERTIES WILL_FAIL TRUE)
"""
FAILED = ["test_fails", "test_hangs", "test_missing"]
PASSING = """\
cmake_minimum_required(VERSION 3.16)
project(fake NONE)
enable_testing()
add_test(NAME test_passes COMMAND true)
"""


def configured(tmp_path, project=PROJECT):
    src, bdir = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(project)
    subprocess.run(["cmake", "-S", src, "-B", bdir], check=True, capture_output=True, timeout=60)
    return src, bdir


def test_the_unit_stage_names_each_failed_ctest_program(tmp_path, capsys):
    _, bdir = configured(tmp_path)
    status, detail = stages.unit_tests(bdir)
    assert status != 0
    assert ctest_report.failed_tests(bdir) == FAILED
    assert detail == "ctest failed: 3 tests: " + ", ".join(FAILED), detail
    err = capsys.readouterr().err
    assert f"ctest: failed in {bdir}:\n    test_fails\n    test_hangs\n    test_missing\n" in err


def test_an_earlier_runs_failures_are_not_named_again(tmp_path):
    """ctest keeps the last failing run's list when a later run passes:
    a later failure names only its own tests."""
    src, bdir = configured(tmp_path)
    assert stages.unit_tests(bdir)[0] != 0
    (src / "CMakeLists.txt").write_text(PROJECT.replace("COMMAND false)\n", "COMMAND true)\n", 1))
    subprocess.run(["cmake", "-S", src, "-B", bdir], check=True, capture_output=True, timeout=60)
    assert stages.unit_tests(bdir)[1] == "ctest failed: 2 tests: test_hangs, test_missing"
    (src / "CMakeLists.txt").write_text(PASSING)
    subprocess.run(["cmake", "-S", src, "-B", bdir], check=True, capture_output=True, timeout=60)
    assert stages.unit_tests(bdir) == (0, "ctest")
    assert ctest_report.failed_tests(bdir) is None


def test_a_ctest_run_that_wrote_no_list_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 8))
    assert stages.unit_tests(tmp_path) == (8, "ctest failed: status 8, no report: see its output")


def test_the_ports_stage_names_a_ports_failed_tests(tmp_path, monkeypatch):
    """The ports stage runs its ctest through the same path: a port's
    failed tests are named after it (here each port's tree is the small
    project, and only the AVR one has failures)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(PROJECT)
    passing = tmp_path / "passing"
    passing.mkdir()
    (passing / "CMakeLists.txt").write_text(PASSING)
    for port in stages.EMULATED_PORTS:
        subprocess.run(["cmake", "-S", src if port == "avr" else passing,
                        "-B", build.port_build_dir(tmp_path / "build", port)],
                       check=True, capture_output=True, timeout=60)
    monkeypatch.setattr(build, "build", lambda pdir, port, **kw: 0)
    status, detail = stages.port_tests(tmp_path / "build")
    assert (status, detail) == (1, "failed: avr (3 tests: " + ", ".join(FAILED) + ")"), detail
