# SPDX-License-Identifier: MIT
"""The binary application description the application manager loads
(kernel/src/appdesc.h, docs/app-format.md): the kernel's
constants and limits it is built against, appc's errors, and its encoding
and decoding; decode() checks what the kernel's appdesc_parse() checks
(kernel/src/appdesc.c). appc.py compiles the text form to it."""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

# ---- the kernel's constants, in one place -------------------------------
# types.h
PID_FIRST_APP = 0x10  # device pids the manager hands out: 0x10 .. 0xEF
PID_LAST_APP = 0xEF
PID_SYSTEM = 0xF0  # global pids 0xF0 .. 0xFE are used as they are
PID_MULTICAST = 0xF0  # route port = relative group
PID_INVALID = 0xFF
SYSTEM_PIDS = {"timesync": 0xF1, "migrator": 0xF2, "appmgr": 0xF3}
PID_APPMGR = SYSTEM_PIDS["appmgr"]  # takes a route on PORT_0 only: its others are the bus's
TASKS_MAX = PID_LAST_APP - PID_FIRST_APP + 1  # one description, one pid each
# sched.h
SYSTEM_PORTS = ("INIT", "FINAL", "SERIALIZE", "DESERIALIZE", "TIMEOUT0", "TIMEOUT1",
                "TIMEOUT2", "TIMEOUT3")  # input ports 0 .. PORT_0-1: the kernel's
PORT_0 = len(SYSTEM_PORTS)  # first application input port
TASK_MOVABLE = 0x01
# appdesc.h
MAGIC = b"MTAD"
VERSION = 1
HEADER_SIZE = 12
TASK_SIZE = 12
GROUP_SIZE = 4
ENTRY_SIZE = 2
CRC_OFFSET = 10
TOTAL_LEN_OFFSET = 8


@dataclasses.dataclass(frozen=True)
class Limits:
    """Build-time kernel configuration (config.h) the description must fit."""

    prio_levels: int = 8  # MOTET_PRIO_LEVELS
    app_ports: int = 16  # MOTET_APP_PORTS
    desc_max: int = 1024  # MOTET_APP_DESC_MAX

    @property
    def port_limit(self) -> int:
        """One past the last valid input port (sched.h PORT_LIMIT)."""
        return PORT_0 + self.app_ports

    @property
    def max_priority(self) -> int:
        """Highest task priority: the top level is the manager's."""
        return self.prio_levels - 2


DEFAULT_LIMITS = Limits()

class AppcError(Exception):
    """A description that cannot be compiled or decoded; the message says
    which task, group or field is at fault."""


class DescError(AppcError):
    """A malformed binary description: `code` is the kernel's MT_ERR_DESC_*
    name and `offset` the offending field, as appdesc_parse() reports them."""

    def __init__(self, code: str, offset: int, message: str):
        super().__init__(f"{code} at byte {offset}: {message}")
        self.code = code
        self.offset = offset


# ---- CRC ------------------------------------------------------------------


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def appmgr_port_message(port: int) -> str:
    """Why a route to the application manager's `port` is refused, as the
    kernel's check_route() refuses it (MT_ERR_DESC_ROUTE)."""
    return (f"port {port} of pid {PID_APPMGR:#04x} (appmgr) is the bus's: the application "
            f"manager takes a route on PORT_0 ({PORT_0}) only")


def _desc_crc(blob: bytes) -> int:
    """CRC of a description with its checksum field read as zero."""
    return crc16(blob[:CRC_OFFSET] + b"\0\0" + blob[CRC_OFFSET + 2 :])


# ---- binary encoding ------------------------------------------------------
#
# The model (what decode() returns and encode() takes):
#   {"tasks": [{"prog_id", "rel_pid", "priority", "flags", "module",
#               "routes": [(pid, port), ...], "init": bytes}, ...],
#    "groups": [{"rel_group", "members": [(rel_pid, port), ...]}, ...]}
# decode() adds "length" and "crc", which encode() ignores.


def encode(model: dict[str, Any], limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Lay a model out canonically: header, task records, group records,
    then per task its routes and init string, then per group its members.
    The result is validated with decode() before it is returned."""
    try:
        return _encode(model, limits)
    except (struct.error, TypeError, ValueError) as e:
        raise AppcError(f"cannot encode: a field is out of range ({e})") from None


def _encode(model: dict[str, Any], limits: Limits) -> bytes:
    tasks, groups = model["tasks"], model["groups"]
    data = bytearray()
    data_at = HEADER_SIZE + TASK_SIZE * len(tasks) + GROUP_SIZE * len(groups)

    def place(chunk: bytes) -> int:
        if not chunk:
            return 0
        data.extend(chunk)
        return data_at + len(data) - len(chunk)

    records = bytearray()
    for t in tasks:
        routes_off = place(bytes(b for route in t["routes"] for b in route))
        init = bytes(t["init"])
        init_off = place(init)
        records += struct.pack(
            "<6BHHH",
            t["prog_id"],
            t["rel_pid"],
            t["priority"],
            t["flags"],
            t["module"],
            len(t["routes"]),
            routes_off,
            init_off,
            len(init),
        )
    for g in groups:
        members_off = place(bytes(b for member in g["members"] for b in member))
        records += struct.pack("<BBH", g["rel_group"], len(g["members"]), members_off)
    total = data_at + len(data)
    if total > limits.desc_max:
        raise AppcError(
            f"description is {total} bytes; the manager accepts at most {limits.desc_max} "
            "(MOTET_APP_DESC_MAX)"
        )
    header = MAGIC + struct.pack("<4BHH", VERSION, len(tasks), len(groups), 0, total, 0)
    blob = bytearray(header + records + data)
    struct.pack_into("<H", blob, CRC_OFFSET, _desc_crc(bytes(blob)))
    decode(bytes(blob), limits)  # never emit what the kernel would reject
    return bytes(blob)


# ---- binary decoding and validation (mirrors kernel/src/appdesc.c) ---------


class _Reader:
    """Checks a binary description in the kernel's order and builds the model."""

    def __init__(self, blob: bytes, limits: Limits):
        self.b = blob
        self.lim = limits
        self.nt = 0
        self.ng = 0

    def u16(self, at: int) -> int:
        return self.b[at] | self.b[at + 1] << 8

    def fail(self, code: str, offset: int, message: str) -> DescError:
        return DescError("MT_ERR_DESC_" + code, offset, message)

    @property
    def groups_at(self) -> int:
        return HEADER_SIZE + TASK_SIZE * self.nt

    @property
    def data_start(self) -> int:
        return self.groups_at + GROUP_SIZE * self.ng

    def region_ok(self, off: int, size: int) -> bool:
        return off >= self.data_start and off + size <= len(self.b)

    def header(self) -> None:
        b = self.b
        if len(b) < HEADER_SIZE:
            raise self.fail("LENGTH", 0, f"{len(b)} bytes is shorter than the header")
        if len(b) > self.lim.desc_max:
            raise self.fail("LENGTH", TOTAL_LEN_OFFSET, f"{len(b)} bytes > {self.lim.desc_max}")
        if self.u16(TOTAL_LEN_OFFSET) != len(b):
            raise self.fail("LENGTH", TOTAL_LEN_OFFSET, "total_len differs from the length")
        if b[:4] != MAGIC:
            raise self.fail("HEADER", 0, f"magic {b[:4]!r} is not {MAGIC!r}")
        if b[4] != VERSION:
            raise self.fail("HEADER", 4, f"version {b[4]} is not {VERSION}")
        if b[7] != 0:
            raise self.fail("HEADER", 7, "reserved byte is not zero")
        if not 1 <= b[5] <= TASKS_MAX:
            raise self.fail("HEADER", 5, f"{b[5]} tasks, expected 1..{TASKS_MAX}")
        if _desc_crc(b) != self.u16(CRC_OFFSET):
            raise self.fail("CHECKSUM", CRC_OFFSET, "checksum mismatch")
        self.nt, self.ng = b[5], b[6]
        if HEADER_SIZE + TASK_SIZE * self.nt > len(b):
            raise self.fail("LENGTH", 5, "task records run past the end")
        if self.data_start > len(b):
            raise self.fail("LENGTH", 6, "group records run past the end")

    def route(self, at: int) -> tuple[int, int]:
        pid, port = self.b[at], self.b[at + 1]
        if pid < self.nt or PID_SYSTEM < pid < PID_INVALID:
            first, limit = PORT_0, self.lim.port_limit
        elif pid == PID_MULTICAST:
            first, limit = 0, self.ng
        else:
            raise self.fail("ROUTE", at, f"destination pid {pid:#04x} is not valid")
        if port < first:
            raise self.fail("ROUTE", at + 1, f"port {port} of pid {pid:#04x} is the system port "
                            f"{SYSTEM_PORTS[port]}: routes reach application ports only")
        if port >= limit:
            raise self.fail("ROUTE", at + 1, f"port {port} of pid {pid:#04x} is out of range")
        if pid == PID_APPMGR and port != PORT_0:
            raise self.fail("ROUTE", at + 1, appmgr_port_message(port))
        return pid, port

    def task(self, i: int) -> dict[str, Any]:
        rec = HEADER_SIZE + TASK_SIZE * i
        prog, rel, prio, flags, module, nr, r_off, i_off, i_len = struct.unpack_from(
            "<6BHHH", self.b, rec
        )
        seen = [self.b[HEADER_SIZE + TASK_SIZE * j + 1] for j in range(i)]
        if prog == 0:
            raise self.fail("TASK", rec, "program id 0")
        if rel >= self.nt or rel in seen:
            raise self.fail("TASK", rec + 1, f"relative pid {rel} out of range or repeated")
        if prio > self.lim.max_priority:
            raise self.fail("TASK", rec + 2, f"priority {prio} > {self.lim.max_priority}")
        if flags & ~TASK_MOVABLE:
            raise self.fail("TASK", rec + 3, f"unknown flags {flags:#04x}")
        if not (r_off == 0 if nr == 0 else self.region_ok(r_off, nr * ENTRY_SIZE)):
            raise self.fail("LENGTH", rec + 6, "routes outside the data region")
        routes = [self.route(r_off + k * ENTRY_SIZE) for k in range(nr)]
        if not (i_off == 0 if i_len == 0 else self.region_ok(i_off, i_len)):
            raise self.fail("LENGTH", rec + 8, "init string outside the data region")
        return {
            "prog_id": prog,
            "rel_pid": rel,
            "priority": prio,
            "flags": flags,
            "module": module,
            "routes": routes,
            "init": bytes(self.b[i_off : i_off + i_len]),
        }

    def group(self, i: int) -> dict[str, Any]:
        rec = self.groups_at + GROUP_SIZE * i
        rel, n, off = struct.unpack_from("<BBH", self.b, rec)
        seen = [self.b[self.groups_at + GROUP_SIZE * j] for j in range(i)]
        if rel >= self.ng or rel in seen:
            raise self.fail("GROUP", rec, f"relative group {rel} out of range or repeated")
        if n == 0:
            raise self.fail("GROUP", rec + 1, "no members")
        if not self.region_ok(off, n * ENTRY_SIZE):
            raise self.fail("LENGTH", rec + 2, "members outside the data region")
        members: list[tuple[int, int]] = []
        for k in range(n):
            at = off + k * ENTRY_SIZE
            pid, port = self.b[at], self.b[at + 1]
            if pid >= self.nt or (pid, port) in members:
                raise self.fail("GROUP", at, f"member pid {pid} unknown or repeated")
            if not PORT_0 <= port < self.lim.port_limit:
                raise self.fail("GROUP", at + 1, f"member port {port} is not an application port")
            members.append((pid, port))
        return {"rel_group": rel, "members": members}


def decode(blob: bytes, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Validate a binary description exactly as the kernel does and return
    its model; raise DescError naming the kernel's error and offset."""
    r = _Reader(bytes(blob), limits)
    r.header()
    tasks = [r.task(i) for i in range(r.nt)]
    groups = [r.group(i) for i in range(r.ng)]
    return {"length": len(blob), "crc": r.u16(CRC_OFFSET), "tasks": tasks, "groups": groups}
