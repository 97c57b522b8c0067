# SPDX-License-Identifier: MIT
"""The stack analyser against stack painting, on a real AVR or Cortex-M image.

Runs IMAGE in its emulator, by the ELF's machine: AVR under the simavr
harness (the port paints the free RAM before main() and reports the
painted bytes overwritten at halt), Cortex-M under QEMU (the port paints
its main stack, MSP, at reset and prints "cortex-m: stack high-water N of M
bytes" at halt). Either mark is the kernel stack's: boot, handlers and,
on Cortex-M, every interrupt body. It analyses the same image with `motet
stack` and fails unless
  - the analysis is not refused and its kernel-stack figure is at least the
    measured high-water mark (a bound below a measurement is wrong);
  - with --port-config, the port's PORT_THREAD_STACK_EXTRA is at least the
    analysed "interrupts on a thread" figure (what an interrupt and its
    exit, up to the switch away, put on a thread's stack; on Cortex-M that
    thread's PSP, where only the hardware frame and the exit dispatch
    land). The constant may be an expression of other #defines of the
    file (integer arithmetic); --extra-name checks another of its macros
    (a port whose allowance depends on the thread policy).
With --thread-only, only the second check is made (images whose own
code the analyser does not bound, such as the kernel's unit tests, still
show what interrupts leave on a thread of their kernel).
It prints both figures and the margin; the margin is reported, not judged:
the bound is sound, not tight (docs/threads.md, "The kernel stack").

Images that do not halt on their own (the benchmark images wait for the
interrupts their benchmark run injects) take the mark their benchmark run
recorded instead: --measured-from docs/benchmarks.md reads the row of IMAGE
in a "| image | stack bytes used |" table ("Shared stack high-water mark").

    stack_paint.py IMAGE.elf --annotations FILE [--annotations ...]
                   [--su DIR ...] [--port-config port_config.h]
                   [--harness motet-simavr | --measured-from FILE]
Exit status: 0 pass, 1 fail, 2 usage or tool error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import port_avr  # noqa: E402
import port_cortex_m  # noqa: E402
import stackcheck  # noqa: E402

DEFINE = re.compile(r"^#define[ \t]+(\w+)[ \t]+((?:[^\n]*\\\n)*[^\n]*)$", re.M)
CM_MARK = re.compile(r"cortex-m: stack high-water (\d+) of (\d+) bytes")


def painted_high_water(elf: Path, harness: str | None) -> int:
    """The image's kernel-stack high-water mark, measured by painting."""
    if stackcheck.elf_arch(elf) == "arm":
        return cortex_m_high_water(elf)
    exe = port_avr.harness_or_exit(harness)
    with tempfile.TemporaryDirectory(prefix="motet-stack-paint-") as work:
        summary = Path(work) / "run.json"
        status, _, err = port_avr._harness_run(exe, elf, ["--json", str(summary)])
        run = json.loads(summary.read_text()) if summary.exists() else {}
    if run.get("end") != "halted" or run.get("stack_used") is None:
        raise stackcheck.StackError(f"{elf.name} did not halt under the harness "
                                    f"(status {status}): {err.strip()[-300:]}")
    return int(run["stack_used"])


def cortex_m_high_water(elf: Path) -> int:
    """MSP's high-water mark, as the Cortex-M port prints it at halt."""
    status, out = port_cortex_m.run_captured(elf, echo=False)
    text = out.decode(errors="replace")
    m = CM_MARK.search(text)
    if status != 0 or not m:
        raise stackcheck.StackError(f"{elf.name} did not halt with its stack mark under QEMU "
                                    f"(status {status}): {text.strip()[-300:]}")
    return int(m[1])


def recorded_high_water(elf: Path, table: Path) -> int:
    """The high-water mark recorded for IMAGE in a benchmark report."""
    rows = re.findall(rf"^\|\s*{re.escape(elf.name)}\s*\|\s*(\d+)\s*\|\s*$", table.read_text(),
                      re.M)
    if len(rows) != 1:
        raise stackcheck.StackError(f"{table}: {len(rows)} stack rows for {elf.name}, not one")
    return int(rows[0])


def port_thread_extra(config: Path, name: str = "PORT_THREAD_STACK_EXTRA") -> int:
    """The thread allowance `name` of a port_config.h: a number, or integer
    arithmetic over the file's other numeric #defines."""
    defines = {n: body.replace("\\\n", " ").strip()
               for n, body in DEFINE.findall(config.read_text())}
    if name not in defines:
        raise stackcheck.StackError(f"{config}: no {name}")
    return _evaluate(defines, name, config, set())


def _evaluate(defines: dict[str, str], name: str, config: Path, seen: set[str]) -> int:
    if name in seen:
        raise stackcheck.StackError(f"{config}: {name} is defined in terms of itself")
    expr = re.sub(r"\b(\d+)[uUlL]*\b", r"\1", defines[name])
    for ref in set(re.findall(r"\b[A-Za-z_]\w*\b", expr)):
        if ref not in defines:
            raise stackcheck.StackError(f"{config}: {name} uses {ref}, not a #define here")
        expr = re.sub(rf"\b{ref}\b", str(_evaluate(defines, ref, config, seen | {name})), expr)
    if not re.fullmatch(r"[\d\s()+*/-]+", expr):
        raise stackcheck.StackError(f"{config}: {name} is not integer arithmetic: {expr!r}")
    return int(eval(expr.replace("/", "//"), {"__builtins__": {}}))  # digits and + - * / ( )


def failures(bound: int, measured: int, extra: int | None = None,
             need: int | None = None, config: str = "port_config.h") -> list[str]:
    """What is wrong with the figures: a bound below the measurement, or a
    thread allowance below the analysed figure."""
    out = []
    if bound < measured:
        out.append(f"the bound {bound} B is below the measured {measured} B")
    if extra is not None and need is not None and extra < need:
        out.append(f"PORT_THREAD_STACK_EXTRA ({extra} B) is below the analysed {need} B: "
                   f"raise it in {config}")
    return out


def check_thread_only(elf: Path, ann: stackcheck.Annotations, su: list[Path], config: Path,
                      extra_name: str) -> int:
    """The thread allowance against the analysed figure, nothing else
    (main's own figure and the kernel stack's are computed and ignored)."""
    out = stackcheck.analyse(elf, ["main"], ann.isrs, ann=ann, su_dirs=su)
    t = out["thread_extra"]
    if t is None or t.problems:
        for p in t.problems if t is not None else ["no `dispatch` or `isr` annotations"]:
            print(f"      {p}")
        print(f"stack_paint: FAIL: {elf.name}: interrupts on a thread: refused", file=sys.stderr)
        return 1
    extra = port_thread_extra(config, extra_name)
    print(f"{elf.name}: {extra_name} {extra} B, analysed interrupts on a thread {t.depth} B "
          f"({' > '.join(t.path)})")
    wrong = failures(0, 0, extra, t.depth, str(config))
    for w in wrong:
        print(f"stack_paint: FAIL: {w}", file=sys.stderr)
    return 1 if wrong else 0


def check(elf: Path, ann: stackcheck.Annotations, su: list[Path], config: Path | None,
          harness: str | None, recorded: Path | None = None,
          extra_name: str = "PORT_THREAD_STACK_EXTRA") -> int:
    out = stackcheck.analyse(elf, [], ann.isrs, ann=ann, su_dirs=su)
    lines, refused = stackcheck.report(out, False)
    print("\n".join(lines))
    kernel = out["kernel"]
    if refused or kernel is None:
        print(f"stack_paint: FAIL: {elf.name}: the analysis refused the image", file=sys.stderr)
        return 1
    if recorded is not None:
        measured, source = recorded_high_water(elf, recorded), f"recorded in {recorded.name}"
    else:
        measured, source = painted_high_water(elf, harness), "measured now"
    print(f"{elf.name}: kernel stack bound {kernel.depth} B, painted high-water mark "
          f"{measured} B ({source}), margin {kernel.depth - measured} B")
    extra = need = None
    if config is not None:
        extra, need = port_thread_extra(config, extra_name), out["thread_extra"].depth
        print(f"{extra_name} {extra} B, analysed interrupts on a thread {need} B")
    wrong = failures(kernel.depth, measured, extra, need, str(config))
    for w in wrong:
        print(f"stack_paint: FAIL: {w}", file=sys.stderr)
    return 1 if wrong else 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="stack_paint.py", description=__doc__.split("\n\n")[0])
    p.add_argument("elf", type=Path)
    p.add_argument("--annotations", action="append", type=Path, default=[], required=True)
    p.add_argument("--su", action="append", type=Path, default=[])
    p.add_argument("--port-config", type=Path)
    p.add_argument("--harness")
    p.add_argument("--measured-from", type=Path,
                   help="take the painted mark from this report instead of a run")
    p.add_argument("--extra-name", default="PORT_THREAD_STACK_EXTRA",
                   help="the macro of --port-config to check (default: %(default)s)")
    p.add_argument("--thread-only", action="store_true",
                   help="check only the thread allowance (needs --port-config)")
    args = p.parse_args(argv)
    if args.thread_only and args.port_config is None:
        p.error("--thread-only needs --port-config")
    try:
        ann = stackcheck.read_annotations(args.annotations, stackcheck.elf_arch(args.elf))
        su = args.su or None  # None: the .su files of its link (stackcheck.default_su)
        if args.thread_only:
            return check_thread_only(args.elf, ann, su, args.port_config, args.extra_name)
        return check(args.elf, ann, su, args.port_config, args.harness, args.measured_from,
                     args.extra_name)
    except (stackcheck.StackError, OSError) as e:
        print(f"stack_paint: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
