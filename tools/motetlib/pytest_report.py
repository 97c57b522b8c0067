# SPDX-License-Identifier: MIT
"""Which tests failed, from pytest's JUnit XML report (`--junitxml`).

`motet test` names the failed tests on its summary's last lines, because
CI shows only the tail of the output: a failure printed minutes earlier,
amid the next stages' output, is out of sight there.
"""

import xml.etree.ElementTree as ET
from pathlib import Path

# Ids the summary names before it counts the rest.
SHOWN = 8


def failed_tests(report, root):
    """The ids of the tests that failed or errored (setup, teardown or
    collection), in the report's order, each once; None if the report
    cannot be read (pytest ended before writing it). An id is pytest's
    node id (`path::Class::name[params]`, path relative to `root`, the
    directory pytest ran in) wherever the file is found under `root`."""
    try:
        cases = ET.parse(report).getroot().iter("testcase")
    except (OSError, ET.ParseError):
        return None
    ids = [node_id(case, Path(root)) for case in cases
           if case.find("failure") is not None or case.find("error") is not None]
    return list(dict.fromkeys(ids))


def node_id(case, root):
    """pytest's node id of a report's <testcase>. pytest writes the node id
    `a/b/test_c.py::K::name[p]` as classname `a.b.test_c.K` and name
    `name[p]`: the longest leading part of the classname that names a file
    under `root` is the path, the rest its classes. A collection error has
    no classname and the module's dotted path as its name."""
    parts = [p for p in case.get("classname", "").split(".") if p]
    name = case.get("name", "")
    for n in range(len(parts), 0, -1):
        path = "/".join(parts[:n]) + ".py"
        if (root / path).is_file():
            return "::".join([path, *parts[n:], name])
    if not parts:
        path = name.replace(".", "/") + ".py"
        if (root / path).is_file():
            return f"{path} (collection)"
    return "::".join([*parts, name])


def describe(status, failed):
    """What went wrong in a pytest or ctest run that ended with `status`
    (not 0), whose report named `failed` (None: no report), in a few words
    and the ids of the first SHOWN tests that failed."""
    if failed is None:
        return f"status {status}, no report: see its output"
    if not failed:
        return f"status {status}, no test failed in its report: see its output"
    more = len(failed) - SHOWN
    names = ", ".join(failed[:SHOWN]) + (f" and {more} more" if more > 0 else "")
    return f"{len(failed)} test{'s' if len(failed) > 1 else ''}: {names}"
