# SPDX-License-Identifier: MIT
"""appc: the Motet application description compiler.

Turns an application's text description (TOML, below) into the binary
description the application manager loads (kernel/include/motet/appdesc.h,
docs/app-format.md), and decodes binary descriptions again.

    [app]
    name = "hello"
    [programs]                # program name -> id registered by the firmware
    timer = 1
    [[task]]                  # relative pid = position in this list
    name = "timer"
    program = "timer"
    priority = 1              # 0 .. PRIO_LEVELS-2
    module = 0                # initial module (bus address), default 0
    movable = true            # default false
    routes = ["@ticks"]       # output port 0, 1, ...: "task:n" | "@group" |
                              # {pid = "appmgr" or 0xF3, port = 8} (global;
                              # port: a raw application port, PORT_0 and up)
    init = [{u32 = 125000}]   # u8 u16 u32 i8 i16 i32 str hex, little-endian
    [[group]]                 # relative group = position in this list
    name = "ticks"
    members = ["hello:0"]     # "task:n" = application port n of the task

Every limit the kernel's validator (kernel/src/appdesc.c) enforces is
checked here first, by name, so that whatever appc emits also parses.

Usage: appc INPUT.toml [-o OUT.bin [--names]] [--c OUT.c [--symbol NAME] [--module-app NAME]]
With neither -o nor --c the annotated bytes are printed to stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import struct
import sys
import tomllib
from typing import Any

try:
    from . import cmdline
    from .textfile import toml_text
except ImportError:  # run as a script beside it (stack_tasks.py)
    import cmdline  # type: ignore[no-redef]
    from textfile import toml_text  # type: ignore[no-redef]

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

INIT_TYPES = {"u8": "<B", "u16": "<H", "u32": "<I", "i8": "<b", "i16": "<h", "i32": "<i"}
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
PORT_REF_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):([0-9]+)\Z")


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


def _appmgr_port_message(port: int) -> str:
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
            raise self.fail("ROUTE", at + 1, _appmgr_port_message(port))
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


# ---- text compilation -------------------------------------------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Compiler:
    """Resolves the names of a parsed TOML document into a model."""

    def __init__(self, doc: dict[str, Any], limits: Limits):
        self.doc = doc
        self.lim = limits
        self.programs: dict[str, int] = {}
        self.tasks: list[dict[str, Any]] = []
        self.groups: list[dict[str, Any]] = []
        self.task_ids: dict[str, int] = {}
        self.group_ids: dict[str, int] = {}

    # -- generic field checks

    @staticmethod
    def keys(where: str, table: Any, required: set[str], optional: set[str]) -> None:
        if not isinstance(table, dict):
            raise AppcError(f"{where}: expected a table")
        for key in table:
            if key not in required | optional:
                allowed = ", ".join(sorted(required | optional))
                raise AppcError(f"{where}: unknown field '{key}' (expected {allowed})")
        for key in sorted(required):
            if key not in table:
                raise AppcError(f"{where}: missing field '{key}'")

    @staticmethod
    def integer(where: str, v: Any, lo: int, hi: int) -> int:
        if not _is_int(v):
            raise AppcError(f"{where}: expected an integer, got {v!r}")
        if not lo <= v <= hi:
            raise AppcError(f"{where}: {v} is outside {lo}..{hi}")
        return v

    @staticmethod
    def name(where: str, v: Any) -> str:
        if not isinstance(v, str) or not NAME_RE.match(v):
            raise AppcError(f"{where}: {v!r} is not a name (letters, digits, _)")
        return v

    @staticmethod
    def array(where: str, v: Any) -> list[Any]:
        if not isinstance(v, list):
            raise AppcError(f"{where}: expected an array, got {v!r}")
        return v

    # -- sections

    def run(self) -> dict[str, Any]:
        self.keys("top level", self.doc, {"app", "programs", "task"}, {"group"})
        self.keys("[app]", self.doc["app"], {"name"}, set())
        self.name("[app] name", self.doc["app"]["name"])
        self.read_programs()
        self.declare("task", self.doc["task"], self.task_ids, TASKS_MAX)
        self.declare("group", self.doc.get("group", []), self.group_ids, 255)
        self.tasks = [self.task(t) for t in self.doc["task"]]
        self.groups = [self.group(g) for g in self.doc.get("group", [])]
        return {"tasks": self.tasks, "groups": self.groups}

    def read_programs(self) -> None:
        progs = self.doc["programs"]
        if not isinstance(progs, dict):
            raise AppcError("[programs]: expected a table of name = id")
        by_id: dict[int, str] = {}
        for name, prog_id in progs.items():
            self.name("[programs]", name)
            self.integer(f"[programs] {name}", prog_id, 1, 255)
            if prog_id in by_id:
                raise AppcError(
                    f"[programs] {name}: id {prog_id} is also used by '{by_id[prog_id]}'"
                )
            by_id[prog_id] = name
            self.programs[name] = prog_id

    def declare(self, kind: str, items: Any, ids: dict[str, int], most: int) -> None:
        """Number the tasks or groups in order, so routes may refer forward."""
        items = self.array(f"[[{kind}]]", items)
        if kind == "task" and not items:
            raise AppcError("[[task]]: an application needs at least one task")
        if len(items) > most:
            raise AppcError(f"[[{kind}]]: {len(items)} entries, at most {most}")
        for i, item in enumerate(items):
            if not isinstance(item, dict) or "name" not in item:
                raise AppcError(f"{kind} #{i}: missing field 'name'")
            name = self.name(f"{kind} #{i} name", item["name"])
            if name in ids:
                raise AppcError(
                    f"{kind} #{i} '{name}': duplicate name, already used by {kind} #{ids[name]}"
                )
            ids[name] = i

    def task(self, t: dict[str, Any]) -> dict[str, Any]:
        where = f"task '{t['name']}'"
        self.keys(
            where,
            t,
            {"name", "program", "priority"},
            {"module", "movable", "routes", "init"},
        )
        prog = t["program"]
        if not isinstance(prog, str) or prog not in self.programs:
            known = ", ".join(self.programs) or "none"
            raise AppcError(f"{where}: unknown program {prog!r} (known: {known})")
        prio = t["priority"]
        if _is_int(prio) and prio > self.lim.max_priority:
            raise AppcError(
                f"{where}: priority {prio} is too high: at most {self.lim.max_priority}, "
                f"level {self.lim.prio_levels - 1} is the application manager's"
            )
        self.integer(f"{where}: priority", prio, 0, self.lim.max_priority)
        movable = t.get("movable", False)
        if not isinstance(movable, bool):
            raise AppcError(f"{where}: movable: expected true or false, got {movable!r}")
        routes = self.array(f"{where}: routes", t.get("routes", []))
        if len(routes) > 255:
            raise AppcError(f"{where}: routes: {len(routes)} output ports, at most 255")
        init = self.array(f"{where}: init", t.get("init", []))
        return {
            "prog_id": self.programs[prog],
            "rel_pid": self.task_ids[t["name"]],
            "priority": prio,
            "flags": TASK_MOVABLE if movable else 0,
            "module": self.integer(f"{where}: module", t.get("module", 0), 0, 255),
            "routes": [self.route(f"{where}: routes[{i}]", r) for i, r in enumerate(routes)],
            "init": b"".join(self.init_field(f"{where}: init[{i}]", f) for i, f in enumerate(init)),
        }

    def port_ref(self, where: str, ref: str) -> tuple[int, int]:
        """'task:n' -> (relative pid, application input port n)."""
        m = PORT_REF_RE.match(ref)
        if not m:
            raise AppcError(f"{where}: {ref!r} is not 'task:port', '@group' or {{pid, port}}")
        task, port = m.group(1), int(m.group(2))
        if task not in self.task_ids:
            raise AppcError(f"{where}: unknown task '{task}' in {ref!r}")
        if port >= self.lim.app_ports:
            raise AppcError(
                f"{where}: port {port} in {ref!r} is out of range: "
                f"application ports are 0..{self.lim.app_ports - 1}"
            )
        return self.task_ids[task], PORT_0 + port

    def route(self, where: str, r: Any) -> tuple[int, int]:
        if isinstance(r, str) and r.startswith("@"):
            if r[1:] not in self.group_ids:
                raise AppcError(f"{where}: unknown group '{r[1:]}'")
            return PID_MULTICAST, self.group_ids[r[1:]]
        if isinstance(r, str):
            return self.port_ref(where, r)
        self.keys(where, r, {"pid", "port"}, set())
        pid = r["pid"]
        if isinstance(pid, str):
            if pid not in SYSTEM_PIDS:
                names = ", ".join(SYSTEM_PIDS)
                raise AppcError(f"{where}: unknown system task '{pid}' (known: {names})")
            pid = SYSTEM_PIDS[pid]
        # Multicast is reached through "@group", never by its pid.
        if not _is_int(pid) or not PID_SYSTEM < pid < PID_INVALID:
            raise AppcError(
                f"{where}: pid {f'{pid:#04x}' if _is_int(pid) else repr(pid)} is not a global "
                f"system pid ({PID_SYSTEM + 1:#04x}..{PID_INVALID - 1:#04x} or a name); "
                "name the application's own tasks as 'task:port'"
            )
        port = r["port"]
        if _is_int(port) and 0 <= port < PORT_0:
            raise AppcError(
                f"{where}: port {port} is the system port {SYSTEM_PORTS[port]}, which only the "
                f"kernel sends to; routes reach application ports {PORT_0}.."
                f"{self.lim.port_limit - 1} (PORT_0 = {PORT_0})"
            )
        port = self.integer(f"{where}: port", port, PORT_0, self.lim.port_limit - 1)
        if pid == PID_APPMGR and port != PORT_0:
            raise AppcError(f"{where}: {_appmgr_port_message(port)}")
        return pid, port

    def init_field(self, where: str, f: Any) -> bytes:
        if not isinstance(f, dict) or len(f) != 1:
            raise AppcError(f"{where}: expected one {{type = value}}, got {f!r}")
        ((kind, v),) = f.items()
        if kind in INIT_TYPES:
            fmt = INIT_TYPES[kind]
            bits = struct.calcsize(fmt) * 8
            signed = kind[0] == "i"
            lo = -(1 << (bits - 1)) if signed else 0
            hi = (1 << (bits - signed)) - 1
            return struct.pack(fmt, self.integer(f"{where} {kind}", v, lo, hi))
        if kind == "str" and isinstance(v, str):
            return v.encode("utf-8")
        if kind == "hex" and isinstance(v, str):
            digits = re.sub(r"[\s_]", "", v)
            if not re.fullmatch(r"(?:[0-9A-Fa-f]{2})*", digits):
                raise AppcError(f"{where}: hex {v!r} is not pairs of hex digits")
            return bytes.fromhex(digits)
        if kind in ("str", "hex"):
            raise AppcError(f"{where}: {kind} expects a string, got {v!r}")
        types = ", ".join([*INIT_TYPES, "str", "hex"])
        raise AppcError(f"{where}: unknown init type '{kind}' (expected {types})")

    def group(self, g: dict[str, Any]) -> dict[str, Any]:
        where = f"group '{g['name']}'"
        self.keys(where, g, {"name", "members"}, set())
        refs = self.array(f"{where}: members", g["members"])
        if not refs:
            raise AppcError(f"{where}: members: a group needs at least one member")
        if len(refs) > 255:
            raise AppcError(f"{where}: members: {len(refs)} members, at most 255")
        members: list[tuple[int, int]] = []
        for i, ref in enumerate(refs):
            if not isinstance(ref, str):
                raise AppcError(f"{where}: members[{i}]: expected 'task:port', got {ref!r}")
            member = self.port_ref(f"{where}: members[{i}]", ref)
            if member in members:
                raise AppcError(f"{where}: members[{i}]: {ref!r} is already a member")
            members.append(member)
        return {"rel_group": self.group_ids[g["name"]], "members": members}


def compile_text(text: str, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Compile a TOML application description to its binary form."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise AppcError(f"invalid TOML: {e}") from None
    except RecursionError:
        raise AppcError("invalid TOML: nested too deeply") from None
    return encode(_Compiler(doc, limits).run(), limits)


def read_text(path: str | os.PathLike[str]) -> str:
    """A description file's text. TOML is UTF-8: any other byte is an
    error naming the file and the line, as an unreadable file is."""
    try:
        return toml_text(path, "a description")
    except ValueError as e:
        raise AppcError(str(e)) from None


def compile_file(path: str | os.PathLike[str], limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Compile a TOML file; errors are prefixed with its path."""
    text = read_text(path)
    try:
        return compile_text(text, limits)
    except AppcError as e:
        raise AppcError(f"{path}: {e}") from None


def names(text: str) -> tuple[list[str], list[str]]:
    """The task and group names of a (valid) description, by relative id:
    relative ids follow the order of the file."""
    doc = tomllib.loads(text)
    return [t["name"] for t in doc["task"]], [g["name"] for g in doc.get("group", [])]


NAMES_MAGIC = b"MTNM"


def names_trailer(tasks: list[str], groups: list[str]) -> bytes:
    """The names a module program reads after a description in a file
    (ports/native/module_native.c): "MTNM", u8 tasks, u8 groups, then each
    name NUL-terminated, tasks first."""
    body = b"".join(n.encode("ascii") + b"\0" for n in [*tasks, *groups])
    return NAMES_MAGIC + bytes([len(tasks), len(groups)]) + body


def app_name(text: str) -> str:
    """The [app] name of a description (for default symbol names)."""
    return tomllib.loads(text)["app"]["name"]


# ---- output -------------------------------------------------------------------


def dump(blob: bytes) -> str:
    """The bytes as a C initializer body, one record per line, each line
    commented with its offset and what it holds."""
    nt, ng = blob[5], blob[6]
    spans = [("header", 0, HEADER_SIZE)]
    spans += [(f"task {i}", HEADER_SIZE + TASK_SIZE * i, TASK_SIZE) for i in range(nt)]
    groups_at = HEADER_SIZE + TASK_SIZE * nt
    spans += [(f"group {i}", groups_at + GROUP_SIZE * i, GROUP_SIZE) for i in range(ng)]
    data_at = groups_at + GROUP_SIZE * ng
    spans += [("data", at, min(12, len(blob) - at)) for at in range(data_at, len(blob), 12)]
    lines = []
    for label, at, n in spans:
        body = " ".join(f"0x{b:02x}," for b in blob[at : at + n])
        lines.append(f"/* {at:04x} {label:<7} */ {body}")
    return "\n".join(lines) + "\n"


def parse_dump(text: str) -> bytes:
    """Inverse of dump(): the 0xNN bytes of a C initializer, comments ignored."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    return bytes(int(h, 16) for h in re.findall(r"0x([0-9A-Fa-f]{2})\b", text))


def c_source(blob: bytes, symbol: str, source: str) -> str:
    """A C file defining `symbol` (the bytes) and `symbol`_len."""
    body = "".join(f"    {line}\n" for line in dump(blob).splitlines())
    return (
        f"/* Generated by appc from {source}: do not edit. */\n"
        "#include <stdint.h>\n\n"
        f"extern const uint8_t {symbol}[];\n"
        f"extern const uint16_t {symbol}_len;\n\n"
        f"const uint8_t {symbol}[] = {{\n{body}}};\n"
        f"const uint16_t {symbol}_len = {len(blob)};\n"
    )


def module_app_source(symbol: str, app: str, tasks: list[str], groups: list[str]) -> str:
    """C defining `app`_app, the module_app_t of the description `symbol`
    (kernel/include/motet/module.h): its bytes and its names."""

    def table(name: str, items: list[str]) -> str:
        if not items:
            return ""
        body = "".join(f'    "{n}",\n' for n in items)
        return f"static const char *const {name}[] = {{\n{body}}};\n"

    return (
        '\n#include "motet/module.h"\n\n'
        + table(f"{symbol}_tasks", tasks)
        + table(f"{symbol}_groups", groups)
        + f"\nextern const module_app_t {app}_app;\n"
        f"const module_app_t {app}_app = {{\n"
        f'    .name = "{app}",\n'
        f"    .desc = {symbol},\n"
        f"    .len = sizeof {symbol},\n"
        f"    .tasks = {f'{symbol}_tasks' if tasks else 'NULL'},\n"
        f"    .num_tasks = {len(tasks)},\n"
        f"    .groups = {f'{symbol}_groups' if groups else 'NULL'},\n"
        f"    .num_groups = {len(groups)},\n"
        "};\n"
    )


def _parser() -> argparse.ArgumentParser:
    p = cmdline.ArgumentParser(
        prog="appc", description="Compile a Motet application description (TOML) to binary."
    )
    p.add_argument("input", metavar="INPUT.toml")
    p.add_argument("-o", dest="out", metavar="OUT.bin", help="write the binary description")
    p.add_argument("--c", dest="c_out", metavar="OUT.c", help="write a C array definition")
    p.add_argument("--symbol", metavar="NAME", help="C array name (default: APPNAME_desc)")
    p.add_argument("--module-app", metavar="NAME",
                   help="with --c: also define NAME_app, the module_app_t of the description "
                        "with its task and group names (motet/module.h)")
    p.add_argument("--refusal-file", metavar="FILE",
                   help="also write the error refusing the description to FILE (the build's "
                        "record, which `motet build` shows at its end)")
    p.add_argument("--names", action="store_true",
                   help="with -o: append the task and group names, which a module program "
                        "reading the file (--app-file) uses to name tasks")
    d = DEFAULT_LIMITS
    p.add_argument("--prio-levels", type=int, default=d.prio_levels, help="MOTET_PRIO_LEVELS")
    p.add_argument("--app-ports", type=int, default=d.app_ports, help="MOTET_APP_PORTS")
    p.add_argument("--desc-max", type=int, default=d.desc_max, help="MOTET_APP_DESC_MAX")
    return p


class OutputError(Exception):
    """An output file appc cannot write: no fault of the description."""


def _write(path: str, data: bytes) -> None:
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror}") from None


def _run(args: argparse.Namespace) -> None:
    limits = Limits(args.prio_levels, args.app_ports, args.desc_max)
    if not 2 <= limits.prio_levels <= 16 or not 1 <= limits.app_ports <= 128:
        raise AppcError("--prio-levels must be 2..16 and --app-ports 1..128 (config.h)")
    if not HEADER_SIZE + TASK_SIZE <= limits.desc_max <= 0xFFFF:
        raise AppcError(f"--desc-max must be {HEADER_SIZE + TASK_SIZE}..65535")
    blob = compile_file(args.input, limits)
    tasks, groups = names(read_text(args.input))
    if args.out:
        _write(args.out, blob + (names_trailer(tasks, groups) if args.names else b""))
    if args.c_out:
        symbol = args.symbol
        if symbol is None:
            symbol = app_name(read_text(args.input)) + "_desc"
        if not NAME_RE.match(symbol):
            raise AppcError(f"--symbol: {symbol!r} is not a C identifier")
        source = os.path.basename(args.input)
        text = c_source(blob, symbol, source)
        if args.module_app:
            if not NAME_RE.match(args.module_app):
                raise AppcError(f"--module-app: {args.module_app!r} is not a C identifier")
            text += module_app_source(symbol, args.module_app, tasks, groups)
        _write(args.c_out, text.encode("utf-8"))
    if not args.out and not args.c_out:
        sys.stdout.write(dump(blob))


# main()'s exit status besides 0: a description (or usage) refused, and an
# output that could not be written, which is no fault of the description.
REFUSED = 2
OUTPUT_FAILED = 1


def main(argv: list[str]) -> int:
    """Command line entry: argv excludes the program name. Returns the exit
    status: 0, REFUSED for a usage or description error (recorded in
    --refusal-file), OUTPUT_FAILED for an output it cannot write (not)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse reports usage errors by exiting
        return e.code if isinstance(e.code, int) else REFUSED
    try:
        _run(args)
    except AppcError as e:
        message = f"appc: error: {e}"
        print(message, file=sys.stderr)
        if args.refusal_file:
            _record_refusal(args.refusal_file, message)
        return REFUSED
    except OutputError as e:
        print(f"appc: error: {e}", file=sys.stderr)
        return OUTPUT_FAILED
    return 0


def _record_refusal(path: str, message: str) -> None:
    """Write `message` to `path`, its directory made if need be; a file that
    cannot be written is said, the refusal already printed above."""
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(message + "\n")
    except OSError as e:
        print(f"appc: error: --refusal-file {path}: {e.strerror}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
