# SPDX-License-Identifier: MIT
"""tools/motetlib/pytest_report.py: the ids of the failed tests, read from
pytest's JUnit XML report, for `motet test`'s summary."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import pytest_report  # noqa: E402

# What pytest 7 writes (junit_family xunit2) for: a pass, a failed
# parametrized test, a failed method of a class, a setup error, a skip, a
# strict xfail that passed, a test failing and then erroring at teardown,
# and a module that did not import.
REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="3" failures="4" skipped="1" tests="9">
<testcase classname="tests.scenario.test_a" name="test_passes" time="0.1" />
<testcase classname="tests.scenario.test_a" name="test_fails[seed.2-x::y]" time="0.1">
  <failure message="assert 1 == 2">...</failure></testcase>
<testcase classname="tests.scenario.test_a.TestGroup" name="test_method" time="0.1">
  <failure message="assert False">...</failure></testcase>
<testcase classname="tests.tools.test_b" name="test_setup" time="0.1">
  <error message="failed on setup with &quot;Failed: build&quot;">...</error></testcase>
<testcase classname="tests.tools.test_b" name="test_skipped" time="0.0">
  <skipped type="pytest.skip" message="no spin">...</skipped></testcase>
<testcase classname="tests.tools.test_b" name="test_xpass" time="0.1">
  <failure message="[XPASS(strict)] open">...</failure></testcase>
<testcase classname="tests.tools.test_b" name="test_both" time="0.1">
  <failure message="assert 0">...</failure>
  <error message="failed on teardown">...</error></testcase>
<testcase classname="" name="tests.tools.test_c" time="0.0">
  <error message="collection failure">...</error></testcase>
</testsuite></testsuites>
"""


def tree(root):
    for name in ("tests/scenario/test_a.py", "tests/tools/test_b.py", "tests/tools/test_c.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    report = root / "report.xml"
    report.write_text(REPORT)
    return report


def test_every_failure_and_error_is_named_once_by_its_node_id(tmp_path):
    assert pytest_report.failed_tests(tree(tmp_path), tmp_path) == [
        "tests/scenario/test_a.py::test_fails[seed.2-x::y]",
        "tests/scenario/test_a.py::TestGroup::test_method",
        "tests/tools/test_b.py::test_setup",
        "tests/tools/test_b.py::test_xpass",
        "tests/tools/test_b.py::test_both",
        "tests/tools/test_c.py (collection)",
    ]


def test_a_missing_or_torn_report_is_none(tmp_path):
    assert pytest_report.failed_tests(tmp_path / "none.xml", tmp_path) is None
    torn = tmp_path / "torn.xml"
    torn.write_text(REPORT[:300])
    assert pytest_report.failed_tests(torn, tmp_path) is None


def test_the_words_name_the_first_tests_and_count_the_rest():
    ids = [f"tests/t.py::test_{i}" for i in range(pytest_report.SHOWN + 3)]
    words = pytest_report.describe(1, ids)
    assert words.startswith(f"{len(ids)} tests: tests/t.py::test_0, tests/t.py::test_1, ")
    assert words.endswith(f"tests/t.py::test_{pytest_report.SHOWN - 1} and 3 more")
    assert pytest_report.describe(1, ids[:1]) == "1 test: tests/t.py::test_0"
    assert pytest_report.describe(2, None) == "status 2, no report: see its output"
    assert "no test failed" in pytest_report.describe(3, [])
