# SPDX-License-Identifier: MIT
"""An application description's text form (TOML, appc.py): parsed, each
field checked by name against the limits the kernel's validator enforces,
and compiled to the binary form (appdesc.py)."""

from __future__ import annotations

import os
import re
import struct
import tomllib
from typing import Any

from .appdesc import (DEFAULT_LIMITS, PID_APPMGR, PID_INVALID, PID_MULTICAST, PID_SYSTEM, PORT_0,
                      SYSTEM_PIDS, SYSTEM_PORTS, TASK_MOVABLE, TASKS_MAX, AppcError, Limits,
                      appmgr_port_message, encode)
from .textfile import toml_text

INIT_TYPES = {"u8": "<B", "u16": "<H", "u32": "<I", "i8": "<b", "i16": "<h", "i32": "<i"}
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
PORT_REF_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):([0-9]+)\Z")


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
            raise AppcError(f"{where}: {appmgr_port_message(port)}")
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


def app_name(text: str) -> str:
    """The [app] name of a description (for default symbol names)."""
    return tomllib.loads(text)["app"]["name"]
