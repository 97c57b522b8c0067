# SPDX-License-Identifier: MIT
"""The `motet` command line: one entry point for setting up, building,
testing, running and measuring Motet. See `motet --help`."""

import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import (bench_all, build, cmdline, ctest_report, fuzz, pytest_report, setup_env, stackcheck,
               thread_size)

ROOT = build.ROOT

# What `motet test` formats and lints: every C source and header below these.
LINT_DIRS = ("kernel", "ports", "apps", "tests", "bench")
# What pyflakes checks: every Python file below these (and tools/motet, by its shebang).
PY_LINT_DIRS = ("tools", "tests", "apps", "bench")
# What `motet test` runs with pytest after the unit tests.
PYTEST_DIRS = ("tests/scenario", "tests/tools")
PYTEST_NO_TESTS = 5  # pytest's exit status when it collected nothing


def _add_build_args(p, port_tree=False, port_help=None):
    p.add_argument("--port", default=build.DEFAULT_PORT, choices=build.known_ports(),
                   help=port_help or "port to build for, a directory under ports/ "
                                     "(default: %(default)s)")
    p.add_argument("--build-dir", default=None,
                   help="build directory, relative to the repository root "
                        "(default: $MOTET_BUILD_DIR or build" +
                        ("; for another --port, build-PORT beside it)" if port_tree else ")"))


# ---- setup, build -----------------------------------------------------------

def cmd_setup(args):
    groups = setup_env.all_groups() if args.all else setup_env.DEFAULT_GROUPS
    return setup_env.setup(groups)


def port_tree(args):
    """The tree of --port: --build-dir as given, else the port's own tree
    (build for the native port, build-<port> beside it for another, where
    `motet run` and `motet test` build that port), so that a port given
    alone does not reconfigure the native tree for itself."""
    return args.build_dir if args.build_dir else build.port_build_dir(None, args.port)


def cmd_build(args):
    return build.build(port_tree(args), args.port, targets=args.target or ())


def cmd_size(args):
    status = build.size_check(port_tree(args), args.port, also_build=thread_size.TARGETS)
    return status or thread_size.check(port_tree(args), args.port)


# ---- test -------------------------------------------------------------------

def lint_files():
    """Tracked (and new, not ignored) *.c/*.h files under LINT_DIRS."""
    try:
        res = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                              "-z", "--", *LINT_DIRS], cwd=ROOT, capture_output=True)
        ok = res.returncode == 0
    except FileNotFoundError:
        ok = False
    if ok:
        names = [n for n in res.stdout.decode().split("\0") if n]
    else:  # not a git checkout: every file on disk
        names = [str(p.relative_to(ROOT)) for d in LINT_DIRS if (ROOT / d).is_dir()
                 for p in (ROOT / d).rglob("*")]
    return sorted({n for n in names if n.endswith((".c", ".h")) and (ROOT / n).is_file()})


def _clang_format_violations(name):
    res = subprocess.run(["clang-format", "--dry-run", "--Werror", name], cwd=ROOT,
                         capture_output=True, text=True)
    if res.returncode == 0:
        return 0
    return max(1, res.stderr.count("error:"))


def lint():
    """clang-format check of every C file, pyflakes of every Python file;
    returns (status, detail)."""
    status, detail = lint_c()
    py_status, py_detail = lint_python()
    return status or py_status, f"{detail}; {py_detail}"


def lint_python():
    """pyflakes over the host tools and the tests: unused imports and names,
    undefined names, f-strings without placeholders."""
    res = subprocess.run([sys.executable, "-m", "pyflakes", *PY_LINT_DIRS], cwd=ROOT,
                         capture_output=True, text=True)
    if res.returncode == 0:
        print(f"lint: Python files under {', '.join(PY_LINT_DIRS)} pass pyflakes")
        return 0, "pyflakes clean"
    if "No module named pyflakes" in res.stderr:
        print("lint: error: pyflakes not importable (run `./motet setup`)", file=sys.stderr)
        return 1, "pyflakes missing"
    problems = [line for line in (res.stdout + res.stderr).splitlines() if line.strip()]
    print(f"lint: pyflakes found {len(problems)} problem{'s' if len(problems) != 1 else ''}:",
          file=sys.stderr)
    for line in problems:
        print("    " + line, file=sys.stderr)
    return 1, f"{len(problems)} pyflakes problem{'s' if len(problems) != 1 else ''}"


def lint_c():
    """clang-format check of every C file; returns (status, detail)."""
    files = lint_files()
    if not (ROOT / ".clang-format").exists():
        print("lint: error: no .clang-format at the repository root", file=sys.stderr)
        return 1, "no .clang-format"
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            counts = list(pool.map(_clang_format_violations, files))
    except FileNotFoundError:
        print("lint: error: clang-format not found (run `./motet setup`)", file=sys.stderr)
        return 1, "clang-format missing"
    bad = [(f, n) for f, n in zip(files, counts) if n]
    if not bad:
        print(f"lint: {len(files)} C files formatted as .clang-format says")
        return 0, f"{len(files)} files"
    print(f"lint: {len(bad)} of {len(files)} C files are not clang-formatted:", file=sys.stderr)
    for f, n in bad:
        print(f"    {f}  ({n} place{'s' if n > 1 else ''})", file=sys.stderr)
    print("lint: see the differences with `clang-format --dry-run FILE`, fix with:\n"
          "    clang-format -i " + " ".join(f for f, _ in bad), file=sys.stderr)
    return 1, f"{len(bad)} file{'s' if len(bad) > 1 else ''} not formatted"


def cmd_format(args):
    """clang-format -i, with the configuration the lint stage checks
    against (.clang-format), on FILEs or on every file lint checks."""
    files = [str(Path(f).resolve()) for f in args.files] or lint_files()
    if not (ROOT / ".clang-format").exists():
        print("format: error: no .clang-format at the repository root", file=sys.stderr)
        return 1
    before = {f: (ROOT / f).read_bytes() for f in files if (ROOT / f).is_file()}
    missing = sorted(set(files) - set(before))
    if missing:
        print(f"format: error: no such file: {', '.join(missing)}", file=sys.stderr)
        return 1
    try:
        res = subprocess.run(["clang-format", "-i", "--", *files], cwd=ROOT)
    except FileNotFoundError:
        print("format: error: clang-format not found (run `./motet setup`)", file=sys.stderr)
        return 1
    if res.returncode != 0:
        return res.returncode
    changed = [f for f, data in before.items() if (ROOT / f).read_bytes() != data]
    print(f"format: {len(files)} C files, {len(changed)} reformatted"
          + (":\n    " + "\n    ".join(changed) if changed else ""))
    return 0


def ctest_command(bdir):
    """ctest on the tree `bdir`, one test per core at a time; a tree with no
    test fails (a tree configured without tests would pass having run none)."""
    return ["ctest", "--test-dir", bdir, "--output-on-failure", "--no-tests=error",
            "--parallel", str(os.cpu_count() or 2)]


def run_ctest(bdir, **kw):
    """Run ctest_command(bdir) (`kw` to build.run); (its completed process,
    what failed in a few words: "" if nothing did). The names of the tests
    that failed are printed and named in those words, as run_pytest()
    does, so that the summary (all a CI log may show) names them."""
    ctest_report.forget(bdir)
    res = build.run(ctest_command(bdir), **kw)
    if res.returncode == 0:
        return res, ""
    failed = ctest_report.failed_tests(bdir)
    if failed:
        print(f"ctest: failed in {bdir}:\n    " + "\n    ".join(failed), file=sys.stderr)
    return res, pytest_report.describe(res.returncode, failed)


def unit_tests(bdir):
    res, failed = run_ctest(bdir)
    return res.returncode, "ctest" if res.returncode == 0 else f"ctest failed: {failed}"


# Emulated ports whose kernel tests run in `motet test`, and ports that are
# only compiled (the template proves every port.h hook has an entry).
EMULATED_PORTS = ("cortex-m", "avr")
BUILD_ONLY_PORTS = ("template",)


def _ctest_captured(bdir):
    """(status, output, what failed in a few words) of run_ctest(bdir), its
    output kept for later."""
    res, failed = run_ctest(bdir, quiet=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    cmd = ctest_command(bdir)
    return (res.returncode, "$ " + " ".join(str(c) for c in cmd) + "\n" + (res.stdout or ""),
            failed)


def port_tests(bdir, own_trees=None):
    """Build every other port beside `bdir`, then run the emulated ports'
    tests in their emulators, the two ports' ctest at once: while both run
    they share the cores, and when one is done the other has them all, so
    no core waits for the last test of one port before the other starts.
    Each one's output is printed whole when it ends. `own_trees`: {port:
    tree} of a port built and tested in a tree of its own rather than
    beside `bdir` (`motet test --port X --build-dir D`: D is X's tree)."""
    own_trees = own_trees or {}
    failed = []
    trees = []

    def tree_of(port):
        return own_trees.get(port) or build.port_build_dir(bdir, port)
    for port in EMULATED_PORTS:
        pdir = tree_of(port)
        if build.build(pdir, port) == 0:
            trees.append((port, pdir))
        else:
            failed.append(port)
    for port in BUILD_ONLY_PORTS:
        pdir = tree_of(port)
        if build.build(pdir, port, extra=["-DMOTET_BUILD_TESTS=OFF"]) != 0:
            failed.append(port)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(len(trees), 1)) as pool:
        runs = list(pool.map(_ctest_captured, [pdir for _, pdir in trees]))
    tests_failed = {}  # port -> which of its tests failed, in a few words
    for (port, _), (status, out, words) in zip(trees, runs):
        print(f"ports: {port} tests\n{out}", end="" if out.endswith("\n") else "\n", flush=True)
        if status != 0:
            failed.append(port)
            tests_failed[port] = words
    failed.sort(key=(EMULATED_PORTS + BUILD_ONLY_PORTS).index)
    names = ", ".join(EMULATED_PORTS + BUILD_ONLY_PORTS)
    failed = [f"{port} ({tests_failed[port]})" if port in tests_failed else port
              for port in failed]
    return (1, f"failed: {', '.join(failed)}") if failed else (0, names)


def _has_pytest_files(dirs):
    for d in dirs:
        for p in (ROOT / d).rglob("*.py"):
            if p.name.startswith("test_") or p.name.endswith("_test.py"):
                return True
    return False


def pytest_command(dirs, report=None, markers=None):
    """pytest on `dirs`, its tests spread over one worker per core (pytest-xdist,
    which `motet setup` installs): a test runs its programs, a SPIN verifier
    or a device on one core at a time. The tests a module-scoped run serves
    share one worker (their xdist_group, tests/scenario/conftest.py), so
    that run is made once. `report`: where pytest writes its JUnit XML;
    `markers`: a pytest -m expression choosing the tests (None: all)."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "-n", str(os.cpu_count() or 2), "--dist", "loadgroup",
            *([f"--junitxml={report}"] if report else []),
            *(["-m", markers] if markers else []), *dirs]


def run_pytest(dirs, report, env, markers=None):
    """Run pytest_command(dirs, markers=markers), its JUnit XML report written to `report`
    (in the build tree); (exit status, what failed in a few words: "" if
    nothing did). The ids of the tests that failed are printed, sorted, and
    named in those words, so that the summary at the end of the output (all a CI
    log may show) says which tests failed."""
    report = Path(report)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.unlink(missing_ok=True)  # an earlier run's report names nothing of this one
    status = build.run(pytest_command(dirs, report, markers), cwd=ROOT, env=env).returncode
    if status in (0, PYTEST_NO_TESTS):
        return status, ""
    # Sorted: the report lists tests as the workers finished them, an order
    # that changes from run to run, and the summary should not.
    failed = pytest_report.failed_tests(report, ROOT)
    failed = sorted(failed) if failed is not None else None
    if failed:
        print("pytest: failed:\n    " + "\n    ".join(failed), file=sys.stderr)
    return status, pytest_report.describe(status, failed)


def scenario_tests(bdir):
    dirs = [d for d in PYTEST_DIRS if (ROOT / d).is_dir()]
    if not dirs:
        return 0, "no test directories"
    env = dict(os.environ, MOTET_BUILD_DIR=str(bdir))
    status, failed = run_pytest(dirs, Path(bdir) / "pytest-scenario.xml", env)
    if status == PYTEST_NO_TESTS:
        if _has_pytest_files(dirs):
            print("scenario: error: pytest collected no tests although test files exist",
                  file=sys.stderr)
            return 1, "no tests collected"
        return 0, "no tests yet"
    return status, "pytest" if status == 0 else f"pytest failed: {failed}"


# The sanitizer stage: the unit tests and the scenarios (whole programs and
# devices, the hub's modules included) built with ASan and UBSan. Each
# sanitizer writes its reports to files, so that a report from a program
# whose exit status a test does not read still fails the stage.
SANITIZE_PYTEST_DIRS = ("tests/scenario",)
# Less the scenarios whose programs reach no line of C the others' do not
# (marked sanitize_repeat, tests/conftest.py): sanitized, they would
# check the same code again (README.md, "sanitize").
SANITIZE_PYTEST_MARKERS = "not sanitize_repeat"
LSAN_SUPPRESSIONS = ROOT / "tests" / "lsan.supp"
REPORT_MARKS = ("ERROR: ", "WARNING: ", "runtime error: ")


def sanitizer_env(log_dir, bdir):
    """The environment of the sanitized runs: reports to files in log_dir."""
    return dict(os.environ, MOTET_BUILD_DIR=str(bdir),
                ASAN_OPTIONS=f"log_path={log_dir}/asan:detect_stack_use_after_return=1",
                UBSAN_OPTIONS=f"log_path={log_dir}/ubsan:print_stacktrace=1",
                LSAN_OPTIONS=f"suppressions={LSAN_SUPPRESSIONS}")


def sanitizer_reports(log_dir):
    """The report files in log_dir (a suppression summary alone is none)."""
    found = []
    for p in sorted(Path(log_dir).iterdir()):
        text = p.read_text(errors="replace")
        if any(mark in text for mark in REPORT_MARKS):
            found.append((p.name, text))
    return found


def sanitizer_tests(bdir_arg):
    status = build.build_sanitized(bdir_arg)
    if status != 0:
        return status, "build failed"
    sdir = build.variant_build_dir(bdir_arg, "asan")
    with tempfile.TemporaryDirectory(prefix="motet-sanitize-") as logs:
        env = sanitizer_env(logs, sdir)
        unit, unit_failed = run_ctest(sdir, env=env)
        scen, scen_failed = run_pytest(SANITIZE_PYTEST_DIRS, Path(sdir) / "pytest-sanitize.xml",
                                       env, SANITIZE_PYTEST_MARKERS)
        reports = sanitizer_reports(logs)
    for name, text in reports:
        print(f"sanitize: report {name}:\n{text[:6000]}", file=sys.stderr)
    # the tests' ids last: the summary line may run on
    failed = [what for what, bad in ((f"ctest: {unit_failed}", unit.returncode),
                                     (f"{len(reports)} reports", reports),
                                     (f"pytest: {scen_failed}", scen)) if bad]
    if failed:
        return 1, "failed: " + ", ".join(failed)
    return 0, "ASan+UBSan: ctest, " + ", ".join(SANITIZE_PYTEST_DIRS)


def _test_stages(args):
    """The stages of `motet test`, in order: (name, run() -> (status, detail)).
    Those of PORT_STAGES test --port in its tree (port_tree()), the ports
    stage every port, --port's in that tree, and the others the native
    tree (--build-dir, unless it names another --port's tree)."""
    bdir = build.build_dir(args.build_dir)
    tree = port_tree(args)
    if args.port == build.DEFAULT_PORT:
        native_arg, own_trees = args.build_dir, {}
    else:
        native_arg, own_trees = None, {args.port: tree}

    def size():
        st = build.size_check(tree, args.port, do_build=False)
        return st or thread_size.check(tree, args.port), "log on vs off, threads off"

    return [
        ("setup", lambda: (setup_env.setup(), "packages")),
        ("lint", lint),
        ("build", lambda: (build.build(tree, args.port), "-Werror")),
        ("unit", lambda: unit_tests(build.build_dir(tree))),
        ("scenario", lambda: scenario_tests(bdir)),
        ("sanitize", lambda: sanitizer_tests(args.build_dir)),
        ("fuzz", lambda: fuzz.run(args.build_dir, fuzz.TEST_SECONDS,
                                  jobs=os.cpu_count() or 2)),
        ("size", size),
        ("ports", lambda: port_tests(native_arg, own_trees)),
    ]


STAGES = ("setup", "lint", "build", "unit", "scenario", "sanitize", "fuzz", "size", "ports")
# A stage whose failure skips every later one; with --only, these run too
# whenever a later stage is chosen (the packages, the built tree).
GATE_STAGES = ("setup", "build")
# The stages that build and test the port --port names, in its tree; the
# one that tests every port, --port's in its tree; those that take no
# port. The others test the native port (scenario, sanitize, fuzz).
PORT_STAGES = ("build", "unit", "size")
EVERY_PORT_STAGES = ("ports",)
PORTLESS_STAGES = ("setup", "lint")


def _chosen_stages(only):
    """The stages `--only A,B` runs, in STAGES order (None: all), or an
    error message."""
    if only is None:
        return STAGES, None
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in STAGES]
    if unknown or not names:
        return None, (f"unknown stage {', '.join(unknown)}" if unknown else "no stage named")
    last = max(STAGES.index(n) for n in names)
    return tuple(n for i, n in enumerate(STAGES)
                 if n in names or (n in GATE_STAGES and i < last)), None


def _cpu_seconds():
    """CPU time (user + system) of this process and its waited-for children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def cmd_test(args):
    chosen, error = _chosen_stages(args.only)
    if error:
        print(f"test: error: --only: {error} (stages: {', '.join(STAGES)})", file=sys.stderr)
        return 2
    not_the_port = [n for n in chosen
                    if n not in PORT_STAGES + EVERY_PORT_STAGES + PORTLESS_STAGES]
    if not_the_port and native_port_only(
            "test", args, f"stage{'s' if len(not_the_port) > 1 else ''} "
            f"{', '.join(not_the_port)} test{'' if len(not_the_port) > 1 else 's'} the native "
            f"port, not {args.port}; `motet test --port {args.port} --only "
            f"{','.join(n for n in PORT_STAGES + EVERY_PORT_STAGES if n not in GATE_STAGES)}` "
            f"builds and tests {port_tree(args)}"):
        return 2
    results = []  # (stage, status or None for skipped, detail)
    took = {}  # stage -> wall seconds
    blocked = None  # the gate stage that failed
    for name, run in _test_stages(args):
        if name not in chosen:
            continue
        if blocked:
            results.append((name, None, f"skipped: stage {blocked} failed"))
            continue
        print(f"\n== {name}", flush=True)
        t, cpu = time.monotonic(), _cpu_seconds()
        status, detail = run()
        took[name] = time.monotonic() - t
        print(f"== stage {name}: {took[name]:.0f} s (cpu {_cpu_seconds() - cpu:.0f} s)",
              flush=True)
        results.append((name, status, detail))
        if status != 0 and name in GATE_STAGES:
            blocked = name
    if chosen != STAGES:
        print(f"\nmotet test: only {', '.join(chosen)}")
    return _summary(results, took)


def _summary(results, took=None):
    """Print a line per stage (with its seconds, where `took` has them)."""
    print("\n== summary")
    failed = []
    took = took or {}
    for name, status, detail in results:
        word = "skip" if status is None else ("ok" if status == 0 else "FAIL")
        if status:
            failed.append(name)
        secs = f"  ({took[name]:.0f} s)" if name in took else ""
        print(f"  {name:<9} {word:<5} {detail}{secs}")
    if failed or any(s is None for _, s, _ in results):
        print(f"motet test: FAILED ({', '.join(failed) or 'incomplete'})")
        return 1
    print("motet test: all stages passed")
    return 0


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


def native_port_only(command, args, why):
    """0 if --port is the native port, else 2 after saying why `command`
    has no other (the option is there for every command that builds)."""
    if args.port == build.DEFAULT_PORT:
        return 0
    print(f"{command}: error: --port {args.port}: {why}", file=sys.stderr)
    return 2


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
    _add_build_args(s, port_tree=True)
    s.set_defaults(func=cmd_build)

    s = sub.add_parser("test", help="setup, lint, build, unit, scenario, sanitizer and fuzz "
                                    "tests, size check, ports")
    s.add_argument("--only", metavar="A,B",
                   help=f"only these stages, in the usual order ({', '.join(STAGES)}); "
                        f"{' and '.join(GATE_STAGES)} run too when a later stage needs them")
    _add_build_args(s, port_tree=True,
                    port_help="port whose tree stages " + ", ".join(PORT_STAGES) +
                              " build and test, and stage ports among the others (default: "
                              "%(default)s; another port takes only those)")
    s.set_defaults(func=cmd_test)

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
    _add_build_args(s)
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser("run-hello", help="build and run the hello application",
                       description="Build and run apps/hello. Simulated time unless "
                                   "--realtime; without --until it runs until interrupted. "
                                   "Arguments after -- go to the program unchanged.")
    s.add_argument("--realtime", action="store_true", help="real clock instead of simulated")
    s.add_argument("--until", metavar="S", help="stop after S seconds of module time")
    s.add_argument("--seed", metavar="N", type=int, help="seed of the simulation")
    s.add_argument("extra", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    _add_build_args(s)
    s.set_defaults(func=cmd_run_hello)

    s = sub.add_parser("bench", help="run the benchmarks (instructions, cycles, bytes) and "
                                     "write their sections of docs/benchmarks.md")
    s.add_argument("--only", metavar="A,B",
                   help=f"only these: {', '.join(bench_all.ALL)} "
                        "(default: all; the other sections are kept)")
    _add_build_args(s, port_help="native only: each benchmark runs on the ports it measures, "
                                 "each port's tree beside --build-dir")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("format", help="clang-format C files in place, as the lint stage wants them",
                       description="Format C files in place with clang-format and the "
                                   "repository's .clang-format (what `motet test`'s lint stage "
                                   "checks): the FILEs, or every C file the lint stage checks.")
    s.add_argument("files", nargs="*", metavar="FILE",
                   help="files to format (default: every C file that lint checks)")
    s.set_defaults(func=cmd_format)

    s = sub.add_parser("size", help="kernel footprint with and without the event log")
    _add_build_args(s, port_tree=True)
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
