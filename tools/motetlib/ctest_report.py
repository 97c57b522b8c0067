# SPDX-License-Identifier: MIT
"""Which unit tests failed in a ctest run, for `motet test`'s summary.

ctest lists the tests it counted as failed (a non-zero exit, a timeout, a
program it could not find) in its tree's LastTestsFailed.log, one
`number:name` a line. It leaves an earlier run's list in place when a
later run passes, so the list is removed before each run (`forget`).
"""

from pathlib import Path

FAILED_LOG = Path("Testing") / "Temporary" / "LastTestsFailed.log"


def forget(bdir):
    """Remove an earlier run's list from the tree `bdir`: it names nothing
    of the next run."""
    (Path(bdir) / FAILED_LOG).unlink(missing_ok=True)


def failed_tests(bdir):
    """The names of the tests the last ctest run on `bdir` counted as
    failed, in its order; None if it wrote no list (ctest ended before
    writing it, or nothing failed)."""
    try:
        lines = (Path(bdir) / FAILED_LOG).read_text(errors="replace").splitlines()
    except OSError:
        return None
    return [line.partition(":")[2] or line for line in lines if line.strip()]
