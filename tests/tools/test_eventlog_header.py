# SPDX-License-Identifier: MIT
"""The constants tools/motetlib/eventlog.py mirrors from the kernel's C
headers, each read from the header it mirrors: a change on the C side (an
event type, an error, a port, a flag bit the log format borrows) fails here
rather than making `motet log` and the traces misread records."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import eventlog  # noqa: E402

# eventlog.py's constants of its own, which mirror nothing in C.
OWN = {"MODULE_PID"}
# Those checked below against the C side.
MIRRORED = {"EVENT_TYPES", "SYSTEM_PORTS", "PORT_TIMEOUT0", "PORT_UNKNOWN", "START_EXPIRY",
            "ERRORS", "SLEEP_MODES", "FRAME_TYPES", "MIGRATE_PHASES", "PID_NAMES",
            "KERNEL_PID", "APPMGR_PID", "SYSTEM_PID_FIRST", "HEADER"}


def header(name):
    """A header's text without its comments."""
    text = (ROOT / name).read_text()
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def enum_with(name, first):
    """The enumerators of the enum in header `name` that declares `first`,
    name to value, in order; C's rules: each one more than the last unless
    given a number (one given an expression ends the reading)."""
    text = header(name)
    at = re.search(rf"\b{first}\b", text).start()
    body = text[text.rindex("{", 0, at) + 1:text.index("}", at)]
    values, value = {}, -1
    for item in filter(None, (i.strip() for i in body.split(","))):
        m = re.fullmatch(r"(\w+)\s*(?:=\s*(\w+))?", item)
        if not m:
            break
        value = int(m.group(2), 0) if m.group(2) else value + 1
        values[m.group(1)] = value
    return values


def define(name, macro):
    """The value of `#define macro <number>[u]` in header `name`."""
    m = re.search(rf"#define\s+{macro}\s+(0x[0-9A-Fa-f]+|\d+)[uU]?\b", header(name))
    assert m, f"{macro} is not a number in {name}"
    return int(m.group(1), 0)


def names_from(values, prefix, first_value):
    """The enumerators' names without `prefix`, checked to run from
    first_value up by one."""
    assert list(values.values()) == list(range(first_value, first_value + len(values)))
    return tuple(n.removeprefix(prefix) for n in values)


def test_every_constant_mirrored_from_c_is_checked_here():
    constants = {n for n in vars(eventlog) if re.fullmatch(r"[A-Z][A-Z0-9_]*", n)}
    assert constants - OWN == MIRRORED


def test_the_header_is_the_first_line_every_writer_writes():
    """`motet log` takes a file with no record as a log only if it starts
    with the header (eventlog.parse_bytes)."""
    for writer in ("ports/native/event_dump.c", "tools/simavr-harness/logtap.c",
                   "tools/motetlib/qemu_module.py"):
        assert f"{eventlog.HEADER}, port " in (ROOT / writer).read_text(), writer


def test_event_types_are_log_event_type_t_from_ev_send_1():
    values = enum_with("kernel/include/motet/log.h", "EV_SEND")
    assert values.pop("EV_TYPE_COUNT") == len(values) + 1
    assert names_from(values, "EV_", 1) == eventlog.EVENT_TYPES


def test_system_ports_are_those_before_port_0():
    values = enum_with("kernel/include/motet/sched.h", "PORT_INIT")
    ports = names_from({n: v for n, v in values.items() if v < values["PORT_0"]}, "PORT_", 0)
    assert ports == eventlog.SYSTEM_PORTS
    assert values["PORT_TIMEOUT0"] == eventlog.PORT_TIMEOUT0


def test_an_ends_unknown_port_is_log_port_unknown():
    assert define("kernel/include/motet/log.h", "LOG_PORT_UNKNOWN") == eventlog.PORT_UNKNOWN


def test_the_owed_timers_start_byte_is_log_start_expiry():
    assert define("kernel/src/log_ring.h", "LOG_START_EXPIRY") == eventlog.START_EXPIRY


def test_errors_are_mt_err_t_from_mt_ok_0():
    values = enum_with("kernel/include/motet/types.h", "MT_OK")
    assert values.pop("MT_ERR_COUNT") == len(values)
    assert names_from(values, "", 0) == eventlog.ERRORS


def test_sleep_modes_are_port_sleep_mode_t():
    values = enum_with("kernel/include/motet/port.h", "PORT_SLEEP_IDLE")
    assert names_from(values, "PORT_SLEEP_", 0) == eventlog.SLEEP_MODES


def test_frame_types_are_bus_h_frame_types_from_1():
    values = enum_with("kernel/include/motet/bus.h", "BUS_FRAME_DATA")
    assert values.pop("BUS_FRAME_TYPE_END") == len(values) + 1
    assert ("?", *names_from(values, "BUS_FRAME_", 1)) == eventlog.FRAME_TYPES


def test_migration_phases_are_migrate_phase_t_from_1():
    values = enum_with("kernel/include/motet/migrate.h", "MIG_REQUESTED")
    assert values.pop("MIG_PHASE_END") == len(values) + 1
    assert ("?", *names_from(values, "MIG_", 1)) == eventlog.MIGRATE_PHASES


def test_reserved_pids_are_types_h_pids():
    pid = {name: define("kernel/include/motet/types.h", f"MT_PID_{name}")
           for name in ("NONE", "MULTICAST", "TIMESYNC", "MIGRATOR", "APPMGR", "SYSTEM")}
    assert eventlog.PID_NAMES == {pid["NONE"]: "kernel", pid["MULTICAST"]: "multicast",
                                  pid["TIMESYNC"]: "timesync", pid["MIGRATOR"]: "migrator",
                                  pid["APPMGR"]: "appmgr"}
    assert eventlog.KERNEL_PID == pid["NONE"]
    assert eventlog.APPMGR_PID == pid["APPMGR"]
    assert eventlog.SYSTEM_PID_FIRST == pid["SYSTEM"]


def test_the_enum_reader_follows_c():
    # The reader the checks above rest on: implicit values count on from
    # the last given one; an enumerator set by an expression ends it.
    values = enum_with("kernel/include/motet/sched.h", "PORT_INIT")
    assert values["PORT_INIT"] == 0 and values["PORT_0"] == 8 and "PORT_LIMIT" not in values


def test_a_kernel_tasks_initfail_says_the_module_halts():
    """A kernel task's INITFAIL halts the module (no KILL follows); an
    application task's ends the task."""
    halted = eventlog.Event(0, "INITFAIL", eventlog.APPMGR_PID, eventlog.ERRORS.index(
        "MT_ERR_NO_MEM"))
    assert eventlog.describe(halted) == "could not start (MT_ERR_NO_MEM): the module halts"
    ended = eventlog.Event(0, "INITFAIL", 0x10, eventlog.ERRORS.index("MT_ERR_INVALID"))
    assert eventlog.describe(ended) == "its INIT failed (MT_ERR_INVALID): ended, no FINAL"
