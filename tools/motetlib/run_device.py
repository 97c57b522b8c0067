# SPDX-License-Identifier: MIT
"""`motet run DEVICE.toml`: run a multi-module device in simulated time.

Builds the module program(s), starts the bus hub and one process per
module, prints what the modules print (each line prefixed `mN| `, in a
deterministic order) and the hub's notes (`hub| `), and stops cleanly at
--until, when the device has nothing left to do, or on Ctrl-C, leaving no
process behind. The same seed gives the same output.

    motet run devices/two-module.toml --until 2 --seed 7
    motet run devices/five-module.toml --until 5 --fault corrupt:1@0.5:3 --report out.json
    motet run devices/two-module.toml --until 2 -- --app pingpong   # extra module args
    motet run devices/two-module.toml --app apps/pingpong/mcast.toml --until 1

A task whose INIT failed ends there while the rest runs on (a native
module's `ERR task ... ended: its INIT failed` line says so as it
happens); once the run ends, `motet run` names each such task, on a module
of any kind, from the INITFAIL records of the modules' event logs (kept
for the run even without --log-dir) and exits with status 1: a failed
start is a failed run. The task's name comes from --app's description,
else its pid alone. A module whose log cannot vouch for that (its image
built without the event log, or a log whose ring overflowed) is named in
a note among the last lines. A module that exits by itself during the
run, with a status other than 0, fails the run too (status 1), named with
its status and what it means: 5, for one, is a module halted because one
of the kernel's own tasks could not start.

--app APP.toml loads that description instead of the device's: it is
compiled (`motet appc -o X.bin --names`) and every module reads it
(`--app-file`); the device's programs must register the programs it names.

Faults (--fault, repeatable; or typed with --interactive as KIND M [N]),
at simulated SECONDS:
    kill:M@S      kill module M            freeze:M@S   stop module M's CPU
    pause:M@S:MS  stop module M's CPU for MS milliseconds, then resume it
    stall:M@S:MS  pause M, but never mark it unresponsive: each frame to it
                  waits its own acknowledgement timeout and ends without it
    resume:M@S    resume a frozen, paused or stalled module M (native modules only)
    off:M@S       power M off; a frame for it wakes it
    corrupt:M@S[:N]  flip a bit in the next N frames M receives (M may be *)
    delay:M@S:US     deliver the next frame M receives US microseconds late
    drop:M@S[:N]     lose the next N frames M receives on the wire: M never sees
                  them nor acknowledges them, the sender sends each again in
                  its next slot (M may be *)
    kill:M@frame:PID:PORT[:N], freeze:M@frame:PID:PORT[:N]
                  kill or stop M as the N-th frame for task PID, input PORT
                  reaches it, before it has the frame (e.g. migrator frames)

The `motet` command line (tools/motetlib/cli.py) hands `motet run ...` to
main() as it does for appc, so that `--` keeps its meaning.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

from . import appdesc, build, cmdline, device as devmod, eventlog, hub as hubmod
from . import module_kinds as kinds


def build_targets(dev):
    """CMake targets of the device's programs, by port (each module's kind
    says which port builds its program, module_kinds.py)."""
    by_port = {}
    for m in dev.modules:
        for port, targets in kinds.of(m).build_targets(m).items():
            by_port.setdefault(port, set()).update(targets)
    return {port: sorted(t) for port, t in sorted(by_port.items())}


def build_programs(build_dir_arg, dev):
    """Build what the device's modules run, each port in its own tree."""
    for port, targets in build_targets(dev).items():
        status = build.build(build.port_build_dir(build_dir_arg, port), port, targets=targets)
        if status != 0:
            return status
    return 0


def programs_not_in_the_build(build_dir_arg, dev):
    """(module, port, target) of each program the device names that its
    port's configured tree has no target for (build.targets_not_in()): a
    name the device file got wrong, not a build that failed."""
    unknown = {port: set(build.targets_not_in(build.port_build_dir(build_dir_arg, port), targets))
               for port, targets in build_targets(dev).items()}
    return [(m, port, t) for m in dev.modules
            for port, targets in kinds.of(m).build_targets(m).items()
            for t in sorted(targets) if t in unknown[port]]


def failed_inits(dev, logs, unlogged, task_names):
    """(failures, doubts) of a finished run, from each module's event log
    in `logs` (DIR/mN.log), whatever its kind: failures as (module id,
    who, pid, error name) for each INITFAIL record, doubts as (module id,
    why its log cannot vouch that it has no other). `unlogged`: {module
    id: why it wrote no log}; `task_names`: {pid: name} of the run's
    compiled description, if it has one."""
    failures, doubts = [], []
    for m in dev.modules:
        if m.id in unlogged:
            doubts.append((m.id, unlogged[m.id]))
            continue
        path = Path(logs) / f"m{m.id}.log"
        try:
            records = eventlog.read(path)
        except FileNotFoundError:
            doubts.append((m.id, "it wrote no event log"))
            continue
        except eventlog.LogFormatError as e:
            doubts.append((m.id, f"its event log cannot be read ({e})"))
            continue
        lost = sum(r.count for r in records if isinstance(r, eventlog.Lost))
        if lost:
            doubts.append((m.id, f"its event log lost {lost} ring slot(s) before they were "
                                 "drained"))
        for r in records:
            if isinstance(r, eventlog.Event) and r.type == "INITFAIL":
                failures.append((m.id, task_label(r.pid, task_names), f"{r.pid:#04x}",
                                 eventlog.error_name(r.arg)))
    return failures, doubts


def task_label(pid, task_names):
    """How the run's last lines name the task `pid`."""
    if pid in eventlog.PID_NAMES:
        return f"the kernel's own task '{eventlog.PID_NAMES[pid]}'"
    if task_names and pid in task_names:
        return f"task '{task_names[pid]}'"
    return "a task"


def description_task_names(app_toml):
    """{device pid: task name} of a description a run loads (its tasks
    take the pids from MT_PID_FIRST_APP on, in its order: the run's one
    load)."""
    from .appc_text import names, read_text
    tasks, _ = names(read_text(app_toml))
    return {appdesc.PID_FIRST_APP + i: name for i, name in enumerate(tasks)}


def run(dev, bdir, *, seed=1, until=None, faults=(), log_dir=None, report_path=None,
        probe_s=None, probe_warmup_s=0.0, trace=False, extra=(), out=print, progress=None,
        commands=None, watchdog_s=hubmod.Hub.WATCHDOG_S, host=(), task_names=None):
    """Run `dev`; returns (exit status, report dict). `host`: the device's
    host's actions, (seconds, fn(hub)) pairs (hub.Hub). Every module's
    event log is kept (in `log_dir`, else for the run only): a task's
    failed INIT is read from it. `task_names`: {pid: name} that names
    such a task (description_task_names())."""
    not_runnable = [m for m in dev.modules if m.kind not in devmod.RUNNABLE_KINDS]
    if not_runnable:
        m = not_runnable[0]
        out(f"run: error: module {m.id} is a {m.kind} module; only "
            f"{' and '.join(devmod.RUNNABLE_KINDS)} modules can run yet")
        return 2, None
    if log_dir:
        try:
            Path(log_dir).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            out(f"run: error: cannot make the log directory {log_dir}: {e.strerror}")
            return 2, None
    for m in dev.modules:
        for exe in kinds.of(m).files(bdir, m):
            if not exe.exists():
                out(f"run: error: {dev.path}: module {m.id}'s {exe} was not built")
                return 1, None
    for m in dev.modules:
        why = kinds.of(m).lacks_the_bus(bdir, m)
        if why:
            out(f"run: error: {dev.path}: module {m.id} ({m.name}) cannot join the device: {why}")
            return 2, None
    unlogged = {m.id: why for m in dev.modules if (why := kinds.of(m).lacks_the_log(bdir, m))}
    if log_dir and unlogged:
        m, why = next(iter(unlogged.items()))
        out(f"run: error: --log-dir {log_dir}: module {m} has no event log to write: {why}")
        return 2, None
    if progress is None:
        progress = sys.stderr.isatty()
    with tempfile.TemporaryDirectory(prefix="motet-bus-") as tmp:
        sock = os.path.join(tmp, "bus.sock")
        logs = log_dir or os.path.join(tmp, "logs")
        os.makedirs(logs, exist_ok=True)

        def launch(mod, path):
            logged = None if mod.id in unlogged else logs
            return mod.kind.argv(bdir, dev, mod.spec, path, seed, logged, extra)

        hub = hubmod.Hub(dev, sock, launch, seed=seed, until_s=until, faults=faults,
                         probe_s=probe_s, probe_warmup_s=probe_warmup_s, trace=trace, out=out,
                         progress=progress, commands=commands, watchdog_s=watchdog_s,
                         host=host)
        try:
            report = hub.run()  # it stops its modules on SIGINT and SIGTERM
        except hubmod.HubError as e:
            out(f"run: error: {e}")
            return e.status, None
        inits, doubts = failed_inits(dev, logs, unlogged, task_names)
    for line in hubmod.summary_lines(report):
        out(line)
    status = 130 if report["reason"] == "interrupted" else 0
    if report_path:
        try:
            hubmod.write_report(report, report_path)
        except OSError as e:
            out(f"run: error: cannot write the report {report_path}: {e.strerror}")
            status = 1
    if report["reason"] in ("error", "watchdog", "watchdog reset", "module ended"):
        status = 1
    for what in report["failed_loads"]:
        out(f"run: error: the application did not load ({what}); the modules' ERR lines say "
            "which task and program")
        status = status or 1
    names = {m.id: m.name for m in dev.modules}
    for ended in report["module_exits"]:
        out(f"run: error: module {ended['module']} ({ended['name']}) exited with status "
            f"{ended['status']} during the run ({ended['meaning']}); the rest ran on without it")
        status = status or 1
    for module, why in doubts:
        out(f"run: note: module {module} ({names[module]}): {why}: a task's failed INIT there "
            "may be missing from these lines")
    for module, who, pid, err in inits:
        out(f"run: error: {who} (pid {pid}) on module {module} "
            f"({names[module]}) did not start: its INIT failed ({err}); the rest ran on")
        status = status or 1
    return status, report


def add_arguments(p):
    p.add_argument("device", metavar="DEVICE.toml", help="the device description")
    p.add_argument("--app", metavar="APP.toml",
                   help="load this application description (compiled now) instead of the "
                        "device's own")
    p.add_argument("--until", metavar="S", type=float,
                   help="stop after S seconds of simulated time (default: when idle)")
    p.add_argument("--seed", metavar="N", type=int, default=1,
                   help="seed of the simulation: clocks, faults, probes (default 1)")
    p.add_argument("--fault", metavar="SPEC", action="append", default=[],
                   help="inject a fault, e.g. corrupt:1@0.5:3 (see --help)")
    p.add_argument("--log-dir", metavar="DIR", help="write each module's event log to DIR/mN.log")
    p.add_argument("--report", metavar="FILE.json", help="write the run's report as JSON")
    p.add_argument("--probe", metavar="S", type=float,
                   help="measure the time-sync error about every S seconds")
    p.add_argument("--probe-warmup", metavar="S", type=float, default=0.0,
                   help="leave probes before S seconds out of the figures")
    p.add_argument("--trace", action="store_true", help="note every frame on the bus")
    p.add_argument("--interactive", action="store_true",
                   help="read fault commands from standard input while running, one per line: "
                        "KIND MODULE [N], e.g. `kill 2`, `corrupt 1 3`, `delay 0 500`")
    p.add_argument("--no-build", action="store_true", help="do not build the programs first")
    p.add_argument("--port", default=build.DEFAULT_PORT, help=argparse.SUPPRESS)
    p.add_argument("--build-dir", default=None,
                   help="build directory (default: $MOTET_BUILD_DIR or build)")
    p.add_argument("--watchdog", metavar="S", type=float, default=hubmod.Hub.WATCHDOG_S,
                   help="stop the run when a module uses S seconds of CPU time without its "
                        "simulated time advancing, naming the task on its stack; 0: never "
                        f"(default {hubmod.Hub.WATCHDOG_S:g})")
    p.add_argument("--exact-clocks", action="store_true",
                   help="every clock exact (0 ppm, counter from 0): module times comparable")


def check_times(args):
    """--until, --probe and --probe-warmup: finite, and positive where a
    zero would mean nothing (argparse takes 'inf' and 'nan' as floats)."""
    for name, value, zero_ok in (("--until", args.until, False), ("--probe", args.probe, False),
                                 ("--probe-warmup", args.probe_warmup, True),
                                 ("--watchdog", args.watchdog, True)):
        if value is not None and not (math.isfinite(value) and
                                      (value >= 0 if zero_ok else value > 0)):
            raise ValueError(f"{name} {value:g}: expected a finite number of seconds "
                             f"{'>= 0' if zero_ok else '> 0'}")


# Module N's program takes seed * 1000 + N as its seed (module_kinds.py), a
# 64-bit number; ids are 0 .. 15.
MAX_SEED = (2**64 - 1 - 15) // 1000


def check_seed(seed):
    """--seed within what every module's program takes (it refused a
    negative one, naming only its own number, seed * 1000 + id)."""
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"--seed {seed}: expected a whole number 0 .. {MAX_SEED}")


def check_report(path):
    """--report's directory must be there before the run: the report is
    written at its end."""
    if path is not None and Path(path).is_dir():
        raise ValueError(f"--report {path}: a directory, not a file")
    if path is not None and not Path(path).resolve().parent.is_dir():
        raise ValueError(f"--report {path}: no directory {Path(path).resolve().parent}")


# What the hub gives each module's program itself, and where to ask for it
# instead: given again after `--`, the program takes one of the two.
HUB_OPTIONS = {
    "--sim": "every module runs in simulated time",
    "--realtime": "every module runs in simulated time",
    "--seed": "give motet run --seed N (module M is seeded N * 1000 + M)",
    "--until": "give motet run --until S (a module that stopped by itself would leave the bus)",
    "--counter-start": "set the module's clock.start in the device file",
    "--log": "give motet run --log-dir DIR",
    "--bus": "the device file says which modules share it",
    "--module": "the device file gives the modules' ids",
    "--bus-frame-ns": "set bus_cycles_per_frame and cpu_mhz in the device file",
    "--bus-byte-ns": "set bus_cycles_per_byte and cpu_mhz in the device file",
    "--loader": "set [device] loader in the device file",
    "--handler-us": "set handler_us in the device file",
    "--task-us": "set task_us in the device file",
}


def check_module_options(extra, app=None):
    """The options after `--` go to every module's program: one the hub
    gives each module itself would be given twice, and which one the
    program takes is a guess; so would --app-file with motet run's --app
    (`app`), which gives every native module its own."""
    for arg in extra:
        name = arg.split("=", 1)[0]
        if name in HUB_OPTIONS:
            raise ValueError(f"-- {arg}: the hub gives every module its own {name}; "
                             f"{HUB_OPTIONS[name]}")
        if name == "--app-file" and app:
            raise ValueError(f"-- {arg}: motet run --app {app} gives every native module its "
                             "own --app-file; give one of the two")


def check_fault(spec, fault, dev, until):
    """A fault that could never happen on this run is a mistake: one on a
    module the device does not have, or one timed after --until."""
    ids = [m.id for m in dev.modules]
    if fault.module is not None and fault.module not in ids:
        raise ValueError(f"--fault {spec}: module {fault.module} is not a module of {dev.path} "
                         f"(its modules: {', '.join(map(str, ids))})")
    if until is not None and fault.frame is None and fault.at_ns > round(until * 1e9):
        raise ValueError(f"--fault {spec}: at {fault.at_ns / 1e9:g} s, after --until {until:g} s: "
                         "it would never happen")


def cmd_run(args):
    try:
        check_module_options(getattr(args, "extra", ()), args.app)
        check_times(args)
        check_seed(args.seed)
        check_report(args.report)
        dev = devmod.load(args.device)
        if args.exact_clocks:
            dev = devmod.exact_clocks(dev)
        faults = [hubmod.parse_fault(f) for f in args.fault]
        for spec, f in zip(args.fault, faults):
            check_fault(spec, f, dev, args.until)
    except (devmod.DeviceError, ValueError) as e:
        print(f"run: error: {e}", file=sys.stderr)
        return 2
    extra = list(getattr(args, "extra", ()))
    if args.app:
        loader = next((m for m in dev.modules if m.id == dev.loader), None)
        if loader is not None and loader.kind != "native":
            print(f"run: error: --app {args.app}: the loader, module {loader.id}, is an "
                  f"emulated module ({loader.kind}), which loads the description built into "
                  "its image; make a native module the loader ([device] loader)",
                  file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="motet-app-") as tmp:
        if args.app:
            compiled, status = compile_app(args.app, Path(tmp))
            if compiled is None:
                return status
            extra += ["--app-file", str(compiled)]
            args.task_names = description_task_names(args.app)
        if not args.no_build:
            status = build_programs(args.build_dir, dev)
            missing = programs_not_in_the_build(args.build_dir, dev) if status != 0 else []
            for m, port, target in missing:
                print(f"run: error: {args.device}: module {m.id} ({m.name}) names the program "
                      f"{target!r}, which the {port} build has no target for (above: what "
                      "Ninja suggests)", file=sys.stderr)
            if missing:
                return 2
            # Status 2 is bad input the build said last (a description appc
            # refused, a tree it refused): a line after it would bury it.
            if status not in (0, 2):
                print(f"run: error: the programs {args.device} names did not build (above)",
                      file=sys.stderr)
            if status != 0:
                return status
        return run_compiled(args, dev, faults, extra)


def compile_app(path, tmp):
    """(APP.toml compiled with its names into tmp, 0), or (None, appc's exit
    status) after saying why."""
    from . import appc
    out = tmp / (Path(path).stem + ".bin")
    status = appc.main([str(path), "-o", str(out), "--names"])
    if status != 0:
        why = "does not compile" if status == appc.REFUSED else "could not be written"
        print(f"run: error: --app {path}: the description {why} (above)", file=sys.stderr)
        return None, status
    return out, 0


def run_compiled(args, dev, faults, extra):
    """Run the device with the arguments checked and the programs built;
    args.task_names, if set: {pid: name} of the description --app gave."""
    closed = False

    def out(line):
        nonlocal closed
        if closed:
            return
        try:
            print(line, flush=True)
        except BrokenPipeError:  # e.g. piped into head: the run still ends cleanly
            closed = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

    status, _ = run(dev, build.build_dir(args.build_dir), seed=args.seed, until=args.until,
                    faults=faults, log_dir=args.log_dir, report_path=args.report,
                    probe_s=args.probe, probe_warmup_s=args.probe_warmup, trace=args.trace,
                    extra=extra, out=out, commands=sys.stdin if args.interactive else None,
                    watchdog_s=args.watchdog, task_names=getattr(args, "task_names", None))
    return status


def main(argv=None):
    """`motet run ARGS`; everything after `--` goes to every module."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    p = cmdline.ArgumentParser(prog="motet run", description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter,
                               epilog="Arguments after -- go to every module's program.")
    add_arguments(p)
    args = p.parse_args(argv)
    args.extra = extra
    try:
        return cmd_run(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
