# SPDX-License-Identifier: MIT
"""The hub's reading of what a module sends it (tools/motetlib/hub.py,
docs/bus.md): a message of a type no module sends, or without exactly its
type's fields, stops the run with a HubError naming the module, before any
of it is used; it is never dropped unnoticed, read past its end or left to
fail later as a Python error."""

import struct
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from motetlib import hub as hubmod  # noqa: E402


def module(free_running=False):
    return SimpleNamespace(id=3, spec=SimpleNamespace(name="m3"), dead=False, unresponsive=False,
                           kind=SimpleNamespace(free_running=free_running), seq=0, inbox=[],
                           delivered=0, max_late=0)


def hub():
    return hubmod.Hub.__new__(hubmod.Hub)  # message() needs none of a run's state


TICK = struct.pack("<Q", 1000)
STATS = bytes(4 * len(hubmod.STATS_FIELDS))


@pytest.mark.parametrize("mtype, rest", [
    ("T", bytes(16)), ("R", b"\x01"), ("P", bytes(13)), ("K", STATS), ("D", bytes(9)),
])
def test_well_formed_messages_are_taken_in_order(mtype, rest):
    m = module()
    hub().message(m, mtype, TICK + rest)
    if mtype == "D":  # counted at once
        assert m.delivered == 1 and m.inbox == []
    else:
        assert m.inbox == [(1000, 1, mtype, rest)]


@pytest.mark.parametrize("mtype, body", [
    ("X", TICK),                      # no module sends it
    ("R", TICK),                      # its verdict missing
    ("R", TICK + b"\x01\x01"),        # a byte too many
    ("P", TICK + bytes(12)),          # the probe's answer cut short
    ("K", TICK + STATS[:-1]),         # a counter cut short
    ("S", TICK + b"\x20"),            # its depth missing
    ("D", TICK + bytes(8)),           # its kind missing
    ("A", TICK + bytes(8)),           # sleeping missing
    ("T", b"\x00" * 7),               # not even its tick
], ids=["unknown", "no-verdict", "long-verdict", "short-probe", "short-stats", "short-stack",
        "short-delivered", "short-advance", "no-tick"])
def test_a_malformed_message_stops_the_run_naming_its_module(mtype, body):
    m = module()
    with pytest.raises(hubmod.HubError, match=r"m3 \(m3\) sent a malformed message"):
        hub().message(m, mtype, body)
    assert m.inbox == []


def test_an_emulated_module_advance_carries_its_sleep():
    with pytest.raises(hubmod.HubError, match="malformed"):
        hub().message(module(free_running=True), "A", TICK + bytes(9))
