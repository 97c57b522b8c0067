# SPDX-License-Identifier: MIT
"""The order `motet test` hands tests to its workers (pytest-xdist gives
them out in collection order): the tests marked `long` first, so that no
long one starts last and leaves a core idle at the stage's end; and the
scenario tests whose sanitized runs would repeat the others' (below)."""

import pytest

# The sanitize stage of `motet test` leaves these scenario tests out (the
# scenario stage runs them all): measured with gcov on a native tree
# (README.md, "sanitize"), the other scenario tests' programs together
# reach every line of C these tests' programs reach, in every
# configuration, so their sanitized runs would check no code again that
# the others' do not.
SANITIZE_REPEAT_DOC = ("sanitize_repeat: a scenario whose programs reach no line of C the other "
                       "scenario tests' programs do not; the sanitize stage leaves it out")


def pytest_configure(config):
    config.addinivalue_line("markers", "long: a test of a minute or more of CPU on a loaded "
                                       "machine; scheduled first")
    config.addinivalue_line("markers", SANITIZE_REPEAT_DOC)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable
