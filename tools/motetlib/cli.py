# SPDX-License-Identifier: MIT
"""The `motet` command line: one entry point for setting up, building,
testing, running and measuring Motet. See `motet --help`."""

import argparse
import subprocess
import sys
from pathlib import Path

from . import (bench_all, build, cmdline, fuzz, lint, setup_env, stackcheck, stages,
               thread_size)
from .port_options import add_build_args, native_port_only, port_tree

ROOT = build.ROOT

# ---- setup, build -----------------------------------------------------------

def cmd_setup(args):
    groups = setup_env.all_groups() if args.all else setup_env.DEFAULT_GROUPS
    return setup_env.setup(groups)


def cmd_build(args):
    return build.build(port_tree(args), args.port, targets=args.target or ())


def cmd_size(args):
    """Build the kernels both checks compare, then check them."""
    tree = port_tree(args)
    status = build.build(tree, args.port,
                         targets=list(dict.fromkeys([*build.KERNEL_TARGETS, *thread_size.TARGETS])))
    return (status or build.size_check(tree, args.port)
            or thread_size.check(tree, args.port))


# ---- demo, run-hello --------------------------------------------------------

def run_hello(bdir, flags):
    """Run the hello application with `flags`; its output goes to ours."""
    exe = build.hello_binary(bdir)
    if not exe.exists():
        print(f"error: {exe} was not built", file=sys.stderr)
        return 1
    print("$ " + " ".join([str(exe.relative_to(ROOT) if exe.is_relative_to(ROOT) else exe),
                           *flags]), flush=True)
    try:
        return subprocess.run([str(exe), *flags]).returncode
    except KeyboardInterrupt:
        return 130


HELLO_TARGET = "hello"


def demo_hello(build_dir_arg, port, **_):
    """The first demo: build hello and run one simulated second (8 greetings)."""
    status = build.build(build_dir_arg, port, targets=[HELLO_TARGET])
    if status != 0:
        return status
    print("demo: the hello application, one second of simulated time", flush=True)
    return run_hello(build.build_dir(build_dir_arg), ["--sim", "--until", "1"])


def demo_ssl(build_dir_arg, port, scenario=None, out=None, device=None, drift=True):
    """Sound localisation and fire detection on the simulated five-module
    device (or `device`), with a readable report and a Perfetto trace
    (ssl_demo.py); `drift`: the host checks the costs while it runs."""
    from . import ssl_demo
    return ssl_demo.demo(build_dir_arg, port, scenario or ssl_demo.SCENARIO,
                         out or ssl_demo.OUT_DIR, device or ssl_demo.DEVICE, drift=drift)


# What `motet demo` runs after setup: demo(build_dir_arg, port, scenario=,
# out=, device=, drift=) -> status.
DEMO = demo_ssl


def cmd_demo(args):
    if native_port_only("demo", args, "the demo's device file chooses each module's port by its "
                        "kind (--device devices/ssl-mixed.toml: a Cortex-M3 and four "
                        "ATmega128s); --build-dir is the native tree, the other ports' trees "
                        "are beside it"):
        return 2
    status = setup_env.setup(quiet=True)
    if status != 0:
        return status
    scenario = Path(args.scenario).resolve() if args.scenario else None
    out = Path(args.out).resolve() if args.out else None
    device = Path(args.device).resolve() if args.device else None
    return DEMO(args.build_dir, args.port, scenario=scenario, out=out, device=device,
                drift=args.drift)


def cmd_run_hello(args):
    pdir = port_tree(args)
    if native_port_only("run-hello", args, "run-hello runs the native program (--sim, --realtime, "
                        f"--until and --seed are the native port's); `motet build --port "
                        f"{args.port} --target hello` builds its image in {pdir}, and `ctest "
                        f"--test-dir {pdir} -R hello` runs it in its emulator"):
        return 2
    status = build.build(args.build_dir, args.port, targets=[HELLO_TARGET])
    if status != 0:
        return status
    flags = ["--realtime"] if args.realtime else ["--sim"]
    if args.until is not None:
        flags += ["--until", args.until]
    if args.seed is not None:
        flags += ["--seed", str(args.seed)]
    extra = list(args.extra)
    if extra and extra[0] == "--":
        extra = extra[1:]
    return run_hello(build.build_dir(args.build_dir), flags + extra)


# ---- bench, log, appc -------------------------------------------------------

def cmd_bench(args):
    if native_port_only("bench", args, "each benchmark runs on the ports it measures, and "
                        f"--only picks benchmarks ({', '.join(bench_all.ALL)}); --build-dir is "
                        "the native tree, the other ports' trees are beside it"):
        return 2
    only = args.only.split(",") if args.only else bench_all.ALL
    return bench_all.run(args.build_dir, only)


def cmd_log(args):
    from . import eventlog
    try:
        if args.file == "-":
            records = eventlog.parse_bytes(sys.stdin.buffer.read(), "<stdin>", named=True)
        else:
            records = eventlog.read(args.file, named=True)
    except OSError as e:
        print(f"log: error: cannot read {args.file}: {e.strerror}", file=sys.stderr)
        return 1
    except eventlog.LogFormatError as e:
        print(f"log: error: {e}", file=sys.stderr)
        return 1
    if args.chrome:
        try:
            eventlog.write_chrome(records, args.chrome)
        except OSError as e:
            print(f"log: error: cannot write {args.chrome}: {e.strerror}", file=sys.stderr)
            return 1
        n = sum(1 for r in records if isinstance(r, eventlog.Event))
        print(f"log: wrote {args.chrome} ({n} events); open it in https://ui.perfetto.dev")
        return 0
    try:
        for line in eventlog.format_table(records):
            print(line)
    except BrokenPipeError:
        sys.stderr.close()
    return 0


def cmd_appc(argv):
    try:
        from . import appc
    except ImportError as e:
        print(f"appc: error: the application compiler is not available ({e})", file=sys.stderr)
        return 1
    return appc.main(argv)


# ---- argument parsing -------------------------------------------------------

def parser():
    p = cmdline.ArgumentParser(
        prog="motet",
        description="Motet's command line: set up, build, test, run and measure.",
        epilog="`motet appc ARGS...` runs the application-description compiler "
               "(see `motet appc --help`).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    s = sub.add_parser("setup", help="install the packages building and testing need (apt)")
    s.add_argument("--all", action="store_true",
                   help="also the emulated ports' tools (Cortex-M/QEMU, AVR/simavr)")
    s.set_defaults(func=cmd_setup)

    s = sub.add_parser("build", help="configure (once; afresh when what CMake reads only at a "
                                     "first configure has changed) and build with CMake and "
                                     "Ninja")
    s.add_argument("--target", action="append", metavar="T",
                   help="build only target T (repeatable; default: everything)")
    add_build_args(s, port_tree=True)
    s.set_defaults(func=cmd_build)

    s = sub.add_parser("test", help="setup, lint, build, unit, scenario, sanitizer and fuzz "
                                    "tests, size check, ports")
    s.add_argument("--only", metavar="A,B",
                   help=f"only these stages, in the usual order ({', '.join(stages.STAGES)}); "
                        f"{' and '.join(stages.GATE_STAGES)} run too when a later stage needs "
                        "them")
    add_build_args(s, port_tree=True,
                   port_help="port whose tree stages " + ", ".join(stages.PORT_STAGES) +
                             " build and test, and stage ports among the others (default: "
                             "%(default)s; another port takes only those)")
    s.set_defaults(func=stages.cmd_test)

    s = sub.add_parser("demo", help="setup, build and run the demo: sound localisation and fire "
                                    "detection on a simulated five-module device")
    s.add_argument("--scenario", metavar="FILE",
                   help="sound sources, noise, fires and the seed of their randomness (format: "
                        "apps/ssl/README.md; default apps/ssl/scenarios/demo.toml)")
    s.add_argument("--out", metavar="DIR", help="where the trace and event logs go (default out/)")
    s.add_argument("--device", metavar="FILE",
                   help="the device to run it on (default devices/ssl-device.toml; "
                        "devices/ssl-mixed.toml: a Cortex-M3 and four ATmega128s)")
    s.add_argument("--drift", action=argparse.BooleanOptionalAction, default=True,
                   help="the device's host also checks the tasks' costs while the device runs "
                        "and re-places them on a drift (docs/planner.md; native devices; on "
                        "unless --no-drift)")
    add_build_args(s)
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser("run-hello", help="build and run the hello application",
                       description="Build and run apps/hello. Simulated time unless "
                                   "--realtime; without --until it runs until interrupted. "
                                   "Arguments after -- go to the program unchanged.")
    s.add_argument("--realtime", action="store_true", help="real clock instead of simulated")
    s.add_argument("--until", metavar="S", help="stop after S seconds of module time")
    s.add_argument("--seed", metavar="N", type=int, help="seed of the simulation")
    s.add_argument("extra", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    add_build_args(s)
    s.set_defaults(func=cmd_run_hello)

    s = sub.add_parser("bench", help="run the benchmarks (instructions, cycles, bytes) and "
                                     "write their sections of docs/benchmarks.md")
    s.add_argument("--only", metavar="A,B",
                   help=f"only these: {', '.join(bench_all.ALL)} "
                        "(default: all; the other sections are kept)")
    add_build_args(s, port_help="native only: each benchmark runs on the ports it measures, "
                                "each port's tree beside --build-dir")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("format", help="clang-format C files in place, as the lint stage wants them",
                       description="Format C files in place with clang-format and the "
                                   "repository's .clang-format (what `motet test`'s lint stage "
                                   "checks): the FILEs, or every C file the lint stage checks.")
    s.add_argument("files", nargs="*", metavar="FILE",
                   help="files to format (default: every C file that lint checks)")
    s.set_defaults(func=lint.cmd_format)

    s = sub.add_parser("size", help="kernel footprint with and without the event log")
    add_build_args(s, port_tree=True)
    s.set_defaults(func=cmd_size)

    s = sub.add_parser("log", help="show an event-log dump, or export Chrome trace JSON",
                       description="Read an event-log dump (lines `EV <time_us> <TYPE> "
                                   "<pid> <arg>`, see tools/motetlib/eventlog.py) and print "
                                   "it as a table, or export it for Perfetto.")
    s.add_argument("file", metavar="FILE", help="the dump ('-' for standard input)")
    s.add_argument("--chrome", metavar="OUT.json",
                   help="write Chrome trace JSON (open in https://ui.perfetto.dev)")
    s.set_defaults(func=cmd_log)

    sub.add_parser("appc", help="compile an application description (motet appc --help)",
                   add_help=False)
    sub.add_parser("new", help="make a new application in apps/NAME, ready to run "
                   "(motet new --help)", add_help=False)
    sub.add_parser("run", help="run a multi-module device (motet run --help)", add_help=False)
    sub.add_parser("soak", help="a long run of a five-module device under migrations, multicasts "
                   "and faults, checking every message and the memory (motet soak --help)",
                   add_help=False)
    sub.add_parser("stack", help="worst-case stack of a built ELF (motet stack --help)",
                   add_help=False)
    sub.add_parser("fuzz", help="build and run the libFuzzer targets (motet fuzz --help)",
                   add_help=False)
    sub.add_parser("profile", help="measure an application's task costs on a device for "
                   "`motet plan` (motet profile --help)", add_help=False)
    sub.add_parser("plan", help="place an application's tasks on a device's modules for the "
                   "least energy within its deadlines (motet plan --help)", add_help=False)
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv and argv[0] == "appc":
            return cmd_appc(argv[1:])
        if argv and argv[0] == "stack":
            return stackcheck.main(argv[1:])
        if argv and argv[0] == "fuzz":
            return fuzz.main(argv[1:])
        if argv and argv[0] == "new":
            from . import new_app
            return new_app.main(argv[1:])
        if argv and argv[0] == "run":
            from . import run_device
            return run_device.main(argv[1:])
        if argv and argv[0] == "soak":
            from . import soak
            return soak.main(argv[1:])
        if argv and argv[0] == "profile":
            from . import profile
            return profile.main(argv[1:])
        if argv and argv[0] == "plan":
            from . import plan_report
            return plan_report.main(argv[1:])
        args = parser().parse_args(argv)
        return args.func(args)
    except KeyboardInterrupt:
        print("motet: interrupted", file=sys.stderr)
        return 130
