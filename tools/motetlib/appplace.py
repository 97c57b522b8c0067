# SPDX-License-Identifier: MIT
"""An application description's task graph, and the same description with
its tasks placed elsewhere.

The profiler (profile.py) and the planner (planner.py) read the text form
of docs/app-format.md through load(): every rule appc checks is checked
first (appc_text.compile_text), so what is read here is a valid description.
placed() writes a description back with new `module` numbers and nothing
else changed (comments, order, init strings), ready for `motet appc`.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib

from . import appc_text, appdesc


class AppError(Exception):
    """A description the planner cannot use; the message says where."""


@dataclasses.dataclass(frozen=True)
class Route:
    """Output port `port` of task `src`: to a task's input port, to every
    member of a group, or to a system task (`dst` None)."""
    src: str
    port: int
    dst: tuple[str, ...]  # the receiving tasks (a group's members)
    dst_ports: tuple[int, ...] = ()  # their application input ports
    group: str | None = None

    @property
    def label(self) -> str:
        to = f"@{self.group}" if self.group else (self.dst[0] if self.dst else "system")
        return f"{self.src}:{self.port} -> {to}"


@dataclasses.dataclass(frozen=True)
class Task:
    name: str
    pid: int  # relative pid: position in the file
    program: str
    priority: int
    module: int
    movable: bool


@dataclasses.dataclass(frozen=True)
class App:
    name: str
    path: str
    text: str
    tasks: tuple[Task, ...]
    routes: tuple[Route, ...]

    def task(self, name: str) -> Task:
        for t in self.tasks:
            if t.name == name:
                return t
        raise KeyError(name)

    def routes_from(self, name: str) -> list[Route]:
        return [r for r in self.routes if r.src == name]


def parse(text: str, path: str = "<app>") -> App:
    try:
        appc_text.compile_text(text)
    except appdesc.AppcError as e:
        raise AppError(f"{path}: {e}") from None
    doc = tomllib.loads(text)
    groups = {g["name"]: [m.split(":") for m in g["members"]] for g in doc.get("group", [])}
    tasks, routes = [], []
    for i, t in enumerate(doc["task"]):
        tasks.append(Task(t["name"], i, t["program"], t["priority"], t.get("module", 0),
                          t.get("movable", False)))
        for port, r in enumerate(t.get("routes", [])):
            if isinstance(r, dict):
                routes.append(Route(t["name"], port, ()))
            elif r.startswith("@"):
                members = groups[r[1:]]
                routes.append(Route(t["name"], port, tuple(m for m, _ in members),
                                    tuple(int(n) for _, n in members), r[1:]))
            else:
                dst, n = r.split(":")
                routes.append(Route(t["name"], port, (dst,), (int(n),)))
    return App(doc["app"]["name"], path, text, tuple(tasks), tuple(routes))


def load(path) -> App:
    try:
        text = appc_text.read_text(path)
    except appdesc.AppcError as e:  # it names the file
        raise AppError(str(e)) from None
    return parse(text, str(path))


# TOML allows spaces inside the brackets and a quoted key: appc reads them all.
_TASK_HEADER = re.compile(r"""^\s*\[\[\s*(task|"task"|'task')\s*\]\]\s*(#.*)?$""")
_TABLE_HEADER = re.compile(r"^\s*\[")
_MODULE_LINE = re.compile(r"^(\s*)module\s*=\s*[^#\n]*(#.*)?$")
_NAME_LINE = re.compile(r"^\s*name\s*=")


def placed(app: App, where: dict[str, int], header: str = "") -> str:
    """The description's text with task t on module where[t] (tasks not in
    `where` stay), `header` (comment lines) put first. The result compiles
    and reads back with exactly that placement."""
    lines = app.text.splitlines()
    out, index, seen, block = [], -1, 0, []

    def flush():
        if index < 0 or app.tasks[index].name not in where:
            out.extend(block)
            return
        line = f"module = {where[app.tasks[index].name]}"
        done = False
        for i, b in enumerate(block):
            if _MODULE_LINE.match(b):
                block[i], done = line, True
        if not done:
            at = next(i for i, b in enumerate(block) if _NAME_LINE.match(b))
            block.insert(at + 1, line)
        out.extend(block)

    for line in lines:
        if _TABLE_HEADER.match(line):
            flush()
            block = []
            index = -1
            if _TASK_HEADER.match(line):
                index, seen = seen, seen + 1
        block.append(line)
    flush()
    text = "\n".join(out) + "\n"
    if header:
        head = "".join(f"# {h}\n" if h else "#\n" for h in header.splitlines())
        first, _, rest = text.partition("\n")
        text = (f"{first}\n{head}#\n{rest}" if first.startswith("# SPDX")
                else head + text)
    back = parse(text, app.path)
    got = {t.name: t.module for t in back.tasks}
    want = {t.name: where.get(t.name, t.module) for t in app.tasks}
    if got != want:
        raise AppError(f"{app.path}: could not rewrite the placement (got {got}, wanted {want})")
    return text
