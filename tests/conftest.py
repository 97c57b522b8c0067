# SPDX-License-Identifier: MIT
"""The order `motet test` hands tests to its workers (pytest-xdist gives
them out in collection order): the tests marked `long` first, so that no
long one starts last and leaves a core idle at the stage's end."""

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "long: a test of a minute or more of CPU on a loaded "
                                       "machine; scheduled first")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable
