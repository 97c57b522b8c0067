# SPDX-License-Identifier: MIT
"""`motet new NAME [--modules N]`: a new application in apps/NAME/.

It writes everything an application needs and nothing else has to change:

    apps/NAME/NAME.toml        the description: three programs, a task of
                               each kind, a multicast group of loggers
    apps/NAME/NAME.c, NAME.h   the task handlers
    apps/NAME/main_native.c    the entry for the native port (module_main())
    apps/NAME/main_firmware.c  the entry for the firmware ports
    apps/NAME/CMakeLists.txt   motet_app(NAME SOURCES NAME.c); on the AVR
                               with a kernel of its own whose static RAM
                               leaves room for the stack `motet stack` bounds
    apps/NAME/NAME.stack       what `motet stack` needs to bound the stack
                               of its AVR or Cortex-M image
    apps/NAME/device.toml      a device of N native modules running it

apps/CMakeLists.txt finds the directory by itself and motet_app() compiles
its descriptions and writes their declarations (NAME_apps.h), so
`./motet run apps/NAME/device.toml --until 2` builds and runs it at once.
A NAME that is already a CMake target (a program or library of the tree)
is refused before anything is written: the tree would no longer configure.
"""

from __future__ import annotations

import argparse
import keyword
import os
import re
import sys
from pathlib import Path

from . import build, cmdline
from .device import DEFAULT_HANDLER_US

ROOT = build.ROOT
APPS = ROOT / "apps"
TEMPLATES = Path(__file__).resolve().parent / "templates"
NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,30}\Z")
MAX_MODULES = 16  # bus addresses 0 .. 15 (device.py)
SAMPLE_PERIOD_US = 100_000


def description(name: str, modules: int) -> str:
    """The description: the sampler on module 0, the filter on the last
    module, a logger on every module, all in the group `loggers`."""
    last = modules - 1
    loggers = [f"logger{k}" for k in range(modules)]
    lines = [
        "# SPDX-License-Identifier: MIT",
        f"# {name}: a sampler, a filter and a logger per module (made by `motet new`).",
        "# Format: docs/app-format.md; a walk through it: docs/guide.md.",
        "",
        "[app]",
        f'name = "{name}"',
        "",
        f"# Program ids: the firmware registers these ({name}.c, {name}_programs[]).",
        "[programs]",
        "sampler = 1",
        "filter = 2",
        "logger = 3",
        "",
        "# Samples every 100 ms and sends each sample on its output 0.",
        "[[task]]",
        'name = "sampler"',
        'program = "sampler"',
        "priority = 2",
        "module = 0",
        'routes = ["filter:0"]',
        f"init = [{{ u32 = {SAMPLE_PERIOD_US} }}]   # period in microseconds",
        "",
        "# Keeps a running mean; sends every sample to all the loggers.",
        "[[task]]",
        'name = "filter"',
        'program = "filter"',
        "priority = 1",
        f"module = {last}",
        "movable = true",
        'routes = ["@loggers"]',
    ]
    for k, logger in enumerate(loggers):
        lines += ["", "[[task]]", f'name = "{logger}"', 'program = "logger"', "priority = 1",
                  f"module = {k}"]
    members = ", ".join(f'"{t}:0"' for t in loggers)
    lines += ["", "# A multicast group: one message on the filter's output 0 reaches each.",
              "[[group]]", 'name = "loggers"', f"members = [{members}]", ""]
    return "\n".join(lines)


def device(name: str, modules: int) -> str:
    lines = [
        "# SPDX-License-Identifier: MIT",
        f"# A device of {modules} native module{'s' if modules > 1 else ''} running {name} "
        "(made by `motet new`).",
        "# Format and defaults: docs/device-format.md; the bus model: docs/bus.md.",
        "#",
        f"#   ./motet run apps/{name}/device.toml --until 2",
        "",
        "[device]",
        f'name = "{name}"',
        f'program = "apps/{name}/{name}"   # in the build directory',
        "loader = 0                        # the module that loads the description",
        "# The native port does not measure code: each handler run is charged this",
        "# much simulated time (microseconds), the filter more (by its task name).",
        f"handler_us = {DEFAULT_HANDLER_US}",
        "task_us = { filter = 300 }",
        "",
        "[bus]",
        "bandwidth = 8000000",
        "slot_us = 10",
        "",
    ]
    for k in range(modules):
        lines += ["[[module]]", f"id = {k}", f'name = "m{k}"', "cpu_mhz = 16",
                  "bus_cycles_per_frame = 300", "bus_cycles_per_byte = 12", ""]
    return "\n".join(lines)


def files(name: str, modules: int) -> dict[str, str]:
    """Every file of the new application, by name, with its text."""
    subst = {"@NAME@": name, "@UPPER@": name.upper()}

    def template(t):
        text = (TEMPLATES / t).read_text()
        for k, v in subst.items():
            text = text.replace(k, v)
        return text

    return {
        f"{name}.toml": description(name, modules),
        f"{name}.c": template("app.c.in"),
        f"{name}.h": template("app.h.in"),
        "main_native.c": template("main_native.c.in"),
        "main_firmware.c": template("main_firmware.c.in"),
        "CMakeLists.txt": template("CMakeLists.txt.in"),
        f"{name}.stack": template("app.stack.in"),
        "device.toml": device(name, modules),
    }


# A target's name where CMake defines it: `add_executable(hello ...`.
DEFINES_TARGET = re.compile(r"^[ \t]*(?:add_executable|add_library|add_custom_target|motet_app)"
                            r"\([ \t]*([A-Za-z0-9_.+-]+)(?=[ \t\n)])", re.M)


def scanned_targets(root: Path = ROOT) -> set[str]:
    """Every target a CMakeLists.txt or *.cmake of the source tree names
    literally (names built from variables, as motet_app()'s NAME_kernel, are
    not seen: a new application defines none of them)."""
    found = set()
    for top, dirs, names in os.walk(root):
        # Not into build trees (they copy CMake files) nor hidden directories.
        dirs[:] = [d for d in dirs if not d.startswith(".")
                   and not (Path(top) / d / "CMakeCache.txt").exists()]
        for f in names:
            if f == "CMakeLists.txt" or f.endswith(".cmake"):
                text = (Path(top) / f).read_text(errors="replace")
                found |= set(DEFINES_TARGET.findall(text))
    return found


def removed_app(name: str, bdir: Path) -> bool:
    """True if target `name` of the configured tree bdir is the program of
    an application whose directory has been removed since the tree was
    configured (bdir/apps/NAME is its binary directory, apps/NAME is gone):
    the tree's next build lists apps/ afresh (apps/CMakeLists.txt) and no
    longer has it, so a new application may take the name."""
    return not (APPS / name).exists() and (Path(bdir) / "apps" / name).is_dir()


def target_clash(name: str, bdir: Path | None = None) -> str | None:
    """Why `name` cannot be a new program's target, or None. The source of
    truth is the default build tree when it is configured (it knows every
    target, whatever variables named it); otherwise the CMake files of the
    source tree, scanned. Targets only another port defines are in no
    native tree, so the scan is added to the tree's answer, not replaced."""
    bdir = build.build_dir() if bdir is None else bdir
    configured = build.configured_targets(bdir)
    if configured is not None and name in configured and not removed_app(name, bdir):
        return (f"{name!r} is already a CMake target of the build tree {bdir} "
                "(`ninja -t targets all`): its program would clash with it")
    if name in scanned_targets():
        return (f"{name!r} is already a CMake target (add_executable, add_library, "
                "add_custom_target or motet_app in the tree's CMake files): its program would "
                "clash with it")
    return None


def check_name(name: str) -> str | None:
    """Why `name` cannot be an application's, or None."""
    if not NAME_RE.match(name):
        return (f"{name!r} is not a name for an application: lower-case letters, digits and _, "
                "starting with a letter, at most 31 characters (it names C symbols)")
    if keyword.iskeyword(name) or name in ("main", "common", "motet", "kernel", "test"):
        return f"{name!r} is reserved"
    if (APPS / name).exists():
        return f"apps/{name} exists already"
    return target_clash(name)


def main(argv=None) -> int:
    p = cmdline.ArgumentParser(
        prog="motet new", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", metavar="NAME", help="the application's name: apps/NAME, program NAME")
    p.add_argument("--modules", metavar="N", type=int, default=1,
                   help=f"modules of its device, 1 .. {MAX_MODULES} (default 1)")
    args = p.parse_args(argv)
    why = check_name(args.name)
    if why is None and not 1 <= args.modules <= MAX_MODULES:
        why = f"--modules {args.modules}: a device has 1 .. {MAX_MODULES} modules"
    if why:
        print(f"new: error: {why}", file=sys.stderr)
        return 2
    out = APPS / args.name
    out.mkdir(parents=True)
    for fname, text in files(args.name, args.modules).items():
        (out / fname).write_text(text)
    rel = out.relative_to(ROOT)
    print(f"new: wrote {rel}/ ({', '.join(files(args.name, args.modules))})")
    print(f"new: run it with  ./motet run {rel}/device.toml --until 2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
