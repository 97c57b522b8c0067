# SPDX-License-Identifier: MIT
"""`motet test`: its stages (setup, lint, build, unit, scenario, sanitize,
fuzz, size, ports), which of them run, and the summary of their results."""

import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import build, ctest_report, fuzz, lint, port_options, pytest_report, setup_env, thread_size

ROOT = build.ROOT

# What `motet test` runs with pytest after the unit tests.
PYTEST_DIRS = ("tests/scenario", "tests/tools")
PYTEST_NO_TESTS = 5  # pytest's exit status when it collected nothing


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
        if build.build(pdir, port) != 0:
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
    tree = port_options.port_tree(args)
    if args.port == build.DEFAULT_PORT:
        native_arg, own_trees = args.build_dir, {}
    else:
        native_arg, own_trees = None, {args.port: tree}

    def size():
        st = build.size_check(tree, args.port)
        return st or thread_size.check(tree, args.port), "log on vs off, threads off"

    return [
        ("setup", lambda: (setup_env.setup(), "packages")),
        ("lint", lint.lint),
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
# The stage a port that is only compiled (BUILD_ONLY_PORTS) has nothing for.
TESTS_STAGE = "unit"


def _stages_for_the_port(port):
    """The stages that build and test `port` (its tree, or every port)."""
    return tuple(n for n in PORT_STAGES + EVERY_PORT_STAGES
                 if not (n == TESTS_STAGE and port in BUILD_ONLY_PORTS))


def _not_for_the_port(args, chosen):
    """Why the stages `chosen` cannot run for --port (another than the
    native one), naming the stages that can, or None."""
    port = args.port
    if port == build.DEFAULT_PORT:
        return None
    for_port = _stages_for_the_port(port)
    outside = [n for n in chosen if n not in for_port + PORTLESS_STAGES]
    native = [n for n in outside if n != TESTS_STAGE]
    untested = [n for n in outside if n == TESTS_STAGE]
    why = []
    if native:
        why.append(f"stage{'s' if len(native) > 1 else ''} {', '.join(native)} "
                   f"test{'' if len(native) > 1 else 's'} the native port, not {port}")
    if untested:
        why.append(f"stage {TESTS_STAGE}: the {port} port is only compiled, it has no tests")
    if not why:
        return None
    runnable = ",".join(n for n in for_port if n not in GATE_STAGES)
    return (f"{'; '.join(why)}; `motet test --port {port} --only {runnable}` builds and tests "
            f"{port_options.port_tree(args)}")


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
    why = _not_for_the_port(args, chosen)
    if why and port_options.native_port_only("test", args, why):
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
