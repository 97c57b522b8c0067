# SPDX-License-Identifier: MIT
"""`motet fuzz` and the fuzz stage of `motet test`: the libFuzzer targets of
tests/fuzz, built with Clang in build-fuzz and run each for a bounded time
from its checked-in seeds (tests/fuzz/README.md).

A run keeps what it finds in build-fuzz/corpus/<target> (the seeds under
tests/fuzz/corpus stay as they are) and a crashing input in
build-fuzz/artifacts/. libFuzzer's own -timeout is off: the native port's
SIGALRM is the module's timer, so each harness bounds its work per input.
"""

import concurrent.futures
import re
import shutil
import sys

from . import build, cmdline

ROOT = build.ROOT
TARGETS = ("fuzz_app_file", "fuzz_appdesc", "fuzz_appmgr", "fuzz_bus_frame", "fuzz_bus_rx",
           "fuzz_hub_event", "fuzz_migrate_image", "fuzz_state_layout", "fuzz_timesync")
SEEDS = ROOT / "tests" / "fuzz" / "corpus"
FUZZ_FLAGS = ("-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all "
              "-fno-omit-frame-pointer")
CMAKE_ARGS = ("-DCMAKE_C_COMPILER=clang", "-DMOTET_BUILD_FUZZ=ON",
              f"-DCMAKE_C_FLAGS={FUZZ_FLAGS}",
              "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
# What `motet test` gives each target: 45 s of fuzzing for the nine, two
# targets at a time on a 2-core machine.
TEST_SECONDS = 5


def fuzz_dir(bdir=None):
    return build.variant_build_dir(bdir, "fuzz")


def build_targets(bdir=None):
    """Configure build-fuzz with Clang (once) and build every target."""
    if shutil.which("clang") is None:
        print("fuzz: error: clang not found (run `./motet setup`)", file=sys.stderr)
        return 1
    return build.build(fuzz_dir(bdir), build.DEFAULT_PORT, targets=["fuzz_all"],
                       extra=CMAKE_ARGS)


def executed_units(text):
    """libFuzzer's count of inputs run, from -print_final_stats output."""
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", text)
    return int(m.group(1)) if m else None


def final_coverage(text):
    """(coverage points, features, corpus entries) of libFuzzer's last status
    line, or None where it printed none."""
    lines = re.findall(r"^#\d+\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)", text, re.M)
    return tuple(int(v) for v in lines[-1]) if lines else None


def run_target(target, seconds, bdir=None):
    """Fuzz one target for `seconds`; returns (status, inputs run, output)."""
    fdir = fuzz_dir(bdir)
    work = fdir / build.FUZZ_CORPUS / target
    artifacts = fdir / build.FUZZ_ARTIFACTS
    work.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    cmd = [fdir / "tests" / "fuzz" / target, f"-max_total_time={seconds}", "-timeout=0",
           "-print_final_stats=1", "-close_fd_mask=1", f"-artifact_prefix={artifacts}/{target}-",
           work, SEEDS / target]
    res = build.run(cmd, capture_output=True, text=True)
    out = (res.stdout or "") + (res.stderr or "")
    return res.returncode, executed_units(out), out


def report_section(seconds, rows):
    """The "reliability" section of docs/benchmarks.md for a run of every target."""
    total = sum(units or 0 for _, units, _ in rows)
    out = ["## Reliability: fuzzing",
           "",
           f"`./motet fuzz --seconds {seconds} --report`: each libFuzzer target of tests/fuzz "
           "(built with ASan and UBSan) run from its checked-in seeds and its corpus so far, "
           f"{seconds} s each on one core. *cov*: the code coverage points libFuzzer reached, "
           "*ft*: its features, *corpus*: the inputs it kept. A crash, a sanitizer report or a "
           "broken invariant fails the run.",
           "",
           "| target | what it feeds | inputs run | cov | ft | corpus |",
           "|---|---|---:|---:|---:|---:|"]
    for target, units, cov in rows:
        c = cov or ("?", "?", "?")
        out.append(f"| {target} | {WHAT.get(target, '')} | {units if units is not None else '?'} "
                   f"| {c[0]} | {c[1]} | {c[2]} |")
    out += ["", f"In all: {total} inputs, no failure."]
    return "\n".join(out) + "\n"


# What each target feeds the kernel (tests/fuzz/*.c).
WHAT = {
    "fuzz_app_file": "a description file with names, as a module program reads it (--app-file)",
    "fuzz_appdesc": "an application description to appdesc_parse()",
    "fuzz_appmgr": "a description to the application manager, which creates the tasks",
    "fuzz_bus_frame": "bytes to the frame decoder, re-encoded when accepted",
    "fuzz_bus_rx": "a module's whole frame input: every frame type, tx-done and time events",
    "fuzz_hub_event": "an EVENT from the hub to the reader native modules and the AVR harness share",
    "fuzz_migrate_image": "a migration image to its decoder",
    "fuzz_state_layout": "a task's state in its program's layout to its decoder",
    "fuzz_timesync": "time-sync beacons to the clock fit",
}


def run(bdir=None, seconds=60, targets=TARGETS, report=False, jobs=1):
    """Build, then fuzz each target for `seconds`, `jobs` targets at a time
    (each libFuzzer process uses one core); returns (status, detail). With
    `report`, a run of every target writes the reliability section of the
    benchmarks."""
    status = build_targets(bdir)
    if status != 0:
        return status, "build failed"
    failed, counts, rows = [], [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = pool.map(lambda target: run_target(target, seconds, bdir), targets)
        for target, (status, units, out) in zip(targets, runs):
            rows.append((target, units, final_coverage(out)))
            counts.append(f"{target.removeprefix('fuzz_')} "
                          f"{units if units is not None else '?'}")
            print(f"fuzz: {target}: {units} inputs in {seconds} s, status {status}",
                  flush=True)
            if status != 0:
                failed.append(target)
                print(out[-8000:], file=sys.stderr)
    if failed:
        return 1, "failed: " + ", ".join(failed)
    if report:
        from . import report as bench_report
        bench_report.write_section("reliability", report_section(seconds, rows))
    return 0, f"{seconds} s each, inputs run: " + ", ".join(counts)


def main(argv):
    p = cmdline.ArgumentParser(prog="motet fuzz",
                               description="Build the libFuzzer targets (tests/fuzz) with Clang "
                                           "in build-fuzz and run each for a while from its "
                                           "seeds; a crash leaves its input in "
                                           "build-fuzz/artifacts/.")
    p.add_argument("--seconds", type=int, default=60, help="per target (default: %(default)s)")
    p.add_argument("--target", action="append", choices=TARGETS, metavar="T",
                   help=f"only this target (repeatable): {', '.join(TARGETS)}")
    p.add_argument("--build-dir", default=None,
                   help="the native build directory; the fuzz tree is beside it, <dir>-fuzz")
    p.add_argument("--report", action="store_true",
                   help="write the figures into docs/benchmarks.md (section reliability)")
    args = p.parse_args(argv)
    if args.report and args.target:
        p.error("--report needs every target: leave out --target")
    status, detail = run(args.build_dir, args.seconds, tuple(args.target or TARGETS), args.report)
    print(f"motet fuzz: {'ok' if status == 0 else 'FAILED'}: {detail}")
    return status
